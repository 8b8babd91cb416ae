//go:build linux

package vfs

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// writeFile writes data to a new synced file and returns its name.
func writeFile(t *testing.T, data []byte) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "f")
	f, err := Default.Create(name)
	require.NoError(t, err)
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	return name
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>9)
	}
	return b
}

func TestMappedReadsMatchReadAt(t *testing.T) {
	if !CanMap {
		t.Skip("this process does not map files (vfs.CanMap)")
	}
	data := pattern(3*4096 + 123)
	name := writeFile(t, data)
	f, err := Default.Open(name, RandomAccess, MemoryMap)
	require.NoError(t, err)
	defer f.Close()
	m, ok := f.(Mapped)
	require.True(t, ok, "a disk file opened with MemoryMap is Mapped")

	for _, tc := range []struct {
		off, n int
		eof    bool
	}{
		{0, 1, false},
		{0, len(data), false},
		{4095, 2, false},
		{4096, 4096, false},
		{len(data) - 10, 10, false},
		{len(data) - 10, 20, true},
		{len(data), 1, true},
		{len(data) + 5000, 1, true},
	} {
		want := make([]byte, tc.n)
		wn, werr := f.ReadAt(want, int64(tc.off))
		got := make([]byte, tc.n)
		gn, gerr := m.ReadMapped(got, int64(tc.off))
		require.Equal(t, wn, gn, "off %d n %d", tc.off, tc.n)
		require.Equal(t, want[:wn], got[:gn], "off %d n %d", tc.off, tc.n)
		if tc.eof {
			require.ErrorIs(t, werr, io.EOF)
			require.ErrorIs(t, gerr, io.EOF)
		} else {
			require.NoError(t, werr)
			require.NoError(t, gerr)
		}
	}
	_, err = m.ReadMapped(make([]byte, 1), -1)
	require.Error(t, err)
}

func TestMappedFileClosed(t *testing.T) {
	if !CanMap {
		t.Skip("this process does not map files (vfs.CanMap)")
	}
	f, err := Default.Open(writeFile(t, pattern(8192)), MemoryMap)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = f.(Mapped).ReadMapped(make([]byte, 10), 0)
	require.ErrorIs(t, err, os.ErrClosed)
	require.ErrorIs(t, f.Close(), os.ErrClosed)
}

func TestMemoryMapOnlyWhereItCan(t *testing.T) {
	// An empty file cannot be mapped, and direct I/O bypasses the page
	// cache that a mapping reads through: both are opened plainly.
	empty := writeFile(t, nil)
	f, err := Default.Open(empty, MemoryMap)
	require.NoError(t, err)
	_, ok := f.(Mapped)
	require.False(t, ok)
	require.NoError(t, f.Close())

	name := writeFile(t, pattern(8192))
	f, err = Default.Open(name, MemoryMap, DirectIO)
	if err != nil {
		t.Skipf("direct I/O unavailable here: %v", err)
	}
	_, ok = f.(Mapped)
	require.False(t, ok)
	require.NoError(t, f.Close())
}

// TestMappedReadOfTruncatedFile cuts the file short under its mapping: the
// copy faults, and ReadMapped must answer as pread does (a short read at
// the end of the file), not crash the process.
func TestMappedReadOfTruncatedFile(t *testing.T) {
	if !CanMap {
		t.Skip("this process does not map files (vfs.CanMap)")
	}
	name := writeFile(t, pattern(4*4096))
	f, err := Default.Open(name, MemoryMap)
	require.NoError(t, err)
	defer f.Close()
	m := f.(Mapped)
	require.NoError(t, os.Truncate(name, 4096))
	n, err := m.ReadMapped(make([]byte, 100), 2*4096)
	require.Zero(t, n)
	require.ErrorIs(t, err, io.EOF)
	n, err = m.ReadMapped(make([]byte, 200), 4096-100)
	require.Equal(t, 100, n)
	require.ErrorIs(t, err, io.EOF)
	// What is still in the file still reads.
	p := make([]byte, 100)
	_, err = m.ReadMapped(p, 10)
	require.NoError(t, err)
	require.Equal(t, pattern(110)[10:], p)
}

// resident reports how many of name's pages are in the page cache.
func resident(t *testing.T, name string) int {
	t.Helper()
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	require.NoError(t, err)
	defer unix.Munmap(m)
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0])))
	require.Zero(t, errno)
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// TestEvictDropsMappedPages: pages that a mapping holds stay in the page
// cache through FADV_DONTNEED, so Evict, from any open file of the same
// name, must unmap them first. Cold-cache benchmarks rely on it.
func TestEvictDropsMappedPages(t *testing.T) {
	if !CanMap {
		t.Skip("this process does not map files (vfs.CanMap)")
	}
	data := pattern(16 * 4096)
	name := writeFile(t, data)
	// A filesystem that keeps pages through FADV_DONTNEED (tmpfs) cannot
	// show the difference.
	other, err := Default.Open(name)
	require.NoError(t, err)
	_, err = other.ReadAt(make([]byte, len(data)), 0)
	require.NoError(t, err)
	require.NoError(t, other.Evict())
	require.NoError(t, other.Close())
	if resident(t, name) != 0 {
		t.Skip("this filesystem keeps evicted pages in memory")
	}

	f, err := Default.Open(name, MemoryMap)
	require.NoError(t, err)
	defer f.Close()
	p := make([]byte, len(data))
	_, err = f.(Mapped).ReadMapped(p, 0)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, p))
	require.Equal(t, 16, resident(t, name))

	other, err = Default.Open(name)
	require.NoError(t, err)
	require.NoError(t, other.Evict())
	require.NoError(t, other.Close())
	require.Zero(t, resident(t, name))

	// The mapping still reads, faulting the pages in again.
	clear(p)
	_, err = f.(Mapped).ReadMapped(p, 0)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, p))
}

