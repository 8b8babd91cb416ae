package sqlstore

import (
	"bytes"

	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/storage"
)

// txnIter is an engine iterator over a transaction's view: its snapshot
// plus its writes as they were when the iterator was made. So a scan
// never sees writes its own statement makes after the scan started, which
// is what UPDATE and DELETE need (they scan the table they write).
//
// An engine iterator that sees writes a rollback undoes (a failed
// statement or row, ROLLBACK TO SAVEPOINT) must not be used again
// (storage.Txn.RollbackTo). The transaction therefore invalidates such
// iterators at rollback, and an invalidated txnIter reopens itself over the
// writes as they are after the rollback and seeks back to where it was.
//
// A txnIter is not safe for concurrent use.
type txnIter struct {
	t      *txn
	it     storage.Iterator
	lower  []byte
	upper  []byte
	onView bool // reads the statement view, not every write
	// latest, without onView, reads every write over the latest committed
	// state instead of the snapshot: a pessimistic foreign key check
	// (locks.go).
	latest bool
	at     int // the view boundary to read at; -1: the latest
	writes int // the transaction's writes it sees (a position)
	tune   iterTuning
	// fixed, when set, is the reader the iterator reads: one that never
	// changes (access.go), so a rollback never invalidates the iterator.
	fixed storage.Reader

	opts storage.IterOptions // the engine iterator's options, made by open

	stale   bool   // invalidated by a rollback; reopen before moving
	saved   []byte // the key it was on when invalidated (copy)
	onValid bool
	closed  bool
	err     error
}

// iterTuning is what a read path adds to an iterator's read options: the
// statement's counters, readahead and async I/O (storage.ReadOptions).
type iterTuning struct {
	stats     *stats.Counters
	readahead int64
	async     bool
	dontFill  bool // storage.ReadOptions.DontFillCache
}

// newIter returns an iterator over [lower, upper) of everything the
// transaction sees, its own writes included.
func (t *txn) newIter(lower, upper []byte) (*txnIter, error) {
	return t.newIterOn(lower, upper, false)
}

// newStmtIterAt returns an iterator over [lower, upper) of the statement
// view: the transaction's writes up to the last statement boundary, or up
// to boundary at when that is an earlier one (at < 0: the last).
func (t *txn) newStmtIterAt(lower, upper []byte, at int) (*txnIter, error) {
	return t.newTunedIter(lower, upper, true, at, iterTuning{})
}

// newTunedIter returns an iterator over [lower, upper) of the statement
// view as of boundary at (onView), or of everything the transaction sees,
// with the given tuning.
func (t *txn) newTunedIter(lower, upper []byte, onView bool, at int, tune iterTuning) (*txnIter, error) {
	latest := false
	if !onView {
		at = -1
		latest = t.locker != nil
	}
	ti := &txnIter{t: t, lower: lower, upper: upper, onView: onView, latest: latest, at: at, tune: tune}
	return t.track(ti)
}

func (t *txn) newIterOn(lower, upper []byte, onView bool) (*txnIter, error) {
	return t.track(&txnIter{t: t, lower: lower, upper: upper, onView: onView, at: -1})
}

// newFixedIter returns an iterator over [lower, upper) of r, a reader that
// does not change while the transaction lives (txn.readerLocked). It is
// not tracked: no rollback invalidates it, and the row iterator that reads
// through it counts among the transaction's readers (txn.idle) until it
// closes it, so the transaction's map of iterators, which each autocommit
// read's transaction would make afresh, is not needed.
func (t *txn) newFixedIter(r storage.Reader, lower, upper []byte, tune iterTuning) (*txnIter, error) {
	ti := &txnIter{t: t, lower: lower, upper: upper, at: -1, tune: tune, fixed: r}
	if err := ti.open(); err != nil {
		return nil, err
	}
	return ti, nil
}

func (t *txn) track(ti *txnIter) (*txnIter, error) {
	if err := ti.open(); err != nil {
		return nil, err
	}
	t.mu.Lock()
	if t.iters == nil {
		t.iters = make(map[*txnIter]struct{})
	}
	t.iters[ti] = struct{}{}
	t.mu.Unlock()
	return ti, nil
}

