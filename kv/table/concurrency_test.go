package table

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/strata-db/strata/kv/cache"
	"github.com/strata-db/strata/kv/filter"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/stats"
	"github.com/stretchr/testify/require"
)

// TestConcurrentReaders runs many goroutines iterating and getting on one
// Reader whose cache is far smaller than the file, so that blocks are
// evicted and reloaded under the readers' feet. Run it with -race.
func TestConcurrentReaders(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 30))
	es := randomEntries(rng, 4000, false)
	data := buildTable(t, es, nil, WriterOptions{BlockSize: 512, Compression: SnappyCompression,
		FilterPolicy: filter.Policy{Type: filter.Ribbon}})
	c := cache.New(8 << 10)
	st := &stats.Counters{}
	r, err := openBytes(data, ReaderOptions{Cache: c, CacheNS: c.NewNamespace(), FileNum: 1, Stats: st})
	require.NoError(t, err)
	defer r.Close()

	const workers, ops = 8, 300
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- concurrentWorker(r, es, rand.New(rand.NewPCG(uint64(w), 31)), ops)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Zero(t, c.Pinned(), "every block handle was released")
	require.Positive(t, st.Get(stats.BlockCacheHit))
	require.Positive(t, st.Get(stats.BlockCacheMiss))
}

func concurrentWorker(r *Reader, es []entry, rng *rand.Rand, ops int) error {
	op := &stats.Counters{}
	for range ops {
		if rng.IntN(2) == 0 {
			u := base.UserKey(es[rng.IntN(len(es))].k)
			seq := base.SeqNum(rng.IntN(1100))
			want := getTruth(es, u, seq)
			v, _, _, found, err := r.Get(u, seq, nil, op)
			switch {
			case err != nil:
				return err
			case found != (want != nil):
				return fmt.Errorf("Get(%q, %d): found %t, want %s", u, seq, found, fmtEntry(want))
			case found && !bytes.Equal(v, want.v):
				return fmt.Errorf("Get(%q, %d) = %q, want %s", u, seq, v, fmtEntry(want))
			}
			continue
		}
		it := r.NewIter(IterOptions{Stats: op})
		m := &model{es: es, pos: -2}
		k := randomSearchKey(rng, es)
		got, want := it.SeekGE(k), m.seekGE(k)
		for n := 0; ; n++ {
			if (got == nil) != (want == nil) || got != nil && (!bytes.Equal(got.K, want.k) || !bytes.Equal(got.V, want.v)) {
				it.Close()
				return fmt.Errorf("after SeekGE(%s) and %d moves: got %s, want %s (err %v)", base.FormatKey(k), n, fmtKV(got), fmtEntry(want), it.Error())
			}
			if got == nil || n == 40 {
				break
			}
			if rng.IntN(4) == 0 {
				got, want = it.Prev(), m.prev()
			} else {
				got, want = it.Next(), m.next()
			}
		}
		if err := it.Close(); err != nil {
			return err
		}
	}
	return nil
}
