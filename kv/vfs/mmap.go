package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Mapped is implemented by a file that is also mapped into memory (opened
// with [MemoryMap]). ReadMapped is ReadAt without a system call: it copies
// from the mapping. For data already in the page cache that is several
// times cheaper than pread, whose cost on a 4 KiB block is mostly the call
// itself; for data that is not, the copy waits on a page fault that reads
// the pages one at a time, so large and cold reads belong to ReadAt.
//
// A fault in the copy (an I/O error under the mapping, or a file cut short
// by someone else) is not a crash: the copy runs with
// [debug.SetPanicOnFault], recovers, and reads the bytes with pread
// instead, which returns the error (or the short read) as ReadAt would.
type Mapped interface {
	File
	ReadMapped(p []byte, off int64) (int, error)
}

// mappedFile is a disk file with a read-only shared mapping of its whole
// length at open. Files opened for reading never change, so the mapping
// stays right for the file's life.
type mappedFile struct {
	*diskFile
	m      []byte
	id     fileID
	closed atomic.Bool
}

// fileID names a file by device and inode, however it was opened.
type fileID struct{ dev, ino uint64 }

func idOf(f *os.File) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fileID{}, err
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, nil
}

// mappings are the live mappings of the process, by file, so that Evict on
// any open file can drop the pages that mappings hold: the page cache keeps
// a page that a process maps, and FADV_DONTNEED alone would leave it
// cached. Close takes a mapping out, under the mutex, before it unmaps it,
// so that Evict's madvise never meets an unmapped range.
var mappings struct {
	sync.Mutex
	byFile map[fileID][]*mappedFile
}

// CanMap reports whether MemoryMap maps files in this process. A 32-bit
// process does not: its address space is too small to map every table it
// opens next to its heap.
const CanMap = strconv.IntSize == 64

// mapFile maps f; on any failure (an empty file, no address space, a
// filesystem that cannot map) it returns f as it is, since the mapping only
// makes reads cheaper.
func mapFile(f *diskFile, random bool) File {
	if !CanMap {
		return f
	}
	size, err := f.Size()
	if err != nil || size <= 0 || int64(int(size)) != size {
		return f
	}
	id, err := idOf(f.File)
	if err != nil {
		return f
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return f
	}
	if random {
		// As with FADV_RANDOM on the descriptor: a fault reads only the
		// pages it needs, not the 128 KiB around them.
		_ = unix.Madvise(m, unix.MADV_RANDOM)
	}
	mf := &mappedFile{diskFile: f, m: m, id: id}
	mappings.Lock()
	if mappings.byFile == nil {
		mappings.byFile = make(map[fileID][]*mappedFile)
	}
	mappings.byFile[id] = append(mappings.byFile[id], mf)
	mappings.Unlock()
	return mf
}

func (f *mappedFile) ReadMapped(p []byte, off int64) (n int, err error) {
	if f.closed.Load() {
		return 0, &os.PathError{Op: "read", Path: f.Name(), Err: os.ErrClosed}
	}
	if off < 0 {
		return 0, &os.PathError{Op: "read", Path: f.Name(), Err: unix.EINVAL}
	}
	if off >= int64(len(f.m)) {
		return 0, io.EOF
	}
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			// The page could not be read (an I/O error, or the file
			// was cut short): pread says which, with its own error or
			// a short read.
			n, err = f.diskFile.ReadAt(p, off)
			if err != nil && !errors.Is(err, io.EOF) {
				err = fmt.Errorf("vfs: reading %s: %d bytes at offset %d (its memory mapping faulted: %v): %w", f.Name(), len(p), off, r, err)
			}
		}
	}()
	n = copy(p, f.m[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Close unmaps the file and closes it. Reads must have ended: the mapping
// is gone, and ReadMapped fails with os.ErrClosed.
func (f *mappedFile) Close() error {
	if f.closed.Swap(true) {
		return &os.PathError{Op: "close", Path: f.Name(), Err: os.ErrClosed}
	}
	// Out of the registry first, so that no Evict touches the mapping
	// while it goes.
	mappings.Lock()
	list := mappings.byFile[f.id]
	if i := slices.Index(list, f); i >= 0 {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(mappings.byFile, f.id)
	} else {
		mappings.byFile[f.id] = list
	}
	mappings.Unlock()
	err := unix.Munmap(f.m)
	if cerr := f.diskFile.Close(); err == nil {
		err = cerr
	}
	return err
}

// evict drops f's pages from the page cache, those that the process's
// mappings of f hold included.
func evict(f *os.File) error {
	if id, err := idOf(f); err == nil {
		mappings.Lock()
		for _, m := range mappings.byFile[id] {
			// MADV_DONTNEED on a shared file mapping only unmaps the
			// pages from this process; the next access faults them in.
			if err := unix.Madvise(m.m, unix.MADV_DONTNEED); err != nil {
				mappings.Unlock()
				return &os.PathError{Op: "madvise", Path: f.Name(), Err: err}
			}
		}
		mappings.Unlock()
	}
	return evictPages(f)
}
