package errorfs

import (
	"errors"
	"syscall"
	"testing"

	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

func TestRules(t *testing.T) {
	fs := Wrap(vfs.NewMem(), 1)
	require.NoError(t, fs.MkdirAll("/d", 0o755))
	fs.SetRules(&Rule{Ops: OpWrite, Path: "*.log", Prob: 1, After: 2, Err: ErrNoSpc})
	f, err := fs.Create("/d/000001.log")
	require.NoError(t, err)
	for i := range 2 {
		_, err := f.Write([]byte("ok"))
		require.NoError(t, err, "write %d is before After", i)
	}
	_, err = f.Write([]byte("full"))
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.True(t, IsInjected(err))
	g, err := fs.Create("/d/000002.sst")
	require.NoError(t, err)
	_, err = g.Write([]byte("sst writes are not matched"))
	require.NoError(t, err)
	require.EqualValues(t, 1, fs.Injected.Load())

	// Turning rules off heals the disk.
	fs.SetRules()
	_, err = f.Write([]byte("ok again"))
	require.NoError(t, err)
}

func TestShortWriteAndLimit(t *testing.T) {
	mem := vfs.NewMem()
	fs := Wrap(mem, 7)
	f, err := fs.Create("/x")
	require.NoError(t, err)
	fs.SetRules(&Rule{Ops: OpWrite, Prob: 1, Short: true, Limit: 1})
	n, err := f.Write(make([]byte, 1000))
	require.Error(t, err)
	require.Less(t, n, 1000)
	st, _ := mem.Stat("/x")
	require.EqualValues(t, n, st.Size(), "the prefix reached the file")
	_, err = f.Write([]byte("after the limit"))
	require.NoError(t, err)
}

func TestRandomSeeded(t *testing.T) {
	count := func(seed uint64) int64 {
		fs := Wrap(vfs.NewMem(), seed)
		fs.SetRules(&Rule{Ops: OpCreate | OpSync, Prob: 0.3})
		for range 200 {
			if f, err := fs.Create("/f"); err == nil {
				f.Sync()
			}
		}
		return fs.Injected.Load()
	}
	a, b := count(3), count(3)
	require.Equal(t, a, b, "the same seed injects the same faults")
	require.Greater(t, a, int64(20))
	err := &Rule{}
	_ = err
	require.False(t, IsInjected(errors.New("other")))
}
