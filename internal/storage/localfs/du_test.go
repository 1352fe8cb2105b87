package localfs_test

import (
	"os"
	"syscall"
)

func diskUsage(fi os.FileInfo) int64 { return fi.Sys().(*syscall.Stat_t).Blocks * 512 }
