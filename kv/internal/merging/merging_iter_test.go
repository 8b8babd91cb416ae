package merging

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/stretchr/testify/require"
)

// TestDataDriven runs testdata/merging. Commands:
//
//	define          one child per input line: entries "ukey#seq,KIND:value"
//	                separated by spaces; an empty child is the line "empty"
//	iter            iterator commands, one per line (see runIterCmds)
//	close           closes the iterator and prints what Close returned
func TestDataDriven(t *testing.T) {
	var m *Iter
	datadriven.RunTest(t, "testdata/merging", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "define":
			var iters []base.InternalIterator
			for line := range strings.SplitSeq(strings.TrimSpace(d.Input), "\n") {
				var kvs []base.KV
				if line = strings.TrimSpace(line); line != "empty" {
					for f := range strings.FieldsSeq(line) {
						kv, err := parseKV(f)
						require.NoError(t, err)
						kvs = append(kvs, kv)
					}
				}
				iters = append(iters, newSliceIter(kvs))
			}
			m = New(iters...)
			return ""
		case "iter":
			return runIterCmds(t, m, d.Input)
		case "close":
			return fmt.Sprintf("%v\n", m.Close())
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

// entry is one entry of the model: a sorted list of all children's entries.
type entry struct {
	kv    base.KV
	child int
}

// randomChildren returns n children with random sorted contents drawn from a
// small key space, so that children overlap and sometimes hold the same
// internal key, and the model: every entry in (internal key, child) order.
func randomChildren(rng *rand.Rand, n int) ([]*sliceIter, []entry) {
	var model []entry
	children := make([]*sliceIter, n)
	for c := range children {
		seen := map[string]bool{}
		var kvs []base.KV
		for range rng.IntN(40) {
			ukey := []byte{byte('a' + rng.IntN(8))}
			if rng.IntN(3) == 0 {
				ukey = append(ukey, byte('a'+rng.IntN(3)))
			}
			k := base.AppendKey(nil, ukey, base.SeqNum(1+rng.IntN(6)), base.Kind(rng.IntN(2)))
			if seen[string(k)] {
				continue
			}
			seen[string(k)] = true
			kvs = append(kvs, base.KV{K: k, V: fmt.Appendf(nil, "c%d", c)})
		}
		sort.Slice(kvs, func(i, j int) bool { return base.Compare(kvs[i].K, kvs[j].K) < 0 })
		children[c] = newSliceIter(kvs)
		for _, kv := range kvs {
			model = append(model, entry{kv, c})
		}
	}
	sort.SliceStable(model, func(i, j int) bool {
		if c := base.Compare(model[i].kv.K, model[j].kv.K); c != 0 {
			return c < 0
		}
		return model[i].child < model[j].child
	})
	return children, model
}

func randomSearchKey(rng *rand.Rand) []byte {
	ukey := []byte{byte('a' - 1 + rng.IntN(10))}
	if rng.IntN(3) == 0 {
		ukey = append(ukey, byte('a'+rng.IntN(3)))
	}
	switch rng.IntN(3) {
	case 0:
		return base.MakeSearchKey(nil, ukey, base.SeqNumMax)
	case 1:
		return base.MakeSearchKey(nil, ukey, base.SeqNum(rng.IntN(8)))
	}
	return base.AppendKey(nil, ukey, base.SeqNum(1+rng.IntN(6)), base.Kind(rng.IntN(2)))
}

// TestRandomized drives merges of random children with random moves in both
// directions and random seeks, and checks every result against the model.
// Some runs give one child an injected failure at a random call: the merge
// must then return nil with the child's error, keep returning nil from Next
// and Prev, and recover on the next seek.
func TestRandomized(t *testing.T) {
	const unpositioned = -2
	fired := 0
	for seed := range 300 {
		rng := rand.New(rand.NewPCG(uint64(seed), 42))
		children, model := randomChildren(rng, rng.IntN(7))
		var faulty *sliceIter
		if len(children) > 0 && rng.IntN(2) == 0 {
			faulty = children[rng.IntN(len(children))]
			faulty.failAt = 1 + rng.IntN(300)
		}
		iters := make([]base.InternalIterator, len(children))
		for i, c := range children {
			iters[i] = c
		}
		m := New(iters...)
		n := len(model)
		pos, failed := unpositioned, false
		var trace []string
		for range 400 {
			var kv *base.KV
			var desc string
			firedBefore := faulty != nil && faulty.fired
			op := rng.IntN(23)
			var ahead []byte // for next-ge: a key after the current entry
			if op >= 20 && !failed && pos >= 0 && pos < n {
				// Children may hold equal internal keys: the key must sort
				// after the current entry's, not merely come later.
				if j := pos + 1 + rng.IntN(12); j < n && op < 22 && base.Compare(model[j].kv.K, model[pos].kv.K) > 0 {
					ahead = model[j].kv.K
				} else if k := randomSearchKey(rng); base.Compare(k, model[pos].kv.K) > 0 {
					ahead = k
				}
			}
			if op >= 20 && ahead == nil {
				op = 0 // next-ge needs an entry to start from and a key after it
			}
			switch {
			case op >= 20:
				desc, kv = "next-ge "+base.FormatKey(ahead), m.NextGE(ahead)
				pos = sort.Search(n, func(i int) bool { return base.Compare(model[i].kv.K, ahead) >= 0 })
			case op < 7:
				desc, kv = "next", m.Next()
				if !failed {
					switch {
					case pos == unpositioned || pos == -1:
						pos = 0
					case pos < n:
						pos++
					}
				}
			case op < 14:
				desc, kv = "prev", m.Prev()
				if !failed {
					switch {
					case pos == unpositioned || pos == n:
						pos = n - 1
					case pos >= 0:
						pos--
					}
				}
			case op < 16:
				key := randomSearchKey(rng)
				desc, kv = "seek-ge "+base.FormatKey(key), m.SeekGE(key)
				pos = sort.Search(n, func(i int) bool { return base.Compare(model[i].kv.K, key) >= 0 })
				failed = false
			case op < 18:
				key := randomSearchKey(rng)
				desc, kv = "seek-lt "+base.FormatKey(key), m.SeekLT(key)
				pos = sort.Search(n, func(i int) bool { return base.Compare(model[i].kv.K, key) >= 0 }) - 1
				failed = false
			case op < 19:
				desc, kv = "first", m.First()
				pos, failed = 0, false
			default:
				desc, kv = "last", m.Last()
				pos, failed = n-1, false
			}
			trace = append(trace, desc+" -> "+formatKV(kv))
			msg := lazyMsg(func() string { return fmt.Sprintf("seed %d\n%s", seed, strings.Join(trace, "\n")) })
			if faulty != nil && faulty.fired && !firedBefore {
				require.Nil(t, kv, msg)
				require.ErrorIs(t, m.Error(), errInjected, msg)
				failed = true
				fired++
				continue
			}
			if failed {
				require.Nil(t, kv, msg)
				require.ErrorIs(t, m.Error(), errInjected, msg)
				continue
			}
			require.NoError(t, m.Error(), msg)
			if pos < 0 || pos >= n {
				require.Nil(t, kv, msg)
				continue
			}
			require.NotNil(t, kv, msg)
			require.Equal(t, formatKV(&model[pos].kv), formatKV(kv), msg)
		}
		err := m.Close()
		if failed {
			require.ErrorIs(t, err, errInjected)
		} else {
			require.NoError(t, err)
		}
		for _, c := range children {
			require.True(t, c.closed)
		}
	}
	// Enough runs hit their injected failure for the error path to count.
	require.Greater(t, fired, 50)
}

// lazyMsg is a failure message built only when a check fails.
type lazyMsg func() string

func (l lazyMsg) String() string { return l() }

func TestClose(t *testing.T) {
	a, b, c := newSliceIter(nil), newSliceIter(nil), newSliceIter(nil)
	b.closeErr = fmt.Errorf("b: close")
	c.closeErr = fmt.Errorf("c: close")
	m := New(a, b, c)
	require.Nil(t, m.First())
	require.EqualError(t, m.Close(), "b: close")
	require.True(t, a.closed && b.closed && c.closed)

	// The error that stopped the merge comes before any Close error.
	a, b = newSliceIter(nil), newSliceIter(nil)
	a.failAt, b.closeErr = 1, fmt.Errorf("b: close")
	m.Init(a, b)
	require.Nil(t, m.First())
	require.ErrorIs(t, m.Error(), errInjected)
	require.ErrorIs(t, m.Close(), errInjected)
	require.True(t, a.closed && b.closed)

	// A closed Iter has no children left and does not touch them again.
	require.Nil(t, m.First())
	require.Nil(t, m.Next())
	require.NoError(t, m.Close())
}

func TestNoChildren(t *testing.T) {
	var m Iter
	require.Nil(t, m.First())
	require.Nil(t, m.Next())
	require.Nil(t, m.Prev())
	require.Nil(t, m.SeekGE(base.MakeSearchKey(nil, []byte("a"), base.SeqNumMax)))
	require.Nil(t, m.SeekLT(base.MakeSearchKey(nil, []byte("a"), base.SeqNumMax)))
	require.NoError(t, m.Error())
	require.NoError(t, m.Close())
}

// interleaved returns n children holding keys 0..total-1 (8-byte big-endian
// user keys) dealt out round-robin.
func interleaved(n, total int) []base.InternalIterator {
	kvs := make([][]base.KV, n)
	for i := range total {
		ukey := binary.BigEndian.AppendUint64(nil, uint64(i))
		kvs[i%n] = append(kvs[i%n], base.KV{K: base.AppendKey(nil, ukey, 1, base.KindSet), V: ukey})
	}
	iters := make([]base.InternalIterator, n)
	for i := range iters {
		iters[i] = newSliceIter(kvs[i])
	}
	return iters
}

func TestZeroAllocs(t *testing.T) {
	m := New(interleaved(4, 1000)...)
	require.NotNil(t, m.First())
	allocs := testing.AllocsPerRun(2000, func() {
		if m.Next() == nil {
			m.First()
		}
	})
	require.Zero(t, allocs, "Next")
	require.NotNil(t, m.Last())
	allocs = testing.AllocsPerRun(2000, func() {
		if m.Prev() == nil {
			m.Last()
		}
	})
	require.Zero(t, allocs, "Prev")
	allocs = testing.AllocsPerRun(1000, func() {
		m.Next()
		m.Prev()
		m.Prev()
	})
	require.Zero(t, allocs, "direction switches")

	// Init reuses the memory of the previous use.
	children := interleaved(4, 10)
	allocs = testing.AllocsPerRun(100, func() {
		m.Init(children...)
	})
	require.Zero(t, allocs, "Init")
}

func BenchmarkNext(b *testing.B) {
	for _, n := range []int{2, 4, 8} {
		b.Run(fmt.Sprintf("children=%d", n), func(b *testing.B) {
			m := New(interleaved(n, 1<<16)...)
			m.First()
			b.ReportAllocs()
			for b.Loop() {
				if m.Next() == nil {
					m.First()
				}
			}
		})
	}
}
