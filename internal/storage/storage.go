// Package storage defines where image bytes live: a small Store interface that
// every backend implements, and optional capabilities (sendfile-able files,
// random-access partial objects, hole punching, extents, flush) that callers
// discover by type assertion so the fast paths stay fast where a backend can
// offer them and degrade to plain streams where it cannot.
package storage

import (
	"context"
	"errors"
	"io"
	"os"
	"unsafe"
)

// Sentinel errors. Backends translate their native errors into these at their
// edge and wrap them with %w; callers test with errors.Is.
var (
	ErrNotFound     = errors.New("object not found")
	ErrExists       = errors.New("object already exists")
	ErrInvalidName  = errors.New("invalid object name")
	ErrInvalidRange = errors.New("invalid range")
	// ErrUnavailable: the backend could not be reached or failed on its
	// side (S3 5xx, connection refused or reset); worth retrying.
	ErrUnavailable = errors.New("storage unavailable")
)

// Info describes a committed object.
type Info struct {
	Name string
	Size int64
}

// Reader reads a committed object. It is not safe for concurrent Read/Seek;
// ReadAt is safe for concurrent use.
type Reader interface {
	io.ReadSeekCloser
	io.ReaderAt
	Size() int64
}

// Writer receives a new object as one sequential stream. Close commits: the
// object appears under its name atomically and durably, replacing nothing
// (a name that already exists is ErrExists). Abort discards everything
// written; after Abort, Close is a no-op. Exactly one of them must be called.
type Writer interface {
	io.Writer
	Close() error
	Abort() error
}

// Store is the core every backend implements. Names are opaque keys made of
// [A-Za-z0-9._-] (no slashes, not starting with a dot); anything else is
// ErrInvalidName. All methods are safe for concurrent use. The context bounds
// the call itself, not the lifetime of the returned Reader or Writer.
type Store interface {
	// Stat returns ErrNotFound when no committed object has this name.
	Stat(ctx context.Context, name string) (Info, error)
	// Open returns ErrNotFound when no committed object has this name. The
	// caller closes the Reader.
	Open(ctx context.Context, name string) (Reader, error)
	// Create starts a new object; nothing is visible until Writer.Close.
	Create(ctx context.Context, name string) (Writer, error)
	// Delete removes a committed object; ErrNotFound if there is none.
	Delete(ctx context.Context, name string) error
	// List calls fn for every committed object, in no particular order.
	List(ctx context.Context, fn func(Info) error) error
}

// FileOpener is implemented by stores whose objects are local files. The
// returned *os.File is what lets net/http send a download with sendfile(2);
// the caller closes it and must not write to it.
type FileOpener interface {
	OpenFile(ctx context.Context, name string) (*os.File, error)
}

// PartialStore is implemented by stores that can build an object by writes at
// random offsets (the imageio transfer path). A partial object lives apart
// from committed ones, survives a restart, and becomes a committed object
// only through CommitPartial.
type PartialStore interface {
	// OpenPartial creates the partial object of this name with the given
	// size, or reopens it if it exists (resuming after a restart), in which
	// case size must match.
	OpenPartial(ctx context.Context, name string, size int64) (Partial, error)
	// CommitPartial publishes a partial object under its name durably; it
	// fails with ErrExists if a committed object has that name already.
	CommitPartial(ctx context.Context, name string) error
	// RemovePartial discards a partial object; ErrNotFound if none.
	RemovePartial(ctx context.Context, name string) error
}

// Partial is an object being written at random offsets. WriteAt and ReadAt
// are safe for concurrent use on disjoint ranges; writes past Size are
// ErrInvalidRange. Close releases the handle and keeps the data.
type Partial interface {
	io.WriterAt
	io.ReaderAt
	io.Closer
	Size() int64
}

// Zeroer makes a range read back as zeros, deallocating it where possible
// (punch hole) so sparse images stay sparse.
type Zeroer interface {
	Zero(off, length int64) error
}

// Extent is a run of bytes that is either data or a hole (reads as zeros).
type Extent struct {
	Offset int64 `json:"start"`
	Length int64 `json:"length"`
	Zero   bool  `json:"zero"`
}

// Extenter reports which ranges of an object hold data and which are holes,
// coalesced and covering [0, Size) without gaps.
type Extenter interface {
	Extents(ctx context.Context) ([]Extent, error)
}

// Flusher makes every completed write durable.
type Flusher interface {
	Flush() error
}

// ExclusiveCreator is implemented by stores where, of writers racing to
// create one name, exactly one wins even when they run at the same moment
// (the local file system: link(2) fails on an existing name). Without it,
// a store still refuses a name committed before Create, and racing writers
// leave one writer's bytes whole (S3: the last complete upload); Hangar
// never races there, because the catalog admits one upload per image.
type ExclusiveCreator interface {
	ExclusiveCreate()
}

// TempCleaner is implemented by stores that keep temporary data for writes in
// progress. RemoveTemp discards whatever an interrupted Create of this name
// left behind; it is for crash recovery, when no writer of the name is alive.
type TempCleaner interface {
	RemoveTemp(ctx context.Context, name string) error
}

// ValidName reports whether name is an acceptable object name.
func ValidName(name string) bool {
	if name == "" || len(name) > 200 || name[0] == '.' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// BufferAlign is the memory alignment a backend writing with O_DIRECT needs
// to take a buffer as is.
const BufferAlign = 4096

// AlignedBuffer returns n bytes starting at a BufferAlign boundary, so that
// backends can write it without an extra copy (O_DIRECT).
func AlignedBuffer(n int) []byte {
	b := make([]byte, n+BufferAlign)
	off := BufferAlign - int(uintptr(unsafe.Pointer(unsafe.SliceData(b)))%BufferAlign)
	return b[off : off+n : off+n]
}
