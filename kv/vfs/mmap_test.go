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
