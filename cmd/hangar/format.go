package main

import (
	"bytes"
	"os"
)

// detectFormat names a disk image's format from its magic numbers (qcow2,
// vmdk, vhdx, iso); anything else is raw.
func detectFormat(f *os.File) string {
	head := make([]byte, 64)
	n, _ := f.ReadAt(head, 0)
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte("QFI\xfb")):
		return "qcow2"
	case bytes.HasPrefix(head, []byte("KDMV")), bytes.HasPrefix(head, []byte("# Disk DescriptorFile")):
		return "vmdk"
	case bytes.HasPrefix(head, []byte("vhdxfile")):
		return "vhdx"
	}
	iso := make([]byte, 5) // ISO 9660: "CD001" at 0x8001 (sector 16)
	if n, _ := f.ReadAt(iso, 0x8001); n == 5 && string(iso) == "CD001" {
		return "iso"
	}
	return "raw"
}
