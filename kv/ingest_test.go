package kv

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-db/strata/kv/internal/manifest"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/strata-db/strata/kv/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

func ingestKey(prefix string, i int) []byte { return fmt.Appendf(nil, "%s%06d", prefix, i) }

// ingestRange ingests n keys prefix000000... with values "v<i>".
func ingestRange(t *testing.T, d *DB, prefix string, n int) {
	t.Helper()
	g, err := d.NewIngest()
	require.NoError(t, err)
	for i := range n {
		require.NoError(t, g.Set(ingestKey(prefix, i), fmt.Appendf(nil, "v%d", i)))
	}
	require.NoError(t, g.Finish())
}

// levelOf returns the level holding the file whose smallest key has prefix.
func levelOf(d *DB, prefix string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := d.mu.versions.Current()
	for l := 0; l < manifest.NumLevels; l++ {
		for _, f := range v.Levels[l] {
			if strings.HasPrefix(string(f.SmallestUserKey()), prefix) {
				return l
			}
		}
	}
	return -1
}

// waitCompactions waits until no compaction runs or is due.
func waitCompactions(d *DB) {
	for {
		d.mu.Lock()
		idle := d.mu.compacting == 0 && manifest.Pick(d.mu.versions.Current(), d.pickerOptions()) == nil
		d.mu.Unlock()
		if idle {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func countTables(t *testing.T, fs vfs.FS) int {
	names, err := fs.List("/db")
	require.NoError(t, err)
	n := 0
	for _, name := range names {
		if strings.HasSuffix(name, ".sst") {
			n++
		}
	}
	return n
}

func TestIngestVisibility(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open("/db", testOptions(fs))
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.Set([]byte("a"), []byte("1"), nil))

	before := d.NewSnapshot()
	defer before.Close()
	// Enough keys for several tables (64 KiB targets).
	ingestRange(t, d, "m", 20000)

	v, err := d.Get(ingestKey("m", 12345), nil)
	require.NoError(t, err)
	require.Equal(t, "v12345", string(v))
	_, err = before.Get(ingestKey("m", 12345))
	require.ErrorIs(t, err, ErrNotFound, "a snapshot older than the ingestion sees its keys")

	it, err := d.NewIter(&IterOptions{LowerBound: []byte("m"), UpperBound: []byte("n")})
	require.NoError(t, err)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		require.Equal(t, string(ingestKey("m", n)), string(it.Key()))
		n++
	}
	require.NoError(t, it.Close())
	require.Equal(t, 20000, n)

	// The memtable key stays, and a later write over an ingested key wins.
	require.NoError(t, d.Set(ingestKey("m", 7), []byte("new"), nil))
	v, err = d.Get(ingestKey("m", 7), nil)
	require.NoError(t, err)
	require.Equal(t, "new", string(v))
	v, err = d.Get([]byte("a"), nil)
	require.NoError(t, err)
	require.Equal(t, "1", string(v))

	// The tree's invariants hold after compacting everything together.
	require.NoError(t, d.Compact(nil, nil))
	v, err = d.Get(ingestKey("m", 7), nil)
	require.NoError(t, err)
	require.Equal(t, "new", string(v))
	v, err = d.Get(ingestKey("m", 19999), nil)
	require.NoError(t, err)
	require.Equal(t, "v19999", string(v))
}

// TestIngestPlacement: a range that overlaps nothing goes to the deepest
// level of the tree; one overlapping a level's file goes above it; one
// overlapping level 0 goes to level 0.
func TestIngestPlacement(t *testing.T) {
	fs := vfs.NewMem()
	opts := testOptions(fs)
	opts.L0CompactionTrigger = 8
	d, err := Open("/db", opts)
	require.NoError(t, err)
	defer d.Close()
	for i := range 3000 {
		require.NoError(t, d.Set(ingestKey("b", i), make([]byte, 100), nil))
		require.NoError(t, d.Set(ingestKey("x", i), make([]byte, 100), nil))
	}
	require.NoError(t, d.Compact(nil, nil))
	bottom := levelOf(d, "b")
	require.Positive(t, bottom)

	waitCompactions(d)
	ingestRange(t, d, "c", 100) // between b and x: no file holds it, but one spans it
	got := levelOf(d, "c")
	require.Less(t, got, bottom, "the file spanning the range stays below")
	waitCompactions(d)
	ingestRange(t, d, "z", 100) // after everything
	require.Equal(t, bottom, levelOf(d, "z"))

	require.NoError(t, d.Set([]byte("k1"), []byte("x"), nil))
	require.NoError(t, d.Set([]byte("k9"), []byte("x"), nil))
	require.NoError(t, d.Flush())
	waitCompactions(d)
	ingestRange(t, d, "k5", 10) // inside level 0's file
	require.Equal(t, 0, levelOf(d, "k5"))
	v, err := d.Get(ingestKey("k5", 3), nil)
	require.NoError(t, err)
	require.Equal(t, "v3", string(v))
}

func TestIngestOlderMemtableKeys(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open("/db", testOptions(fs))
	require.NoError(t, err)
	defer d.Close()
	// Written before the ingestion began: older, so the ingested value wins
	// (the memtable is flushed so that reads meet the ingested table first).
	require.NoError(t, d.Set(ingestKey("m", 5), []byte("old"), nil))
	ingestRange(t, d, "m", 10)
	v, err := d.Get(ingestKey("m", 5), nil)
	require.NoError(t, err)
	require.Equal(t, "v5", string(v))
}

func TestIngestNewerWriteFails(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open("/db", testOptions(fs))
	require.NoError(t, err)
	defer d.Close()
	g, err := d.NewIngest()
	require.NoError(t, err)
	for i := range 10 {
		require.NoError(t, g.Set(ingestKey("m", i), []byte("ingested")))
	}
	// A commit into the range after the ingestion began is newer.
	require.NoError(t, d.Set(ingestKey("m", 5), []byte("newer"), nil))
	require.ErrorIs(t, g.Finish(), ErrIngestOverlap)
	_, err = d.Get(ingestKey("m", 4), nil)
	require.ErrorIs(t, err, ErrNotFound, "a failed ingestion added keys")
	v, err := d.Get(ingestKey("m", 5), nil)
	require.NoError(t, err)
	require.Equal(t, "newer", string(v))
	require.Equal(t, 1, countTables(t, fs), "only the flushed memtable's table remains")

	// Keys written after the start outside the range do not matter, even in
	// a table that spans it.
	g, err = d.NewIngest()
	require.NoError(t, err)
	require.NoError(t, d.Set([]byte("l"), []byte("1"), nil))
	require.NoError(t, d.Set([]byte("n"), []byte("1"), nil))
	require.NoError(t, d.Flush())
	require.NoError(t, g.Set([]byte("m1"), []byte("x")))
	require.NoError(t, g.Finish())
	v, err = d.Get([]byte("m1"), nil)
	require.NoError(t, err)
	require.Equal(t, "x", string(v))
}

func TestIngestOrderAndAbort(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open("/db", testOptions(fs))
	require.NoError(t, err)
	defer d.Close()
	g, err := d.NewIngest()
	require.NoError(t, err)
	require.NoError(t, g.Set([]byte("b"), nil))
	require.Error(t, g.Set([]byte("b"), nil))
	require.Error(t, g.Set([]byte("a"), nil))
	g.Abort()
	require.Zero(t, countTables(t, fs))
	_, err = d.Get([]byte("b"), nil)
	require.ErrorIs(t, err, ErrNotFound)

	// An empty ingestion adds nothing.
	g, err = d.NewIngest()
	require.NoError(t, err)
	require.NoError(t, g.Finish())
	require.Zero(t, countTables(t, fs))
}

// TestIngestCrash: a power loss before Finish leaves no trace once the
// database reopens; after Finish returned, every key survives.
func TestIngestCrash(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open("/db", testOptions(fs))
	require.NoError(t, err)
	require.NoError(t, d.Set([]byte("a"), []byte("1"), Sync))
	g, err := d.NewIngest()
	require.NoError(t, err)
	for i := range 5000 {
		require.NoError(t, g.Set(ingestKey("m", i), []byte("v")))
	}
	mid := fs.CrashClone(vfs.CrashOptions{KeepUnsynced: 1})
	require.NoError(t, g.Finish())
	after := fs.CrashClone(vfs.CrashOptions{})
	require.NoError(t, d.Set([]byte("b"), []byte("2"), Sync))
	later := fs.CrashClone(vfs.CrashOptions{})
	require.NoError(t, d.Close())

	cd, err := Open("/db", testOptions(mid))
	require.NoError(t, err)
	_, err = cd.Get(ingestKey("m", 0), nil)
	require.ErrorIs(t, err, ErrNotFound)
	cd.mu.Lock()
	live := len(cd.mu.versions.LiveFiles())
	cd.mu.Unlock()
	require.Equal(t, live, countTables(t, mid), "the unfinished ingestion's tables are still there")
	require.NoError(t, cd.Close())

	for name, img := range map[string]*vfs.MemFS{"after": after, "later": later} {
		cd, err := Open("/db", testOptions(img))
		require.NoError(t, err, name)
		for _, i := range []int{0, 2500, 4999} {
			v, err := cd.Get(ingestKey("m", i), nil)
			require.NoError(t, err, name)
			require.Equal(t, "v", string(v))
		}
		v, err := cd.Get([]byte("a"), nil)
		require.NoError(t, err, name)
		require.Equal(t, "1", string(v))
		// Sequence numbers go on from the ingestion's: a new write wins.
		require.NoError(t, cd.Set(ingestKey("m", 1), []byte("w"), nil))
		v, err = cd.Get(ingestKey("m", 1), nil)
		require.NoError(t, err)
		require.Equal(t, "w", string(v), name)
		require.NoError(t, cd.Close())
	}
}

// TestIngestManifestFault: a failed manifest write fails Finish and stops
// writes; after reopening, the ingestion is there entirely or not at all.
func TestIngestManifestFault(t *testing.T) {
	mem := vfs.NewMem()
	efs := errorfs.Wrap(mem, 1)
	d, err := Open("/db", testOptions(efs))
	require.NoError(t, err)
	g, err := d.NewIngest()
	require.NoError(t, err)
	for i := range 1000 {
		require.NoError(t, g.Set(ingestKey("m", i), []byte("v")))
	}
	efs.SetRules(&errorfs.Rule{Ops: errorfs.OpWrite | errorfs.OpSync, Path: "MANIFEST-*", Prob: 1})
	require.Error(t, g.Finish())
	require.Error(t, d.Set([]byte("x"), nil, nil), "writes go on after a failed manifest write")
	efs.SetRules()
	d.Close()

	crashed := mem.CrashClone(vfs.CrashOptions{})
	cd, err := Open("/db", testOptions(crashed))
	require.NoError(t, err)
	defer cd.Close()
	found := 0
	for i := range 1000 {
		if _, err := cd.Get(ingestKey("m", i), nil); err == nil {
			found++
		}
	}
	require.Contains(t, []int{0, 1000}, found)
}

func BenchmarkIngest(b *testing.B) {
	const n = 100000
	value := make([]byte, 32)
	for _, mode := range []string{"ingest", "batch"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				b.StopTimer()
				d, err := Open(b.TempDir(), &Options{})
				if err != nil {
					b.Fatal(err)
				}
				key := make([]byte, 0, 16)
				b.StartTimer()
				if mode == "ingest" {
					g, err := d.NewIngest()
					if err != nil {
						b.Fatal(err)
					}
					for i := range n {
						key = binary.BigEndian.AppendUint64(key[:0], uint64(i))
						if err := g.Set(key, value); err != nil {
							b.Fatal(err)
						}
					}
					if err := g.Finish(); err != nil {
						b.Fatal(err)
					}
				} else {
					bt := d.NewBatch()
					for i := range n {
						key = binary.BigEndian.AppendUint64(key[:0], uint64(i))
						bt.Set(key, value)
						if bt.Count() == 1000 {
							if err := bt.Commit(nil); err != nil {
								b.Fatal(err)
							}
							bt = d.NewBatch()
						}
					}
					if err := bt.Commit(nil); err != nil {
						b.Fatal(err)
					}
					if err := d.Flush(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				d.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
		})
	}
}

// TestIngestConcurrent (run it with -race): ingestions of disjoint ranges
// finish while writers commit keys between them and flushes and
// compactions run; afterwards every ingested and every written key reads
// back, and the tree's levels are in order.
func TestIngestConcurrent(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open("/db", crashOptions(fs))
	require.NoError(t, err)
	defer d.Close()
	const ingests, keys, writes = 12, 2000, 3000
	var g concGroup
	for w := range 2 {
		g.Go(fmt.Sprintf("writer %d", w), func() error {
			for i := range writes {
				// Between the ingested ranges: tables of these keys span them.
				if err := d.Set(fmt.Appendf(nil, "r%02d-x%d-%06d", i%ingests, w, i), make([]byte, 50), nil); err != nil {
					return err
				}
			}
			return nil
		})
	}
	g.Go("ingester", func() error {
		for n := range ingests {
			ing, err := d.NewIngest()
			if err != nil {
				return err
			}
			for i := range keys {
				if err := ing.Set(fmt.Appendf(nil, "r%02d-%06d", n, i), []byte("v")); err != nil {
					return err
				}
			}
			if err := ing.Finish(); err != nil {
				return err
			}
		}
		return nil
	})
	g.Go("flusher", func() error {
		for i := 0; i < 20 && !g.stop.Load(); i++ {
			if err := d.Flush(); err != nil {
				return err
			}
			time.Sleep(time.Millisecond)
		}
		return nil
	})
	require.NoError(t, g.Wait())
	for n := range ingests {
		for _, i := range []int{0, keys / 2, keys - 1} {
			v, err := d.Get(fmt.Appendf(nil, "r%02d-%06d", n, i), nil)
			require.NoError(t, err)
			require.Equal(t, "v", string(v))
		}
	}
	for w := range 2 {
		_, err := d.Get(fmt.Appendf(nil, "r%02d-x%d-%06d", (writes-1)%ingests, w, writes-1), nil)
		require.NoError(t, err)
	}
	d.mu.Lock()
	require.NoError(t, d.mu.versions.Current().CheckOrdering())
	d.mu.Unlock()
	require.NoError(t, d.Compact(nil, nil))
	it, err := d.NewIter(nil)
	require.NoError(t, err)
	count := 0
	for ok := it.First(); ok; ok = it.Next() {
		count++
	}
	require.NoError(t, it.Close())
	require.Equal(t, ingests*keys+2*writes, count)
}
