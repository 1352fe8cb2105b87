package transfer

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"hangar/internal/catalog"
	"hangar/internal/checksum"
	"hangar/internal/storage"
)

// Activate records an image's committed bytes: size, virtual size and
// checksums, status active. The image must still be in status from; if it
// was deleted or changed meanwhile the committed bytes are removed and the
// error wraps catalog.ErrNotFound or catalog.ErrConflict. The also
// functions change the record in the same update (import bookkeeping).
func Activate(ctx context.Context, cat catalog.Catalog, store storage.Store, imageID string, sums checksum.Sums, from string, also ...func(*catalog.Image)) error {
	ctx = context.WithoutCancel(ctx) // the bytes are stored: finish the record
	current, err := cat.GetImage(ctx, imageID)
	var vsize *int64
	if err == nil {
		vsize = virtualSizeOf(ctx, store, current, sums.Size)
	}
	_, err = cat.UpdateImage(ctx, imageID, func(im *catalog.Image) error {
		if im.Status != from {
			return fmt.Errorf("image %s is %s, not %s: %w", imageID, im.Status, from, catalog.ErrConflict)
		}
		im.Status = catalog.StatusActive
		im.Size, im.VirtualSize = &sums.Size, vsize
		if sums.MD5 != "" { // else the backfill sets them later
			setSums(im, sums)
		}
		for _, f := range also {
			f(im)
		}
		return nil
	})
	if errors.Is(err, catalog.ErrNotFound) || errors.Is(err, catalog.ErrConflict) {
		if derr := store.Delete(ctx, imageID); derr != nil && !errors.Is(derr, storage.ErrNotFound) {
			return fmt.Errorf("activate %s: %w (and removing its bytes: %v)", imageID, err, derr)
		}
	}
	return err
}

// qcow2Magic starts every qcow2 file ("QFI\xfb"); the virtual size is the
// big-endian uint64 at offset 24 of the header (qcow2 spec, "Header").
var qcow2Magic = []byte{'Q', 'F', 'I', 0xfb}

// virtualSizeOf returns the disk size a guest sees: the header's for qcow2,
// the file size for raw and anything Hangar does not inspect (Glance's
// format inspector does the same for raw).
func virtualSizeOf(ctx context.Context, store storage.Store, im *catalog.Image, size int64) *int64 {
	if im.DiskFormat == nil || *im.DiskFormat != "qcow2" {
		return &size
	}
	rd, err := store.Open(ctx, im.ID)
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

func setSums(im *catalog.Image, sums checksum.Sums) {
	algo := checksum.Algo
	im.Checksum, im.OSHashAlgo, im.OSHashValue = &sums.MD5, &algo, &sums.SHA512
}
