package vfs

import "golang.org/x/sys/unix"

// noCache turns off the unified buffer cache for reads of fd, the nearest
// macOS has to O_DIRECT.
func noCache(fd int) { _, _ = unix.FcntlInt(uintptr(fd), unix.F_NOCACHE, 1) }
