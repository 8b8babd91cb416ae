package vfs

import (
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// testFS runs the same behaviour checks against every implementation.
func testFS(t *testing.T, fs FS, dir string) {
	require.NoError(t, fs.MkdirAll(dir, 0o755))
	name := filepath.Join(dir, "a")
	f, err := fs.Create(name)
	require.NoError(t, err)
	_, err = f.Write([]byte("hello, "))
	require.NoError(t, err)
	_, err = f.Write([]byte("world"))
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())

	r, err := fs.Open(name, RandomAccess)
	require.NoError(t, err)
	n, err := r.Size()
	require.NoError(t, err)
	require.EqualValues(t, 12, n)
	buf := make([]byte, 5)
	_, err = r.ReadAt(buf, 7)
	require.NoError(t, err)
	require.Equal(t, "world", string(buf))
	_, err = r.ReadAt(buf, 10)
	require.ErrorIs(t, err, io.EOF)
	require.NoError(t, r.Prefetch(0, 12))
	require.NoError(t, r.Close())

	require.NoError(t, fs.Rename(name, filepath.Join(dir, "b")))
	names, err := fs.List(dir)
	require.NoError(t, err)
	require.Equal(t, []string{"b"}, names)
	_, err = fs.Open(name)
	require.True(t, errors.Is(err, os.ErrNotExist), "%v", err)
	st, err := fs.Stat(filepath.Join(dir, "b"))
	require.NoError(t, err)
	require.EqualValues(t, 12, st.Size())
	require.NoError(t, SyncDir(fs, dir))

	l, err := fs.Lock(filepath.Join(dir, "LOCK"))
	require.NoError(t, err)
	_, err = fs.Lock(filepath.Join(dir, "LOCK"))
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, l.Close())
	l, err = fs.Lock(filepath.Join(dir, "LOCK"))
	require.NoError(t, err)
	require.NoError(t, l.Close())

	require.NoError(t, fs.Remove(filepath.Join(dir, "b")))
	b, err := ReadFile(fs, filepath.Join(dir, "LOCK"))
	require.NoError(t, err)
	require.Empty(t, b)
}

func TestDisk(t *testing.T) { testFS(t, Default, t.TempDir()) }

// TestDiskLockFileDeleted: deleting a held lock file does not let a second
// Lock take the folder.
func TestDiskLockFileDeleted(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "LOCK")
	l, err := Default.Lock(name)
	require.NoError(t, err)
	require.NoError(t, os.Remove(name))
	_, err = Default.Lock(name)
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, l.Close())
	l, err = Default.Lock(name)
	require.NoError(t, err)
	require.NoError(t, l.Close())
}
func TestMem(t *testing.T) { testFS(t, NewMem(), "/db") }

func TestDirectIO(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "d")
	data := make([]byte, 3*4096)
	for i := range data {
		data[i] = byte(i * 7)
	}
	require.NoError(t, WriteFileSync(Default, dir, name, data))
	f, err := Default.Open(name, DirectIO)
	if err != nil {
		t.Skipf("direct I/O unavailable here: %v", err)
	}
	defer f.Close()
	a := f.Alignment()
	require.True(t, a >= 512 && a&(a-1) == 0, "alignment %d", a)
	buf := AlignedBuffer(2*a, a)
	require.True(t, IsAligned(buf, a))
	_, err = f.ReadAt(buf, int64(a))
	require.NoError(t, err)
	require.Equal(t, data[a:3*a], buf)
	require.NoError(t, f.Evict())
}

func TestAlign(t *testing.T) {
	require.EqualValues(t, 4096, AlignDown(5000, 4096))
	require.EqualValues(t, 8192, AlignUp(5000, 4096))
	require.EqualValues(t, 4096, AlignUp(4096, 4096))
	for _, a := range []int{1, 8, 512, 4096} {
		b := AlignedBuffer(100, a)
		require.Len(t, b, 100)
		require.Equal(t, a <= 1 || 100%a == 0, IsAligned(b, a))
	}
}

func TestCrashClone(t *testing.T) {
	fs := NewMem()
	require.NoError(t, fs.MkdirAll("/db", 0o755))
	// Synced file in a synced directory: survives whole.
	f, _ := fs.Create("/db/synced")
	f.Write([]byte("durable"))
	require.NoError(t, f.Sync())
	f.Write([]byte("-lost"))
	require.NoError(t, SyncDir(fs, "/db"))
	// Synced data, directory entry never synced: gone.
	g, _ := fs.Create("/db/unlinked")
	g.Write([]byte("x"))
	g.Sync()

	c := fs.CrashClone(CrashOptions{})
	b, err := ReadFile(c, "/db/synced")
	require.NoError(t, err)
	require.Equal(t, "durable", string(b))
	_, err = c.Open("/db/unlinked")
	require.True(t, errors.Is(err, os.ErrNotExist))

	// A rename that was not synced is undone.
	require.NoError(t, fs.Rename("/db/synced", "/db/renamed"))
	c = fs.CrashClone(CrashOptions{})
	_, err = c.Open("/db/renamed")
	require.Error(t, err)
	_, err = c.Open("/db/synced")
	require.NoError(t, err)

	// Keeping unsynced bytes keeps a prefix of the tail, never more.
	rng := rand.New(rand.NewPCG(3, 4))
	sawMore := false
	for range 50 {
		c = fs.CrashClone(CrashOptions{KeepUnsynced: 1, Rand: rng})
		b, err := ReadFile(c, "/db/synced")
		require.NoError(t, err)
		require.Equal(t, "durable-lost"[:len(b)], string(b))
		require.GreaterOrEqual(t, len(b), len("durable"))
		sawMore = sawMore || len(b) > len("durable")
	}
	require.True(t, sawMore)
}
