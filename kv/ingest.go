package kv

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/internal/manifest"
	"github.com/strata-db/strata/kv/table"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/strata-db/strata/storage"
)

// Ingestion of externally built tables (what RocksDB calls
// IngestExternalFile): a caller with many sorted keys for a range nobody
// else writes (a new secondary index, a bulk load into an empty table)
// writes them straight into table files and adds the files to the tree in
// one version edit, instead of sending every key through the log and the
// memtable and writing it again at the flush.
//
// The keys of one ingestion share one sequence number, reserved in the
// commit pipeline when the ingestion starts (a table's keys carry their
// sequence numbers; rewriting them at the end would mean writing the tables
// twice). Reads that start after Finish returns see every ingested key;
// reads begun before the reservation see none. A snapshot taken while the
// ingestion runs may see the keys appear at Finish, so the caller ingests
// into a range no one reads until it publishes it (as sqlstore does with a
// new index, which no catalog record names until the keys are in).
//
// Finish places the tables in the deepest level where no file of that level
// or of any level above overlaps their keys, so that every read meets them
// after newer data and before older; while a compaction runs (its outputs
// are not known yet) the tables go to level 0, which is always safe. The
// memtables are flushed first if they hold keys of the range (a read looks
// at the memtables before any table). Keys written into the range by
// commits after the reservation, which would be newer than the ingested
// ones yet could sit below them, fail Finish with ErrIngestOverlap.
//
// Durability: the tables are synced, and the directory, before the version
// edit naming them is written to the MANIFEST with a last sequence number
// at or above the ingestion's. A crash before that edit leaves files no
// manifest names, which Open removes; after it the keys are there.

// ErrIngestOverlap is returned by Ingest.Finish when keys in the ingested
// range were committed after the ingestion began.
// It wraps storage.ErrConflict.
var ErrIngestOverlap = fmt.Errorf("kv: keys written into the ingested range after the ingestion began: %w", storage.ErrConflict)

// Ingest writes sorted keys into new tables and adds them to the database
// at Finish. It is used by one goroutine; Abort (or Finish) must be called.
type Ingest struct {
	d      *DB
	seq    base.SeqNum
	out    *tableOutput
	files  []*manifest.FileMetadata
	nums   []uint64
	last   []byte
	ikey   []byte
	count  int64
	target uint64
	done   bool
}

// NewIngest starts an ingestion: it reserves the sequence number the keys
// will carry.
func (d *DB) NewIngest() (*Ingest, error) {
	g := &Ingest{d: d, target: d.opts.TargetFileSize}
	if err := d.asLeader(func() error {
		if err := d.readOnlyErr(); err != nil {
			return err
		}
		d.commit.lastSeq++
		g.seq = d.commit.lastSeq
		return nil
	}); err != nil {
		return nil, err
	}
	return g, nil
}

// readOnlyErr is writeErrLocked for callers without d.mu.
func (d *DB) readOnlyErr() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.writeErrLocked()
}

// asLeader runs fn as the commit leader: no commit is assigned sequence
// numbers or applied while it runs.
func (d *DB) asLeader(fn func() error) error {
	var ferr error
	b := &Batch{db: d, data: make([]byte, batchHeaderLen)}
	b.precondition = func([]*Batch) error {
		ferr = fn()
		return nil
	}
	if err := d.enqueueCommit(b); err != nil {
		return err
	}
	return ferr
}

// Set adds key with value. Keys must be added in strictly ascending order.
func (g *Ingest) Set(key, value []byte) error {
	if g.done {
		return errors.New("kv: ingestion finished")
	}
	if g.last != nil && bytes.Compare(key, g.last) <= 0 {
		return fmt.Errorf("kv: ingest keys out of order: %q after %q", key, g.last)
	}
	if g.out == nil {
		d := g.d
		d.mu.Lock()
		num := d.mu.versions.NewFileNum()
		d.mu.pendingOutputs[num] = true
		d.mu.Unlock()
		g.nums = append(g.nums, num)
		out, err := d.newTableOutput(num)
		if err != nil {
			return err
		}
		g.out = out
	}
	g.ikey = base.AppendKey(g.ikey[:0], key, g.seq, base.KindSet)
	if err := g.out.w.Add(g.ikey, value); err != nil {
		return fmt.Errorf("kv: ingest into %s: %w", g.out.name, err)
	}
	g.last = append(g.last[:0], key...)
	g.count++
	if g.out.w.EstimatedSize() >= g.target {
		return g.cut()
	}
	return nil
}

// cut finishes the table being written.
func (g *Ingest) cut() error {
	out := g.out
	g.out = nil
	md, err := out.finish()
	if err != nil {
		return err
	}
	if md != nil {
		g.files = append(g.files, md)
	}
	return nil
}

// Count returns the number of keys added.
func (g *Ingest) Count() int64 { return g.count }

// Abort abandons the ingestion and removes its tables.
func (g *Ingest) Abort() {
	if g.done {
		return
	}
	g.done = true
	if g.out != nil {
		g.out.abandon()
		g.out = nil
	}
	d := g.d
	for _, f := range g.files {
		d.fs.Remove(makeFilename(d.dirname, fileTypeTable, f.FileNum))
	}
	g.release()
}

func (g *Ingest) release() {
	d := g.d
	d.mu.Lock()
	for _, n := range g.nums {
		delete(d.mu.pendingOutputs, n)
	}
	d.mu.Unlock()
}

