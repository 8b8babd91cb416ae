package kv

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/table"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

var (
	modelSeed  = flag.Uint64("seed", 0, "seed of the randomized model test (0: fixed seeds)")
	modelSteps = flag.Int("model.steps", 3000, "operations per run of the randomized model test")
)

// kvModel is the in-memory model the engine is checked against: a map of
// the latest state, and frozen copies for snapshots.
type kvModel map[string]string

func (m kvModel) clone() kvModel {
	c := make(kvModel, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func (m kvModel) deleteRange(start, end string) {
	for k := range m {
		if k >= start && k < end {
			delete(m, k)
		}
	}
}

// sorted returns the model's keys in [lower, upper) in order.
func (m kvModel) sorted(lower, upper []byte) []string {
	var ks []string
	for k := range m {
		if (lower == nil || k >= string(lower)) && (upper == nil || k < string(upper)) {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}

type modelOp struct {
	kind       byte // 's' set, 'd' delete, 'r' range delete
	key, value string
	end        string
}

func applyOps(m kvModel, ops []modelOp) {
	for _, op := range ops {
		switch op.kind {
		case 's':
			m[op.key] = op.value
		case 'd':
			delete(m, op.key)
		case 'r':
			m.deleteRange(op.key, op.end)
		}
	}
}

type modelTest struct {
	t      *testing.T
	rng    *rand.Rand
	fs     *vfs.MemFS
	opts   *Options
	d      *DB
	latest kvModel
	snaps  []*Snapshot
	frozen []kvModel
	keys   []string
	n      int
}

func (mt *modelTest) key() string { return mt.keys[mt.rng.IntN(len(mt.keys))] }

func (mt *modelTest) value() string {
	mt.n++
	return fmt.Sprintf("v%d-%s", mt.n, bytes.Repeat([]byte{'x'}, mt.rng.IntN(64)))
}

func (mt *modelTest) randomOps(n int) []modelOp {
	ops := make([]modelOp, n)
	for i := range ops {
		switch r := mt.rng.IntN(20); {
		case r < 13:
			ops[i] = modelOp{kind: 's', key: mt.key(), value: mt.value()}
		case r < 18:
			ops[i] = modelOp{kind: 'd', key: mt.key()}
		default:
			a, b := mt.key(), mt.key()
			if a == b {
				b = a + "\x00"
			}
			if a > b {
				a, b = b, a
			}
			ops[i] = modelOp{kind: 'r', key: a, end: b}
		}
	}
	return ops
}

func (mt *modelTest) fillBatch(b *Batch, ops []modelOp) {
	for _, op := range ops {
		var err error
		switch op.kind {
		case 's':
			err = b.Set([]byte(op.key), []byte(op.value))
		case 'd':
			err = b.Delete([]byte(op.key))
		case 'r':
			err = b.DeleteRange([]byte(op.key), []byte(op.end))
		}
		require.NoError(mt.t, err)
	}
}

// reader returns a random read view and its model: the latest state or an
// open snapshot.
func (mt *modelTest) reader() (*ReadOptions, kvModel, string) {
	if len(mt.snaps) > 0 && mt.rng.IntN(3) == 0 {
		i := mt.rng.IntN(len(mt.snaps))
		return &ReadOptions{Snapshot: mt.snaps[i]}, mt.frozen[i], fmt.Sprintf("snapshot %d", mt.snaps[i].seq)
	}
	return nil, mt.latest, "latest"
}

func (mt *modelTest) checkGet(get func(k []byte) ([]byte, error), m kvModel, what string) {
	for range 5 {
		k := mt.key()
		v, err := get([]byte(k))
		want, ok := m[k]
		if !ok {
			require.ErrorIs(mt.t, err, ErrNotFound, "get %q (%s)", k, what)
		} else {
			require.NoError(mt.t, err, "get %q (%s)", k, what)
			require.Equal(mt.t, want, string(v), "get %q (%s)", k, what)
		}
	}
}

// checkIter drives it with random moves and compares each position with
// the model.
func (mt *modelTest) checkIter(it *Iterator, m kvModel, lower, upper []byte, what string) {
	t := mt.t
	keys := m.sorted(lower, upper)
	pos := -2 // -2: not positioned; -1 or len(keys): exhausted
	for range 40 {
		var ok bool
		var op string
		switch r := mt.rng.IntN(10); {
		case r == 0:
			op, ok = "First", it.First()
			pos = 0
			if len(keys) == 0 {
				pos = -1
			}
		case r == 1:
			op, ok = "Last", it.Last()
			pos = len(keys) - 1
		case r == 2:
			k := mt.key()
			op, ok = "SeekGE "+k, it.SeekGE([]byte(k))
			pos = sort.SearchStrings(keys, k)
		case r == 3:
			k := mt.key()
			op, ok = "SeekLT "+k, it.SeekLT([]byte(k))
			pos = sort.SearchStrings(keys, k) - 1
		case r < 7:
			if pos < 0 || pos >= len(keys) {
				continue
			}
			op, ok = "Next", it.Next()
			pos++
		default:
			if pos < 0 || pos >= len(keys) {
				continue
			}
			op, ok = "Prev", it.Prev()
			pos--
		}
		require.NoError(t, it.Error(), "%s (%s)", op, what)
		wantOK := pos >= 0 && pos < len(keys)
		require.Equal(t, wantOK, ok, "%s (%s) bounds [%q,%q): want key %v", op, what, lower, upper, func() string {
			if wantOK {
				return keys[pos]
			}
			return "none"
		}())
		if ok {
			require.Equal(t, keys[pos], string(it.Key()), "%s (%s)", op, what)
			require.Equal(t, m[keys[pos]], string(it.Value()), "%s (%s) key %q", op, what, keys[pos])
		}
	}
}

// checkMultiGet compares a MultiGet of random keys with the model.
func (mt *modelTest) checkMultiGet(r Reader, ro *ReadOptions, m kvModel, what string) {
	t := mt.t
	keys := make([][]byte, 1+mt.rng.IntN(80))
	for i := range keys {
		keys[i] = []byte(mt.key())
	}
	// Half the time with async I/O: the batch's block reads issued at once.
	var o ReadOptions
	if ro != nil {
		o = *ro
	}
	o.AsyncIO = mt.rng.IntN(2) == 0
	vals, err := r.MultiGet(keys, &o, nil)
	require.NoError(t, err)
	for i, k := range keys {
		want, ok := m[string(k)]
		if !ok {
			require.Nil(t, vals[i], "multiget %q (%s)", k, what)
		} else {
			require.Equal(t, want, string(vals[i]), "multiget %q (%s)", k, what)
		}
	}
}

// checkMultiScan compares a MultiScan over random ranges with the model.
func (mt *modelTest) checkMultiScan(r Reader, ro *ReadOptions, m kvModel, what string) {
	t := mt.t
	var ranges []ScanRange
	var prev string
	for range 1 + mt.rng.IntN(8) {
		a, b := mt.key(), mt.key()
		if a > b {
			a, b = b, a
		}
		if a == b || a < prev {
			continue
		}
		ranges = append(ranges, ScanRange{Start: []byte(a), End: []byte(b)})
		prev = b
	}
	if len(ranges) == 0 {
		return
	}
	o := &IterOptions{}
	if ro != nil {
		o.ReadOptions = *ro
	}
	o.AsyncIO = mt.rng.IntN(2) == 0
	s, err := r.NewMultiScan(context.Background(), ranges, o)
	require.NoError(t, err)
	for ri, rg := range ranges {
		want := m.sorted(rg.Start, rg.End)
		var got []string
		for ok := s.SeekRange(ri); ok; ok = s.Next() {
			got = append(got, string(s.Key()))
			require.Equal(t, m[string(s.Key())], string(s.Value()))
		}
		require.NoError(t, s.Error())
		require.Equal(t, want, got, "multiscan range %d [%q,%q) (%s)", ri, rg.Start, rg.End, what)
	}
	require.NoError(t, s.Close())
}

func (mt *modelTest) randomBounds() (lower, upper []byte) {
	if mt.rng.IntN(2) == 0 {
		lower = []byte(mt.key())
	}
	if mt.rng.IntN(2) == 0 {
		upper = []byte(mt.key())
	}
	if lower != nil && upper != nil && bytes.Compare(lower, upper) > 0 {
		lower, upper = upper, lower
	}
	return lower, upper
}

func (mt *modelTest) step() {
	t, d := mt.t, mt.d
	switch r := mt.rng.IntN(100); {
	case r < 30: // a batch
		ops := mt.randomOps(1 + mt.rng.IntN(8))
		b := d.NewBatch()
		mt.fillBatch(b, ops)
		wo := NoSync
		if mt.rng.IntN(4) == 0 {
			wo = Sync
		}
		require.NoError(t, b.Commit(wo))
		applyOps(mt.latest, ops)
	case r < 45: // single writes
		op := mt.randomOps(1)[0]
		var err error
		switch op.kind {
		case 's':
			err = d.Set([]byte(op.key), []byte(op.value), nil)
		case 'd':
			err = d.Delete([]byte(op.key), nil)
		case 'r':
			err = d.DeleteRange([]byte(op.key), []byte(op.end), nil)
		}
		require.NoError(t, err)
		applyOps(mt.latest, []modelOp{op})
	case r < 60:
		ro, m, what := mt.reader()
		mt.checkGet(func(k []byte) ([]byte, error) { return d.Get(k, ro) }, m, what)
	case r < 66:
		ro, m, what := mt.reader()
		if mt.rng.IntN(2) == 0 {
			mt.checkMultiGet(d, ro, m, what)
		} else {
			mt.checkMultiScan(d, ro, m, what)
		}
	case r < 72:
		ro, m, what := mt.reader()
		lower, upper := mt.randomBounds()
		o := &IterOptions{LowerBound: lower, UpperBound: upper}
		if ro != nil {
			o.ReadOptions = *ro
		}
		switch mt.rng.IntN(4) {
		case 0:
			o.ReadaheadSize = 4096 << mt.rng.IntN(6)
		case 1:
			o.ReadaheadSize = -1
		}
		o.AsyncIO = mt.rng.IntN(3) == 0
		it, err := d.NewIter(o)
		require.NoError(t, err)
		mt.checkIter(it, m, lower, upper, what)
		require.NoError(t, it.Close())
	case r < 78: // an indexed batch read through, then committed or dropped
		ro, m, what := mt.reader()
		ops := mt.randomOps(1 + mt.rng.IntN(10))
		b := d.NewIndexedBatch()
		half := mt.rng.IntN(len(ops) + 1)
		mt.fillBatch(b, ops[:half])
		bm := m.clone()
		applyOps(bm, ops[:half])
		mark := b.Mark()
		mt.fillBatch(b, ops[half:])
		if mt.rng.IntN(3) == 0 {
			require.NoError(t, b.RollbackTo(mark))
		} else {
			applyOps(bm, ops[half:])
		}
		what = "batch over " + what
		mt.checkGet(func(k []byte) ([]byte, error) { return b.Get(k, ro) }, bm, what)
		mt.checkMultiGet(b, ro, bm, what)
		mt.checkMultiScan(b, ro, bm, what)
		lower, upper := mt.randomBounds()
		o := &IterOptions{LowerBound: lower, UpperBound: upper}
		if ro != nil {
			o.ReadOptions = *ro
		}
		it, err := b.NewIter(o)
		require.NoError(t, err)
		mt.checkIter(it, bm, lower, upper, what)
		require.NoError(t, it.Close())
		if ro == nil && mt.rng.IntN(2) == 0 {
			require.NoError(t, b.Commit(NoSync))
			mt.latest = bm
		}
	case r < 83:
		if len(mt.snaps) < 5 {
			mt.snaps = append(mt.snaps, d.NewSnapshot())
			mt.frozen = append(mt.frozen, mt.latest.clone())
		} else {
			i := mt.rng.IntN(len(mt.snaps))
			require.NoError(t, mt.snaps[i].Close())
			mt.snaps = append(mt.snaps[:i], mt.snaps[i+1:]...)
			mt.frozen = append(mt.frozen[:i], mt.frozen[i+1:]...)
		}
	case r < 88:
		require.NoError(t, d.Flush())
	case r < 89 && mt.rng.IntN(5) == 0:
		lower, upper := mt.randomBounds()
		require.NoError(t, d.Compact(lower, upper))
	case r < 91:
		mt.reopen()
	default: // bulk writes to push flushes and compactions
		b := d.NewBatch()
		var ops []modelOp
		for range 200 {
			op := modelOp{kind: 's', key: mt.key(), value: mt.value() + string(bytes.Repeat([]byte{'y'}, 500))}
			ops = append(ops, op)
		}
		mt.fillBatch(b, ops)
		require.NoError(t, b.Commit(NoSync))
		applyOps(mt.latest, ops)
	}
}

func (mt *modelTest) reopen() {
	for _, s := range mt.snaps {
		require.NoError(mt.t, s.Close())
	}
	mt.snaps, mt.frozen = nil, nil
	require.NoError(mt.t, mt.d.Close())
	d, err := Open("/db", mt.opts)
	require.NoError(mt.t, err)
	mt.d = d
}

func runModelTest(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	fs := vfs.NewMem()
	opts := &Options{
		FS:                  fs,
		MemtableSize:        256 << 10,
		TargetFileSize:      64 << 10,
		LBaseMaxBytes:       256 << 10,
		L0CompactionTrigger: 2,
		CacheSize:           64 << 10,
		BlockSize:           256 + rng.IntN(2048),
		MaxOpenFiles:        16,
	}
	if rng.IntN(2) == 0 {
		opts.Compression = table.Compression(1 + rngCompression(rng))
	}
	d, err := Open("/db", opts)
	require.NoError(t, err)
	mt := &modelTest{t: t, rng: rng, fs: fs, opts: opts, d: d, latest: kvModel{}}
	for i := range 2000 {
		k := fmt.Sprintf("k%04d", i)
		if i%7 == 0 {
			k = k[:4] // short prefixes of other keys
		}
		mt.keys = append(mt.keys, k)
	}
	for range steps {
		mt.step()
	}
	// A final full comparison.
	it, err := mt.d.NewIter(nil)
	require.NoError(t, err)
	var got []string
	for ok := it.First(); ok; ok = it.Next() {
		got = append(got, string(it.Key()))
	}
	require.NoError(t, it.Close())
	require.Equal(t, mt.latest.sorted(nil, nil), got)
	for _, s := range mt.snaps {
		s.Close()
	}
	require.NoError(t, mt.d.BackgroundError())
	m := mt.d.Metrics()
	t.Logf("flushes %d, compactions %d, files per level %v", m.Counters.Get(stats.Flushes), m.Counters.Get(stats.Compactions), func() (n [NumLevels]int) {
		for i, l := range m.Levels {
			n[i] = l.NumFiles
		}
		return n
	}())
	require.NoError(t, mt.d.Close())
}

func rngCompression(rng *rand.Rand) (c uint8) { return uint8(rng.IntN(2)) }

func TestModel(t *testing.T) {
	if *modelSeed != 0 {
		t.Logf("seed %d", *modelSeed)
		runModelTest(t, *modelSeed, *modelSteps)
		return
	}
	steps := *modelSteps
	if testing.Short() {
		steps /= 5
	}
	for _, seed := range []uint64{1, 2, 3, 4} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			start := time.Now()
			runModelTest(t, seed, steps)
			t.Logf("%d steps in %v", steps, time.Since(start))
		})
	}
}
