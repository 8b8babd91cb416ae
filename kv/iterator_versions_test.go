package kv

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

// TestIteratorSkipsVersions checks iterators over keys with long runs of
// versions, which forward moves skip with a forward seek once they have
// stepped over maxSequentialSkips of them: older versions in the
// memtables and level 0, versions newer than a snapshot, deleted keys, and
// an indexed batch on top. Every state is compared with a model under full
// scans and random seeks and steps in both directions.
func TestIteratorSkipsVersions(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 32))
			d, err := Open("/db", testOptions(vfs.NewMem()))
			require.NoError(t, err)
			defer d.Close()

			const keys = 12
			key := func(i int) string { return fmt.Sprintf("k%02d", i) }
			model := map[string]string{}
			type snap struct {
				s     *Snapshot
				model map[string]string
			}
			var snaps []snap
			for round := range 60 {
				b := d.NewBatch()
				for i := range keys {
					// Hot keys take a version every round, cold ones rarely.
					if i%3 != 0 && rng.IntN(8) != 0 {
						continue
					}
					if rng.IntN(6) == 0 {
						require.NoError(t, b.Delete([]byte(key(i))))
						delete(model, key(i))
					} else {
						v := fmt.Sprintf("v%d-%d", round, i)
						require.NoError(t, b.Set([]byte(key(i)), []byte(v)))
						model[key(i)] = v
					}
				}
				require.NoError(t, b.Commit(NoSync))
				require.NoError(t, b.Close())
				if rng.IntN(10) == 0 {
					snaps = append(snaps, snap{d.NewSnapshot(), maps.Clone(model)})
				}
				if round == 20 || round == 40 {
					require.NoError(t, d.Flush())
				}
			}
			defer func() {
				for _, s := range snaps {
					require.NoError(t, s.s.Close())
				}
			}()

			check := func(name string, it *Iterator, want map[string]string) {
				t.Helper()
				defer func() { require.NoError(t, it.Close()) }()
				live := slices.Sorted(maps.Keys(want))
				var got []string
				for ok := it.First(); ok; ok = it.Next() {
					got = append(got, string(it.Key())+"="+string(it.Value()))
				}
				require.NoError(t, it.Error())
				var wantKVs []string
				for _, k := range live {
					wantKVs = append(wantKVs, k+"="+want[k])
				}
				require.Equal(t, wantKVs, got, "%s: forward scan", name)
				pos := -1 // in live; len(live) past the end
				for range 300 {
					var ok bool
					var op string
					switch rng.IntN(4) {
					case 0:
						k := key(rng.IntN(keys + 1))
						op = "SeekGE " + k
						ok = it.SeekGE([]byte(k))
						pos, _ = slices.BinarySearch(live, k)
					case 1:
						if pos < 0 || pos >= len(live) {
							continue
						}
						op = "Next"
						ok = it.Next()
						pos++
					case 2:
						if pos < 0 || pos >= len(live) {
							continue
						}
						op = "Prev"
						ok = it.Prev()
						pos--
					default:
						k := key(rng.IntN(keys + 1))
						op = "SeekLT " + k
						ok = it.SeekLT([]byte(k))
						pos, _ = slices.BinarySearch(live, k)
						pos--
					}
					if pos < 0 || pos >= len(live) {
						require.False(t, ok, "%s: %s", name, op)
						continue
					}
					require.True(t, ok, "%s: %s", name, op)
					require.Equal(t, live[pos]+"="+want[live[pos]], string(it.Key())+"="+string(it.Value()), "%s: %s", name, op)
				}
			}

			it, err := d.NewIter(nil)
			require.NoError(t, err)
			check("latest", it, model)
			for i, s := range snaps {
				it, err := s.s.NewIter(nil)
				require.NoError(t, err)
				check(fmt.Sprintf("snapshot %d", i), it, s.model)
			}

			// An indexed batch over the latest state, with versions of its own.
			b := d.NewIndexedBatch()
			defer b.Close()
			over := maps.Clone(model)
			for round := range 20 {
				i := rng.IntN(keys)
				if round%5 == 4 {
					require.NoError(t, b.Delete([]byte(key(i))))
					delete(over, key(i))
				} else {
					v := fmt.Sprintf("b%d", round)
					require.NoError(t, b.Set([]byte(key(i)), []byte(v)))
					over[key(i)] = v
				}
			}
			it, err = b.NewIter(nil)
			require.NoError(t, err)
			check("batch", it, over)
		})
	}
}
