package vfs

import (
	"errors"
	"io"
	"os"
)

// File is an open file.
type File interface {
	io.Closer
	// ReadAt reads len(p) bytes at off. With direct I/O, off, len(p) and the
	// address of p must be multiples of Alignment.
	io.ReaderAt
	// Write appends to a file opened with Create.
	io.Writer
	// Sync makes every byte written so far durable.
	Sync() error
	// Size returns the file's current length.
	Size() (int64, error)
	// Prefetch asks the operating system to read [off, off+n) into its cache
	// in the background (readahead(2)). It is a hint: implementations may do
	// nothing.
	Prefetch(off, n int64) error
	// Evict asks the operating system to drop the file's cached pages
	// (FADV_DONTNEED), so that the next reads go to the device. It is a hint,
	// for cold-cache benchmarks.
	Evict() error
	// Alignment is the alignment ReadAt requires of offsets, lengths and
	// buffer addresses: 1 for buffered files, the device's direct-I/O
	// alignment (usually 512 or 4096) for files opened with DirectIO.
	Alignment() int
}

// OpenOption modifies how Open opens a file for reading.
type OpenOption uint8

const (
	// RandomAccess tells the kernel not to read ahead on this file
	// (FADV_RANDOM): the engine does its own readahead where it wants it.
	RandomAccess OpenOption = 1 << iota
	// DirectIO opens the file with O_DIRECT: reads bypass the page cache and
	// must be aligned (see File.Alignment).
	DirectIO
	// MemoryMap also maps the file into memory, where the filesystem can,
	// and returns a [Mapped] file. It is ignored with DirectIO, whose point
	// is to bypass the page cache that a mapping reads through.
	MemoryMap
)

// FS is a filesystem.
type FS interface {
	// Create creates a file for writing, truncating any file of that name.
	// The new directory entry is durable only after the directory is synced.
	Create(name string) (File, error)
	// Open opens a file for reading.
	Open(name string, opts ...OpenOption) (File, error)
	// OpenDir opens a directory so that Sync can make its entries durable.
	OpenDir(name string) (File, error)
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// Rename renames a file, replacing newname atomically if it exists.
	Rename(oldname, newname string) error
	// List returns the names of the entries of dir, sorted.
	List(dir string) ([]string, error)
	// MkdirAll creates dir and its parents.
	MkdirAll(dir string, perm os.FileMode) error
	// Stat describes a file.
	Stat(name string) (os.FileInfo, error)
	// Lock takes an exclusive lock on name (creating it), held until the
	// returned Closer is closed. It fails with ErrLocked, without waiting,
	// when the lock is held, by this process or another.
	Lock(name string) (io.Closer, error)
}

// ErrLocked is returned by FS.Lock when another holder has the lock.
var ErrLocked = errors.New("vfs: lock held by another process")

// ReadFile reads a whole file.
func ReadFile(fs FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n, err := f.Size()
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, 0); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
		return nil, err
	}
	return b, nil
}

// WriteFileSync creates name with data, syncs it, and syncs its directory:
// when it returns nil the file and its contents survive a crash.
func WriteFileSync(fs FS, dir, name string, data []byte) error {
	f, err := fs.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return SyncDir(fs, dir)
}

// SyncDir makes the entries of dir durable.
func SyncDir(fs FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}
