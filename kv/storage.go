package kv

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/lock"
	"github.com/strata-db/strata/kv/memtable"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/storage"
)

// Engine is the storage contract (package storage) over a DB: what the SQL
// layer reads and writes through. A transaction is a snapshot and an
// indexed batch over it; its commit is Batch.CommitIfNoConflict.
//
// The Engine's Close closes the DB.
type Engine struct {
	db *DB
	wo *WriteOptions
	// locks is the lock table of the transactions' key locks (locks.go);
	// txnIDs numbers the transactions in it.
	locks  *lock.Table
	txnIDs atomic.Uint64
}

var (
	_ storage.Engine        = (*Engine)(nil)
	_ storage.SizeEstimator = (*Engine)(nil)
	_ storage.StatsSource   = (*Engine)(nil)
	_ storage.TxnReuser     = (*Engine)(nil)
	_ storage.Txn           = (*engineTxn)(nil)
	_ storage.MultiGetter   = (*engineTxn)(nil)
	_ storage.MultiScanner  = (*engineTxn)(nil)
	_ storage.MultiGetter   = (*snapReader)(nil)
	_ storage.MultiScanner  = (*snapReader)(nil)
	_ storage.MultiGetter   = (*viewReader)(nil)
	_ storage.MultiScanner  = (*viewReader)(nil)
	_ storage.MultiGetter   = (*latestReader)(nil)
	_ storage.MultiScanner  = (*latestReader)(nil)
	_ storage.MultiGetter   = (*currentReader)(nil)
)

// NewEngine returns the storage contract over d; transactions commit with
// wo (nil: Sync).
func NewEngine(d *DB, wo *WriteOptions) *Engine {
	if wo == nil {
		wo = Sync
	}
	return &Engine{db: d, wo: wo, locks: lock.New()}
}

// DB returns the database the engine reads and writes.
func (e *Engine) DB() *DB { return e.db }

// Begin implements storage.Engine.
func (e *Engine) Begin() (storage.Txn, error) {
	if e.db.closed.Load() {
		return nil, ErrClosed
	}
	t := &engineTxn{}
	e.begin(t)
	return t, nil
}

// BeginReusing implements storage.TxnReuser: old's memory is taken for the
// new transaction when old is one of e's, finished, and never wrote, locked
// or made a view (what would leave memory a late reader might still hold);
// otherwise it begins as Begin does. An autocommit read's transaction meets
// the conditions, so a session that reads statement after statement makes
// no new transaction object for each.
func (e *Engine) BeginReusing(old storage.Txn) (storage.Txn, error) {
	t, ok := old.(*engineTxn)
	if !ok || t.e != e || !t.done || t.batch.index != nil || len(t.batch.guards) != 0 ||
		t.owner != nil || t.view != nil || t.old != nil {
		return e.Begin()
	}
	if e.db.closed.Load() {
		return nil, ErrClosed
	}
	*t = engineTxn{}
	e.begin(t)
	return t, nil
}

// begin makes t, a zero engineTxn, a new transaction of e.
func (e *Engine) begin(t *engineTxn) {
	t.e, t.id = e, e.txnIDs.Add(1)
	e.db.initSnapshot(&t.snap)
	// The batch's buffer and index wait for the first write (writes): an
	// autocommit read never makes them.
	t.batch.db = e.db
	t.snapR = snapReader{db: e.db, snap: &t.snap}
}

// Latest implements storage.Engine.
func (e *Engine) Latest() storage.Reader { return (*latestReader)(e.db) }

// LastVersion implements storage.Engine: the last visible sequence number.
func (e *Engine) LastVersion() uint64 { return e.db.LastSeq() }

// Close implements storage.Engine.
func (e *Engine) Close() error { return e.db.Close() }

// ApproximateSize implements storage.SizeEstimator.
func (e *Engine) ApproximateSize(start, end []byte) (int64, error) {
	return e.db.ApproximateSize(start, end)
}

