package kv

import (
	"fmt"
	"path/filepath"

	"github.com/strata-db/strata/kv/filter"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/internal/manifest"
	"github.com/strata-db/strata/kv/internal/rangedel"
	"github.com/strata-db/strata/kv/memtable"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/table"
	"github.com/strata-db/strata/kv/vfs"
)

func entrySize(key, value []byte) int { return memtable.EntrySize(len(key), len(value)) }

func makeFilenameRaw(dir, name string) string { return filepath.Join(dir, name) }

// tableWriterOptions returns the options every new table is written with.
func (d *DB) tableWriterOptions() table.WriterOptions {
	fp := d.opts.FilterPolicy
	if d.opts.DisableFilters {
		fp = filter.Policy{Type: filter.None}
	}
	return table.WriterOptions{
		BlockSize:       d.opts.BlockSize,
		RestartInterval: d.opts.BlockRestartInterval,
		Compression:     d.opts.Compression,
		FilterPolicy:    fp,
	}
}

// tableOutput writes one table file.
type tableOutput struct {
	d    *DB
	num  uint64
	name string
	w    *table.Writer
}

func (d *DB) newTableOutput(num uint64) (*tableOutput, error) {
	name := makeFilename(d.dirname, fileTypeTable, num)
	f, err := d.fs.Create(name)
	if err != nil {
		return nil, fmt.Errorf("kv: create table %s: %w", name, err)
	}
	opts := d.tableWriterOptions()
	opts.FileNum = num
	return &tableOutput{d: d, num: num, name: name, w: table.NewWriter(f, name, opts)}, nil
}

// finish closes the table (which syncs it) and returns its metadata, or
// nil for a table that ended up empty (then removed).
func (t *tableOutput) finish() (*manifest.FileMetadata, error) {
	if err := t.w.Close(); err != nil {
		t.abandon()
		return nil, fmt.Errorf("kv: write table %s: %w", t.name, err)
	}
	md, err := t.w.Metadata()
	if err != nil {
		t.abandon()
		return nil, fmt.Errorf("kv: write table %s: %w", t.name, err)
	}
	if md.Smallest == nil {
		t.abandon()
		return nil, nil
	}
	return &manifest.FileMetadata{
		FileNum:         t.num,
		Size:            md.Size,
		Smallest:        md.Smallest,
		Largest:         md.Largest,
		SmallestSeq:     md.SmallestSeq,
		LargestSeq:      md.LargestSeq,
		NumEntries:      md.NumEntries,
		NumDeletions:    md.Properties.NumDeletions,
		NumRangeDeletes: md.NumRangeDeletions,
	}, nil
}

// abandon removes a table that will not be used.
func (t *tableOutput) abandon() {
	t.w.Close()
	t.d.fs.Remove(t.name)
}

// writeMemtable writes every entry and tombstone of mem into table num and
// syncs the directory. Flushes keep every version: snapshots may need them,
// and compactions drop what nobody needs.
func (d *DB) writeMemtable(num uint64, mem *memTable) (*manifest.FileMetadata, error) {
	out, err := d.newTableOutput(num)
	if err != nil {
		return nil, err
	}
	it := mem.NewIter()
	for kv := it.First(); kv != nil; kv = it.Next() {
		if err := out.w.Add(kv.K, kv.V); err != nil {
			it.Close()
			out.abandon()
			return nil, fmt.Errorf("kv: flush to %s: %w", out.name, err)
		}
	}
	if err := it.Close(); err != nil {
		out.abandon()
		return nil, err
	}
	for _, t := range mem.collectTombstones(base.SeqNumMax) {
		if err := out.w.AddRangeDelete(t.Start, t.End, t.Seq); err != nil {
			out.abandon()
			return nil, fmt.Errorf("kv: flush to %s: %w", out.name, err)
		}
	}
	meta, err := out.finish()
	if err != nil || meta == nil {
		return nil, err
	}
	if err := vfs.SyncDir(d.fs, d.dirname); err != nil {
		d.fs.Remove(out.name)
		return nil, fmt.Errorf("kv: flush: %w", err)
	}
	return meta, nil
}

// rotateMemtableLocked makes the mutable memtable immutable, starts a new
// log and a new memtable large enough for a reservation of n bytes, and
// schedules a flush. REQUIRES: d.mu held, being the commit leader.
func (d *DB) rotateMemtableLocked(n int) error {
	vs := d.mu.versions
	num := vs.NewFileNum()
	if !d.opts.DisableWAL {
		// The old log must be durable before commits go to the new one: a
		// synced commit in the new log implies everything before it.
		d.logW.Store(nil)
		if err := d.mu.log.w.Close(); err != nil {
			d.mu.log.w = nil
			d.mu.writeErr = fmt.Errorf("write-ahead log: %w", err)
			d.readOnly.Store(true)
			d.mu.cond.Broadcast()
			return d.writeErrLocked()
		}
		if err := d.createLogLocked(num); err != nil {
			d.mu.log.w = nil
			d.mu.writeErr = err
			d.readOnly.Store(true)
			d.mu.cond.Broadcast()
			return d.writeErrLocked()
		}
	}
	size := d.opts.MemtableSize
	if n > size/2 {
		// A batch larger than half a memtable gets a memtable of its own size.
		size = n + n/8 + (1 << 20)
	}
	d.mu.imms = append(d.mu.imms, d.mu.mem)
	d.mu.mem = d.newMemTable(size, num)
	d.updateReadStateLocked()
	d.maybeScheduleFlushLocked()
	return nil
}

