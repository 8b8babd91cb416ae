package uring

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func newRing(t *testing.T, entries uint32) *Ring {
	t.Helper()
	r, err := New(entries)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("io_uring unavailable: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Close()) })
	return r
}

func writeFile(t *testing.T, n int) (string, []byte) {
	t.Helper()
	data := make([]byte, n)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	name := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(name, data, 0o644))
	return name, data
}

// Reads in flight together complete with their own bytes, whatever order
// the kernel finishes them in; a read past the end is short, one at the
// end reads nothing, and one on a closed descriptor reports EBADF.
func TestReads(t *testing.T) {
	r := newRing(t, 8)
	name, data := writeFile(t, 1<<20+100)
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()
	fd := int(f.Fd())

	type read struct {
		off  int64
		n    int
		want []byte
	}
	reads := []read{
		{0, 4096, data[:4096]},
		{12345, 70000, data[12345 : 12345+70000]},
		{1 << 19, 1 << 19, data[1<<19 : 1<<20]},
		{1<<20 + 50, 4096, data[1<<20+50:]},      // short: 50 bytes left
		{int64(len(data)), 10, data[len(data):]}, // at the end
	}
	bufs := make([][]byte, len(reads))
	for i, rd := range reads {
		bufs[i] = make([]byte, rd.n)
		require.NoError(t, r.Read(fd, bufs[i], rd.off, uint64(i)+100))
	}
	require.Equal(t, len(reads), r.InFlight())
	require.Len(t, r.pinned, len(reads), "the ring holds every buffer the kernel may still write")
	seen := map[uint64]bool{}
	for range reads {
		ud, res, ok, err := r.Completion(true)
		require.NoError(t, err)
		require.True(t, ok)
		require.False(t, seen[ud], "completion %d twice", ud)
		seen[ud] = true
		rd := reads[ud-100]
		require.Equal(t, len(rd.want), int(res), "read at %d", rd.off)
		require.Equal(t, rd.want, bufs[ud-100][:res], "read at %d", rd.off)
	}
	require.Empty(t, r.pinned)
	_, _, ok, err := r.Completion(true) // nothing in flight: does not block
	require.NoError(t, err)
	require.False(t, ok)

	require.NoError(t, r.Read(1<<30, make([]byte, 10), 0, 7))
	ud, res, ok, err := r.Completion(true)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(7), ud)
	require.ErrorIs(t, ErrnoError(res), unix.EBADF)
}

// Direct reads work through the ring when the file system takes O_DIRECT.
func TestDirectRead(t *testing.T) {
	r := newRing(t, 2)
	name, data := writeFile(t, 1<<16)
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		t.Skipf("no O_DIRECT here: %v", err)
	}
	defer unix.Close(fd)
	m, err := unix.Mmap(-1, 0, 8192, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	require.NoError(t, err)
	defer unix.Munmap(m)
	require.NoError(t, r.Read(fd, m, 4096, 1))
	_, res, ok, err := r.Completion(true)
	require.NoError(t, err)
	require.True(t, ok)
	if res == -int32(unix.EINVAL) {
		t.Skip("the file system refuses direct reads")
	}
	require.Equal(t, int32(8192), res)
	require.Equal(t, data[4096:12288], m)
}

// A full ring refuses another read, Close waits for the reads in flight,
// and a closed ring refuses reads.
func TestFullAndClose(t *testing.T) {
	r, err := New(2)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("io_uring unavailable: %v", err)
	}
	require.NoError(t, err)
	name, _ := writeFile(t, 1<<16)
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()
	buf := make([]byte, 3*4096)
	for i := range 2 {
		require.NoError(t, r.Read(int(f.Fd()), buf[i*4096:(i+1)*4096], 0, uint64(i)))
	}
	require.ErrorIs(t, r.Read(int(f.Fd()), buf[8192:], 0, 2), ErrFull)
	require.NoError(t, r.Close())
	require.Equal(t, 0, r.InFlight())
	require.ErrorIs(t, r.Read(int(f.Fd()), buf, 0, 3), ErrClosed)
	require.NoError(t, r.Close())
}