// EstimateRange implements storage.SizeEstimator.
func (e *Engine) EstimateRange(start, end []byte) (keys, bytes int64, err error) {
	est, err := e.db.EstimateRange(start, end)
	return est.Keys, est.Bytes, err
}

// Stats implements storage.StatsSource.
func (e *Engine) Stats() stats.Snapshot { return e.db.Stats() }

// readOptions returns the engine's read options for o at snap (nil: the
// latest state).
func readOptions(o *storage.ReadOptions, snap *Snapshot) ReadOptions {
	if o == nil {
		return ReadOptions{Snapshot: snap}
	}
	return ReadOptions{Snapshot: snap, Stats: o.Stats, DontFillCache: o.DontFillCache, ReadaheadSize: o.ReadaheadSize, AsyncIO: o.AsyncIO}
}

func iterOptions(o *storage.IterOptions, snap *Snapshot) IterOptions {
	if o == nil {
		return IterOptions{ReadOptions: ReadOptions{Snapshot: snap}}
	}
	return IterOptions{ReadOptions: readOptions(&o.ReadOptions, snap), LowerBound: o.LowerBound, UpperBound: o.UpperBound, CoalesceThreshold: o.CoalesceThreshold}
}

// iterOrNil returns it as the contract's iterator, a nil interface on error.
func iterOrNil(it *Iterator, err error) (storage.Iterator, error) {
	if err != nil {
		return nil, err
	}
	return it, nil
}

func multiScanOrNil(ms *MultiScan, err error) (storage.MultiScan, error) {
	if err != nil {
		return nil, err
	}
	return ms, nil
}

// batchGet, batchNewIter, batchMultiGet and batchMultiScan read b (nil:
// no writes) over the database at snap (nil: the latest state).
func batchGet(d *DB, b *Batch, snap *Snapshot, key []byte, o *storage.ReadOptions) ([]byte, error) {
	ro := readOptions(o, snap)
	if b == nil || b.index == nil {
		return d.Get(key, &ro)
	}
	return b.Get(key, &ro)
}

func batchNewIter(d *DB, b *Batch, snap *Snapshot, o *storage.IterOptions) (storage.Iterator, error) {
	io := iterOptions(o, snap)
	if b == nil || b.index == nil {
		return iterOrNil(d.NewIter(&io))
	}
	return iterOrNil(b.NewIter(&io))
}

func batchMultiGet(d *DB, b *Batch, snap *Snapshot, keys [][]byte, o *storage.ReadOptions, dst [][]byte) ([][]byte, error) {
	ro := readOptions(o, snap)
	if b == nil || b.index == nil {
		return d.MultiGet(keys, &ro, dst)
	}
	return b.MultiGet(keys, &ro, dst)
}

func batchMultiScan(ctx context.Context, d *DB, b *Batch, snap *Snapshot, ranges []storage.Range, o *storage.IterOptions) (storage.MultiScan, error) {
	io := iterOptions(o, snap)
	if b == nil || b.index == nil {
		return multiScanOrNil(d.NewMultiScan(ctx, ranges, &io))
	}
	return multiScanOrNil(b.NewMultiScan(ctx, ranges, &io))
}

// latestReader reads the latest committed state of a DB.
type latestReader DB

func (r *latestReader) Get(key []byte, o *storage.ReadOptions) ([]byte, error) {
	return batchGet((*DB)(r), nil, nil, key, o)
}

func (r *latestReader) NewIter(o *storage.IterOptions) (storage.Iterator, error) {
	return batchNewIter((*DB)(r), nil, nil, o)
}

func (r *latestReader) MultiGet(keys [][]byte, o *storage.ReadOptions, dst [][]byte) ([][]byte, error) {
	return batchMultiGet((*DB)(r), nil, nil, keys, o, dst)
}

func (r *latestReader) NewMultiScan(ctx context.Context, ranges []storage.Range, o *storage.IterOptions) (storage.MultiScan, error) {
	return batchMultiScan(ctx, (*DB)(r), nil, nil, ranges, o)
}

