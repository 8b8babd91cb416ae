package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"golang.org/x/sys/unix"
)

// Default is the operating system's filesystem.
var Default FS = diskFS{}

type diskFS struct{}

type diskFile struct {
	*os.File
	align int
}

func (diskFS) Create(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return &diskFile{File: f, align: 1}, nil
}

func (diskFS) Open(name string, opts ...OpenOption) (File, error) {
	var o OpenOption
	for _, opt := range opts {
		o |= opt
	}
	flags := unix.O_RDONLY | unix.O_CLOEXEC
	if o&DirectIO != 0 {
		flags |= unix.O_DIRECT
	}
	fd, err := unix.Open(name, flags, 0)
	if err != nil {
		if o&DirectIO != 0 && errors.Is(err, unix.EINVAL) {
			return nil, fmt.Errorf("vfs: open %s: direct I/O is not supported by this filesystem: %w", name, err)
		}
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	f := &diskFile{File: os.NewFile(uintptr(fd), name), align: 1}
	if o&DirectIO != 0 {
		f.align = directAlignment(name)
	}
	if o&RandomAccess != 0 {
		// A hint; a filesystem that ignores it is not an error.
		_ = unix.Fadvise(fd, 0, 0, unix.FADV_RANDOM)
	}
	return f, nil
}

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

func (diskFS) OpenDir(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	return &diskDir{f}, nil
}

func (diskFS) Remove(name string) error                 { return os.Remove(name) }
func (diskFS) Rename(oldname, newname string) error     { return os.Rename(oldname, newname) }
func (diskFS) MkdirAll(dir string, p os.FileMode) error { return os.MkdirAll(dir, p) }
func (diskFS) Stat(name string) (os.FileInfo, error)    { return os.Stat(name) }

func (diskFS) List(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	sort.Strings(names)
	return names, nil
}

func (diskFS) Lock(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	// flock locks belong to the open file description, so a second Lock in
	// this process conflicts exactly as one from another process does.
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, name)
		}
		return nil, &os.PathError{Op: "flock", Path: name, Err: err}
	}
	return f, nil
}

func (f *diskFile) Sync() error {
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
	}
	return nil
}

func (f *diskFile) Size() (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (f *diskFile) Prefetch(off, n int64) error {
	// readahead(2) starts the reads and returns without waiting for them.
	_, _, errno := unix.Syscall(unix.SYS_READAHEAD, f.Fd(), uintptr(off), uintptr(n))
	if errno != 0 {
		return unix.Fadvise(int(f.Fd()), off, n, unix.FADV_WILLNEED)
	}
	return nil
}

func (f *diskFile) Evict() error { return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED) }

func (f *diskFile) Alignment() int { return f.align }

// diskDir is a directory opened for Sync.
type diskDir struct{ *os.File }

func (d *diskDir) Sync() error               { return d.File.Sync() }
func (d *diskDir) Write([]byte) (int, error) { return 0, errors.New("vfs: write to a directory") }
func (d *diskDir) ReadAt([]byte, int64) (int, error) {
	return 0, errors.New("vfs: read from a directory")
}
func (d *diskDir) Size() (int64, error)        { return 0, nil }
func (d *diskDir) Prefetch(off, n int64) error { return nil }
func (d *diskDir) Evict() error                { return nil }
func (d *diskDir) Alignment() int              { return 1 }
