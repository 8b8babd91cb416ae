package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-db/strata/cmd/sqlbench/internal/meter"
)

// kvBench runs the kv subcommand: it owns the database directory, the open
// engine and the state that carries from one workload to the next (the
// thread counter that seeds each thread's keys, the counters of databases
// closed before a fill).
type kvBench struct {
	cfg            *kvConfig
	stdout, stderr io.Writer
	// progress is where progress bars go: stderr on a terminal, else nil.
	progress io.Writer

	backend kvBackend
	db      kvEngine // nil while closed
	dir     string
	tempDir bool // dir was made by us and is removed at close

	seedBase  uint64
	threadSeq uint64 // threads started so far, over every workload
	values    *kvValuePool
	// opened is what the open database was opened with.
	opened kvOpenOptions
	// closedCounters sums the counters of the databases closed so far (each
	// fill starts a new one), so that -statistics covers the whole run.
	closedCounters []kvCounter

	// interrupted is set by SIGINT: the running workload stops, the runs
	// end with an error, and the temporary directory is still removed.
	interrupted atomic.Bool
}

// errKVInterrupted is returned when SIGINT stops the runs.
var errKVInterrupted = errors.New("interrupted")

// kvRun is one run of one workload: everything it reads besides the
// database. runWorkload takes it by value, so a mode that compares two
// variants of a run copies it, changes one field and runs both.
type kvRun struct {
	w    *kvWorkload
	name string // as reported

	num       int64 // keys in the key space
	ops       int64 // operations per thread
	threads   int
	duration  time.Duration // 0 unless the workload is timed and -duration is set
	checkOps  int64         // operations between clock checks under duration
	keySize   int
	valueSize int
	batchSize int
	seekNexts int
	// maxScanDistance bounds seekrandom's iterators, in keys; 0 for none.
	maxScanDistance int64
	// iter is the iterator settings (read-path switches) of the run.
	iter kvIterOptions
	// multiReadStride spaces the keys of a multireadrandom batch: r, r+S,
	// r+2S, ...; 0 draws every key.
	multiReadStride int64
	// multiReadBatched looks a multireadrandom batch up with one MultiGet;
	// false, with one Get per key.
	multiReadBatched bool
	// A multiscan scans multiScanSize ranges, multiScanStride keys apart,
	// with a prepared MultiScan or, without multiScanPrepare, an iterator
	// per range.
	multiScanSize, multiScanStride int64
	multiScanPrepare               bool
	// open is the database options the run needs. A plain run uses the
	// database as it is open (with the flags' options); the A/B mode
	// reopens it with each side's.
	open kvOpenOptions
	// cold drops the OS cache of the tables before the run.
	cold bool
	// compactDuring runs full compactions, one after another, in the
	// background for as long as the run lasts.
	compactDuring bool
}

// newKVRun returns the run of workload w under the flags.
func newKVRun(c *kvConfig, w *kvWorkload) kvRun {
	r := kvRun{
		w: w, name: w.name,
		num: c.num, ops: w.ops(c), threads: c.threads, checkOps: c.opsBetweenDurationChecks,
		keySize: c.keySize, valueSize: c.valueSize, batchSize: c.batchSize,
		seekNexts: c.seekNexts, maxScanDistance: c.maxScanDistance, cold: c.cold,
		compactDuring:   c.compactDuringReads && w.readOnly,
		iter:            kvIterOptions{readaheadSize: c.readaheadSize, asyncIO: c.asyncIO, fillCache: c.fillCache, coalesceThreshold: c.multiScanGap},
		multiReadStride: c.multiReadStride, multiReadBatched: c.multiReadBatched,
		multiScanSize: c.multiScanSize, multiScanStride: c.multiScanStride, multiScanPrepare: c.multiScanPrepare,
		open: c.openOptions(),
	}
	if w.timed {
		r.duration = c.duration
	}
	if w.single {
		r.threads = 1
	}
	return r
}