// snapReader reads a snapshot. It reads by the snapshot's sequence number,
// so it keeps working after the snapshot is closed (the versions it needs
// may then be compacted away; the SQL layer reads so only to drain an
// iterator its client closes late).
type snapReader struct {
	db   *DB
	snap *Snapshot
}

func (r *snapReader) Get(key []byte, o *storage.ReadOptions) ([]byte, error) {
	return batchGet(r.db, nil, r.snap, key, o)
}

func (r *snapReader) NewIter(o *storage.IterOptions) (storage.Iterator, error) {
	return batchNewIter(r.db, nil, r.snap, o)
}

func (r *snapReader) MultiGet(keys [][]byte, o *storage.ReadOptions, dst [][]byte) ([][]byte, error) {
	return batchMultiGet(r.db, nil, r.snap, keys, o, dst)
}

func (r *snapReader) NewMultiScan(ctx context.Context, ranges []storage.Range, o *storage.IterOptions) (storage.MultiScan, error) {
	return batchMultiScan(ctx, r.db, nil, r.snap, ranges, o)
}

// viewReader reads an indexed batch of a transaction's first writes over
// its snapshot (engineTxn.ViewAt, AdvanceView).
type viewReader struct {
	b    *Batch
	snap *Snapshot
}

func (r *viewReader) Get(key []byte, o *storage.ReadOptions) ([]byte, error) {
	return batchGet(r.b.db, r.b, r.snap, key, o)
}

func (r *viewReader) NewIter(o *storage.IterOptions) (storage.Iterator, error) {
	return batchNewIter(r.b.db, r.b, r.snap, o)
}

func (r *viewReader) MultiGet(keys [][]byte, o *storage.ReadOptions, dst [][]byte) ([][]byte, error) {
	return batchMultiGet(r.b.db, r.b, r.snap, keys, o, dst)
}

func (r *viewReader) NewMultiScan(ctx context.Context, ranges []storage.Range, o *storage.IterOptions) (storage.MultiScan, error) {
	return batchMultiScan(ctx, r.b.db, r.b, r.snap, ranges, o)
}

// currentReader reads a transaction's batch over the latest committed state.
type currentReader Batch

func (r *currentReader) Get(key []byte, o *storage.ReadOptions) ([]byte, error) {
	return batchGet(r.db, (*Batch)(r), nil, key, o)
}

func (r *currentReader) NewIter(o *storage.IterOptions) (storage.Iterator, error) {
	return batchNewIter(r.db, (*Batch)(r), nil, o)
}

// MultiGet implements storage.MultiGetter: a statement's duplicate-key
// checks read the latest state of all its keys at once.
func (r *currentReader) MultiGet(keys [][]byte, o *storage.ReadOptions, dst [][]byte) ([][]byte, error) {
	return batchMultiGet(r.db, (*Batch)(r), nil, keys, o, dst)
}

// engineTxn is a transaction of an Engine: a snapshot and an indexed batch
// of its writes, both held in the struct.
//
// Views: ops logs the offset of every write's entry in the batch (what
// CopyEntry reads back), so that views copy writes without the log holding
// a copy of a key or value. The shared view (AdvanceView) is a second
// indexed batch holding the first synced writes; private views (ViewAt)
// are built from the log, the last one cached.
type engineTxn struct {
	e     *Engine
	snap  Snapshot
	batch Batch
	snapR snapReader

	ops    []int
	view   *viewReader // nil until AdvanceView needs writes in it
	synced int
	// old caches the private view at oldAt (ViewAt); a rollback below oldAt
	// drops it.
	old   *viewReader
	oldAt int

	durable bool // commit with Sync whatever the engine's options
	done    bool

	// Locks (locks.go): id names the transaction in the lock table, owner
	// holds its locks (nil until the first), forUpdate is the version
	// visible after its last grant.
	id          uint64
	ended       atomic.Bool // set before the locks are released
	owner       *lock.Owner
	pessimistic bool
	forUpdate   base.SeqNum
}

