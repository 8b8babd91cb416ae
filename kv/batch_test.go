package kv

import (
	"strings"
	"testing"

	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

// TestBatchIterSurvivesRollback: an iterator over an indexed batch sees the
// batch as it was when made, even after a rollback and new writes reuse
// the space the undone writes took.
func TestBatchIterSurvivesRollback(t *testing.T) {
	d, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer d.Close()
	b := d.NewIndexedBatch()
	require.NoError(t, b.Set([]byte("a"), []byte("1")))
	m := b.Mark()
	require.NoError(t, b.Set([]byte("b"), []byte("2")))
	require.NoError(t, b.Set([]byte("c"), []byte("3")))
	it, err := b.NewIter(nil)
	require.NoError(t, err)
	require.True(t, it.First())
	require.NoError(t, b.RollbackTo(m))
	require.NoError(t, b.Set([]byte(strings.Repeat("z", 40)), []byte("late")))
	var got []string
	for ok := it.Valid(); ok; ok = it.Next() {
		got = append(got, string(it.Key())+"="+string(it.Value()))
	}
	require.NoError(t, it.Close())
	require.Equal(t, []string{"a=1", "b=2", "c=3"}, got)
	// A new iterator sees the batch after the rollback.
	it, err = b.NewIter(nil)
	require.NoError(t, err)
	require.Equal(t, []string{"a=1", strings.Repeat("z", 40) + "=late"}, scanAll(t, it))
	require.NoError(t, it.Close())
}
