// Package sparse knows how a local file is laid out: which ranges hold data
// and which are holes (SEEK_DATA/SEEK_HOLE), and how to turn a range back into
// a hole (fallocate PUNCH_HOLE). Zeros are never worth sending or storing.
package sparse

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Extent is a run of a file that is data or a hole.
type Extent struct {
	Offset, Length int64
	Hole           bool
}

// Extents maps [0, size) of f into alternating data and hole extents. File
// systems without SEEK_DATA support report one data extent, which is correct,
// only less useful.
func Extents(f *os.File, size int64) ([]Extent, error) {
	var out []Extent
	fd := int(f.Fd())
	for off := int64(0); off < size; {
		data, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			data = size // only a hole remains
		} else if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) {
			return append(out, Extent{Offset: off, Length: size - off}), nil
		} else if err != nil {
			return nil, fmt.Errorf("sparse: seek data at %d: %w", off, err)
		}
		data = min(data, size)
		if data > off {
			out = append(out, Extent{Offset: off, Length: data - off, Hole: true})
		}
		if data >= size {
			break
		}
		hole, err := unix.Seek(fd, data, unix.SEEK_HOLE)
		if err != nil {
			return nil, fmt.Errorf("sparse: seek hole at %d: %w", data, err)
		}
		hole = min(hole, size)
		out = append(out, Extent{Offset: data, Length: hole - data})
		off = hole
	}
	return out, nil
}

// PunchHole makes [off, off+length) of f read as zeros and frees its blocks.
// Where the file system cannot punch holes it writes zeros instead, so the
// result reads the same either way.
func PunchHole(f *os.File, off, length int64) error {
	if length <= 0 {
		return nil
	}
	err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, length)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.ENOSYS) {
		return fmt.Errorf("sparse: punch hole %d+%d: %w", off, length, err)
	}
	return writeZeros(f, off, length)
}

var zeroBlock = make([]byte, 1<<20)

func writeZeros(f *os.File, off, length int64) error {
	for length > 0 {
		n := min(length, int64(len(zeroBlock)))
		if _, err := f.WriteAt(zeroBlock[:n], off); err != nil {
			return fmt.Errorf("sparse: write zeros at %d: %w", off, err)
		}
		off += n
		length -= n
	}
	return nil
}