// Get implements storage.Reader: the snapshot plus every write.
func (t *engineTxn) Get(key []byte, o *storage.ReadOptions) ([]byte, error) {
	return batchGet(t.e.db, &t.batch, &t.snap, key, o)
}

// NewIter implements storage.Reader.
func (t *engineTxn) NewIter(o *storage.IterOptions) (storage.Iterator, error) {
	return batchNewIter(t.e.db, &t.batch, &t.snap, o)
}

// MultiGet implements storage.MultiGetter.
func (t *engineTxn) MultiGet(keys [][]byte, o *storage.ReadOptions, dst [][]byte) ([][]byte, error) {
	return batchMultiGet(t.e.db, &t.batch, &t.snap, keys, o, dst)
}

// NewMultiScan implements storage.MultiScanner.
func (t *engineTxn) NewMultiScan(ctx context.Context, ranges []storage.Range, o *storage.IterOptions) (storage.MultiScan, error) {
	return batchMultiScan(ctx, t.e.db, &t.batch, &t.snap, ranges, o)
}

func (t *engineTxn) Snapshot() storage.Reader { return &t.snapR }

func (t *engineTxn) Current() storage.Reader { return (*currentReader)(&t.batch) }

func (t *engineTxn) StartVersion() uint64 { return t.snap.Seq() }

// writes returns the transaction's batch, making its buffer and index at
// the first write. Until then the batch has neither, and the readers treat
// it as holding nothing (batchGet and the others read the database).
func (t *engineTxn) writes() *Batch {
	if t.batch.index == nil {
		t.batch.data = make([]byte, batchHeaderLen, 256)
		t.batch.index = newBatchIndex(&t.batch)
	}
	return &t.batch
}

func (t *engineTxn) Set(key, value []byte) error {
	off := t.writes().Len()
	if err := t.batch.Set(key, value); err != nil {
		return err
	}
	t.ops = append(t.ops, off)
	return nil
}

func (t *engineTxn) Delete(key []byte) error {
	off := t.writes().Len()
	if err := t.batch.Delete(key); err != nil {
		return err
	}
	t.ops = append(t.ops, off)
	return nil
}

func (t *engineTxn) DeleteRange(start, end []byte) error {
	off := t.writes().Len()
	if err := t.batch.DeleteRange(start, end); err != nil {
		return err
	}
	t.ops = append(t.ops, off)
	return nil
}

func (t *engineTxn) Count() int { return t.batch.Count() }

func (t *engineTxn) Len() int { return max(t.batch.Len(), batchHeaderLen) }

// RollbackTo implements storage.Txn. The batch's RollbackTo gives it a
// fresh buffer and index, so iterators made before keep reading what they
// saw.
func (t *engineTxn) RollbackTo(n int) error {
	if n < 0 || n > len(t.ops) {
		return fmt.Errorf("kv: RollbackTo(%d) outside the transaction's %d writes", n, len(t.ops))
	}
	if n == len(t.ops) {
		return nil
	}
	m, err := t.batch.markAt(n, t.ops[n])
	if err != nil {
		return err
	}
	if err := t.batch.RollbackTo(m); err != nil {
		return err
	}
	t.ops = t.ops[:n]
	if t.old != nil && t.oldAt > n {
		t.old = nil
	}
	if t.synced > n {
		if n == 0 {
			t.view = nil
		} else {
			vm, err := t.view.b.markAt(n, -1)
			if err != nil {
				return err
			}
			if err := t.view.b.RollbackTo(vm); err != nil {
				return err
			}
		}
		t.synced = n
	}
	return nil
}

