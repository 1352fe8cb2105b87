package s3store

import (
	"container/list"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"golang.org/x/sync/singleflight"

	"hangar/internal/storage"
)

// cache is a bounded local read-through copy of whole objects, evicting
// the least recently used past its size limit. Safe because objects never
// change once committed (a deleted one is dropped). Concurrent cold
// requests of one object share one backend read (singleflight): a boot
// storm of a new image costs one GET, not one per client. An evicted
// file stays readable through handles already open (unlinked, not gone).
type cache struct {
	dir   string
	limit int64
	fetch func(ctx context.Context, name string, dst *os.File) error
	group singleflight.Group

	mu    sync.Mutex
	used  int64
	lru   *list.List // front: most recent; values are *entry
	index map[string]*list.Element
}

type entry struct {
	name string
	size int64
}

func newCache(dir string, limit int64, fetch func(context.Context, string, *os.File) error) (*cache, error) {
	c := &cache{dir: dir, limit: limit, fetch: fetch, lru: list.New(), index: map[string]*list.Element{}}
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o750); err != nil {
		return nil, err
	}
	// What an earlier run cached is still good: take it back, oldest first.
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type old struct {
		name string
		info fs.FileInfo
	}
	var olds []old
	for _, e := range ents {
		if info, err := e.Info(); err == nil && e.Type().IsRegular() && storage.ValidName(e.Name()) {
			olds = append(olds, old{e.Name(), info})
		}
	}
	sort.Slice(olds, func(i, j int) bool { return olds[i].info.ModTime().Before(olds[j].info.ModTime()) })
	for _, o := range olds {
		c.add(o.name, o.info.Size())
	}
	os.RemoveAll(filepath.Join(dir, "tmp")) // unfinished fetches
	return c, os.MkdirAll(filepath.Join(dir, "tmp"), 0o750)
}

// open returns the cached file, fetching it first if needed.
func (c *cache) open(ctx context.Context, name string) (*os.File, error) {
	if f, ok := c.hit(name); ok {
		return f, nil
	}
	_, err, _ := c.group.Do(name, func() (any, error) { return nil, c.fill(context.WithoutCancel(ctx), name) }) // one fetch serves every waiter: no one caller may cancel it
	if err != nil {
		return nil, err
	}
	if f, ok := c.hit(name); ok {
		return f, nil
	}
	return nil, fmt.Errorf("%s: evicted while being opened: %w", name, storage.ErrUnavailable)
}

func (c *cache) hit(name string) (*os.File, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.index[name]
	if !ok {
		return nil, false
	}
	f, err := os.Open(filepath.Join(c.dir, name))
	if err != nil { // removed behind our back: forget it
		c.remove(el)
		return nil, false
	}
	c.lru.MoveToFront(el)
	return f, true
}

func (c *cache) fill(ctx context.Context, name string) error {
	tmp, err := os.CreateTemp(filepath.Join(c.dir, "tmp"), name+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	err = c.fetch(ctx, name, tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fi, err := os.Stat(tmp.Name())
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(c.dir, name)); err != nil {
		return err
	}
	c.mu.Lock()
	c.add(name, fi.Size())
	c.mu.Unlock()
	return nil
}

// add records a cached file and evicts past the limit (mu held, or at start).
func (c *cache) add(name string, size int64) {
	if el, ok := c.index[name]; ok {
		c.remove(el)
	}
	c.index[name] = c.lru.PushFront(&entry{name, size})
	c.used += size
	for c.used > c.limit && c.lru.Len() > 1 {
		old := c.lru.Back()
		os.Remove(filepath.Join(c.dir, old.Value.(*entry).name))
		c.remove(old)
	}
}

func (c *cache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*entry)
	delete(c.index, e.name)
	c.used -= e.size
}

// drop forgets a deleted object.
func (c *cache) drop(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.index[name]; ok {
		os.Remove(filepath.Join(c.dir, name))
		c.remove(el)
	}
}

// stats reports the cache's use, for tests and metrics.
func (c *cache) stats() (files int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.used
}
