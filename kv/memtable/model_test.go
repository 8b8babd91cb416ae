package memtable

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/stretchr/testify/require"
)

// model is the reference a memtable list is checked against: entries sorted
// by base.Compare.
type model struct {
	entries []base.KV
}

func (md *model) add(ik, v []byte) {
	i := md.seekGE(ik)
	md.entries = slices.Insert(md.entries, i, base.KV{K: slices.Clone(ik), V: slices.Clone(v)})
}

func (md *model) seekGE(ik []byte) int {
	return sort.Search(len(md.entries), func(i int) bool { return base.Compare(md.entries[i].K, ik) >= 0 })
}

func (md *model) has(ik []byte) bool {
	i := md.seekGE(ik)
	return i < len(md.entries) && base.Compare(md.entries[i].K, ik) == 0
}

// get is Memtable.Get by linear reasoning: the first entry at or after the
// search key, if it has the same user key.
func (md *model) get(ukey []byte, seq base.SeqNum) ([]byte, base.Kind, bool) {
	i := md.seekGE(base.MakeSearchKey(nil, ukey, seq))
	if i == len(md.entries) || !bytes.Equal(md.entries[i].UserKey(), ukey) {
		return nil, 0, false
	}
	e := &md.entries[i]
	return e.V, e.Kind(), true
}

// requireAt checks that kv is the model's entry at pos, or nil when pos is
// outside the model.
func (md *model) requireAt(t testing.TB, kv *base.KV, pos int, op string) {
	t.Helper()
	if pos < 0 || pos >= len(md.entries) {
		require.Nil(t, kv, "%s: expected exhausted iterator, got %s", op, fmtKV(kv))
		return
	}
	require.NotNil(t, kv, "%s: expected %s, got nil", op, base.FormatKey(md.entries[pos].K))
	require.Equal(t, base.FormatKey(md.entries[pos].K), base.FormatKey(kv.K), op)
	require.Equal(t, string(md.entries[pos].V), string(kv.V), op)
}

// requireScan checks a full forward and a full backward scan of it.
func (md *model) requireScan(t testing.TB, it *Iter) {
	t.Helper()
	i := 0
	for kv := it.First(); kv != nil; kv = it.Next() {
		md.requireAt(t, kv, i, "forward scan")
		i++
	}
	require.Equal(t, len(md.entries), i, "forward scan length")
	i = len(md.entries) - 1
	for kv := it.Last(); kv != nil; kv = it.Prev() {
		md.requireAt(t, kv, i, "backward scan")
		i--
	}
	require.Equal(t, -1, i, "backward scan length")
}

func fmtKV(kv *base.KV) string {
	if kv == nil {
		return "nil"
	}
	return fmt.Sprintf("%s=%q", base.FormatKey(kv.K), kv.V)
}

// TestRandomizedAgainstModel drives a memtable and the model with the same
// random entries, then compares them under random seeks, steps in both
// directions and Gets, at several fill levels.
func TestRandomizedAgainstModel(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			const n = 3000
			// Few user keys, so most have many versions; some are prefixes
			// of others and one is empty.
			ukeys := [][]byte{{}, []byte("a"), []byte("a\x00"), []byte("ab"), []byte("b")}
			for i := range 40 {
				ukeys = append(ukeys, fmt.Appendf(nil, "key%03d", i*7))
			}
			// Keys that are never added, for misses.
			absent := [][]byte{[]byte("0"), []byte("aa"), []byte("key0005"), []byte("zzz"), []byte("key\xff")}
			randUkey := func() []byte {
				if rng.IntN(5) == 0 {
					return absent[rng.IntN(len(absent))]
				}
				return ukeys[rng.IntN(len(ukeys))]
			}
			randSearchKey := func() []byte {
				kinds := []base.Kind{base.KindDelete, base.KindSet, base.KindMax}
				return base.AppendKey(nil, randUkey(), base.SeqNum(rng.IntN(n+2)), kinds[rng.IntN(len(kinds))])
			}

			m := New(8 << 20)
			md := &model{}
			it := m.NewIter()
			seqs := rng.Perm(n) // distinct sequence numbers in random order
			for added, s := range seqs {
				ukey := ukeys[rng.IntN(len(ukeys))]
				kind := base.KindSet
				if rng.IntN(4) == 0 {
					kind = base.KindDelete
				}
				value := fmt.Appendf(nil, "v%d", s)
				require.NoError(t, m.Add(ukey, base.SeqNum(s+1), kind, value))
				md.add(base.AppendKey(nil, ukey, base.SeqNum(s+1), kind), value)

				if added != 0 && added != 10 && added != 500 && added != n-1 {
					continue
				}
				md.requireScan(t, it)
				pos := -1
				for range 4000 {
					var kv *base.KV
					var op string
					switch rng.IntN(10) {
					case 0:
						k := randSearchKey()
						op = "SeekGE " + base.FormatKey(k)
						kv, pos = it.SeekGE(k), md.seekGE(k)
					case 1:
						k := randSearchKey()
						op = "SeekLT " + base.FormatKey(k)
						kv, pos = it.SeekLT(k), md.seekGE(k)-1
					case 2:
						op = "First"
						kv, pos = it.First(), 0
					case 3:
						op = "Last"
						kv, pos = it.Last(), len(md.entries)-1
					case 4, 5:
						op = "Next"
						kv, pos = it.Next(), min(pos+1, len(md.entries))
					case 6, 7:
						op = "Prev"
						kv, pos = it.Prev(), max(pos-1, -1)
					case 8:
						// Before or after the current entry: a key at or
						// before it, or with the iterator unpositioned,
						// makes NextGE a SeekGE.
						k := randSearchKey()
						op = "NextGE " + base.FormatKey(k)
						kv, pos = it.NextGE(k), md.seekGE(k)
					case 9:
						// An entry up to 100 ahead, or a search key just past
						// one: the finger search's own path.
						j := min(max(pos, 0)+1+rng.IntN(100), len(md.entries)-1)
						k := md.entries[j].K
						if rng.IntN(2) == 0 {
							k = base.AppendKey(nil, md.entries[j].UserKey(), 0, 0)
						}
						op = "NextGE ahead " + base.FormatKey(k)
						kv, pos = it.NextGE(k), md.seekGE(k)
					}
					md.requireAt(t, kv, pos, op)
					require.NoError(t, it.Error())
				}
				for range 2000 {
					ukey, seq := randUkey(), base.SeqNum(rng.IntN(n+2))
					wv, wk, wok := md.get(ukey, seq)
					v, k, _, ok := m.Get(ukey, seq)
					require.Equal(t, wok, ok, "Get(%q, %d)", ukey, seq)
					require.Equal(t, wk, k, "Get(%q, %d)", ukey, seq)
					require.Equal(t, wv, v, "Get(%q, %d)", ukey, seq)
				}
			}
			// Get at the largest sequence number sees the newest version.
			for _, ukey := range ukeys {
				wv, wk, wok := md.get(ukey, base.SeqNumMax)
				v, k, _, ok := m.Get(ukey, base.SeqNumMax+5)
				require.Equal(t, wok, ok)
				require.Equal(t, wk, k)
				require.Equal(t, wv, v)
			}
			require.NoError(t, it.Close())
		})
	}
}