// ViewAt implements storage.Txn.
func (t *engineTxn) ViewAt(n int) (storage.Reader, error) {
	if n < 0 || n > len(t.ops) {
		return nil, fmt.Errorf("kv: ViewAt(%d) outside the transaction's %d writes", n, len(t.ops))
	}
	if n == 0 {
		return &t.snapR, nil
	}
	if t.old != nil && t.oldAt == n {
		return t.old, nil
	}
	v := &viewReader{b: t.e.db.NewIndexedBatch(), snap: &t.snap}
	if err := t.copyOps(v.b, t.ops[:n]); err != nil {
		return nil, err
	}
	t.old, t.oldAt = v, n
	return v, nil
}

// AdvanceView implements storage.Txn.
func (t *engineTxn) AdvanceView(n int) (storage.Reader, error) {
	if n < t.synced || n > len(t.ops) {
		return nil, fmt.Errorf("kv: AdvanceView(%d) outside [%d, %d]", n, t.synced, len(t.ops))
	}
	if n == 0 {
		return &t.snapR, nil
	}
	if t.view == nil {
		t.view = &viewReader{b: t.e.db.NewIndexedBatch(), snap: &t.snap}
	}
	if err := t.copyOps(t.view.b, t.ops[t.synced:n]); err != nil {
		return nil, err
	}
	t.synced = n
	return t.view, nil
}

// copyOps adds to b the writes of the transaction's batch at offsets ops.
func (t *engineTxn) copyOps(b *Batch, ops []int) error {
	for _, off := range ops {
		if err := t.batch.CopyEntry(b, off); err != nil {
			return fmt.Errorf("kv: transaction view: %w", err)
		}
	}
	return nil
}

func (t *engineTxn) SetDurable() { t.durable = true }

func (t *engineTxn) Guard(start, end []byte) { t.batch.Guard(start, end) }

// Commit implements storage.Txn with Batch.CommitIfNoConflict.
func (t *engineTxn) Commit() error {
	if t.done {
		return errors.New("kv: transaction already finished")
	}
	t.done = true
	defer t.release()
	if t.batch.Empty() {
		return nil
	}
	wo := t.e.wo
	if t.durable {
		wo = Sync
	}
	if t.pessimistic {
		return t.batch.commitChecked(&t.snap, max(t.forUpdate, t.snap.seq), t.holdsLock, wo)
	}
	if err := t.lockWrites(); err != nil {
		return err
	}
	return t.batch.CommitIfNoConflict(&t.snap, wo)
}

// Rollback implements storage.Txn.
func (t *engineTxn) Rollback() error {
	if t.done {
		return nil
	}
	t.done = true
	t.release()
	return nil
}

// release frees the locks (after the commit is visible) and the snapshot. The batches are left to the garbage collector
// rather than closed: an iterator not yet closed may still read them.
func (t *engineTxn) release() {
	t.releaseLocks()
	_ = t.snap.Close()
}

// markAt returns the mark of the position after the first n entries of the
// batch, whose entry offset is off (-1: found by walking the entries).
func (b *Batch) markAt(n, off int) (BatchMark, error) {
	if n < 0 || n > int(b.count) {
		return BatchMark{}, fmt.Errorf("kv: position %d outside the batch's %d entries", n, b.count)
	}
	if off < 0 {
		off = len(b.data)
		i := 0
		if err := forEachEntryOffset(b.data, func(_ base.Kind, o int) {
			if i == n {
				off = o
			}
			i++
		}); err != nil {
			return BatchMark{}, err
		}
	}
	m := BatchMark{len: off, count: n, memSize: b.memSize, userBytes: b.userBytes}
	for p := off; p < len(b.data); {
		_, key, value, sz, err := decodeEntry(b.data[p:])
		if err != nil {
			return BatchMark{}, fmt.Errorf("kv: entry at byte %d: %w", p, err)
		}
		m.memSize -= memtable.EntrySize(len(key), len(value))
		m.userBytes -= int64(len(key) + len(value))
		p += sz
	}
	m.rangeDels = sort.Search(len(b.rangeDels), func(i int) bool { return b.rangeDels[i].off >= off })
	return m, nil
}