// TestAppendPages: one address per page a range covers, each the range's
// first byte in its page, and none outside the file or after Close.
func TestAppendPages(t *testing.T) {
	if !CanMap {
		t.Skip("this process does not map files (vfs.CanMap)")
	}
	ps := int64(os.Getpagesize())
	size := 4*ps + 100
	data := pattern(int(size))
	f, err := Default.Open(writeFile(t, data), MemoryMap)
	require.NoError(t, err)
	m := f.(Mapped)
	for _, tc := range []struct {
		name      string
		off, n    int64
		wantFirst []int64 // offsets whose bytes the addresses hold
	}{
		{"within a page", 10, 100, []int64{10}},
		{"a page exactly", ps, ps, []int64{ps}},
		{"across a boundary", ps - 1, 2, []int64{ps - 1, ps}},
		{"a block over two boundaries", ps/2 + 3, 2 * ps, []int64{ps/2 + 3, ps, 2 * ps}},
		{"cut at the end of the file", 4*ps + 50, ps, []int64{4*ps + 50}},
		{"past the end", size, 10, nil},
		{"empty", 10, 0, nil},
		{"negative", -1, 10, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := m.AppendPages(nil, tc.off, tc.n)
			require.Len(t, got, len(tc.wantFirst))
			for k, p := range got {
				require.Equal(t, data[tc.wantFirst[k]], *p, "address %d", k)
			}
			var want byte
			for _, off := range tc.wantFirst {
				want ^= data[off]
			}
			require.Equal(t, want, TouchPages(got))
		})
	}
	require.NoError(t, f.Close())
	require.Empty(t, m.AppendPages(nil, 0, 10))
}

// TestTouchPagesOfTruncatedFile: touching pages cut from under the mapping
// faults, and TouchPages must return, not crash the process.
func TestTouchPagesOfTruncatedFile(t *testing.T) {
	if !CanMap {
		t.Skip("this process does not map files (vfs.CanMap)")
	}
	ps := int64(os.Getpagesize())
	name := writeFile(t, pattern(int(4*ps)))
	f, err := Default.Open(name, MemoryMap)
	require.NoError(t, err)
	defer f.Close()
	m := f.(Mapped)
	addrs := m.AppendPages(nil, 0, 4*ps)
	require.Len(t, addrs, 4)
	require.NoError(t, os.Truncate(name, ps))
	TouchPages(addrs) // faults on the second page
	n, err := m.ReadMapped(make([]byte, 100), 2*ps)
	require.Zero(t, n)
	require.ErrorIs(t, err, io.EOF)
}

// BenchmarkTouchPages copies 15 blocks of 4 KiB from random places of a
// 256 MiB mapped file, in the page cache but mostly not in the CPU's
// caches, as a prepared scan of a large table does: plain, and after
// TouchPages has loaded all their pages at once.
func BenchmarkTouchPages(b *testing.B) {
	if !CanMap {
		b.Skip("this process does not map files (vfs.CanMap)")
	}
	const size, blocks, blockLen = 256 << 20, 15, 4096
	name := filepath.Join(b.TempDir(), "f")
	require.NoError(b, os.WriteFile(name, pattern(size), 0o644))
	f, err := Default.Open(name, MemoryMap)
	require.NoError(b, err)
	defer f.Close()
	m := f.(Mapped)
	offs := make([]int64, 1<<16)
	for i := range offs {
		offs[i] = int64(uint64(i)*0x9E3779B97F4A7C15>>36) % (size - blockLen)
	}
	dst := make([]byte, blocks*blockLen)
	var addrs []*byte
	for _, touch := range []bool{false, true} {
		name := "plain"
		if touch {
			name = "touched"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(blocks * blockLen)
			k := 0
			for b.Loop() {
				batch := offs[k : k+blocks]
				k = (k + blocks) % (len(offs) - blocks)
				if touch {
					addrs = addrs[:0]
					for _, off := range batch {
						addrs = m.AppendPages(addrs, off, blockLen)
					}
					TouchPages(addrs)
				}
				for i, off := range batch {
					if _, err := m.ReadMapped(dst[i*blockLen:(i+1)*blockLen], off); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
