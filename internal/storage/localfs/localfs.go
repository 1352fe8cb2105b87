// Package localfs stores objects as files in a local directory (or a shared
// file-system mount). Committed objects are plain files, so downloads are
// served by sendfile(2) straight from the page cache.
//
// Layout under Root: objects/NAME (committed), tmp/NAME.RANDOM (sequential
// writes in progress), partial/NAME (random-access writes in progress). Every
// commit is temp file → fsync → link into objects/ → fsync directory, so a
// crash leaves either the whole object or none of it.
package localfs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"hangar/internal/storage"
)

// Config says where the store lives.
type Config struct {
	// Root is the directory holding the store; it is created if missing.
	Root string
}

// Validate reports a config that cannot work.
func (c Config) Validate() error {
	if c.Root == "" {
		return errors.New("localfs: root directory is required")
	}
	return nil
}

// Store is a storage.Store over a directory.
type Store struct {
	objects, tmp, partial string
}

var (
	_ storage.Store        = (*Store)(nil)
	_ storage.FileOpener   = (*Store)(nil)
	_ storage.PartialStore = (*Store)(nil)
	_ storage.TempCleaner  = (*Store)(nil)
	_ storage.Extenter     = (*reader)(nil)
	_ storage.Zeroer       = (*partial)(nil)
	_ storage.Extenter     = (*partial)(nil)
	_ storage.Flusher      = (*partial)(nil)
)

// New opens (creating if needed) the store at cfg.Root.
func New(_ context.Context, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Store{
		objects: filepath.Join(cfg.Root, "objects"),
		tmp:     filepath.Join(cfg.Root, "tmp"),
		partial: filepath.Join(cfg.Root, "partial"),
	}
	for _, d := range []string{s.objects, s.tmp, s.partial} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, fmt.Errorf("localfs: %w", err)
		}
	}
	return s, nil
}

func (s *Store) path(name string) (string, error) {
	if !storage.ValidName(name) {
		return "", fmt.Errorf("localfs: %q: %w", name, storage.ErrInvalidName)
	}
	return filepath.Join(s.objects, name), nil
}

// translate maps os errors to the storage sentinels.
func translate(op, name string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("localfs: %s %q: %w", op, name, storage.ErrNotFound)
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("localfs: %s %q: %w", op, name, storage.ErrExists)
	case errors.Is(err, syscall.ENOTCONN), errors.Is(err, syscall.ESTALE):
		// A network file system (a GlusterFS brick, NFS) out of reach.
		return fmt.Errorf("localfs: %s %q: %w: %w", op, name, storage.ErrUnavailable, err)
	}
	return fmt.Errorf("localfs: %s %q: %w", op, name, err)
}

// Stat implements storage.Store.
func (s *Store) Stat(_ context.Context, name string) (storage.Info, error) {
	p, err := s.path(name)
	if err != nil {
		return storage.Info{}, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return storage.Info{}, translate("stat", name, err)
	}
	return storage.Info{Name: name, Size: fi.Size()}, nil
}

// OpenFile implements storage.FileOpener.
func (s *Store) OpenFile(_ context.Context, name string) (*os.File, error) {
	p, err := s.path(name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, translate("open", name, err)
	}
	return f, nil
}

// Open implements storage.Store.
func (s *Store) Open(ctx context.Context, name string) (storage.Reader, error) {
	f, err := s.OpenFile(ctx, name)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, translate("stat", name, err)
	}
	return &reader{File: f, size: fi.Size()}, nil
}

// Delete implements storage.Store.
func (s *Store) Delete(_ context.Context, name string) error {
	p, err := s.path(name)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil {
		return translate("delete", name, err)
	}
	return syncDir(s.objects)
}

// List implements storage.Store.
func (s *Store) List(ctx context.Context, fn func(storage.Info) error) error {
	entries, err := os.ReadDir(s.objects)
	if err != nil {
		return fmt.Errorf("localfs: list: %w", err)
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted while listing
		} else if err != nil {
			return fmt.Errorf("localfs: list: %w", err)
		}
		if err := fn(storage.Info{Name: e.Name(), Size: fi.Size()}); err != nil {
			return err
		}
	}
	return nil
}

// Create implements storage.Store.
func (s *Store) Create(_ context.Context, name string) (storage.Writer, error) {
	final, err := s.path(name)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(final); err == nil {
		return nil, fmt.Errorf("localfs: create %q: %w", name, storage.ErrExists)
	}
	// A random suffix keeps concurrent writers (other servers on a shared
	// mount included) from ever sharing a temp file.
	tmp := filepath.Join(s.tmp, name+"."+randomSuffix())
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return nil, translate("create", name, err)
	}
	return &writer{f: f, name: name, final: final, dir: s.objects}, nil
}

// RemoveTemp implements storage.TempCleaner.
func (s *Store) RemoveTemp(_ context.Context, name string) error {
	if !storage.ValidName(name) {
		return fmt.Errorf("localfs: %q: %w", name, storage.ErrInvalidName)
	}
	matches, err := filepath.Glob(filepath.Join(s.tmp, name+".*"))
	if err != nil {
		return fmt.Errorf("localfs: remove temp %q: %w", name, err)
	}
	for _, m := range matches {
		if strings.TrimPrefix(filepath.Base(m), name+".") == "" {
			continue
		}
		if err := os.Remove(m); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("localfs: remove temp %q: %w", name, err)
		}
	}
	return nil
}

func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// publish makes the fully written and synced file at tmp visible as final.
// link(2) fails when final exists, which is what keeps committed objects
// immutable; rename(2) would silently replace them.
func publish(tmp, final, dir string) error {
	if err := os.Link(tmp, final); err != nil {
		return err
	}
	if err := os.Remove(tmp); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("localfs: sync dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("localfs: sync dir: %w", err)
	}
	return nil
}

// ExclusiveCreate implements storage.ExclusiveCreator: publish is link(2).
func (s *Store) ExclusiveCreate() {}
