package kv

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/strata-db/strata/kv/vfs"
	"github.com/strata-db/strata/kv/wal"
	"github.com/stretchr/testify/require"
)

// The corruption tests damage one file of a closed database (a flipped bit
// at some offset, or a truncation) and then open it and read everything
// back, by full scans in both directions and by point reads. Each of these
// must either fail with an error that names the damaged file (a corruption
// error, per IsCorruption, where the damage lies in checksummed data) or
// give exactly the right data. Never a panic, never wrong data.
//
// The write-ahead log is the exception the format documents (kv/wal's
// package documentation): damage to its last record, with nothing written
// after it, cannot be told from a write torn by a crash, so that record is
// dropped as a torn tail and Open succeeds without it.

// The write-ahead log's framing (kv/wal, part of the durable format): 32 KiB
// blocks of chunks with 15-byte headers; fewer than 15 bytes at the end of
// a block are padding.
const (
	corruptWALBlock  = 32 << 10
	corruptWALHeader = 15
)

const corruptDir = "/db"

// corruptCopy returns a copy of the database directory of src.
func corruptCopy(t *testing.T, src *vfs.MemFS) *vfs.MemFS {
	t.Helper()
	dst := vfs.NewMem()
	require.NoError(t, dst.MkdirAll(corruptDir, 0o755))
	names, err := src.List(corruptDir)
	require.NoError(t, err)
	for _, n := range names {
		b, err := vfs.ReadFile(src, filepath.Join(corruptDir, n))
		require.NoError(t, err)
		require.NoError(t, vfs.WriteFileSync(dst, corruptDir, filepath.Join(corruptDir, n), b))
	}
	return dst
}

// corruptMutate rewrites one file of fs with mutate applied to its bytes.
func corruptMutate(t *testing.T, fs *vfs.MemFS, name string, mutate func([]byte) []byte) {
	t.Helper()
	b, err := vfs.ReadFile(fs, name)
	require.NoError(t, err)
	require.NoError(t, vfs.WriteFileSync(fs, corruptDir, name, mutate(b)))
}

func corruptFlip(off int, bit uint) func([]byte) []byte {
	return func(b []byte) []byte { b[off] ^= 1 << bit; return b }
}

func corruptTruncate(n int) func([]byte) []byte {
	return func(b []byte) []byte { return b[:n] }
}

// corruptFiles returns the files of the database directory with the given
// suffix (or prefix, for "MANIFEST"), sorted.
func corruptFiles(t *testing.T, fs *vfs.MemFS, match string) []string {
	t.Helper()
	names, err := fs.List(corruptDir)
	require.NoError(t, err)
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, match) || strings.HasPrefix(n, match) {
			out = append(out, filepath.Join(corruptDir, n))
		}
	}
	return out
}

func corruptSize(t *testing.T, fs *vfs.MemFS, name string) int {
	t.Helper()
	st, err := fs.Stat(name)
	require.NoError(t, err)
	return int(st.Size())
}

// corruptRequireNamed checks an error reported for damage to file.
func corruptRequireNamed(t *testing.T, err error, file string, wantCorruption bool, what string) {
	t.Helper()
	require.Error(t, err, what)
	require.Contains(t, err.Error(), filepath.Base(file), "%s: the error does not name the damaged file", what)
	if wantCorruption {
		require.True(t, IsCorruption(err), "%s: not a corruption error: %v", what, err)
	}
}