// kvResult is a run's merged figures.
type kvResult struct {
	name  string
	op    string
	ops   int64 // operations, summed over threads
	bytes int64 // bytes counted, summed over threads
	// busy is the sum of the threads' running times; micros/op is busy per
	// operation, a per-thread latency.
	busy time.Duration
	// elapsed runs from the first thread's start to the last one's end.
	elapsed time.Duration
	msg     string       // the first thread's message that is not empty
	hist    *kvHistogram // nil without -histogram
	// entries counts the entries the read workloads passed (read key and
	// value), summed over threads; 0 for workloads that count none.
	entries int64
	// cpu is the process's CPU time (user and system, every goroutine,
	// background flushes and compactions included) during the run: with
	// entries, the cost per entry that ops/sec hides on a shared machine.
	cpu time.Duration
}

// opsPerSec returns operations per second of wall-clock time.
func (r *kvResult) opsPerSec() float64 {
	return float64(max(r.ops, 1)) / max(r.elapsed.Seconds(), 1e-9)
}

// mbPerSec returns MiB of counted bytes per second, 0 if none were counted.
func (r *kvResult) mbPerSec() float64 {
	return float64(r.bytes) / (1 << 20) / max(r.elapsed.Seconds(), 1e-9)
}

// kvThread is one thread of a run: its random keys and values, and what it
// counts. Workloads use t.db, t.rng, t.key (a scratch key of the key size)
// and t.values, and report through next, finishedOps, bytes and msg.
type kvThread struct {
	id     int
	run    *kvRun
	db     kvEngine
	rng    *mt64
	values kvValueCursor
	key    []byte

	// Limits: ops operations, or until the deadline when timed.
	opsDone  int64
	maxOps   int64
	maxTime  time.Duration
	checkOps int64
	// failed is set when a thread of the run fails, interrupted by SIGINT:
	// either ends the run.
	failed, interrupted *atomic.Bool

	start, finish time.Time
	done          int64 // operations finished
	bytes         int64
	entries       int64 // entries passed, for the CPU per entry
	msg           string

	hist     *kvHistogram
	lastOp   time.Time
	progress *meter.Bar
	unshown  int64 // finished operations not yet passed to progress
}

// kvProgressChunk is how many operations a thread counts before passing
// them to the progress bar.
const kvProgressChunk = 256

// next returns how many of want operations the thread may do now: want,
// fewer at the end of the operation count, 0 when the run is over (its
// count or its time is up, or another thread failed). Under a time limit
// the clock is read once every checkOps operations, as db_bench does.
func (t *kvThread) next(want int64) int64 {
	if t.failed.Load() || t.interrupted.Load() {
		return 0
	}
	if t.maxTime > 0 {
		prev := t.opsDone
		t.opsDone += want
		if t.opsDone/t.checkOps != prev/t.checkOps && time.Since(t.start) >= t.maxTime {
			return 0
		}
		return want
	}
	n := min(want, t.maxOps-t.opsDone)
	if n <= 0 {
		return 0
	}
	t.opsDone += n
	return n
}

// finishedOps records n finished operations (one sample of the latency
// histogram: the time since the previous call).
func (t *kvThread) finishedOps(n int64) {
	t.done += n
	if t.hist != nil {
		now := time.Now()
		t.hist.add(now.Sub(t.lastOp))
		t.lastOp = now
	}
	if t.progress != nil {
		t.unshown += n
		if t.unshown >= kvProgressChunk {
			t.progress.Add(t.unshown)
			t.unshown = 0
		}
	}
}

// newKVBench prepares the runs: the directory, the backend and the first
// open of the database.
func newKVBench(cfg *kvConfig, stdout, stderr io.Writer, progress io.Writer) (_ *kvBench, err error) {
	b := &kvBench{cfg: cfg, stdout: stdout, stderr: stderr, progress: progress}
	if b.backend, err = newKVBackend(cfg); err != nil {
		return nil, err
	}
	b.dir = cfg.db
	if b.dir == "" {
		if b.dir, err = os.MkdirTemp("", "sqlbench-kv-"); err != nil {
			return nil, fmt.Errorf("making a database directory: %w", err)
		}
		b.tempDir = true
	}
	defer func() {
		if err != nil {
			b.close()
		}
	}()
	if cfg.seed != 0 {
		b.seedBase = uint64(cfg.seed)
	} else {
		b.seedBase = uint64(time.Now().UnixMicro())
		fmt.Fprintf(stdout, "Set seed to %d because -seed was 0\n", b.seedBase)
	}
	if !cfg.useExistingDB {
		if err := b.backend.destroy(b.dir); err != nil {
			return nil, err
		}
	}
	b.opened = cfg.openOptions()
	if b.db, err = b.backend.open(b.dir, cfg.useExistingDB, b.opened); err != nil {
		return nil, fmt.Errorf("opening the database in %s: %w", b.dir, err)
	}
	b.values = newKVValuePool(cfg.valueSize, cfg.compressionRatio)
	return b, nil
}

