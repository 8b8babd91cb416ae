package main

// The kv workloads: what one operation of each does, and what it counts.
// They mirror db_bench's benchmarks of the same names, including the order
// in which they draw random numbers, so that a given -seed gives the same
// keys.
//
// Adding a workload:
//
//  1. Write a func(t *kvThread) error. Loop while n := t.next(batch) is
//     above 0 (t.next stops at the run's operation count or -duration, and
//     when another thread failed), do n operations against t.db, then call
//     t.finishedOps(n). Add the key and value bytes moved to t.bytes, the
//     entries read to t.entries (the report's CPU per entry), and set t.msg
//     to the report's message, e.g. "(found of read found)".
//  2. Add an entry to kvWorkloads: its name, whether it starts from an
//     empty database (fresh), whether -duration bounds it (timed), whether
//     it only reads (readOnly: the A/B mode compares only those), the
//     operations per thread (ops) and the histogram label (op).
//  3. Settings it needs that are not already in kvRun go there, filled in
//     newKVRun from the flags, so that a mode comparing two variants of a run
//     (A/B) can vary them. Read-path switches for iterators go in
//     kvIterOptions (kvRun.iter), which the engine adapter maps.
//  4. An engine capability beyond kvEngine (MultiGet, MultiScan) goes in a
//     small interface that the workload asserts on t.db, failing with a
//     clear error when the engine lacks it:
//
//	type kvMultiGetter interface {
//		multiGet(keys, dst [][]byte, o kvIterOptions) ([][]byte, error)
//	}

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
)

// kvWorkload describes one workload.
type kvWorkload struct {
	name string
	desc string
	// fresh workloads start from an empty database (db_bench's fills); they
	// are skipped with -use_existing_db.
	fresh bool
	// timed workloads stop after -duration seconds when it is set;
	// otherwise after ops operations per thread.
	timed bool
	// single workloads run in one thread whatever -threads says.
	single bool
	// readOnly workloads leave the database as they found it; -ab runs
	// them twice, the others once.
	readOnly bool
	// op names the operation in the histogram ("Microseconds per read").
	op string
	// ops returns the operations per thread.
	ops func(c *kvConfig) int64
	// run is the body of one thread; nil for a meta workload.
	run func(t *kvThread) error
	// meta, when not nil, runs instead of threads: once, untimed, with no
	// report line (flush, stats).
	meta func(b *kvBench) error
	// banner, when not nil, returns lines for standard error before each
	// run, as db_bench prints for some workloads.
	banner func(r *kvRun) string
}

func kvOpsNum(c *kvConfig) int64   { return c.num }
func kvOpsReads(c *kvConfig) int64 { return c.readsPerThread() }
func kvOpsOne(*kvConfig) int64     { return 1 }

// kvOpsMultiScans returns the multiscans per thread: -reads counts keys, as
// in db_bench, so a thread runs -reads / (keys per multiscan) of them, at
// least one.
func kvOpsMultiScans(c *kvConfig) int64 {
	perScan := c.multiScanSize * kvMultiScanKeys(c.seekNexts)
	if perScan < 1 {
		return 1
	}
	return max(1, c.readsPerThread()/perScan)
}

