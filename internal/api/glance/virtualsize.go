package glance

import (
	"context"
	"encoding/binary"
	"io"

	"hangar/internal/catalog"
)

// qcow2Magic starts every qcow2 file ("QFI\xfb"); the virtual size is the
// big-endian uint64 at offset 24 of the header (qcow2 spec, "Header").
var qcow2Magic = []byte{'Q', 'F', 'I', 0xfb}

// virtualSizeOf returns the disk size a guest sees: the header's for qcow2,
// the file size for raw and anything Hangar does not inspect (Glance's
// format inspector does the same for raw).
func (a *API) virtualSizeOf(ctx context.Context, im *catalog.Image, size int64) *int64 {
	if im.DiskFormat == nil || *im.DiskFormat != "qcow2" {
		return &size
	}
	rd, err := a.store.Open(ctx, im.ID)
	if err != nil {
		return nil
	}
	defer rd.Close()
	var hdr [32]byte
	if _, err := rd.ReadAt(hdr[:], 0); err != nil && err != io.EOF {
		return nil
	}
	if string(hdr[:4]) != string(qcow2Magic) {
		return nil // not really qcow2: Glance leaves virtual_size unset too
	}
	vs := int64(binary.BigEndian.Uint64(hdr[24:32]))
	if vs < 0 {
		return nil
	}
	return &vs
}
