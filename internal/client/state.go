package client

import (
	"encoding/json"
	"os"
	"sync"
	"time"

	"hangar/internal/catalog"
)

// downloadState is what an interrupted download has already written,
// kept in a small file beside the output. The output is not fsynced for it
// (that would cost a disk flush of the whole image): an interrupted process
// leaves its writes in the page cache, and the block checksum compared at
// the end of every download, resumed or not, catches what a machine crash
// could have lost.
type downloadState struct {
	path    string
	ImageID string          `json:"image_id"`
	Size    int64           `json:"size"`
	MD5     string          `json:"checksum"`
	Done    []catalog.Range `json:"done"`

	mu      sync.Mutex
	pending []catalog.Range
	saved   time.Time
}

// loadState returns the saved state if it belongs to the same image bytes,
// else a fresh one.
func loadState(out, imageID string, size int64, md5 string) *downloadState {
	st := &downloadState{path: out + ".hangar-download", ImageID: imageID, Size: size, MD5: md5, saved: time.Now()}
	b, err := os.ReadFile(st.path)
	if err != nil {
		return st
	}
	var old downloadState
	if json.Unmarshal(b, &old) == nil && old.ImageID == imageID && old.Size == size && old.MD5 == md5 {
		st.Done = old.Done
	}
	return st
}

// add records a finished range; every few seconds the state is saved.
func (st *downloadState) add(out *os.File, o op) {
	st.mu.Lock()
	st.pending = append(st.pending, catalog.Range{Off: o.Off, Len: o.N})
	due := time.Since(st.saved) > time.Second
	st.mu.Unlock()
	if due {
		st.save(out)
	}
}

func (st *downloadState) save(out *os.File) error {
	st.mu.Lock()
	pending := st.pending
	st.pending = nil
	st.saved = time.Now()
	st.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	st.mu.Lock()
	st.Done = catalog.AddRanges(st.Done, pending...)
	b, err := json.Marshal(st)
	st.mu.Unlock()
	if err != nil {
		return err
	}
	tmp := st.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, st.path)
}

func (st *downloadState) remove() { os.Remove(st.path) }
