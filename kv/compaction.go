package kv

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/internal/manifest"
	"github.com/strata-db/strata/kv/internal/merging"
	"github.com/strata-db/strata/kv/internal/rangedel"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/table"
	"github.com/strata-db/strata/kv/vfs"
)

// errCompactionAborted stops a compaction when the database closes; it is
// not a background error.
var errCompactionAborted = errors.New("kv: compaction aborted: database closing")

func (d *DB) pickerOptions() manifest.PickerOptions {
	return manifest.PickerOptions{
		L0CompactionTrigger: d.opts.L0CompactionTrigger,
		L0StopWritesTrigger: d.opts.L0StopWritesTrigger,
		LBaseMaxBytes:       d.opts.LBaseMaxBytes,
		LevelMultiplier:     d.opts.LevelMultiplier,
		TargetFileSize:      d.opts.TargetFileSize,
		DynamicLevelBytes:   true,
	}
}

// maybeScheduleCompactionLocked wakes the compaction goroutine.
// REQUIRES: d.mu held.
func (d *DB) maybeScheduleCompactionLocked() {
	if d.mu.closed || d.mu.bgErr != nil || d.bg.compactCh == nil {
		return
	}
	select {
	case d.bg.compactCh <- struct{}{}:
	default:
	}
}

// readCompactionSamples is how many read samples (one per
// readSampleBytes a scan returns) must find level-0 tables over the key
// read before level 0 is compacted for the reads' sake: 32 MiB of scans
// through data that a merge with level 0 makes them read twice.
const (
	readSampleBytes       = 1 << 20
	readCompactionSamples = 32
)

// noteLevel0Read records a read sample that found a level-0 table over the
// key read, and every readCompactionSamples of them asks the compaction
// goroutine to compact level 0 once it has nothing more pressing (Pebble
// compacts for reads too). Writes that fill level 0 up to its trigger
// compact it anyway; this is for the level-0 tables a burst of writes
// leaves, which every scan of their key range would otherwise merge and
// read next to the level below, for as long as no more writes come.
func (d *DB) noteLevel0Read() {
	if d.l0Reads.Add(1)%readCompactionSamples != 0 || d.bg.compactCh == nil {
		return
	}
	d.readCompaction.Store(true)
	select {
	case d.bg.compactCh <- struct{}{}: // never closed; the loop checks closing
	default:
	}
}

func (d *DB) compactLoop() {
	defer d.bg.wg.Done()
	for {
		select {
		case <-d.bg.closing:
			return
		case <-d.bg.compactCh:
		}
		d.mu.Lock()
		for !d.mu.closed && d.mu.bgErr == nil {
			c := manifest.Pick(d.mu.versions.Current(), d.pickerOptions())
			if c == nil && d.readCompaction.Swap(false) {
				c = manifest.PickLevel0(d.mu.versions.Current(), d.pickerOptions())
			}
			if c == nil {
				break
			}
			if err := d.runCompactionLocked(c); err != nil {
				break
			}
		}
		d.mu.Unlock()
	}
}

