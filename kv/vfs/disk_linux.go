package vfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// openRead opens name for reading, with O_DIRECT when direct.
func openRead(name string, direct bool) (int, error) {
	flags := unix.O_RDONLY | unix.O_CLOEXEC
	if direct {
		flags |= unix.O_DIRECT
	}
	return unix.Open(name, flags, 0)
}

// adviseRandom tells the kernel not to read ahead of the reads of fd.
func adviseRandom(fd int) { _ = unix.Fadvise(fd, 0, 0, unix.FADV_RANDOM) }

// directAlignment asks the kernel for the file's direct-I/O alignment and
// falls back to 4096, which every Linux block device accepts.
func directAlignment(name string) int {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, name, 0, unix.STATX_DIOALIGN, &st); err == nil &&
		st.Mask&unix.STATX_DIOALIGN != 0 && st.Dio_offset_align > 0 {
		a := int(max(st.Dio_offset_align, st.Dio_mem_align))
		if a&(a-1) == 0 {
			return a
		}
	}
	return 4096
}

// syncData makes the file's data durable (fdatasync: the metadata a later
// read needs, such as the size, is synced too; timestamps are not).
func syncData(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }

// prefetch starts reading [off, off+n) into the page cache and returns
// without waiting: readahead(2), or a WILLNEED hint where it is missing.
func prefetch(f *os.File, off, n int64) error {
	_, _, errno := unix.Syscall(unix.SYS_READAHEAD, f.Fd(), uintptr(off), uintptr(n))
	if errno != 0 {
		return unix.Fadvise(int(f.Fd()), off, n, unix.FADV_WILLNEED)
	}
	return nil
}

// evictPages drops the file's pages from the page cache.
func evictPages(f *os.File) error { return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED) }