// corruptCheckReads reads all of d, forward, backward and key by key, and
// checks every answer against want: right, or an error naming file. It
// returns whether any read reported an error.
func corruptCheckReads(t *testing.T, d *DB, want kvModel, extra []string, file string) (detected bool) {
	t.Helper()
	keys := want.sorted(nil, nil)
	// Every third key (several per data block) and absent keys through
	// MultiGet, first (while the block cache is empty) with async I/O,
	// which reads all of a level's blocks at once, then reading in turn:
	// an error names the file, and without one every value is right.
	var mkeys [][]byte
	for i := 0; i < len(keys); i += 3 {
		mkeys = append(mkeys, []byte(keys[i]))
	}
	for _, k := range extra {
		mkeys = append(mkeys, []byte(k))
	}
	for _, async := range []bool{true, false} {
		what := fmt.Sprintf("multiget (async %v)", async)
		vals, err := d.MultiGet(mkeys, &ReadOptions{AsyncIO: async}, nil)
		if err != nil {
			corruptRequireNamed(t, err, file, true, what)
			detected = true
			continue
		}
		for i, k := range mkeys {
			if wv, ok := want[string(k)]; ok {
				require.Equal(t, wv, string(vals[i]), "%s %q", what, k)
			} else {
				require.Nil(t, vals[i], "%s %q: found a key that should not be there", what, k)
			}
		}
	}
	for _, reverse := range []bool{false, true} {
		what := fmt.Sprintf("scan (reverse %v)", reverse)
		it, err := d.NewIter(nil)
		if err != nil {
			corruptRequireNamed(t, err, file, true, what)
			detected = true
			continue
		}
		var got []string
		ok := it.First()
		step := it.Next
		if reverse {
			ok, step = it.Last(), it.Prev
		}
		for ; ok; ok = step() {
			k := string(it.Key())
			got = append(got, k)
			require.Equal(t, want[k], string(it.Value()), "%s: value of %q", what, k)
		}
		err = it.Close()
		if reverse {
			for i, j := 0, len(got)-1; i < j; i, j = i+1, j-1 {
				got[i], got[j] = got[j], got[i]
			}
		}
		if err != nil {
			corruptRequireNamed(t, err, file, true, what)
			detected = true
			// What was returned before the error is right: a run of the keys.
			if len(got) > 0 {
				i := sort.SearchStrings(keys, got[0])
				require.LessOrEqual(t, i+len(got), len(keys), what)
				require.Empty(t, corruptKeysDiff(keys[i:i+len(got)], got), "%s: keys before the error", what)
			}
			continue
		}
		require.Empty(t, corruptKeysDiff(keys, got), "%s: no error, so every key", what)
	}
	// Point reads of every third key (several per data block) and of
	// absent keys.
	var gets []string
	for i := 0; i < len(keys); i += 3 {
		gets = append(gets, keys[i])
	}
	for _, k := range append(gets, extra...) {
		v, err := d.Get([]byte(k), nil)
		wv, ok := want[k]
		switch {
		case err == nil:
			require.True(t, ok, "get %q: found a key that should not be there", k)
			require.Equal(t, wv, string(v), "get %q", k)
		case errors.Is(err, ErrNotFound):
			require.False(t, ok, "get %q: not found, want %.20q", k, wv)
		default:
			corruptRequireNamed(t, err, file, true, "get "+k)
			detected = true
		}
	}
	return detected
}

// corruptKeysDiff describes how got differs from want, or returns "".
func corruptKeysDiff(want, got []string) string {
	for i := 0; i < len(want) || i < len(got); i++ {
		switch {
		case i >= len(want):
			return fmt.Sprintf("%d keys, want %d: extra key %q", len(got), len(want), got[i])
		case i >= len(got):
			return fmt.Sprintf("%d keys, want %d: missing key %q", len(got), len(want), want[i])
		case want[i] != got[i]:
			return fmt.Sprintf("%d keys, want %d: key %d is %q, want %q", len(got), len(want), i, got[i], want[i])
		}
	}
	return ""
}

// corruptTablesDB builds a closed database whose data lives in tables on
// several levels (the log holds nothing), and returns it with its content.
func corruptTablesDB(t *testing.T) (*vfs.MemFS, kvModel, []string) {
	fs := vfs.NewMem()
	opts := testOptions(fs)
	opts.BlockSize = 1024
	d, err := Open(corruptDir, opts)
	require.NoError(t, err)
	m := kvModel{}
	b := d.NewBatch()
	for i := range 3000 {
		k, v := fmt.Sprintf("k%05d", i), fmt.Sprintf("v%05d-%s", i, strings.Repeat("x", i%97))
		require.NoError(t, b.Set([]byte(k), []byte(v)))
		m[k] = v
	}
	require.NoError(t, b.Commit(Sync))
	require.NoError(t, d.Compact(nil, nil))
	for i := 0; i < 3000; i += 7 {
		k, v := fmt.Sprintf("k%05d", i), fmt.Sprintf("new%05d", i)
		require.NoError(t, d.Set([]byte(k), []byte(v), nil))
		m[k] = v
	}
	require.NoError(t, d.DeleteRange([]byte("k01000"), []byte("k01100"), nil))
	m.deleteRange("k01000", "k01100")
	for i := 0; i < 3000; i += 11 {
		k := fmt.Sprintf("k%05d", i)
		require.NoError(t, d.Delete([]byte(k), nil))
		delete(m, k)
	}
	require.NoError(t, d.Flush())
	require.NoError(t, d.Close())
	// Keys that are absent, in range and out of it.
	extra := []string{"a", "k", "k00000x", "k01050", "k02999x", "z"}
	return fs, m, extra
}

