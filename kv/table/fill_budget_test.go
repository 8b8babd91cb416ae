package table

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/strata-db/strata/kv/cache"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/stats"
	"github.com/stretchr/testify/require"
)

// TestFillBudget checks that iterators sharing a FillBudget insert blocks
// into the cache until they have inserted its Limit, then read their misses
// without inserting them, returning the same entries, and still use the
// blocks the cache holds.
func TestFillBudget(t *testing.T) {
	var es []entry
	for i := range 2000 {
		es = append(es, entry{ikey(fmt.Sprintf("k%05d", i), 1, base.KindSet), bytes.Repeat([]byte{byte('a' + i%26)}, 40)})
	}
	data := buildTable(t, es, nil, WriterOptions{BlockSize: 512})
	c := cache.New(1 << 20)
	r, err := openBytes(data, ReaderOptions{Cache: c})
	require.NoError(t, err)
	defer r.Close()
	require.Greater(t, r.NumDataBlocks(), 100)

	scan := func(o IterOptions) int {
		t.Helper()
		it := r.NewIter(o)
		n := 0
		for kv := it.First(); kv != nil; kv = it.Next() {
			require.Equal(t, base.FormatKey(es[n].k), base.FormatKey(kv.K))
			require.Equal(t, es[n].v, kv.V)
			n++
		}
		require.NoError(t, it.Close())
		return n
	}

	// A budget of 4 KiB, shared by two iterators over the first half and
	// the whole table.
	budget := &FillBudget{Limit: 4 << 10}
	op := &stats.Counters{}
	it := r.NewIter(IterOptions{FillBudget: budget, Stats: op})
	for kv := it.First(); kv != nil && bytes.Compare(kv.UserKey(), []byte("k01000")) < 0; kv = it.Next() {
	}
	require.NoError(t, it.Close())
	added := op.Get(stats.BlockCacheAdd)
	require.GreaterOrEqual(t, c.Usage(), budget.used, "the budget counts the blocks that went into the cache")
	require.GreaterOrEqual(t, budget.used, budget.Limit)
	require.Less(t, budget.used, budget.Limit+1024, "no block inserted once the budget was spent")
	require.Less(t, int(added), r.NumDataBlocks()/2, "the first half's later blocks were read without inserting them")

	op2 := &stats.Counters{}
	require.Len(t, es, scan(IterOptions{FillBudget: budget, Stats: op2}))
	require.Zero(t, op2.Get(stats.BlockCacheAdd), "a spent budget inserts nothing")
	require.Equal(t, added, op2.Get(stats.BlockCacheHit), "the blocks the budget paid for serve later scans")

	// A reset budget pays for more blocks.
	budget.Reset()
	op4 := &stats.Counters{}
	require.Len(t, es, scan(IterOptions{FillBudget: budget, Stats: op4}))
	require.NotZero(t, op4.Get(stats.BlockCacheAdd), "a reset budget inserts again")
	added += op4.Get(stats.BlockCacheAdd)

	// Without a budget every block goes in.
	op3 := &stats.Counters{}
	require.Len(t, es, scan(IterOptions{Stats: op3}))
	require.EqualValues(t, r.NumDataBlocks(), op3.Get(stats.BlockCacheAdd)+op3.Get(stats.BlockCacheHit))
	require.EqualValues(t, r.NumDataBlocks()-int(added), op3.Get(stats.BlockCacheAdd))
}