// kvWorkloads is the workload table, in the order of -h.
var kvWorkloads = []*kvWorkload{
	{name: "fillseq", desc: "write -num keys in key order into a new database", fresh: true, op: "write",
		ops: kvOpsNum, run: func(t *kvThread) error { return kvWrite(t, false) }},
	{name: "fillrandom", desc: "write -num random keys (with repeats) into a new database", fresh: true, timed: true, op: "write",
		ops: kvOpsNum, run: func(t *kvThread) error { return kvWrite(t, true) }},
	{name: "overwrite", desc: "write -num random keys into the existing database", timed: true, op: "write",
		ops: kvOpsNum, run: func(t *kvThread) error { return kvWrite(t, true) }},
	{name: "readrandom", desc: "Get -reads random keys", timed: true, readOnly: true, op: "read",
		ops: kvOpsReads, run: kvReadRandom},
	{name: "readseq", desc: "iterate over up to -reads keys from the first", readOnly: true, op: "read",
		ops: kvOpsReads, run: kvReadSeq},
	{name: "seekrandom", desc: "-reads times: new iterator, seek a random key, then -seek_nexts Next calls", timed: true, readOnly: true,
		op: "seek", ops: kvOpsReads, run: kvSeekRandom},
	{name: "multireadrandom", desc: "look up -reads random keys in batches of -batch_size (-multiread_batched, -multiread_stride)",
		timed: true, readOnly: true, op: "read", ops: kvOpsReads, run: kvMultiReadRandom,
		banner: func(r *kvRun) string { return fmt.Sprintf("entries_per_batch = %d\n", r.batchSize) }},
	{name: "multiscan", desc: "scan -multiscan_size ranges of -seek_nexts keys (50 if 0), -multiscan_stride keys apart, from a random key (-multiscan_prepare)",
		timed: true, readOnly: true, op: "multiscan", ops: kvOpsMultiScans, run: kvMultiScanRandom},
	{name: "compact", desc: "compact the whole database (flushes the memtable first)", single: true, op: "op",
		ops: kvOpsOne, run: kvCompact},
	{name: "flush", desc: "flush the memtable (untimed)", meta: func(b *kvBench) error { return b.db.flush() }},
	{name: "stats", desc: "print the tree's shape (untimed)", meta: func(b *kvBench) error {
		_, err := fmt.Fprint(b.stdout, b.db.metrics())
		return err
	}},
}

// kvWorkloadByName returns the workload with the given name, or nil.
func kvWorkloadByName(name string) *kvWorkload {
	for _, w := range kvWorkloads {
		if w.name == name {
			return w
		}
	}
	return nil
}

// kvWorkloadNames returns the workload names, sorted.
func kvWorkloadNames() []string {
	names := make([]string, len(kvWorkloads))
	for i, w := range kvWorkloads {
		names[i] = w.name
	}
	sort.Strings(names)
	return names
}

// kvWrite writes keys in batches of -batch_size: key numbers 0, 1, 2, ...
// or, with random, uniform in [0, -num). Bytes counted: key + value.
func kvWrite(t *kvThread, random bool) error {
	r := t.run
	b := t.db.newBatch()
	defer b.close()
	var seq uint64
	num := uint64(r.num)
	var moved int64
	for n := t.next(int64(r.batchSize)); n > 0; n = t.next(int64(r.batchSize)) {
		if random {
			// db_bench picks one of its databases for each batch: draw the
			// number it draws, to keep the key sequence the same.
			t.rng.next()
		}
		for range n {
			k := seq
			if random {
				k = t.rng.next() % num
			} else {
				seq++
			}
			putKVKey(t.key, k)
			v := t.values.next(r.valueSize)
			if err := b.set(t.key, v); err != nil {
				return fmt.Errorf("writing key %d: %w", k, err)
			}
			moved += int64(len(t.key) + len(v))
		}
		if err := b.commit(); err != nil {
			return fmt.Errorf("committing a batch of %d keys: %w", n, err)
		}
		t.finishedOps(n)
	}
	t.bytes += moved
	return nil
}

// kvReadRandom gets uniformly random keys of [0, -num). Bytes counted: key
// + value of each key found.
func kvReadRandom(t *kvThread) error {
	num := uint64(t.run.num)
	var read, found, moved int64
	var buf []byte
	for t.next(1) > 0 {
		t.rng.next() // db_bench's database choice; see kvWrite
		k := t.rng.next() % num
		putKVKey(t.key, k)
		read++
		v, ok, err := t.db.get(t.key, buf[:0])
		if err != nil {
			return fmt.Errorf("getting key %d: %w", k, err)
		}
		if ok {
			found++
			moved += int64(len(t.key) + len(v))
			buf = v
		}
		t.finishedOps(1)
	}
	t.bytes += moved
	// db_bench ends this message with a newline.
	t.msg = fmt.Sprintf("(%d of %d found)\n", found, read)
	return nil
}

