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
	// AppendPages appends to dst, for TouchPages, the address of the
	// first byte in [off, off+n) of each page of the mapping that the
	// range covers (the part of it inside the file). It reads nothing.
	AppendPages(dst []*byte, off, n int64) []*byte
}

// TouchPages loads the byte at each address, which AppendPages gave, and
// returns their XOR (meaningless, but it keeps the loads). It is how a
// caller about to copy several small reads from mappings has their memory
// latencies overlap: a copy waits on the page walk of each page it enters
// and on its first cache misses, and copies made one after another wait
// one after another. Independent loads in one tight loop are in flight
// together, so the waits are paid about once; the copies that follow find
// the pages' translations cached and their first lines in the CPU's
// caches, with the hardware prefetcher already streaming the rest. With
// 15 blocks of 4 KiB, in the page cache and not in the CPU's, the copies
// took about 30% less time.
//
// A fault (the mapping's page could not be read, or the file was closed
// and unmapped since AppendPages) stops the loop and is otherwise ignored:
// the read that follows meets it again and reports it.
func TouchPages(addrs []*byte) (x byte) {
	if len(addrs) == 0 {
		return 0
	}
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		_ = recover()
	}()
	for _, p := range addrs {
		x ^= *p
	}
	return x
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

// pageSize is the distance between the addresses AppendPages gives.
var pageSize = int64(os.Getpagesize())

func (f *mappedFile) AppendPages(dst []*byte, off, n int64) []*byte {
	if f.closed.Load() || off < 0 || n <= 0 || off >= int64(len(f.m)) {
		return dst
	}
	end := min(off+n, int64(len(f.m)))
	for p := off; p < end; p = (p + pageSize) &^ (pageSize - 1) {
		dst = append(dst, &f.m[p])
	}
	return dst
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
