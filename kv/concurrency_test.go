package kv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

// The concurrency tests run writers, readers, snapshots, flushes and
// compactions at once and check what must hold whatever the interleaving:
//
//   - a batch is seen all or nothing: every writer has a set of generation
//     keys that each of its generation batches overwrites together, so any
//     consistent view (an iterator, a snapshot) holds all of them with one
//     number or none of them;
//   - reads never go back in time: every write of a versioned key carries a
//     number larger than the last, so successive reads of the latest state
//     by one goroutine never see a key's number decrease, nor a key vanish
//     (those keys are never deleted);
//   - a snapshot's reads never change, while flushes and compactions rewrite
//     the tables beneath it;
//   - in the end the database holds exactly what the writers committed: each
//     writer owns a key prefix and keeps a model of it.
//
// The options make memtables small, level 0 short and let only one memtable
// wait for a flush, so that background flushes, compactions and write stalls
// happen within a few megabytes of writes; the tests check through the
// counters that they did.

// concOptions are options under which flushes, compactions and stalls come
// quickly.
func concOptions(fs vfs.FS) *Options {
	return &Options{
		FS:                          fs,
		MemtableSize:                256 << 10,
		MemtableStopWritesThreshold: 2,
		L0CompactionTrigger:         2,
		L0SlowdownWritesTrigger:     4,
		L0StopWritesTrigger:         8,
		TargetFileSize:              64 << 10,
		LBaseMaxBytes:               256 << 10,
		CacheSize:                   256 << 10,
		MaxOpenFiles:                16,
		BlockSize:                   1024,
	}
}

const (
	concGenKeys     = 8  // keys each generation batch of a writer overwrites together
	concVerKeys     = 48 // versioned keys: overwritten with growing numbers, never deleted
	concScratchKeys = 48 // keys that are set, deleted and range-deleted
)

func concGenKey(w, i int) string     { return fmt.Sprintf("w%d/g%02d", w, i) }
func concVerKey(w, i int) string     { return fmt.Sprintf("w%d/v%03d", w, i) }
func concScratchKey(w, i int) string { return fmt.Sprintf("w%d/s%03d", w, i) }

// concValue is the value written with number n: the number, then padding
// whose length depends on n, so that a value read back can be checked whole.
func concValue(n int) string {
	return fmt.Sprintf("%08d|%s", n, strings.Repeat("x", 40+n%160))
}

// concNumber returns the number of a value written by concValue, checking
// that the value is exactly what concValue wrote.
func concNumber(key string, v []byte) (int, error) {
	if len(v) < 9 || v[8] != '|' {
		return 0, fmt.Errorf("key %q: malformed value %q", key, v)
	}
	n, err := strconv.Atoi(string(v[:8]))
	if err != nil {
		return 0, fmt.Errorf("key %q: malformed value %q", key, v)
	}
	if string(v) != concValue(n) {
		return 0, fmt.Errorf("key %q: value of number %d is damaged: %q", key, n, v)
	}
	return n, nil
}

// concWriterOf returns the writer owning key and the key's kind ('g', 'v'
// or 's').
func concWriterOf(key string) (w int, kind byte, ok bool) {
	if len(key) < 4 || key[0] != 'w' || key[2] != '/' {
		return 0, 0, false
	}
	return int(key[1] - '0'), key[3], true
}

// concGroup runs goroutines and keeps the first error; stop tells the
// others to finish early once one failed.
type concGroup struct {
	wg   sync.WaitGroup
	mu   sync.Mutex
	err  error
	stop atomic.Bool
}

func (g *concGroup) Go(name string, fn func() error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		if err := fn(); err != nil {
			g.mu.Lock()
			if g.err == nil {
				g.err = fmt.Errorf("%s: %w", name, err)
			}
			g.mu.Unlock()
			g.stop.Store(true)
		}
	}()
}

func (g *concGroup) Wait() error {
	g.wg.Wait()
	return g.err
}

