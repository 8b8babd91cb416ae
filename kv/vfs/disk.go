package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	fd, err := openRead(name, o&DirectIO != 0)
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
		adviseRandom(fd)
	}
	if o&MemoryMap != 0 && o&DirectIO == 0 {
		return mapFile(f, o&RandomAccess != 0), nil
	}
	return f, nil
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
	// A lock file can be deleted under its holder (a "stale lock" cleaned
	// up by hand); the next Lock would then create and lock a new one and
	// two processes would share the folder. The folder itself cannot be
	// replaced that way, so it is locked too, where the filesystem allows.
	dir, err := os.Open(filepath.Dir(name))
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := unix.Flock(int(dir.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		dir.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("%w: %s (its lock file was replaced)", ErrLocked, filepath.Dir(name))
		}
		return f, nil // a filesystem without directory locks: the file's lock alone
	}
	return dirLock{f, dir}, nil
}

// dirLock holds a lock file and its folder, both locked.
type dirLock struct{ file, dir *os.File }

func (l dirLock) Close() error {
	err := l.dir.Close()
	if ferr := l.file.Close(); err == nil {
		err = ferr
	}
	return err
}

func (f *diskFile) Sync() error {
	if err := syncData(f.File); err != nil {
		return &os.PathError{Op: "sync", Path: f.Name(), Err: err}
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

func (f *diskFile) Prefetch(off, n int64) error { return prefetch(f.File, off, n) }

func (f *diskFile) Evict() error { return evict(f.File) }

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