// Finish makes the keys part of the database, durably: reads that start
// after it returns see them. On error nothing was added.
func (g *Ingest) Finish() error {
	if g.done {
		return errors.New("kv: ingestion finished")
	}
	if g.out != nil {
		if err := g.cut(); err != nil {
			g.Abort()
			return err
		}
	}
	if len(g.files) == 0 {
		g.done = true
		g.release()
		return nil
	}
	d := g.d
	if err := vfs.SyncDir(d.fs, d.dirname); err != nil {
		g.Abort()
		return fmt.Errorf("kv: ingest: %w", err)
	}
	lower := base.UserKey(g.files[0].Smallest)
	upper := base.UserKey(g.files[len(g.files)-1].Largest)
	var err error
	for attempt := 0; ; attempt++ {
		var flush bool
		err = d.asLeader(func() error {
			if d.memtablesOverlap(lower, upper) {
				flush = true
				return nil
			}
			return g.install(lower, upper)
		})
		if err != nil || !flush {
			break
		}
		if attempt == 3 {
			// Commits keep writing into the range.
			err = ErrIngestOverlap
			break
		}
		if err = d.Flush(); err != nil {
			break
		}
	}
	if err != nil {
		g.Abort()
		return err
	}
	g.done = true
	g.release()
	return nil
}

// memtablesOverlap reports whether a memtable holds a key or a range
// tombstone in [lower, upper]. REQUIRES: being the commit leader.
func (d *DB) memtablesOverlap(lower, upper []byte) bool {
	d.mu.Lock()
	mems := append([]*memTable{d.mu.mem}, d.mu.imms...)
	for _, m := range mems {
		m.ref()
	}
	d.mu.Unlock()
	defer func() {
		for _, m := range mems {
			m.unref()
		}
	}()
	seek := base.MakeSearchKey(nil, lower, base.SeqNumMax)
	for _, m := range mems {
		it := m.NewIter()
		kv := it.SeekGE(seek)
		hit := kv != nil && bytes.Compare(kv.UserKey(), upper) <= 0
		it.Close()
		if hit {
			return true
		}
		for _, t := range m.collectTombstones(base.SeqNumMax) {
			if bytes.Compare(t.Start, upper) <= 0 && bytes.Compare(t.End, lower) > 0 {
				return true
			}
		}
	}
	return false
}

// install checks the tree for newer keys in the range, picks the level and
// logs the edit. REQUIRES: being the commit leader.
func (g *Ingest) install(lower, upper []byte) error {
	d := g.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.writeErrLocked(); err != nil {
		return err
	}
	v := d.mu.versions.Current()
	v.Ref()
	defer v.Unref()
	// Newer files that span the range must not hold any of its keys.
	for l := 0; l < manifest.NumLevels; l++ {
		for _, f := range v.Overlaps(l, lower, upper) {
			if f.LargestSeq < g.seq {
				continue
			}
			newer, err := d.tableHoldsRange(f.FileNum, lower, upper)
			if err != nil {
				return err
			}
			if newer {
				return ErrIngestOverlap
			}
		}
	}
	// The deepest level above every overlapping file, not below the tree's
	// last level with files (an empty tree takes the last level).
	bottom := manifest.NumLevels - 1
	for bottom > 0 && v.NumFiles(bottom) == 0 {
		bottom--
	}
	if bottom == 0 && v.NumFiles(0) == 0 {
		bottom = manifest.NumLevels - 1
	}
	level := 0
	for l := 0; l <= bottom && len(v.Overlaps(l, lower, upper)) == 0; l++ {
		level = l
	}
	if d.mu.compacting > 0 {
		// A running compaction's outputs may come to span the range
		// anywhere below level 0.
		level = 0
	}
	edit := &manifest.VersionEdit{LastSeq: max(g.seq, d.mu.versions.LastSeq())}
	for _, f := range g.files {
		edit.NewFiles = append(edit.NewFiles, manifest.NewFile{Level: level, Meta: f})
	}
	if err := d.mu.versions.LogAndApply(edit); err != nil {
		if errors.Is(err, manifest.ErrFailed) {
			// The edit may have reached the file: keep the tables (the next
			// Open removes them if it did not) and stop writing.
			g.files = nil
			d.backgroundFailedLocked(fmt.Errorf("ingest: %w", err))
		}
		return err
	}
	d.updateReadStateLocked()
	if d.visibleSeq.Load() < uint64(d.commit.lastSeq) {
		d.visibleSeq.Store(uint64(d.commit.lastSeq))
	}
	var size int64
	for _, f := range g.files {
		size += int64(f.Size)
	}
	d.mu.cond.Broadcast()
	d.maybeScheduleCompactionLocked()
	d.opts.Logger.Infof("kv: ingested %d tables (%d keys, %d bytes) into L%d at seq %d", len(g.files), g.count, size, level, g.seq)
	return nil
}

// tableHoldsRange reports whether table num holds a point key or a range
// tombstone in [lower, upper].
func (d *DB) tableHoldsRange(num uint64, lower, upper []byte) (bool, error) {
	e, err := d.tables.get(num)
	if err != nil {
		return false, err
	}
	defer d.tables.release(e)
	it := e.reader.NewIter(table.IterOptions{})
	kv := it.SeekGE(base.MakeSearchKey(nil, lower, base.SeqNumMax))
	hit := kv != nil && bytes.Compare(kv.UserKey(), upper) <= 0
	if err := it.Close(); err != nil {
		return false, err
	}
	if hit {
		return true, nil
	}
	for _, t := range e.reader.RangeDeletes() {
		if bytes.Compare(t.Start, upper) <= 0 && bytes.Compare(t.End, lower) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// NewBulkWriter implements storage.BulkLoader with an ingestion.
func (e *Engine) NewBulkWriter() (storage.BulkWriter, error) { return e.db.NewIngest() }

var _ storage.BulkLoader = (*Engine)(nil)