func (ti *txnIter) open() error {
	t := ti.t
	opts := &ti.opts // in the txnIter: no allocation of its own
	*opts = storage.IterOptions{LowerBound: ti.lower, UpperBound: ti.upper}
	opts.Stats, opts.ReadaheadSize, opts.AsyncIO = ti.tune.stats, ti.tune.readahead, ti.tune.async
	opts.DontFillCache = ti.tune.dontFill
	var r storage.Reader
	var err error
	t.mu.Lock()
	defer t.mu.Unlock()
	ti.writes = 0
	switch {
	case ti.fixed != nil:
		r = ti.fixed
	case t.done:
		// The transaction ended (an iterator GMS closes late): read its
		// snapshot alone.
		r = t.tx.Snapshot()
	case ti.onView && ti.at >= 0 && ti.at < t.boundary:
		// An earlier boundary (a cursor opened before later writes): a
		// private view of the writes up to it, which never changes.
		ti.onView = false
		r, err = t.tx.ViewAt(ti.at)
	case ti.onView:
		ti.writes = t.boundary
		r, err = t.tx.AdvanceView(t.boundary)
	case ti.latest:
		ti.writes = t.tx.Count()
		r = t.tx.Current()
	default:
		ti.writes = t.tx.Count()
		r = t.tx
	}
	if err != nil {
		return wrapf(err, "sqlstore: iterator")
	}
	it, err := r.NewIter(opts)
	if err != nil {
		return wrapf(err, "sqlstore: iterator")
	}
	ti.it = it
	return nil
}

// invalidate is called by the transaction, with t.mu held, when a rollback
// undoes writes the iterator can see.
func (ti *txnIter) invalidate() {
	if ti.stale || ti.closed {
		return
	}
	ti.stale = true
	ti.onValid = ti.it.Valid()
	if ti.onValid {
		ti.saved = append(ti.saved[:0], ti.it.Key()...)
	}
	_ = ti.it.Close()
	ti.it = nil
}

// reopen replaces a stale iterator. REQUIRES: called by the iterator's user.
func (ti *txnIter) reopen() error {
	ti.t.mu.Lock()
	stale := ti.stale
	ti.stale = false
	ti.t.mu.Unlock()
	if !stale {
		return nil
	}
	return ti.open()
}

func (ti *txnIter) SeekGE(key []byte) bool {
	if err := ti.reopen(); err != nil {
		ti.err = err
		return false
	}
	return ti.it.SeekGE(key)
}

func (ti *txnIter) SeekLT(key []byte) bool {
	if err := ti.reopen(); err != nil {
		ti.err = err
		return false
	}
	return ti.it.SeekLT(key)
}

func (ti *txnIter) First() bool {
	if err := ti.reopen(); err != nil {
		ti.err = err
		return false
	}
	return ti.it.First()
}

func (ti *txnIter) Last() bool {
	if err := ti.reopen(); err != nil {
		ti.err = err
		return false
	}
	return ti.it.Last()
}

// Next moves forward; after an invalidation it continues after the saved key.
func (ti *txnIter) Next() bool {
	if ti.fixed == nil && ti.isStale() {
		saved, was := append([]byte(nil), ti.saved...), ti.onValid
		if err := ti.reopen(); err != nil {
			ti.err = err
			return false
		}
		if !was {
			return false
		}
		if !ti.it.SeekGE(saved) {
			return false
		}
		if bytes.Equal(ti.it.Key(), saved) {
			return ti.it.Next()
		}
		return true
	}
	return ti.it.Next()
}

// Prev moves backward; after an invalidation it continues before the saved key.
func (ti *txnIter) Prev() bool {
	if ti.fixed == nil && ti.isStale() {
		saved, was := append([]byte(nil), ti.saved...), ti.onValid
		if err := ti.reopen(); err != nil {
			ti.err = err
			return false
		}
		if !was {
			return false
		}
		return ti.it.SeekLT(saved)
	}
	return ti.it.Prev()
}

func (ti *txnIter) isStale() bool {
	ti.t.mu.Lock()
	defer ti.t.mu.Unlock()
	return ti.stale
}

// Key and Value are valid until the next move (storage.Iterator's contract).
func (ti *txnIter) Key() []byte   { return ti.it.Key() }
func (ti *txnIter) Value() []byte { return ti.it.Value() }

func (ti *txnIter) Error() error {
	if ti.err != nil {
		return ti.err
	}
	if ti.it == nil {
		return nil
	}
	return ti.it.Error()
}

// Close releases the iterator; closing twice is harmless.
func (ti *txnIter) Close() error {
	ti.t.mu.Lock()
	if ti.closed {
		ti.t.mu.Unlock()
		return nil
	}
	ti.closed = true
	delete(ti.t.iters, ti)
	it := ti.it
	ti.it = nil
	ti.t.mu.Unlock()
	if it != nil {
		return it.Close()
	}
	return nil
}