// close closes the database and removes a temporary directory.
func (b *kvBench) close() error {
	var errs []error
	if b.db != nil {
		if err := b.closeDB(); err != nil {
			errs = append(errs, err)
		}
	}
	if b.tempDir {
		if err := os.RemoveAll(b.dir); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", b.dir, err))
		}
	}
	return errors.Join(errs...)
}

// closeDB closes the open database, keeping its counters.
func (b *kvBench) closeDB() error {
	b.closedCounters = addKVCounters(b.closedCounters, b.db.counters())
	err := b.db.close()
	b.db = nil
	if err != nil {
		return fmt.Errorf("closing the database: %w", err)
	}
	return nil
}

// addKVCounters adds b to a, counter by counter (a may be empty).
func addKVCounters(a, b []kvCounter) []kvCounter {
	if len(a) == 0 {
		return append([]kvCounter(nil), b...)
	}
	for i := range a {
		if i < len(b) && a[i].name == b[i].name {
			a[i].value += b[i].value
		}
	}
	return a
}

// reopenFresh replaces the database with an empty one.
func (b *kvBench) reopenFresh() error {
	if b.db != nil {
		if err := b.closeDB(); err != nil {
			return err
		}
	}
	if err := b.backend.destroy(b.dir); err != nil {
		return err
	}
	db, err := b.backend.open(b.dir, false, b.opened)
	if err != nil {
		return fmt.Errorf("opening a new database in %s: %w", b.dir, err)
	}
	b.db = db
	return nil
}

// reopen closes the database and opens it again with o and an empty block
// cache. Without a write-ahead log the memtable is flushed first, as
// closing would lose it.
func (b *kvBench) reopen(o kvOpenOptions) error {
	if b.db != nil {
		if b.cfg.disableWAL {
			if err := b.db.flush(); err != nil {
				return fmt.Errorf("flushing before reopening the database: %w", err)
			}
		}
		if err := b.closeDB(); err != nil {
			return err
		}
	}
	b.backend.dropCache()
	db, err := b.backend.open(b.dir, true, o)
	if err != nil {
		return fmt.Errorf("reopening the database in %s: %w", b.dir, err)
	}
	b.db, b.opened = db, o
	return nil
}