// kvReadSeq iterates from the first key, one operation per key, until the
// run's operation count or the end of the keys. Bytes counted: key + value.
func kvReadSeq(t *kvThread) (err error) {
	it, err := t.db.newIter(t.run.iter)
	if err != nil {
		return fmt.Errorf("new iterator: %w", err)
	}
	defer func() {
		if cerr := it.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("iterating: %w", cerr)
		}
	}()
	var moved int64
	for ok := it.First(); ok && t.next(1) > 0; ok = it.Next() {
		moved += int64(len(it.Key()) + len(it.Value()))
		t.entries++
		t.finishedOps(1)
	}
	t.bytes += moved
	return nil
}

// kvSeekRandom makes a new iterator per operation, seeks it to a random key
// of [0, -num) and moves it -seek_nexts times, copying up to 256 bytes of
// each value it passes. found counts seeks that land on the key itself.
// Bytes counted: key + value of each entry passed.
func kvSeekRandom(t *kvThread) error {
	r := t.run
	num := uint64(r.num)
	var upper []byte
	if r.maxScanDistance > 0 {
		upper = make([]byte, len(t.key))
	}
	var read, found, moved int64
	var valueBuf [256]byte
	for t.next(1) > 0 {
		k := t.rng.next() % num
		putKVKey(t.key, k)
		o := r.iter
		if upper != nil {
			putKVKey(upper, min(num, k+uint64(r.maxScanDistance)))
			o.upperBound = upper
		}
		it, err := t.db.newIter(o)
		if err != nil {
			return fmt.Errorf("new iterator: %w", err)
		}
		ok := it.SeekGE(t.key)
		read++
		if ok && bytes.Equal(it.Key(), t.key) {
			found++
		}
		for j := 0; j < r.seekNexts && ok; j++ {
			v := it.Value()
			copy(valueBuf[:], v)
			moved += int64(len(it.Key()) + len(v))
			t.entries++
			ok = it.Next()
		}
		if err := it.Close(); err != nil {
			return fmt.Errorf("seeking key %d: %w", k, err)
		}
		t.finishedOps(1)
	}
	t.bytes += moved
	// db_bench ends this message with a newline.
	t.msg = fmt.Sprintf("(%d of %d found)\n", found, read)
	return nil
}

// kvMultiReadRandom looks up -reads keys in batches of -batch_size, one
// operation per key. A batch is uniformly random keys of [0, -num) or, with
// -multiread_stride=S, keys r, r+S, r+2S, ... from a random r (moved down
// when the batch would pass -num), drawn as db_bench draws them. With
// -multiread_batched a batch is one MultiGet, otherwise one Get per key.
// Bytes counted: key + value of each key found.
func kvMultiReadRandom(t *kvThread) error {
	r := t.run
	var mg kvMultiGetter
	if r.multiReadBatched {
		var ok bool
		if mg, ok = t.db.(kvMultiGetter); !ok {
			return errors.New("the engine has no MultiGet (run with -multiread_batched=false)")
		}
	}
	num := uint64(r.num)
	batch := int64(r.batchSize)
	stride := uint64(r.multiReadStride)
	keys := make([][]byte, batch)
	for i := range keys {
		keys[i] = make([]byte, r.keySize)
	}
	var values [][]byte
	var buf []byte
	var read, found, moved int64
	for n := t.next(batch); n > 0; n = t.next(batch) {
		t.rng.next() // db_bench's database choice, once per batch; see kvWrite
		ks := keys[:n]
		if stride > 0 {
			k := t.rng.next() % num
			if k+uint64(batch-1)*stride >= num {
				k = num - uint64(batch)*stride // parseKVFlags keeps batch*stride <= num
			}
			for _, key := range ks {
				putKVKey(key, k)
				k += stride
			}
		} else {
			for _, key := range ks {
				putKVKey(key, t.rng.next()%num)
			}
		}
		if mg != nil {
			var err error
			if values, err = mg.multiGet(ks, values, r.iter); err != nil {
				return fmt.Errorf("MultiGet of %d keys from key %d: %w", n, kvKeyNumber(ks[0]), err)
			}
			for i, v := range values {
				if v != nil {
					found++
					moved += int64(len(ks[i]) + len(v))
				}
			}
		} else {
			for _, key := range ks {
				v, ok, err := t.db.get(key, buf[:0])
				if err != nil {
					return fmt.Errorf("getting key %d: %w", kvKeyNumber(key), err)
				}
				if ok {
					found++
					moved += int64(len(key) + len(v))
					buf = v
				}
			}
		}
		read += n
		t.finishedOps(n)
	}
	t.bytes += moved
	t.msg = fmt.Sprintf("(%d of %d found)", found, read)
	return nil
}