// Compact compacts every level's files overlapping [start, end] (user
// keys; nil means unbounded) down the tree, after flushing the memtable:
// afterwards the range's data sits in as few levels as the tree allows,
// with shadowed versions and tombstones no snapshot needs dropped.
func (d *DB) Compact(start, end []byte) error {
	if err := d.Flush(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for level := 0; level < manifest.NumLevels; level++ {
		for {
			if err := d.writeErrLocked(); err != nil {
				return err
			}
			v := d.mu.versions.Current()
			if len(v.Overlaps(level, start, end)) == 0 {
				break
			}
			c := manifest.PickManual(v, level, start, end, d.pickerOptions())
			if c == nil {
				// An input is busy in a background compaction: wait for it.
				d.mu.cond.Wait()
				continue
			}
			if err := d.runCompactionLocked(c); err != nil {
				return err
			}
			break
		}
	}
	return nil
}

// runCompactionLocked runs c and installs its result. It releases d.mu
// while merging. REQUIRES: d.mu held.
func (d *DB) runCompactionLocked(c *manifest.Compaction) error {
	c.MarkCompacting(true)
	d.mu.compacting++
	snapshots := d.mu.snapshots.seqs()
	v := d.mu.versions.Current()
	v.Ref()

	var edit *manifest.VersionEdit
	var outputs []*manifest.FileMetadata
	var nums []uint64
	var err error
	if c.TrivialMove {
		edit = c.NewEdit()
	} else {
		d.mu.Unlock()
		outputs, nums, err = d.compact(c, snapshots)
		d.mu.Lock()
		if err == nil {
			edit = c.NewEdit()
			for _, m := range outputs {
				edit.NewFiles = append(edit.NewFiles, manifest.NewFile{Level: c.OutputLevel, Meta: m})
			}
		}
	}
	if err == nil {
		err = d.mu.versions.LogAndApply(edit)
	}
	for _, num := range nums {
		delete(d.mu.pendingOutputs, num)
	}
	c.MarkCompacting(false)
	d.mu.compacting--
	v.Unref()
	if err != nil {
		// A failed manifest write may still have reached the file: the
		// edit naming the outputs can be replayed by the next Open, so
		// they must stay. Open removes them if the edit did not land.
		if !errors.Is(err, manifest.ErrFailed) {
			for _, m := range outputs {
				d.fs.Remove(makeFilename(d.dirname, fileTypeTable, m.FileNum))
			}
		}
		if !errors.Is(err, errCompactionAborted) {
			d.backgroundFailedLocked(fmt.Errorf("compaction %s: %w", c, err))
		}
		d.mu.cond.Broadcast()
		return err
	}
	d.updateReadStateLocked()
	d.stats.Add(stats.Compactions, 1)
	d.mu.cond.Broadcast()
	d.opts.Logger.Infof("kv: compacted %s into %d files", c, len(outputs))
	return nil
}

// compactInputs merges the inputs of c into new tables at c.OutputLevel.
func (d *DB) compactInputs(c *manifest.Compaction, snapshots []base.SeqNum) (_ []*manifest.FileMetadata, _ []uint64, err error) {
	var iters []base.InternalIterator
	var entries []*tableEntry
	var tombs []rangedel.Tombstone
	defer func() {
		for _, e := range entries {
			d.tables.release(e)
		}
	}()
	var inputBytes int64
	for _, files := range c.Inputs {
		for _, f := range files {
			e, err := d.tables.get(f.FileNum)
			if err != nil {
				for _, it := range iters {
					it.Close()
				}
				return nil, nil, err
			}
			entries = append(entries, e)
			iters = append(iters, e.reader.NewIter(table.IterOptions{DontFillCache: true, ReadaheadSize: d.opts.CompactionReadahead, ForceReadahead: true}))
			for _, t := range e.reader.RangeDeletes() {
				tombs = append(tombs, rangedel.Tombstone{Start: t.Start, End: t.End, Seq: t.Seq})
			}
			inputBytes += int64(f.Size)
		}
	}
	d.stats.Add(stats.CompactionRead, inputBytes)
	it := merging.New(iters...)
	defer func() {
		if cerr := it.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()

	allTombs := rangedel.NewSet(tombs)
	keepTombs := rangedel.NewSet(rangedel.Compact(allTombs.Fragments(), snapshots, c.Bottommost))
	cursor := rangedel.MakeCursor(allTombs)

	w := compactionWriter{d: d, c: c, keep: keepTombs}
	defer func() {
		if err != nil {
			w.abandon()
		}
	}()

	stripe := func(seq base.SeqNum) int {
		// The number of snapshots below seq: entries in one stripe are seen
		// by exactly the same snapshots.
		return sort.Search(len(snapshots), func(i int) bool { return snapshots[i] >= seq })
	}
	var prevKey []byte
	prevStripe, havePrev := 0, false
	n := 0
	pace := compactionPacer{limit: d.opts.CompactionRateLimit, start: time.Now()}
	if d.opts.CompactionPaceReadsOnly {
		pace.watchReads(d.foregroundReads)
	}
	for kv := it.First(); kv != nil; kv = it.Next() {
		pace.read += int64(len(kv.K) + len(kv.V))
		if n++; n&1023 == 0 {
			select {
			case <-d.bg.closing:
				return nil, w.nums, errCompactionAborted
			default:
			}
			if !pace.wait(d.bg.closing) {
				return nil, w.nums, errCompactionAborted
			}
		}
		ukey := kv.UserKey()
		seq := kv.Seq()
		s := stripe(seq)
		sameKey := havePrev && bytes.Equal(ukey, prevKey)
		if !sameKey {
			prevKey = append(prevKey[:0], ukey...)
			havePrev = true
		}
		drop := false
		switch {
		case sameKey && s == prevStripe:
			// A newer entry of this key is seen by exactly the readers that
			// would see this one.
			drop = true
		case kv.Kind() == base.KindDelete && c.Bottommost && s == 0:
			// Nothing older remains below, and every reader sees the delete.
			drop = true
		default:
			if f := cursor.Covering(ukey); f != nil && rangedel.ShouldDropPoint(f, seq, snapshots) {
				drop = true
			}
		}
		prevStripe = s
		if drop {
			continue
		}
		if err := w.add(kv, !sameKey); err != nil {
			return nil, w.nums, err
		}
	}
	if err := it.Error(); err != nil {
		return nil, w.nums, err
	}
	outs, err := w.finish()
	return outs, w.nums, err
}

// compactionWriter cuts a compaction's output into tables of about the
// target size, at user-key boundaries only (the versions of a key never
// span two files of a level), also ending a table early when it overlaps
// too many bytes of the grandparent level. Each table gets the kept range
// tombstones clipped to its key range.
type compactionWriter struct {
	d       *DB
	c       *manifest.Compaction
	keep    *rangedel.Set
	out     *tableOutput
	lower   []byte // the user key the current output's range starts at; nil for the first
	outputs []*manifest.FileMetadata
	nums    []uint64 // every table number allocated, used or not

	gpIndex   int
	gpOverlap uint64
	seenKey   bool
	lastKey   []byte
	written   int64
}

func (w *compactionWriter) newOutput() error {
	d := w.d
	d.mu.Lock()
	num := d.mu.versions.NewFileNum()
	d.mu.pendingOutputs[num] = true
	d.mu.Unlock()
	w.nums = append(w.nums, num)
	out, err := d.newTableOutput(num)
	if err != nil {
		return err
	}
	w.out = out
	w.gpOverlap = 0
	return nil
}

// shouldCutBefore reports whether the current output should end before
// the new user key ukey.
func (w *compactionWriter) shouldCutBefore(ukey []byte) bool {
	gps := w.c.Grandparents
	for w.gpIndex < len(gps) && bytes.Compare(gps[w.gpIndex].LargestUserKey(), ukey) < 0 {
		if w.seenKey {
			w.gpOverlap += gps[w.gpIndex].Size
		}
		w.gpIndex++
	}
	w.seenKey = true
	if w.out == nil {
		return false
	}
	if w.c.MaxGrandparentOverlapBytes > 0 && w.gpOverlap > w.c.MaxGrandparentOverlapBytes {
		return true
	}
	return w.out.w.EstimatedSize() >= w.c.MaxOutputFileSize
}

func (w *compactionWriter) add(kv *base.KV, newKey bool) error {
	if newKey && w.shouldCutBefore(kv.UserKey()) {
		upper := append([]byte(nil), kv.UserKey()...)
		if err := w.finishOutput(upper); err != nil {
			return err
		}
		w.lower = upper
	}
	if w.out == nil {
		if err := w.newOutput(); err != nil {
			return err
		}
	}
	return w.out.w.Add(kv.K, kv.V)
}

// finishOutput writes the tombstones of [w.lower, upper) and closes the
// current output.
func (w *compactionWriter) finishOutput(upper []byte) error {
	if w.out == nil {
		return nil
	}
	for _, t := range w.keep.Truncate(w.lower, upper) {
		if err := w.out.w.AddRangeDelete(t.Start, t.End, t.Seq); err != nil {
			return err
		}
	}
	meta, err := w.out.finish()
	w.out = nil
	if err != nil {
		return err
	}
	if meta != nil {
		w.outputs = append(w.outputs, meta)
		w.written += int64(meta.Size)
	}
	return nil
}

func (w *compactionWriter) finish() ([]*manifest.FileMetadata, error) {
	if w.out == nil && w.keep.Len() > 0 && len(w.keep.Truncate(w.lower, nil)) > 0 {
		// Tombstones past the last point key (or without any point key).
		if err := w.newOutput(); err != nil {
			return nil, err
		}
	}
	if err := w.finishOutput(nil); err != nil {
		return nil, err
	}
	if len(w.outputs) > 0 {
		if err := vfs.SyncDir(w.d.fs, w.d.dirname); err != nil {
			return nil, err
		}
	}
	w.d.stats.Add(stats.CompactionWritten, w.written)
	outs := w.outputs
	w.outputs = nil
	return outs, nil
}

// abandon removes the outputs of a failed compaction.
func (w *compactionWriter) abandon() {
	if w.out != nil {
		w.out.abandon()
		w.out = nil
	}
	for _, m := range w.outputs {
		w.d.fs.Remove(makeFilename(w.d.dirname, fileTypeTable, m.FileNum))
	}
	w.outputs = nil
}

// compactionPacer holds a compaction to Options.CompactionRateLimit bytes
// of entries read per second; with reads set (Options.CompactionPaceReadsOnly),
// only while the foreground reads.
type compactionPacer struct {
	limit int64 // bytes per second; 0 for none
	start time.Time
	read  int64 // bytes of entries read since start

	// reads, when set, returns a count that foreground reads advance.
	reads     func() int64
	lastReads int64
	lastRead  time.Time // when reads last moved; zero for never
	paced     bool      // whether the limit held at the last wait
}

// watchReads makes the pacer hold to its limit only while the count
// reads returns moves; reads counted before it is called are not fresh.
func (p *compactionPacer) watchReads(reads func() int64) {
	p.reads, p.lastReads = reads, reads()
}

// readsQuiet is how long after the last foreground read a compaction paced
// only while reads run goes back to full speed.
const readsQuiet = 100 * time.Millisecond

// foregroundReads returns a count that every foreground read moves: point
// lookups, iterator seeks, MultiGet batches and MultiScan preparations,
// and a long scan's progress (its read samples, one per MiB returned on
// average).
func (d *DB) foregroundReads() int64 {
	return d.stats.Get(stats.GetCalls) + d.stats.Get(stats.IterSeeks) + d.stats.Get(stats.IterSamples) +
		d.stats.Get(stats.MultiGetBatches) + d.stats.Get(stats.MultiScanPrepares)
}

// wait sleeps until the bytes read so far fit the limit since the start.
// It returns false when closing is closed meanwhile.
func (p *compactionPacer) wait(closing <-chan struct{}) bool {
	if p.limit <= 0 {
		return true
	}
	if p.reads != nil {
		now := time.Now()
		if n := p.reads(); n != p.lastReads {
			p.lastReads, p.lastRead = n, now
		}
		active := !p.lastRead.IsZero() && now.Sub(p.lastRead) < readsQuiet
		if !active {
			p.paced = false
			return true
		}
		if !p.paced {
			// The limit starts again from here: what ran at full speed
			// before is not owed.
			p.paced, p.start, p.read = true, now, 0
			return true
		}
	}
	due := time.Duration(float64(p.read) / float64(p.limit) * float64(time.Second))
	ahead := due - time.Since(p.start)
	if ahead <= time.Millisecond {
		return true
	}
	t := time.NewTimer(ahead)
	defer t.Stop()
	select {
	case <-closing:
		return false
	case <-t.C:
		return true
	}
}
