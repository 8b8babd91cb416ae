//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package vfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// The BSDs and macOS have no O_DIRECT, fadvise or readahead(2): direct
// reads are opened normally (on macOS with the cache turned off for the
// file), and the hints are no-ops. Reads stay aligned as asked.

func openRead(name string, direct bool) (int, error) {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil || !direct {
		return fd, err
	}
	noCache(fd)
	return fd, nil
}

func adviseRandom(int) {}

func directAlignment(string) int { return 4096 }

// syncData uses os.File.Sync, which on macOS is F_FULLFSYNC: fsync there
// does not flush the drive's cache.
func syncData(f *os.File) error { return f.Sync() }

func prefetch(*os.File, int64, int64) error { return nil }

func evictPages(*os.File) error { return nil }