// concWriter writes under its own prefix and keeps the model of it.
type concWriter struct {
	d     *DB
	id    int
	rng   *rand.Rand
	n     int // the number of the last write
	model map[string]string
}

func (w *concWriter) scratch() string { return concScratchKey(w.id, w.rng.IntN(concScratchKeys)) }

// step commits one random write and records it in the model once committed.
func (w *concWriter) step() error {
	d, rng := w.d, w.rng
	wo := NoSync
	if rng.IntN(8) == 0 {
		wo = Sync
	}
	w.n++
	v := concValue(w.n)
	var ops []modelOp
	switch r := rng.IntN(100); {
	case r < 30: // a generation: every generation key, plus a scratch write
		for i := range concGenKeys {
			ops = append(ops, modelOp{kind: 's', key: concGenKey(w.id, i), value: v})
		}
		ops = append(ops, modelOp{kind: 's', key: w.scratch(), value: v})
	case r < 60: // new versions of a few versioned keys
		for range 1 + rng.IntN(8) {
			ops = append(ops, modelOp{kind: 's', key: concVerKey(w.id, rng.IntN(concVerKeys)), value: v})
		}
	case r < 75: // scratch sets and deletes
		for range 1 + rng.IntN(6) {
			if rng.IntN(3) == 0 {
				ops = append(ops, modelOp{kind: 'd', key: w.scratch()})
			} else {
				ops = append(ops, modelOp{kind: 's', key: w.scratch(), value: v})
			}
		}
	case r < 85:
		k := w.scratch()
		if err := d.Delete([]byte(k), wo); err != nil {
			return err
		}
		delete(w.model, k)
		return nil
	case r < 95:
		a, b := rng.IntN(concScratchKeys), rng.IntN(concScratchKeys)
		if a > b {
			a, b = b, a
		}
		start, end := concScratchKey(w.id, a), concScratchKey(w.id, b+1)
		if err := d.DeleteRange([]byte(start), []byte(end), wo); err != nil {
			return err
		}
		kvModel(w.model).deleteRange(start, end)
		return nil
	default:
		k := concVerKey(w.id, rng.IntN(concVerKeys))
		if err := d.Set([]byte(k), []byte(v), wo); err != nil {
			return err
		}
		w.model[k] = v
		return nil
	}
	b := d.NewBatch()
	for _, op := range ops {
		var err error
		if op.kind == 's' {
			err = b.Set([]byte(op.key), []byte(op.value))
		} else {
			err = b.Delete([]byte(op.key))
		}
		if err != nil {
			return err
		}
	}
	if err := b.Commit(wo); err != nil {
		return err
	}
	applyOps(w.model, ops)
	return nil
}

// concPair is a key and value read back.
type concPair struct{ k, v string }