// maybeScheduleFlushLocked wakes the flush goroutine if a memtable waits.
// REQUIRES: d.mu held.
func (d *DB) maybeScheduleFlushLocked() {
	if len(d.mu.imms) == 0 || d.mu.flushing || d.mu.closed || d.mu.bgErr != nil {
		return
	}
	select {
	case d.bg.flushCh <- struct{}{}:
	default:
	}
}

func (d *DB) flushLoop() {
	defer d.bg.wg.Done()
	for {
		select {
		case <-d.bg.closing:
			return
		case <-d.bg.flushCh:
		}
		d.mu.Lock()
		d.flushPendingLocked()
		d.mu.Unlock()
	}
}

// flushPendingLocked flushes the immutable memtables, oldest first. Only
// one flush runs at a time: a caller that finds one running returns, and
// the running one, which loops until no memtable waits, takes its work.
// REQUIRES: d.mu held.
func (d *DB) flushPendingLocked() {
	if d.mu.flushing {
		return
	}
	d.mu.flushing = true
	defer func() { d.mu.flushing = false }()
	for len(d.mu.imms) > 0 && d.mu.bgErr == nil && !d.mu.closed {
		mem := d.mu.imms[0]
		vs := d.mu.versions
		num := vs.NewFileNum()
		d.mu.pendingOutputs[num] = true
		d.mu.Unlock()
		meta, err := d.writeMemtable(num, mem)
		d.mu.Lock()
		if err == nil {
			nextLog := d.mu.mem.logNum
			if len(d.mu.imms) > 1 {
				nextLog = d.mu.imms[1].logNum
			}
			edit := &manifest.VersionEdit{LogNum: nextLog, LastSeq: base.SeqNum(d.visibleSeq.Load())}
			if meta != nil {
				edit.NewFiles = []manifest.NewFile{{Level: 0, Meta: meta}}
			}
			err = vs.LogAndApply(edit)
		}
		delete(d.mu.pendingOutputs, num)
		if err != nil {
			d.backgroundFailedLocked(fmt.Errorf("flush: %w", err))
			return
		}
		d.mu.imms = d.mu.imms[1:]
		d.updateReadStateLocked()
		mem.unref()
		d.stats.Add(stats.Flushes, 1)
		if meta != nil {
			d.stats.Add(stats.FlushBytes, int64(meta.Size))
			d.opts.Logger.Infof("kv: flushed memtable to %06d.sst (%d bytes, %d entries)", meta.FileNum, meta.Size, meta.NumEntries)
		}
		d.mu.cond.Broadcast()
		d.removeObsoleteLogsLocked()
		d.maybeScheduleCompactionLocked()
	}
}

// removeObsoleteLogsLocked deletes logs whose memtables were all flushed.
// REQUIRES: d.mu held.
func (d *DB) removeObsoleteLogsLocked() {
	minLog := d.mu.versions.LogNum()
	names, err := d.fs.List(d.dirname)
	if err != nil {
		return
	}
	for _, name := range names {
		if t, num := parseFilename(name); t == fileTypeLog && num < minLog {
			d.fs.Remove(makeFilenameRaw(d.dirname, name))
		}
	}
}

// backgroundFailedLocked records a flush or compaction failure: background
// work stops, every later write fails with it, reads keep working.
// REQUIRES: d.mu held.
func (d *DB) backgroundFailedLocked(err error) {
	d.stats.Add(stats.BackgroundErrs, 1)
	if d.mu.bgErr == nil {
		d.mu.bgErr = err
		d.readOnly.Store(true)
		d.opts.Logger.Errorf("kv: background error, database is now read-only: %v", err)
	}
	d.mu.cond.Broadcast()
}

// BackgroundError returns the error that stopped flushes or compactions,
// or the write-ahead-log error that stopped writes, if any.
func (d *DB) BackgroundError() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.writeErr != nil {
		return d.mu.writeErr
	}
	return d.mu.bgErr
}

// Flush writes the memtable to a level-0 table and waits until every
// memtable committed before the call is flushed.
func (d *DB) Flush() error {
	b := &Batch{db: d, data: make([]byte, batchHeaderLen), rotate: true}
	if err := d.enqueueCommit(b); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	target := b.rotated
	for {
		if err := d.writeErrLocked(); err != nil {
			return err
		}
		pending := false
		for _, m := range d.mu.imms {
			if m == target {
				pending = true
			}
		}
		if target == nil || !pending {
			return nil
		}
		d.maybeScheduleFlushLocked()
		d.mu.cond.Wait()
	}
}

// tombstonesOf returns the tombstones of a set visible at seq.
func tombstonesOf(s *rangedel.Set, seq base.SeqNum, dst []rangedel.Tombstone) []rangedel.Tombstone {
	if s == nil {
		return dst
	}
	for _, f := range s.Fragments() {
		for _, fs := range f.Seqs {
			if fs <= seq {
				dst = append(dst, rangedel.Tombstone{Start: f.Start, End: f.End, Seq: fs})
			}
		}
	}
	return dst
}
