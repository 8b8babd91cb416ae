package memtable

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/stretchr/testify/require"
)

// testEntry is one entry of a test batch.
type testEntry struct {
	ukey, value []byte
	rangeDel    bool // ukey is the start and value the end of a tombstone
}

func randomBatch(rng *rand.Rand, id int) []testEntry {
	batch := make([]testEntry, 1+rng.IntN(8))
	for i := range batch {
		e := &batch[i]
		e.ukey = fmt.Appendf(nil, "key-%06d-%d-%s", id, i, make([]byte, rng.IntN(40)))
		e.value = make([]byte, rng.IntN(300))
		if rng.IntN(10) == 0 {
			e.rangeDel = true
			e.value = append(append([]byte{}, e.ukey...), 0)
		}
	}
	return batch
}

func batchSize(batch []testEntry) int {
	n := 0
	for _, e := range batch {
		n += EntrySize(len(e.ukey), len(e.value))
	}
	return n
}

func applyBatch(m *Memtable, batch []testEntry, seq base.SeqNum) error {
	for i, e := range batch {
		var err error
		if e.rangeDel {
			err = m.AddRangeDelete(e.ukey, e.value, seq+base.SeqNum(i))
		} else {
			err = m.Add(e.ukey, seq+base.SeqNum(i), base.KindSet, e.value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func TestReserveAccounting(t *testing.T) {
	m := New(MinArenaSize)
	s0 := m.Size()
	for _, tc := range []struct {
		n      int
		ok     bool
		growth int
	}{
		{0, true, 0},
		{-1, false, 0},
		{100, true, 100},
		{m.Capacity(), false, 0},
		{m.Capacity() - s0 - 100, true, m.Capacity() - s0 - 100},
		{1, false, 0},
		{0, true, 0},
	} {
		before := m.Size()
		require.Equal(t, tc.ok, m.Reserve(tc.n), "Reserve(%d) at size %d", tc.n, before)
		require.Equal(t, before+tc.growth, m.Size(), "Reserve(%d)", tc.n)
	}
	require.Equal(t, m.Capacity(), m.Size())
}

// TestReserveThenApply fills a memtable batch by batch, the way the engine
// does: each batch is applied only after its reservation succeeded, so no
// Add fails and no batch is half applied; Size is exactly the sentinels plus
// the reservations.
func TestReserveThenApply(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	m := New(MinArenaSize)
	want := m.Size()
	var seq base.SeqNum = 1
	var applied [][]testEntry
	for {
		batch := randomBatch(rng, len(applied))
		need := batchSize(batch)
		if !m.Reserve(need) {
			require.Equal(t, want, m.Size(), "a refused reservation takes nothing")
			require.Greater(t, want+need, m.Capacity())
			break
		}
		want += need
		require.Equal(t, want, m.Size())
		require.NoError(t, applyBatch(m, batch, seq))
		require.Equal(t, want, m.Size(), "allocations stay within the reservations")
		seq += base.SeqNum(len(batch))
		applied = append(applied, batch)
	}
	require.Greater(t, len(applied), 10)
	require.LessOrEqual(t, m.Size(), m.Capacity())

	// Every applied entry is there; nothing of the refused batch is.
	seq = 1
	for _, batch := range applied {
		for i, e := range batch {
			if e.rangeDel {
				it := m.NewRangeDelIter()
				kv := it.SeekGE(base.AppendKey(nil, e.ukey, seq+base.SeqNum(i), base.KindRangeDelete))
				require.NotNil(t, kv)
				require.Equal(t, e.value, kv.V)
				continue
			}
			v, _, _, ok := m.Get(e.ukey, seq+base.SeqNum(i))
			require.True(t, ok)
			require.Equal(t, e.value, v)
		}
		seq += base.SeqNum(len(batch))
	}
	n := 0
	it := m.NewIter()
	for kv := it.First(); kv != nil; kv = it.Next() {
		n++
	}
	var points int
	for _, batch := range applied {
		for _, e := range batch {
			if !e.rangeDel {
				points++
			}
		}
	}
	require.Equal(t, points, n)
}

// TestAddUnreserved fills the arena with Adds that have no reservation: the
// last one fails cleanly, consuming nothing, and each success takes exactly
// one node.
func TestAddUnreserved(t *testing.T) {
	m := New(MinArenaSize)
	md := &model{}
	value := make([]byte, 100)
	for i := 0; ; i++ {
		ukey := fmt.Appendf(nil, "k%05d", i)
		before := m.Size()
		err := m.Add(ukey, base.SeqNum(i+1), base.KindSet, value)
		if err != nil {
			require.ErrorIs(t, err, ErrArenaFull)
			require.Equal(t, before, m.Size())
			require.Less(t, m.Capacity()-before, EntrySize(len(ukey), len(value)))
			break
		}
		md.add(base.AppendKey(nil, ukey, base.SeqNum(i+1), base.KindSet), value)
		grew := uint64(m.Size() - before)
		require.GreaterOrEqual(t, grew, nodeSize(1, uint64(len(ukey))+base.TrailerLen, uint64(len(value))))
		require.LessOrEqual(t, int(grew), EntrySize(len(ukey), len(value)))
		require.Zero(t, grew%nodeAlign)
	}
	md.requireScan(t, m.NewIter())
	require.False(t, m.Reserve(m.Capacity()-m.Size()+1))
	require.True(t, m.Reserve(m.Capacity()-m.Size()))
}

// TestReserveAfterUnreservedAdds checks that a writer mixing unreserved and
// reserved Adds still gets the guarantee: a reservation counts from what was
// allocated.
func TestReserveAfterUnreservedAdds(t *testing.T) {
	m := New(MinArenaSize)
	value := make([]byte, 1000)
	for i := range 20 {
		require.NoError(t, m.Add(fmt.Appendf(nil, "u%d", i), base.SeqNum(i+1), base.KindSet, value))
	}
	used := m.Size()
	need := EntrySize(2, len(value)) * 5
	require.True(t, m.Reserve(need))
	require.Equal(t, used+need, m.Size())
	for i := range 5 {
		require.NoError(t, m.Add(fmt.Appendf(nil, "r%d", i), base.SeqNum(100+i), base.KindSet, value))
	}
	require.Equal(t, used+need, m.Size())
}

// TestConcurrentReserve races committers for the last bytes of an arena:
// every success is counted once and the total never passes the capacity.
func TestConcurrentReserve(t *testing.T) {
	m := New(MinArenaSize)
	s0 := m.Size()
	var granted atomic.Int64
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for fails := 0; fails < 50; {
				n := 1 + rng.IntN(300)
				if m.Reserve(n) {
					granted.Add(int64(n))
				} else {
					fails++
				}
			}
		})
	}
	wg.Wait()
	require.Equal(t, s0+int(granted.Load()), m.Size())
	require.LessOrEqual(t, m.Size(), m.Capacity())
	require.Greater(t, m.Size(), m.Capacity()-300, "reservations stop only near the end")
}

// TestConcurrentReserveThenApply has several committers reserve and apply
// batches at once until the arena is full: no Add may fail.
func TestConcurrentReserveThenApply(t *testing.T) {
	m := New(256 << 10)
	var seq atomic.Uint64
	var reserved, entries atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 2))
			for i := 0; ; i++ {
				batch := randomBatch(rng, g*1_000_000+i)
				need := batchSize(batch)
				if !m.Reserve(need) {
					return
				}
				reserved.Add(int64(need))
				first := seq.Add(uint64(len(batch))) - uint64(len(batch)) + 1
				if err := applyBatch(m, batch, base.SeqNum(first)); err != nil {
					errs <- err
					return
				}
				entries.Add(int64(len(batch)))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.LessOrEqual(t, m.Size(), m.Capacity())
	require.Greater(t, entries.Load(), int64(100))
	n := 0
	for _, it := range []*Iter{m.NewIter(), m.NewRangeDelIter()} {
		for kv := it.First(); kv != nil; kv = it.Next() {
			n++
		}
	}
	require.Equal(t, int(entries.Load()), n)
}
