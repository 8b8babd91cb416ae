package kv

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
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

// TestBatchCopyEntry: a write read back by the offset Len gave before it
// is the same write in another batch, whatever the buffer did since (grew,
// took more writes); an offset outside the batch is an error.
func TestBatchCopyEntry(t *testing.T) {
	d, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer d.Close()
	src := d.NewIndexedBatch()
	var offs []int
	write := func(f func() error) {
		offs = append(offs, src.Len())
		require.NoError(t, f())
	}
	write(func() error { return src.Set([]byte("a"), []byte("1")) })
	write(func() error { return src.Delete([]byte("b")) })
	write(func() error { return src.DeleteRange([]byte("c"), []byte("e")) })
	write(func() error { return src.Set([]byte("d"), []byte(strings.Repeat("v", 1<<16))) }) // grows the buffer
	dst := d.NewIndexedBatch()
	for _, off := range offs {
		require.NoError(t, src.CopyEntry(dst, off))
	}
	require.Equal(t, src.Count(), dst.Count())
	require.Equal(t, src.Len(), dst.Len(), "the same entries")
	v, err := dst.Get([]byte("a"), nil)
	require.NoError(t, err)
	require.Equal(t, "1", string(v))
	v, err = dst.Get([]byte("d"), nil)
	require.NoError(t, err)
	require.Len(t, v, 1<<16)
	require.Error(t, src.CopyEntry(dst, 0), "inside the header")
	require.Error(t, src.CopyEntry(dst, src.Len()), "past the end")
}

// TestIndexedBatchCommitInKeyOrder: an indexed batch with keys of every
// length class (the index keeps each key's position from its length's
// varint), written out of order, with several writes of one key, deletions
// and a range deletion, reads back from its index in key order, and, once
// committed (in key order through the memtable's inserter), from the
// database exactly as the same writes applied by a plain batch.
func TestIndexedBatchCommitInKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	open := func(name string) *DB {
		d, err := Open(name, testOptions(vfs.NewMem()))
		require.NoError(t, err)
		return d
	}
	indexed, plain := open("/a"), open("/b")
	defer indexed.Close()
	defer plain.Close()
	bi, bp := indexed.NewIndexedBatch(), plain.NewBatch()
	lens := []int{0, 1, 5, 126, 127, 128, 300, 16383, 16384, 20000}
	var keys [][]byte
	for _, l := range lens {
		for i := range 3 {
			k := bytes.Repeat([]byte{byte('a' + i)}, l)
			keys = append(keys, append(k, byte(rng.IntN(4))))
		}
	}
	model := map[string]string{}
	for i := range 400 {
		k := keys[rng.IntN(len(keys))]
		switch {
		case i == 200:
			require.NoError(t, bi.DeleteRange([]byte("b"), []byte("c")))
			require.NoError(t, bp.DeleteRange([]byte("b"), []byte("c")))
			for mk := range model {
				if mk >= "b" && mk < "c" {
					delete(model, mk)
				}
			}
		case rng.IntN(5) == 0:
			require.NoError(t, bi.Delete(k))
			require.NoError(t, bp.Delete(k))
			delete(model, string(k))
		default:
			v := fmt.Appendf(nil, "v%d", i)
			require.NoError(t, bi.Set(k, v))
			require.NoError(t, bp.Set(k, v))
			model[string(k)] = string(v)
		}
	}
	var want []string
	for k, v := range model {
		want = append(want, k+"="+v)
	}
	slices.Sort(want)
	it, err := bi.NewIter(nil)
	require.NoError(t, err)
	require.Equal(t, want, scanAll(t, it), "the batch's own view")
	require.NoError(t, it.Close())
	require.NoError(t, bi.Commit(nil))
	require.NoError(t, bp.Commit(nil))
	for _, d := range []*DB{indexed, plain} {
		it, err := d.NewIter(nil)
		require.NoError(t, err)
		require.Equal(t, want, scanAll(t, it))
		require.NoError(t, it.Close())
	}
}

// TestBatchIndexStreams adds keys to an indexed batch the way SQL writes
// do (interleaved ascending streams, random keys, rewrites of a key) and
// checks every level of the index: each list is in (key ascending, ordinal
// descending) order and each level's nodes are among the level below's,
// and the batch reads back its last write of every key.
func TestBatchIndexStreams(t *testing.T) {
	d, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer d.Close()
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 9))
		b := d.NewIndexedBatch()
		last := map[string]string{}
		var streams [3]int
		for i := range 3000 {
			var k string
			switch r := rng.IntN(10); {
			case r < 4:
				streams[0] += 1 + rng.IntN(3)
				k = fmt.Sprintf("r%08d", streams[0])
			case r < 7:
				k = fmt.Sprintf("x%08d", rng.IntN(100000))
			case r < 8:
				streams[1]++
				k = fmt.Sprintf("m%08d", streams[1])
			case r < 9 && len(last) > 0:
				for lk := range last {
					k = lk
					break
				}
			default:
				streams[2]--
				k = fmt.Sprintf("d%08d", 1<<20+streams[2]) // descending
			}
			v := fmt.Sprint(i)
			require.NoError(t, b.Set([]byte(k), []byte(v)))
			last[k] = v
		}
		x := b.index
		for lvl := range x.height {
			below := map[*batchNode]bool{}
			if lvl > 0 {
				for n := x.head.next[lvl-1]; n != nil; n = n.next[lvl-1] {
					below[n] = true
				}
			}
			var prev *batchNode
			for n := x.head.next[lvl]; n != nil; n = n.next[lvl] {
				if prev != nil {
					require.True(t, x.less(prev, x.keyOf(n), keyPrefix(x.keyOf(n)), n.ord), "seed %d level %d: %q#%d before %q#%d",
						seed, lvl, x.keyOf(prev), prev.ord, x.keyOf(n), n.ord)
				}
				if lvl > 0 {
					require.True(t, below[n], "seed %d level %d: a node missing below", seed, lvl)
				}
				prev = n
			}
		}
		count := 0
		for n := x.head.next[0]; n != nil; n = n.next[0] {
			count++
		}
		require.Equal(t, 3000, count)
		for k, v := range last {
			got, err := b.Get([]byte(k), nil)
			require.NoError(t, err)
			require.Equal(t, v, string(got), k)
		}
		require.NoError(t, b.Close())
	}
}