// kvMultiScanRandom runs multiscans, one operation each. A multiscan is
// -multiscan_size ranges of -seek_nexts keys (50 if 0): the first starts at
// a uniformly random key below -num minus the multiscan's span, each next
// one -multiscan_stride keys after the previous one's end. With
// -multiscan_prepare the ranges are read through one prepared MultiScan,
// otherwise through a new bounded iterator per range. Every key and value
// of every range is visited; no bytes are counted (as in db_bench).
//
// db_bench draws the start with std::uniform_int_distribution; this draws
// it as the other workloads draw keys (the next number modulo the span), so
// the same -seed picks other multiscan starts than db_bench does.
func kvMultiScanRandom(t *kvThread) error {
	r := t.run
	var ms kvMultiScanner
	if r.multiScanPrepare {
		var ok bool
		if ms, ok = t.db.(kvMultiScanner); !ok {
			return errors.New("the engine has no MultiScan (run with -multiscan_prepare=false)")
		}
	}
	scanKeys := uint64(kvMultiScanKeys(r.seekNexts))
	stride := uint64(r.multiScanStride)
	span := uint64(r.num) - (scanKeys+stride)*uint64(r.multiScanSize) // parseKVFlags keeps it positive
	ranges := make([]kvRange, r.multiScanSize)
	for i := range ranges {
		ranges[i] = kvRange{start: make([]byte, r.keySize), end: make([]byte, r.keySize)}
	}
	var scans int64
	for t.next(1) > 0 {
		t.rng.next() // db_bench's database choice; see kvWrite
		k := t.rng.next() % span
		for _, rg := range ranges {
			putKVKey(rg.start, k)
			putKVKey(rg.end, k+scanKeys)
			k += scanKeys + stride
		}
		var err error
		if ms != nil {
			err = kvScanPrepared(ms, ranges, r.iter)
		} else {
			err = kvScanEach(t.db, ranges, r.iter)
		}
		if err != nil {
			return fmt.Errorf("multiscan from key %d: %w", kvKeyNumber(ranges[0].start), err)
		}
		scans++
		t.finishedOps(1)
	}
	t.msg = fmt.Sprintf("(multiscans:%d)", scans)
	return nil
}

// kvScanPrepared visits every key of ranges through one prepared scan.
func kvScanPrepared(ms kvMultiScanner, ranges []kvRange, o kvIterOptions) (err error) {
	s, err := ms.newMultiScan(ranges, o)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := s.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	for i := range ranges {
		for ok := s.SeekRange(i); ok; ok = s.Next() {
			_, _ = s.Key(), s.Value()
		}
		if err := s.Error(); err != nil {
			return err
		}
	}
	return nil
}

// kvScanEach visits every key of ranges with one bounded iterator per
// range: the way to scan them without MultiScan.
func kvScanEach(db kvEngine, ranges []kvRange, o kvIterOptions) error {
	for _, rg := range ranges {
		o.lowerBound, o.upperBound = rg.start, rg.end
		it, err := db.newIter(o)
		if err != nil {
			return err
		}
		for ok := it.SeekGE(rg.start); ok; ok = it.Next() {
			_, _ = it.Key(), it.Value()
		}
		if err := it.Close(); err != nil {
			return err
		}
	}
	return nil
}

// kvCompact compacts the whole key space: one operation.
func kvCompact(t *kvThread) error {
	if t.next(1) == 0 {
		return nil
	}
	if err := t.db.compact(); err != nil {
		return fmt.Errorf("compacting: %w", err)
	}
	t.finishedOps(1)
	return nil
}