// TestCorruptionSwappedTables: two tables of the same size, each put under
// the other's name, pass Open's size check; the first read of either fails
// as corruption naming the file, where it would otherwise answer with the
// older table's values.
func TestCorruptionSwappedTables(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open(corruptDir, testOptions(fs))
	require.NoError(t, err)
	// The second table's largest sequence number takes one byte more in
	// its properties; one byte more in the first table's data evens that.
	for _, v := range []string{"old", "new"} {
		for i := range 100 {
			w := v
			if i == 0 && v == "old" {
				w += "!"
			}
			require.NoError(t, d.Set([]byte(fmt.Sprintf("k%03d", i)), []byte(w), nil))
		}
		require.NoError(t, d.Flush())
	}
	require.NoError(t, d.Close())
	tables := corruptFiles(t, fs, ".sst")
	require.Len(t, tables, 2)
	require.Equal(t, corruptSize(t, fs, tables[0]), corruptSize(t, fs, tables[1]))
	a, err := vfs.ReadFile(fs, tables[0])
	require.NoError(t, err)
	b, err := vfs.ReadFile(fs, tables[1])
	require.NoError(t, err)
	require.NoError(t, vfs.WriteFileSync(fs, corruptDir, tables[0], b))
	require.NoError(t, vfs.WriteFileSync(fs, corruptDir, tables[1], a))

	d, err = Open(corruptDir, testOptions(fs))
	require.NoError(t, err)
	defer d.Close()
	_, err = d.Get([]byte("k050"), nil)
	corruptRequireNamed(t, err, tables[1], true, "get")
	require.Contains(t, err.Error(), "holds table")
}

// TestCorruptionTable flips bits at offsets across every table of a
// database (data blocks, index, filter, properties, footer) and truncates
// tables: reads fail naming the table, or are right.
func TestCorruptionTable(t *testing.T) {
	fs, model, extra := corruptTablesDB(t)
	tables := corruptFiles(t, fs, ".sst")
	require.GreaterOrEqual(t, len(tables), 2)
	rng := rand.New(rand.NewPCG(11, 11))
	perFile := 8
	if underRace {
		perFile = 3
	}
	detected, cases := 0, 0
	for _, name := range tables {
		size := corruptSize(t, fs, name)
		type damage struct {
			desc   string
			mutate func([]byte) []byte
		}
		var ds []damage
		offsets := []int{0, size / 2, size - 1, size - 8, size - 30, size - 60}
		for range perFile {
			offsets = append(offsets, rng.IntN(size))
		}
		for _, off := range offsets {
			bit := uint(rng.IntN(8))
			ds = append(ds, damage{fmt.Sprintf("flip bit %d at %d", bit, off), corruptFlip(off, bit)})
		}
		for _, n := range []int{0, 1, size / 2, size - 1} {
			ds = append(ds, damage{fmt.Sprintf("truncate to %d", n), corruptTruncate(n)})
		}
		for _, dm := range ds {
			t.Run(fmt.Sprintf("%s/%s", filepath.Base(name), dm.desc), func(t *testing.T) {
				cases++
				c := corruptCopy(t, fs)
				corruptMutate(t, c, name, dm.mutate)
				d, err := Open(corruptDir, testOptions(c))
				if err != nil {
					corruptRequireNamed(t, err, name, true, "open")
					detected++
					return
				}
				defer d.Close()
				if corruptCheckReads(t, d, model, extra, name) {
					detected++
				}
			})
		}
	}
	t.Logf("%d cases, %d detected", cases, detected)
	// Most bytes of a table are checksummed data that every scan reads.
	require.Greater(t, detected, cases/2)
}

// corruptWALDB builds a crashed database whose content is all in its log:
// batches of synced commits (each batch i sets keys w<i>-kNN), large
// enough for the log to span several blocks. (A clean Close would flush
// them to a table.) It returns the database, the log's name, and each
// batch's record offset in the log.
func corruptWALDB(t *testing.T, batches int) (*vfs.MemFS, string, []int64) {
	live := vfs.NewMem()
	d, err := Open(corruptDir, corruptWALOptions(live, WALRecoveryStrict))
	require.NoError(t, err)
	for i := range batches {
		b := d.NewBatch()
		for k := range corruptWALKeys {
			require.NoError(t, b.Set([]byte(corruptWALKey(i, k)), []byte(corruptWALValue(i, k))))
		}
		require.NoError(t, b.Commit(Sync))
	}
	fs := live.CrashClone(vfs.CrashOptions{})
	require.NoError(t, d.Close())
	logs := corruptFiles(t, fs, ".log")
	require.Len(t, logs, 1)
	f, err := fs.Open(logs[0])
	require.NoError(t, err)
	defer f.Close()
	size, err := f.Size()
	require.NoError(t, err)
	r := wal.NewReader(f, size, logs[0])
	var offs []int64
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		offs = append(offs, r.Offset())
	}
	require.Len(t, offs, batches, "one log record per batch")
	return fs, logs[0], offs
}