// runAll prints the header, runs every workload of -benchmarks in order
// and prints their reports, then the statistics.
func (b *kvBench) runAll() error {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	done := make(chan struct{})
	go func() {
		select {
		case <-sig:
			b.interrupted.Store(true)
			signal.Stop(sig) // a second interrupt kills the process
			fmt.Fprintln(b.stderr, "interrupted: stopping the workload (interrupt again to kill)")
		case <-done:
		}
	}()
	defer func() {
		signal.Stop(sig)
		close(done)
	}()

	printKVEnvironment(b.stderr, b.backend.name())
	printKVHeader(b.stdout, b.cfg)
	for _, name := range b.cfg.benchmarks {
		if b.interrupted.Load() {
			return errKVInterrupted
		}
		w := kvWorkloadByName(name)
		if w.fresh {
			if b.cfg.useExistingDB {
				fmt.Fprintf(b.stdout, "%-12s : skipped (-use_existing_db is true)\n", name)
				continue
			}
			if err := b.reopenFresh(); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		if w.meta != nil {
			if err := w.meta(b); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			continue
		}
		if b.cfg.ab != nil && w.readOnly {
			if err := b.runAB(w); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			continue
		}
		res, err := b.runWorkload(newKVRun(b.cfg, w))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		printKVResult(b.stdout, &res)
	}
	if b.cfg.statistics {
		counters := b.closedCounters
		if b.db != nil {
			counters = addKVCounters(append([]kvCounter(nil), counters...), b.db.counters())
		}
		printKVStatistics(b.stdout, counters)
	}
	return nil
}

// runWorkload runs r in r.threads threads, started together, and merges
// their figures.
func (b *kvBench) runWorkload(r kvRun) (kvResult, error) {
	if r.cold {
		n, err := b.backend.evictOSCache(b.dir)
		if err != nil {
			return kvResult{}, err
		}
		fmt.Fprintf(b.stderr, "... dropped the OS cache of %d table files\n", n)
	}
	if r.w.banner != nil {
		fmt.Fprint(b.stderr, r.w.banner(&r))
	}
	fmt.Fprintf(b.stdout, "DB path: [%s]\n", b.dir)

	total := r.ops * int64(r.threads)
	prog := meter.Start(b.progress, r.name, total, r.duration)
	var failed atomic.Bool
	threads := make([]*kvThread, r.threads)
	for i := range threads {
		b.threadSeq++
		t := &kvThread{
			id: i, run: &r, db: b.db,
			rng:    newMT64(b.seedBase + b.threadSeq),
			values: b.values.cursor(),
			key:    make([]byte, r.keySize),
			maxOps: r.ops, maxTime: r.duration, checkOps: r.checkOps,
			failed: &failed, interrupted: &b.interrupted, progress: prog,
		}
		if b.cfg.histogram {
			t.hist = &kvHistogram{}
		}
		threads[i] = t
	}
	errs := make([]error, len(threads))
	gate := make(chan struct{})
	var bg *kvBackgroundCompactions
	if r.compactDuring {
		bg = startKVBackgroundCompactions(b.db)
	}
	cpuStart := kvProcessCPU()
	var wg sync.WaitGroup
	for i, t := range threads {
		wg.Go(func() {
			<-gate
			t.start = time.Now()
			t.lastOp = t.start
			err := r.w.run(t)
			t.finish = time.Now()
			t.progress.Add(t.unshown)
			if err != nil {
				errs[i] = fmt.Errorf("thread %d: %w", i, err)
				failed.Store(true)
			}
		})
	}
	close(gate)
	wg.Wait()
	cpu := kvProcessCPU() - cpuStart
	prog.Stop()
	if bg != nil {
		n, err := bg.stop()
		fmt.Fprintf(b.stderr, "... %d full compactions finished during the run (the last one waited for after it)\n", n)
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return kvResult{}, err
	}
	if b.interrupted.Load() {
		return kvResult{}, errKVInterrupted
	}
	res := mergeKVThreads(r, threads)
	res.cpu = cpu
	return res, nil
}

// kvBackgroundCompactions compacts a database, one full compaction after
// another, until stopped: the load of -compact_during_reads, under which a
// read workload shares the disk and the CPUs with compactions that read and
// write every table.
type kvBackgroundCompactions struct {
	stopping chan struct{}
	done     chan struct{}
	n        int
	err      error
}

// startKVBackgroundCompactions starts compacting db in a goroutine that
// stop ends.
func startKVBackgroundCompactions(db kvEngine) *kvBackgroundCompactions {
	bg := &kvBackgroundCompactions{stopping: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(bg.done)
		// At least one compaction, even when the reads end before this
		// goroutine first runs: stop waits for it.
		for {
			if err := db.compact(); err != nil {
				bg.err = fmt.Errorf("background compaction: %w", err)
				return
			}
			bg.n++
			select {
			case <-bg.stopping:
				return
			default:
			}
		}
	}()
	return bg
}

// stop waits for the running compaction to finish and returns how many
// finished (at least one, unless it failed), and the error that stopped
// them, if any.
func (bg *kvBackgroundCompactions) stop() (int, error) {
	close(bg.stopping)
	<-bg.done
	return bg.n, bg.err
}

// mergeKVThreads merges the threads' figures as db_bench does: operations,
// bytes and busy times add up, elapsed spans all threads, and the message
// is the first thread's that is not empty.
func mergeKVThreads(r kvRun, threads []*kvThread) kvResult {
	res := kvResult{name: r.name, op: r.w.op}
	var first, last time.Time
	for i, t := range threads {
		res.ops += t.done
		res.bytes += t.bytes
		res.entries += t.entries
		res.busy += t.finish.Sub(t.start)
		if i == 0 || t.start.Before(first) {
			first = t.start
		}
		if i == 0 || t.finish.After(last) {
			last = t.finish
		}
		if res.msg == "" {
			res.msg = t.msg
		}
		if t.hist != nil {
			if res.hist == nil {
				res.hist = &kvHistogram{}
			}
			res.hist.merge(t.hist)
		}
	}
	res.elapsed = last.Sub(first)
	return res
}
