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

// TestBackLinkHelping replays, step by step, the interleaving that the
// helping rule in skiplist.insert exists for: an insert of X between P and N
// has swung P's next link to X but stalls before fixing N's back link; an
// insert of Y between X and N runs to completion; then the stalled insert
// resumes. N's back link must end at Y, not at X.
func TestBackLinkHelping(t *testing.T) {
	m := New(0)
	s, a := &m.points, &m.arena
	for _, k := range []string{"a", "d"} {
		require.NoError(t, m.Add([]byte(k), 1, base.KindSet, nil))
	}
	trailer := base.MakeTrailer(1, base.KindSet)
	p, n := a.next(s.head, 0).Load(), a.prev(s.tail).Load()
	require.Equal(t, "a", string(base.UserKey(a.key(p))))
	require.Equal(t, "d", string(base.UserKey(a.key(n))))
	require.Equal(t, p, a.prev(n).Load())

	// The stalled insert of "b": its own links set, the predecessor swung to
	// it, the successor's back link not yet fixed.
	x, ok := a.newNode(1, []byte("b"), trailer, nil)
	require.True(t, ok)
	a.next(x, 0).Store(n)
	a.prev(x).Store(p)
	require.True(t, a.next(p, 0).CompareAndSwap(n, x))
	require.Equal(t, p, a.prev(n).Load(), "the back link lags")

	// A complete insert of "c", between "b" and "d".
	y, ok := a.newNode(1, []byte("c"), trailer, nil)
	require.True(t, ok)
	require.NoError(t, s.insert(y, 1, []byte("c"), trailer))
	require.Equal(t, y, a.prev(n).Load())
	require.Equal(t, x, a.prev(y).Load())

	// The stalled insert resumes: its back-link update must not win.
	require.False(t, a.prev(n).CompareAndSwap(p, x))

	md := &model{}
	for _, k := range []string{"a", "b", "c", "d"} {
		md.add(base.AppendKey(nil, []byte(k), 1, base.KindSet), nil)
	}
	md.requireScan(t, m.NewIter())
}

// TestConcurrentHotSpot makes every insert land at the same place (all
// versions of one user key, newest first, so each goes right after the
// previous newest), to make link and back-link races as likely as the
// machine allows, then checks both directions.
func TestConcurrentHotSpot(t *testing.T) {
	const writers, per = 4, 2000
	m := New(4 << 20)
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range per {
				seq := base.SeqNum(1 + w + writers*i)
				if err := m.Add([]byte("hot"), seq, base.KindSet, nil); err != nil {
					errs[w] = err
					return
				}
				if i%3 == 0 {
					// And some at the end of the list, after "hot".
					if err := m.Add(fmt.Appendf(nil, "tail%08d", int(seq)), seq, base.KindSet, nil); err != nil {
						errs[w] = err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	md := &model{}
	for w := range writers {
		for i := range per {
			seq := base.SeqNum(1 + w + writers*i)
			md.add(base.AppendKey(nil, []byte("hot"), seq, base.KindSet), nil)
			if i%3 == 0 {
				md.add(base.AppendKey(nil, fmt.Appendf(nil, "tail%08d", int(seq)), seq, base.KindSet), nil)
			}
		}
	}
	md.requireScan(t, m.NewIter())
}

// TestSharedPrefixesAndShortKeys inserts, in random order and through both
// Add and an Inserter, keys that share long prefixes (as SQL keys of one
// table and index do: they differ only in their last bytes), keys shorter
// than a machine word, prefixes of one another and the empty key, each in
// several versions, then checks both scan directions and Get against the
// model, and that every node's key and value read back whole whatever its
// tower height.
func TestSharedPrefixesAndShortKeys(t *testing.T) {
	long := bytes.Repeat([]byte{0x02, 0x81, 0x01}, 30)
	var ukeys [][]byte
	for _, p := range [][]byte{nil, long[:3], long[:7], long[:8], long[:9], long} {
		for _, s := range []string{"", "\x00", "\x00\x00", "\x01", "\xff", "\xff\xff", "ab"} {
			ukeys = append(ukeys, append(slices.Clone(p), s...))
		}
		for i := range 300 {
			ukeys = append(ukeys, binary.BigEndian.AppendUint64(slices.Clone(p), scramble(uint64(i))%1000))
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	rng.Shuffle(len(ukeys), func(i, j int) { ukeys[i], ukeys[j] = ukeys[j], ukeys[i] })

	m := New(4 << 20)
	md := &model{}
	var ins Inserter
	ins.Init(m)
	seq := base.SeqNum(1)
	for round := range 3 {
		for i, k := range ukeys {
			ik := base.AppendKey(nil, k, seq, base.KindSet)
			if md.has(ik) {
				continue
			}
			v := fmt.Appendf(nil, "v%d/%d", round, i)
			var err error
			if i%2 == 0 {
				err = m.Add(k, seq, base.KindSet, v)
			} else {
				err = ins.Add(k, seq, base.KindSet, v)
			}
			require.NoError(t, err)
			md.add(ik, v)
			seq++
		}
	}
	md.requireScan(t, m.NewIter())
	for _, k := range ukeys {
		for _, s := range []base.SeqNum{1, seq / 2, base.SeqNumMax} {
			wantV, wantKind, wantOK := md.get(k, s)
			v, kind, _, ok := m.Get(k, s)
			require.Equal(t, wantOK, ok, "%q@%d", k, s)
			if ok {
				require.Equal(t, string(wantV), string(v), "%q@%d", k, s)
				require.Equal(t, wantKind, kind)
			}
		}
	}

	// Every tower height holds its key and value intact.
	a := &m.arena
	heights := map[uint32]int{}
	for nd := a.next(m.points.head, 0).Load(); nd != m.points.tail; nd = a.next(nd, 0).Load() {
		h := a.header(nd)
		heights[h.height]++
		require.Equal(t, int(h.keyLen), len(a.key(nd)))
		require.Equal(t, int(h.valLen), len(a.value(nd)))
		require.Equal(t, byte('v'), a.value(nd)[0])
	}
	require.Greater(t, len(heights), 3, "towers of several heights")
}