const corruptWALKeys = 5

// corruptWALOptions keep every batch of corruptWALDB in one memtable, so
// that the log holds them all.
func corruptWALOptions(fs vfs.FS, mode WALRecoveryMode) *Options {
	return &Options{FS: fs, MemtableSize: 1 << 20, WALRecovery: mode}
}

func corruptWALKey(i, k int) string { return fmt.Sprintf("w%04d-k%d", i, k) }

func corruptWALValue(i, k int) string {
	return fmt.Sprintf("%04d-%d-%s", i, k, strings.Repeat("v", (i*37+k*11)%1500))
}

// corruptWALBatches returns the batches d holds, checking that each one is
// whole with the right values.
func corruptWALBatches(t *testing.T, d *DB, what string) map[int]bool {
	t.Helper()
	it, err := d.NewIter(nil)
	require.NoError(t, err, what)
	counts := map[int]int{}
	for ok := it.First(); ok; ok = it.Next() {
		k := string(it.Key())
		var i, j int
		_, err := fmt.Sscanf(k, "w%04d-k%d", &i, &j)
		require.NoError(t, err, "%s: key %q", what, k)
		require.Equal(t, corruptWALValue(i, j), string(it.Value()), "%s: key %q", what, k)
		counts[i]++
	}
	require.NoError(t, it.Close(), what)
	present := map[int]bool{}
	for i, n := range counts {
		require.Equal(t, corruptWALKeys, n, "%s: batch %d is partly present", what, i)
		present[i] = true
	}
	return present
}

// corruptRecordAt returns the index of the record holding offset off.
func corruptRecordAt(offs []int64, off int64) int {
	return sort.Search(len(offs), func(i int) bool { return offs[i] > off }) - 1
}

// TestCorruptionWAL flips bits in the write-ahead log of a database whose
// every commit was synced. A damaged record followed by intact ones is
// corruption of durable data: Open fails naming the log, unless
// WALRecoverySkipCorrupt is set, which recovers every batch before the
// damaged record and those after the damaged block, each whole. Damage to
// the last record reads as a torn tail (kv/wal's documentation): Open
// succeeds with every batch but the last.
func TestCorruptionWAL(t *testing.T) {
	const batches = 60
	fs, logName, offs := corruptWALDB(t, batches)
	size := int64(corruptSize(t, fs, logName))
	require.Greater(t, size, int64(3*corruptWALBlock), "the log should span several blocks")
	rng := rand.New(rand.NewPCG(12, 12))

	// Offsets: the first bytes of some records (headers), random bytes of
	// the log, and bytes of the last record.
	var offsets []int64
	for i := 0; i < batches; i += 9 {
		offsets = append(offsets, offs[i], offs[i]+4, offs[i]+7)
	}
	n := 24
	if underRace {
		n = 8
	}
	for range n {
		offsets = append(offsets, rng.Int64N(size))
	}
	offsets = append(offsets, offs[batches-1], offs[batches-1]+20, size-1)

	for _, off := range offsets {
		if off%corruptWALBlock >= corruptWALBlock-corruptWALHeader+1 {
			continue // may be block padding, which holds no data
		}
		rec := corruptRecordAt(offs, off)
		bit := uint(rng.IntN(8))
		t.Run(fmt.Sprintf("flip bit %d at %d (record %d)", bit, off, rec), func(t *testing.T) {
			for _, mode := range []WALRecoveryMode{WALRecoveryStrict, WALRecoverySkipCorrupt} {
				c := corruptCopy(t, fs)
				corruptMutate(t, c, logName, corruptFlip(int(off), bit))
				d, err := Open(corruptDir, corruptWALOptions(c, mode))
				what := fmt.Sprintf("mode %d", mode)
				if rec == batches-1 {
					// A torn tail: the last batch is dropped, nothing else.
					require.NoError(t, err, what)
					present := corruptWALBatches(t, d, what)
					require.Len(t, present, batches-1, what)
					require.False(t, present[batches-1], what)
					require.NoError(t, d.Close())
					continue
				}
				if mode == WALRecoveryStrict {
					corruptRequireNamed(t, err, logName, true, what)
					continue
				}
				require.NoError(t, err, what)
				present := corruptWALBatches(t, d, what)
				next := off - off%corruptWALBlock + corruptWALBlock
				for i := range batches {
					switch {
					case i < rec:
						require.True(t, present[i], "%s: batch %d, before the damage, is missing", what, i)
					case i == rec:
						require.False(t, present[i], "%s: the damaged batch %d is present", what, i)
					case offs[i] >= next:
						require.True(t, present[i], "%s: batch %d, after the damaged block, is missing", what, i)
					}
				}
				require.NoError(t, d.Close())
			}
		})
	}
}

