package memtable

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/stretchr/testify/require"
)

// TestInserterAgainstModel adds runs of keys through one Inserter (ascending
// runs with gaps, as a sorted batch arrives; descending and random runs; keys
// already present) into a memtable that Add fills with other keys in
// between, and checks the memtable against the model after each run.
func TestInserterAgainstModel(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			m := New(16 << 20)
			md := &model{}
			var ins Inserter
			ins.Init(m)
			seq := base.SeqNum(1)
			var added [][]byte
			for run := range 200 {
				n := 1 + rng.IntN(60)
				ukeys := make([][]byte, n)
				for i := range ukeys {
					ukeys[i] = fmt.Appendf(nil, "k%05d", rng.IntN(3000))
				}
				switch run % 4 {
				case 0, 1:
					slices.SortFunc(ukeys, func(a, b []byte) int { return bytes.Compare(a, b) })
				case 2:
					slices.SortFunc(ukeys, func(a, b []byte) int { return bytes.Compare(b, a) })
				}
				for _, uk := range ukeys {
					if len(added) > 0 && rng.IntN(10) == 0 {
						// An internal key already present: ErrExists, and the
						// inserter goes on correctly afterwards.
						k := added[rng.IntN(len(added))]
						err := ins.Add(base.UserKey(k), base.Seq(k), base.KindOfKey(k), nil)
						require.ErrorIs(t, err, ErrExists)
					}
					kind := base.KindSet
					if rng.IntN(5) == 0 {
						kind = base.KindDelete
					}
					v := fmt.Appendf(nil, "v%d", seq)
					var err error
					if rng.IntN(8) == 0 {
						err = m.Add(uk, seq, kind, v) // another writer's entry
					} else {
						err = ins.Add(uk, seq, kind, v)
					}
					require.NoError(t, err)
					k := base.AppendKey(nil, uk, seq, kind)
					md.add(k, v)
					added = append(added, k)
					seq++
				}
				if run%20 == 0 || run == 199 {
					md.requireScan(t, m.NewIter())
				}
			}
			for range 1000 {
				uk := fmt.Appendf(nil, "k%05d", rng.IntN(3000))
				s := base.SeqNum(rng.IntN(int(seq) + 1))
				wv, wk, wok := md.get(uk, s)
				v, k, _, ok := m.Get(uk, s)
				require.Equal(t, wok, ok)
				require.Equal(t, wk, k)
				require.Equal(t, wv, v)
			}
		})
	}
}

// TestInserterConcurrent runs writers that each insert ascending keys
// through their own Inserter, interleaved with one another's, while readers
// scan; every entry must be there once and in order (run with -race).
func TestInserterConcurrent(t *testing.T) {
	const writers, perWriter, readers = 4, 5000, 2
	m := New(8 << 20)
	stop := make(chan struct{})
	var wg, rg sync.WaitGroup
	readErrs := make([]error, readers)
	for r := range readers {
		rg.Go(func() { readErrs[r] = reader(m, stop, uint64(r)) })
	}
	added := make([][][]byte, writers)
	writeErrs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			var ins Inserter
			ins.Init(m)
			rng := rand.New(rand.NewPCG(uint64(w), 5))
			k := 0
			for i := range perWriter {
				if i%500 == 0 {
					k = rng.IntN(1000) // a new ascending run
				}
				k += rng.IntN(3)
				seq := base.SeqNum(1 + w + writers*i)
				ukey := fmt.Appendf(nil, "k%06d", k)
				key := base.AppendKey(nil, ukey, seq, base.KindSet)
				if err := ins.Add(ukey, seq, base.KindSet, valueFor(key)); err != nil {
					writeErrs[w] = err
					return
				}
				added[w] = append(added[w], key)
			}
		})
	}
	wg.Wait()
	close(stop)
	rg.Wait()
	for _, err := range append(writeErrs, readErrs...) {
		require.NoError(t, err)
	}
	md := &model{}
	for _, keys := range added {
		for _, k := range keys {
			md.add(k, valueFor(k))
		}
	}
	md.requireScan(t, m.NewIter())
}

// TestInserterZeroAllocs: adding through an Inserter allocates nothing.
func TestInserterZeroAllocs(t *testing.T) {
	m := New(8 << 20)
	var ins Inserter
	ins.Init(m)
	key := make([]byte, 8)
	seq := base.SeqNum(1)
	allocs := testing.AllocsPerRun(1000, func() {
		binary.BigEndian.PutUint64(key, uint64(seq))
		if err := ins.Add(key, seq, base.KindSet, key); err != nil {
			t.Fatal(err)
		}
		seq++
	})
	require.Zero(t, allocs)
}