// concScan reads an iterator forward (or backward) between bounds, checks
// the order of keys and returns the pairs in ascending order.
func concScan(it *Iterator, reverse bool) ([]concPair, error) {
	var out []concPair
	var ok bool
	if reverse {
		ok = it.Last()
	} else {
		ok = it.First()
	}
	step := it.Next
	if reverse {
		step = it.Prev
	}
	for ; ok; ok = step() {
		k := string(it.Key())
		if n := len(out); n > 0 {
			if (!reverse && k <= out[n-1].k) || (reverse && k >= out[n-1].k) {
				return nil, fmt.Errorf("iterator (reverse %v) returned %q after %q", reverse, k, out[n-1].k)
			}
		}
		out = append(out, concPair{k, string(it.Value())})
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	if reverse {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
}

// concCheckAtomic checks a consistent view: every value is whole, and each
// writer's generation keys are all present with one number or all absent.
// complete says which writers' generation keys the view covers entirely.
func concCheckAtomic(view []concPair, complete func(w int) bool) error {
	gens := map[int][]int{}
	for _, p := range view {
		w, kind, ok := concWriterOf(p.k)
		if !ok {
			return fmt.Errorf("unexpected key %q", p.k)
		}
		n, err := concNumber(p.k, []byte(p.v))
		if err != nil {
			return err
		}
		if kind == 'g' {
			gens[w] = append(gens[w], n)
		}
	}
	for w, ns := range gens {
		if !complete(w) {
			continue
		}
		if len(ns) != concGenKeys {
			return fmt.Errorf("writer %d: a view holds %d of the %d keys of a generation batch: %v", w, len(ns), concGenKeys, ns)
		}
		for _, n := range ns {
			if n != ns[0] {
				return fmt.Errorf("writer %d: a view mixes generations: %v", w, ns)
			}
		}
	}
	return nil
}

// concReader reads the latest state and snapshots, checking the
// invariants.
type concReader struct {
	d       *DB
	rng     *rand.Rand
	writers int
	// last is the newest number seen of each generation and versioned key.
	last  map[string]int
	snaps []concSnap
	stats struct{ gets, scans, snapChecks int }
}

type concSnap struct {
	s    *Snapshot
	view []concPair
}

// observe checks a value (or absence) of key read from the latest state
// against earlier reads and records it.
func (r *concReader) observe(key string, v []byte, found bool) error {
	_, kind, ok := concWriterOf(key)
	if !ok {
		return fmt.Errorf("unexpected key %q", key)
	}
	if kind == 's' {
		if found {
			_, err := concNumber(key, v)
			return err
		}
		return nil
	}
	last, seen := r.last[key]
	if !found {
		if seen {
			return fmt.Errorf("key %q was read with number %d, and a later read did not find it", key, last)
		}
		return nil
	}
	n, err := concNumber(key, v)
	if err != nil {
		return err
	}
	if seen && n < last {
		return fmt.Errorf("key %q went back in time: read number %d after number %d", key, n, last)
	}
	r.last[key] = n
	return nil
}

// observeView checks a view of [lower, upper) of the latest state: every
// key r saw before in that range must still be there, not older.
func (r *concReader) observeView(view []concPair, lower, upper string) error {
	present := make(map[string]bool, len(view))
	for _, p := range view {
		present[p.k] = true
		if err := r.observe(p.k, []byte(p.v), true); err != nil {
			return err
		}
	}
	for k := range r.last {
		if k >= lower && (upper == "" || k < upper) && !present[k] {
			return r.observe(k, nil, false)
		}
	}
	return nil
}

func (r *concReader) randomKey() string {
	w := r.rng.IntN(r.writers)
	switch r.rng.IntN(3) {
	case 0:
		return concGenKey(w, r.rng.IntN(concGenKeys))
	case 1:
		return concVerKey(w, r.rng.IntN(concVerKeys))
	}
	return concScratchKey(w, r.rng.IntN(concScratchKeys))
}

func (r *concReader) get(key string, ro *ReadOptions) ([]byte, bool, error) {
	v, err := r.d.Get([]byte(key), ro)
	if errors.Is(err, ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

func (r *concReader) step() error {
	d := r.d
	switch op := r.rng.IntN(100); {
	case op < 35: // point reads of the latest state
		r.stats.gets++
		for range 8 {
			k := r.randomKey()
			v, found, err := r.get(k, nil)
			if err != nil {
				return fmt.Errorf("get %q: %w", k, err)
			}
			if err := r.observe(k, v, found); err != nil {
				return err
			}
		}
	case op < 65: // a full scan, forward or backward
		r.stats.scans++
		it, err := d.NewIter(nil)
		if err != nil {
			return err
		}
		view, err := concScan(it, r.rng.IntN(2) == 0)
		if cerr := it.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if err := concCheckAtomic(view, func(int) bool { return true }); err != nil {
			return err
		}
		return r.observeView(view, "", "")
	case op < 75: // a scan of one writer's prefix, within bounds
		r.stats.scans++
		w := r.rng.IntN(r.writers)
		lower, upper := fmt.Sprintf("w%d/", w), fmt.Sprintf("w%d0", w)
		it, err := d.NewIter(&IterOptions{LowerBound: []byte(lower), UpperBound: []byte(upper)})
		if err != nil {
			return err
		}
		view, err := concScan(it, r.rng.IntN(2) == 0)
		if cerr := it.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		for _, p := range view {
			if p.k < lower || p.k >= upper {
				return fmt.Errorf("iterator bounded to [%q, %q) returned %q", lower, upper, p.k)
			}
		}
		if err := concCheckAtomic(view, func(int) bool { return true }); err != nil {
			return err
		}
		return r.observeView(view, lower, upper)
	case op < 85: // seeks and a few steps in either direction
		r.stats.scans++
		it, err := d.NewIter(nil)
		if err != nil {
			return err
		}
		defer it.Close()
		k := r.randomKey()
		var prev string
		if r.rng.IntN(2) == 0 {
			for ok, i := it.SeekGE([]byte(k)), 0; ok && i < 10; ok, i = it.Next(), i+1 {
				cur := string(it.Key())
				if cur < k || (i > 0 && cur <= prev) {
					return fmt.Errorf("SeekGE(%q) then Next: %q after %q", k, cur, prev)
				}
				if err := r.observe(cur, it.Value(), true); err != nil {
					return err
				}
				prev = cur
			}
		} else {
			for ok, i := it.SeekLT([]byte(k)), 0; ok && i < 10; ok, i = it.Prev(), i+1 {
				cur := string(it.Key())
				if cur >= k || (i > 0 && cur >= prev) {
					return fmt.Errorf("SeekLT(%q) then Prev: %q after %q", k, cur, prev)
				}
				if err := r.observe(cur, it.Value(), true); err != nil {
					return err
				}
				prev = cur
			}
		}
		return it.Error()
	default: // take a snapshot, or check and maybe release one
		if len(r.snaps) < 2 && r.rng.IntN(2) == 0 {
			s := d.NewSnapshot()
			it, err := s.NewIter(nil)
			if err != nil {
				return err
			}
			view, err := concScan(it, false)
			if cerr := it.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			if err := concCheckAtomic(view, func(int) bool { return true }); err != nil {
				return err
			}
			if err := r.observeView(view, "", ""); err != nil {
				return err
			}
			r.snaps = append(r.snaps, concSnap{s: s, view: view})
			return nil
		}
		if len(r.snaps) == 0 {
			return nil
		}
		i := r.rng.IntN(len(r.snaps))
		if err := r.recheck(r.snaps[i]); err != nil {
			return err
		}
		if r.rng.IntN(3) == 0 {
			r.snaps[i].s.Close()
			r.snaps = append(r.snaps[:i], r.snaps[i+1:]...)
		}
	}
	return nil
}

// recheck reads a snapshot again, by a scan in a random direction and by
// point reads, and demands exactly what it read when it was taken.
func (r *concReader) recheck(cs concSnap) error {
	r.stats.snapChecks++
	it, err := cs.s.NewIter(nil)
	if err != nil {
		return err
	}
	view, err := concScan(it, r.rng.IntN(2) == 0)
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if !concEqualViews(cs.view, view) {
		return fmt.Errorf("snapshot at %d changed: %s", cs.s.Seq(), concDiff(cs.view, view))
	}
	want := make(map[string]string, len(cs.view))
	for _, p := range cs.view {
		want[p.k] = p.v
	}
	for range 8 {
		k := r.randomKey()
		v, err := cs.s.Get([]byte(k))
		w, ok := want[k]
		switch {
		case errors.Is(err, ErrNotFound) && !ok:
		case err != nil:
			return fmt.Errorf("snapshot at %d: get %q: %w (want %q)", cs.s.Seq(), k, err, w)
		case !ok || string(v) != w:
			return fmt.Errorf("snapshot at %d: get %q = %.20q, want %.20q (present %v)", cs.s.Seq(), k, v, w, ok)
		}
	}
	return nil
}

func concEqualViews(a, b []concPair) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// concDiff describes the first difference of two views.
func concDiff(want, got []concPair) string {
	for i := 0; i < len(want) || i < len(got); i++ {
		switch {
		case i >= len(want):
			return fmt.Sprintf("extra key %q", got[i].k)
		case i >= len(got):
			return fmt.Sprintf("missing key %q", want[i].k)
		case want[i] != got[i]:
			return fmt.Sprintf("at %d: want %q=%.12q, got %q=%.12q", i, want[i].k, want[i].v, got[i].k, got[i].v)
		}
	}
	return "no difference"
}

// concModelView returns the union of the writers' models, in key order.
func concModelView(writers []*concWriter) []concPair {
	var out []concPair
	for _, w := range writers {
		for k, v := range w.model {
			out = append(out, concPair{k, v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].k < out[j].k })
	return out
}

func concReadAll(t *testing.T, d *DB, reverse bool) []concPair {
	t.Helper()
	it, err := d.NewIter(nil)
	require.NoError(t, err)
	view, err := concScan(it, reverse)
	require.NoError(t, err)
	require.NoError(t, it.Close())
	return view
}

// TestConcurrentReadWrite runs writers, readers with iterators in both
// directions and snapshots, and flushes and compactions at once; see the
// top of the file for what it checks.
func TestConcurrentReadWrite(t *testing.T) {
	const numWriters, numReaders = 4, 3
	// Each writer makes at least minOps writes, then goes on until a flush,
	// a compaction and a write stall have happened, or maxOps.
	minOps, maxOps := 4000, 20000
	if underRace {
		minOps, maxOps = 1500, 8000
	}
	if testing.Short() {
		minOps /= 2
	}
	fs := vfs.NewMem()
	opts := concOptions(fs)
	d, err := Open("/db", opts)
	require.NoError(t, err)

	// A snapshot of the empty database, held throughout.
	empty := d.NewSnapshot()

	done := func() bool {
		st := d.Stats()
		return st.Get(stats.Flushes) > 0 && st.Get(stats.Compactions) > 0 && st.Get(stats.Stalls) > 0
	}
	var writing atomic.Int32
	writing.Store(numWriters)
	writers := make([]*concWriter, numWriters)
	readers := make([]*concReader, numReaders)
	var g concGroup
	for i := range writers {
		w := &concWriter{d: d, id: i, rng: rand.New(rand.NewPCG(uint64(i), 1)), model: map[string]string{}}
		writers[i] = w
		g.Go(fmt.Sprintf("writer %d", i), func() error {
			defer writing.Add(-1)
			for n := 0; !g.stop.Load(); n++ {
				if n >= maxOps || (n >= minOps && done()) {
					return nil
				}
				if err := w.step(); err != nil {
					return err
				}
			}
			return nil
		})
	}
	for i := range readers {
		r := &concReader{d: d, rng: rand.New(rand.NewPCG(uint64(i), 2)), writers: numWriters, last: map[string]int{}}
		readers[i] = r
		g.Go(fmt.Sprintf("reader %d", i), func() error {
			defer func() {
				for _, s := range r.snaps {
					s.s.Close()
				}
			}()
			for writing.Load() > 0 && !g.stop.Load() {
				if err := r.step(); err != nil {
					return err
				}
			}
			// Every snapshot still reads what it read when taken.
			for _, s := range r.snaps {
				if err := r.recheck(s); err != nil {
					return err
				}
			}
			return nil
		})
	}
	var manual struct{ flushes, compactions int }
	g.Go("flusher", func() error {
		rng := rand.New(rand.NewPCG(3, 3))
		for writing.Load() > 0 && !g.stop.Load() {
			// Paced, so that most flushes come from full memtables.
			time.Sleep(time.Duration(1+rng.IntN(5)) * time.Millisecond)
			switch r := rng.IntN(10); {
			case r < 5:
				manual.flushes++
				if err := d.Flush(); err != nil {
					return fmt.Errorf("flush: %w", err)
				}
			case r < 6:
				manual.compactions++
				if err := d.Compact(nil, nil); err != nil {
					return fmt.Errorf("compact: %w", err)
				}
			case r < 8:
				manual.compactions++
				w := rng.IntN(numWriters)
				lo, hi := []byte(fmt.Sprintf("w%d/", w)), []byte(fmt.Sprintf("w%d0", w))
				if err := d.Compact(lo, hi); err != nil {
					return fmt.Errorf("compact [%s, %s]: %w", lo, hi, err)
				}
			default:
				_ = d.Metrics().String()
			}
		}
		return nil
	})
	require.NoError(t, g.Wait())
	require.NoError(t, d.BackgroundError())

	// The database holds exactly what the writers committed, read either way.
	want := concModelView(writers)
	require.Equal(t, want, concReadAll(t, d, false))
	require.Equal(t, want, concReadAll(t, d, true))
	it, err := empty.NewIter(nil)
	require.NoError(t, err)
	require.False(t, it.First(), "a snapshot of the empty database sees a key")
	require.NoError(t, it.Close())
	require.NoError(t, empty.Close())

	st := d.Stats()
	var ops, gets, scans, snapChecks int
	for _, w := range writers {
		ops += w.n
	}
	for _, r := range readers {
		gets += r.stats.gets
		scans += r.stats.scans
		snapChecks += r.stats.snapChecks
	}
	t.Logf("%d writes, %d get rounds, %d scans, %d snapshot checks; %d manual flushes, %d manual compactions",
		ops, gets, scans, snapChecks, manual.flushes, manual.compactions)
	t.Logf("counters: commits %d, wal syncs %d, flushes %d, compactions %d, stalls %d (%d µs)",
		st.Get(stats.Commits), st.Get(stats.WALSyncs), st.Get(stats.Flushes), st.Get(stats.Compactions),
		st.Get(stats.Stalls), st.Get(stats.StallMicros))
	require.Positive(t, st.Get(stats.Flushes), "no flush happened")
	require.Positive(t, st.Get(stats.Compactions), "no compaction happened")
	require.Positive(t, st.Get(stats.Stalls), "no write stall happened")
	require.Positive(t, snapChecks, "no snapshot was read again")

	// And so it does after a reopen.
	require.NoError(t, d.Close())
	d, err = Open("/db", opts)
	require.NoError(t, err)
	require.Equal(t, want, concReadAll(t, d, false))
	require.NoError(t, d.Close())
}

// syncGateFS holds the first sync of a write-ahead log after gate is set
// until gate returns: a slow disk, for as long as a test needs.
type syncGateFS struct {
	vfs.FS
	gate atomic.Pointer[func()]
	once sync.Once
}

func (fs *syncGateFS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return &syncGateFile{File: f, fs: fs}, nil
}

type syncGateFile struct {
	vfs.File
	fs *syncGateFS
}

func (f *syncGateFile) Sync() error {
	if g := f.fs.gate.Load(); g != nil {
		f.fs.once.Do(*g)
	}
	return f.File.Sync()
}

// TestGroupCommit starts many synced commits at once, behind a barrier:
// commits that wait while a sync runs share the next one, so there are
// fewer syncs than commits. The first sync is held until every committer
// has queued, so that the outcome does not depend on scheduling. Every
// commit is durable: a crash right after keeps them all.
func TestGroupCommit(t *testing.T) {
	const n = 64
	mem := vfs.NewMem()
	fs := &syncGateFS{FS: mem}
	d, err := Open("/db", &Options{FS: fs})
	require.NoError(t, err)
	var finished atomic.Bool
	gate := func() {
		for !finished.Load() {
			d.commit.mu.Lock()
			queued := len(d.commit.queue)
			d.commit.mu.Unlock()
			if queued >= n {
				return
			}
			runtime.Gosched()
		}
	}
	fs.gate.Store(&gate)
	before := d.Stats()

	start := make(chan struct{})
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			b := d.NewBatch()
			b.Set(fmt.Appendf(nil, "key%03d", i), fmt.Appendf(nil, "value%03d", i))
			errs <- b.Commit(Sync)
		}()
	}
	close(start)
	wg.Wait()
	finished.Store(true)
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	st := d.Stats().Sub(before)
	commits, syncs := st.Get(stats.Commits), st.Get(stats.WALSyncs)
	t.Logf("%d commits, %d syncs", commits, syncs)
	require.EqualValues(t, n, commits)
	require.Positive(t, syncs)
	require.Less(t, syncs, commits, "concurrent synced commits did not share syncs")

	crashed := mem.CrashClone(vfs.CrashOptions{})
	require.NoError(t, d.Close())
	d, err = Open("/db", &Options{FS: crashed})
	require.NoError(t, err)
	it, err := d.NewIter(nil)
	require.NoError(t, err)
	require.Len(t, scanAll(t, it), n)
	require.NoError(t, it.Close())
	require.NoError(t, d.Close())
}

// TestConcurrentSnapshotsAcrossCompactions pins many snapshots, each over
// its own state of a small set of keys that is overwritten again and again,
// while flushes and compactions run, and checks every snapshot against the
// state it was taken at: compactions must keep every version a live
// snapshot needs and may drop the others.
func TestConcurrentSnapshotsAcrossCompactions(t *testing.T) {
	rounds := 60
	if underRace {
		rounds = 25
	}
	fs := vfs.NewMem()
	d, err := Open("/db", concOptions(fs))
	require.NoError(t, err)
	type pinned struct {
		s    *Snapshot
		want kvModel
	}
	var snaps []pinned
	latest := kvModel{}
	rng := rand.New(rand.NewPCG(7, 7))
	var g concGroup
	var writing atomic.Bool
	writing.Store(true)
	g.Go("compactor", func() error {
		for writing.Load() && !g.stop.Load() {
			time.Sleep(time.Millisecond)
			if err := d.Compact(nil, nil); err != nil {
				return err
			}
		}
		return nil
	})
	for round := range rounds {
		b := d.NewBatch()
		var ops []modelOp
		for i := range 200 {
			j := (i*7 + round) % 300
			k := fmt.Sprintf("k%03d", j)
			switch rng.IntN(10) {
			case 0:
				ops = append(ops, modelOp{kind: 'd', key: k})
			case 1:
				ops = append(ops, modelOp{kind: 'r', key: k, end: fmt.Sprintf("k%03d", j+1+rng.IntN(4))})
			default:
				ops = append(ops, modelOp{kind: 's', key: k, value: concValue(round*1000 + i)})
			}
		}
		mt := &modelTest{t: t}
		mt.fillBatch(b, ops)
		require.NoError(t, b.Commit(NoSync))
		applyOps(latest, ops)
		if round%3 == 0 {
			snaps = append(snaps, pinned{d.NewSnapshot(), latest.clone()})
		}
		if len(snaps) > 0 && rng.IntN(4) == 0 {
			i := rng.IntN(len(snaps))
			require.NoError(t, snaps[i].s.Close())
			snaps = append(snaps[:i], snaps[i+1:]...)
		}
		for _, p := range snaps {
			it, err := p.s.NewIter(nil)
			require.NoError(t, err)
			var want []string
			for _, k := range p.want.sorted(nil, nil) {
				want = append(want, k+"="+p.want[k])
			}
			require.Equal(t, want, scanAll(t, it), "snapshot at %d", p.s.Seq())
			require.NoError(t, it.Close())
		}
	}
	writing.Store(false)
	require.NoError(t, g.Wait())
	for _, p := range snaps {
		require.NoError(t, p.s.Close())
	}
	require.Positive(t, d.Stats().Get(stats.Compactions))
	it, err := d.NewIter(nil)
	require.NoError(t, err)
	var want []string
	for _, k := range latest.sorted(nil, nil) {
		want = append(want, k+"="+latest[k])
	}
	require.Equal(t, want, scanAll(t, it))
	require.NoError(t, it.Close())
	require.NoError(t, d.Close())
}