// TestCorruptionWALTruncated truncates the log at and around record
// boundaries: a log cut short is a torn tail, and Open recovers exactly
// the batches whose records survived whole.
func TestCorruptionWALTruncated(t *testing.T) {
	const batches = 30
	fs, logName, offs := corruptWALDB(t, batches)
	size := int64(corruptSize(t, fs, logName))
	var lengths []int64
	for i := 0; i < batches; i += 4 {
		lengths = append(lengths, offs[i], offs[i]+1, offs[i]+corruptWALHeader, offs[i]+corruptWALHeader+3)
	}
	lengths = append(lengths, 0, 1, size-1, size)
	for _, l := range lengths {
		t.Run(fmt.Sprint(l), func(t *testing.T) {
			c := corruptCopy(t, fs)
			corruptMutate(t, c, logName, corruptTruncate(int(l)))
			d, err := Open(corruptDir, corruptWALOptions(c, WALRecoveryStrict))
			require.NoError(t, err)
			defer d.Close()
			present := corruptWALBatches(t, d, "truncated")
			// Records wholly before l survive; the one l cuts does not. A
			// record ends at or before the next one starts.
			lo := corruptRecordAt(offs, l) // records [0, lo) end before l
			if lo < 0 {
				lo = 0
			}
			hi := lo + 1 // record lo survives only if l is past its end
			if l == size {
				lo = batches
			}
			require.GreaterOrEqual(t, len(present), lo)
			require.LessOrEqual(t, len(present), min(hi, batches))
			for i := range len(present) {
				require.True(t, present[i], "a gap: batch %d is missing", i)
			}
		})
	}
}

// TestCorruptionManifest flips bits in the MANIFEST and in CURRENT and
// truncates the MANIFEST: Open fails with a corruption error naming the
// file, or the database reads exactly right.
func TestCorruptionManifest(t *testing.T) {
	fs, model, extra := corruptTablesDB(t)
	manifests := corruptFiles(t, fs, "MANIFEST")
	require.Len(t, manifests, 1)
	name := manifests[0]
	size := corruptSize(t, fs, name)

	// The MANIFEST's records: a header, a snapshot, then edits.
	f, err := fs.Open(name)
	require.NoError(t, err)
	r := wal.NewReader(f, int64(size), name)
	var offs []int64
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		offs = append(offs, r.Offset())
	}
	require.NoError(t, f.Close())
	last := offs[len(offs)-1]

	run := func(t *testing.T, file string, mutate func([]byte) []byte) {
		c := corruptCopy(t, fs)
		corruptMutate(t, c, file, mutate)
		d, err := Open(corruptDir, testOptions(c))
		if err != nil {
			corruptRequireNamed(t, err, file, true, "open")
			return
		}
		defer d.Close()
		corruptCheckReads(t, d, model, extra, file)
	}
	rng := rand.New(rand.NewPCG(13, 13))
	for range 16 {
		off, bit := rng.IntN(int(last)), uint(rng.IntN(8))
		t.Run(fmt.Sprintf("flip bit %d at %d", bit, off), func(t *testing.T) {
			run(t, name, corruptFlip(off, bit))
		})
	}
	current := filepath.Join(corruptDir, "CURRENT")
	for off := range corruptSize(t, fs, current) {
		bit := uint(rng.IntN(8))
		t.Run(fmt.Sprintf("CURRENT flip bit %d at %d", bit, off), func(t *testing.T) {
			run(t, current, corruptFlip(off, bit))
		})
	}
	// Cut before the snapshot edit that follows the header.
	for _, l := range []int{0, 10, int(offs[1]), int(offs[1]) + 5} {
		t.Run(fmt.Sprintf("truncate to %d", l), func(t *testing.T) {
			run(t, name, corruptTruncate(l))
		})
	}

	// Damage within the last record (the edit that installed the last
	// flush), and truncations that cut off edits.
	t.Run("tail", func(t *testing.T) {
		for _, off := range []int{int(last), int(last) + 7, int(last) + 20, size - 1} {
			t.Run(fmt.Sprintf("flip at %d", off), func(t *testing.T) {
				run(t, name, corruptFlip(off, 3))
			})
		}
		for _, l := range []int{size - 1, int(last) + 10, int(last), int(offs[len(offs)-3]), int(offs[2])} {
			t.Run(fmt.Sprintf("truncate to %d", l), func(t *testing.T) {
				run(t, name, corruptTruncate(l))
			})
		}
	})
}

// TestOpenLocked: a second Open of a directory that is open fails with
// ErrLocked, on disk and in memory; once the first closes, Open succeeds.
func TestOpenLocked(t *testing.T) {
	for _, tc := range []struct {
		name string
		fs   vfs.FS
		dir  string
	}{
		{"disk", vfs.Default, t.TempDir()},
		{"mem", vfs.NewMem(), "/db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Open(tc.dir, &Options{FS: tc.fs})
			require.NoError(t, err)
			require.NoError(t, d.Set([]byte("k"), []byte("v"), Sync))
			_, err = Open(tc.dir, &Options{FS: tc.fs})
			require.ErrorIs(t, err, ErrLocked)
			// The failed Open did not disturb the open database.
			v, err := d.Get([]byte("k"), nil)
			require.NoError(t, err)
			require.Equal(t, "v", string(v))
			require.NoError(t, d.Close())
			d, err = Open(tc.dir, &Options{FS: tc.fs})
			require.NoError(t, err)
			v, err = d.Get([]byte("k"), nil)
			require.NoError(t, err)
			require.Equal(t, "v", string(v))
			require.NoError(t, d.Close())
		})
	}
}

// TestOpenWithoutCurrent: a directory that lost its CURRENT file but still
// holds tables or logs is a damaged database. Open must refuse with a
// corruption error and leave every file in place, never start a new
// database over them (whose first Open would delete them as stale). A lone
// MANIFEST, what a crash during the first Open leaves, is a new database.
func TestOpenWithoutCurrent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flush bool // a table as well as the log
	}{
		{"tables and log", true},
		{"log only", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			d, err := Open("/db", testOptions(fs))
			require.NoError(t, err)
			require.NoError(t, d.Set([]byte("a"), []byte("1"), Sync))
			if tc.flush {
				require.NoError(t, d.Flush())
			}
			require.NoError(t, d.Set([]byte("b"), []byte("2"), Sync))
			require.NoError(t, d.Close())

			saved, err := vfs.ReadFile(fs, "/db/CURRENT")
			require.NoError(t, err)
			require.NoError(t, fs.Remove("/db/CURRENT"))
			before, err := fs.List("/db")
			require.NoError(t, err)

			_, err = Open("/db", testOptions(fs))
			require.ErrorIs(t, err, ErrCorruption)
			require.ErrorContains(t, err, "no CURRENT file")
			after, err := fs.List("/db")
			require.NoError(t, err)
			require.ElementsMatch(t, before, after, "a refused Open changed the directory")

			// With CURRENT restored, nothing was lost.
			require.NoError(t, vfs.WriteFileSync(fs, "/db", "/db/CURRENT", saved))
			d, err = Open("/db", testOptions(fs))
			require.NoError(t, err)
			for k, want := range map[string]string{"a": "1", "b": "2"} {
				v, err := d.Get([]byte(k), nil)
				require.NoError(t, err)
				require.Equal(t, want, string(v))
			}
			require.NoError(t, d.Close())
		})
	}

	t.Run("lone manifest", func(t *testing.T) {
		fs := vfs.NewMem()
		d, err := Open("/db", testOptions(fs))
		require.NoError(t, err)
		require.NoError(t, d.Close())
		names, err := fs.List("/db")
		require.NoError(t, err)
		for _, n := range names {
			if !strings.HasPrefix(n, "MANIFEST") && n != "LOCK" {
				require.NoError(t, fs.Remove("/db/"+n))
			}
		}
		d, err = Open("/db", testOptions(fs))
		require.NoError(t, err)
		require.NoError(t, d.Set([]byte("k"), []byte("v"), Sync))
		require.NoError(t, d.Close())
	})
}
