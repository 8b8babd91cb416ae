package sqlstore

import (
	"io"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/planner"
	"github.com/strata-db/strata/sqlstore/codec"
	"github.com/strata-db/strata/storage"
)

var (
	_ sql.RowIter       = (*rowIter)(nil)
	_ sql.Partition     = scanPartition{}
	_ sql.Partition     = (*lookupPartition)(nil)
	_ sql.PartitionIter = (*partitionIter)(nil)
)

// Partitions: a table is read as one partition (GMS v0.20.0 reads
// partitions one after another, so splitting buys nothing). A full scan is a
// scanPartition; an index lookup is a lookupPartition carrying its encoded
// spans.

// Both remember the statement view's boundary when GMS asked for them
// (at = -1: none), so that a cursor reads the table as it was at OPEN.
type scanPartition struct{ at int }

func (scanPartition) Key() []byte { return []byte("scan") }

type lookupPartition struct {
	plan *lookupPlan
	at   int
}

func (*lookupPartition) Key() []byte { return []byte("lookup") }

// partitionIter yields one partition.
type partitionIter struct {
	p    sql.Partition
	done bool
}

func (it *partitionIter) Next(*sql.Context) (sql.Partition, error) {
	if it.done {
		return nil, io.EOF
	}
	it.done = true
	return it.p, nil
}

func (it *partitionIter) Close(*sql.Context) error { return nil }

// rowIter reads the rows of a table along an access plan (access.go): a
// source yields the index entries of the spans in order, and for a
// secondary index a fetcher turns them into rows of the primary index. It
// makes its engine iterators when it is made, so it sees the transaction as
// of that moment (txnIter); point reads and prepared scans read what does
// not change, or run at once (access.go).
type rowIter struct {
	t     *Table // the table, with its projection
	d     *tableDef
	ix    *indexDef // the index read (the primary one for a full scan)
	spans []span
	own   func() // releases a transaction made for this iterator
	tx    *txn   // the transaction read, whose readers count includes it

	src   entrySource
	fetch *fetcher // nil for the primary index and a covering one
	// covered: rows are decoded from the entries of a secondary index,
	// after its prefix of skip bytes: the columns of need (covering.go).
	covered bool
	skip    int
	need    []bool

	full  sql.Row      // scratch for residual checks
	arena *codec.Arena // memory of the rows returned, pooled (see rowArena)

	// lk, for a statement that locks the rows it reads, locks each and
	// reads it again (locks.go).
	lk *rowLocker

	mem    *rowIterMem // where open makes its parts; nil: on the heap
	opener iterOpener  // the iterSource's and the fetcher's engine iterators
}

// rowIterMem is the memory of a rowIter and of the parts open makes for it,
// kept by a template's tableIter so that an execution reuses the last
// one's instead of allocating them again. Each part is zeroed before use:
// the slices a returned row may refer to (values read from the engine)
// are dropped, never written again.
type rowIterMem struct {
	ri rowIter
	ps pointSource
	ro storage.ReadOptions
	// batch is the memory of ps's batches of keys and values, which
	// outlives each execution's ps.
	batch [][]byte
	is    iterSource
	f     fetcher
}

// iterOpener opens the engine iterators of a rowIter: over the frozen
// reader the plan was chosen for, or over the transaction as of now. It is
// a struct in the rowIter, not a closure, so that opening one allocates
// nothing of its own.
type iterOpener struct {
	tx       *txn
	r        storage.Reader
	frozen   bool
	onView   bool
	at       int
	counters *stats.Counters
}

func (o *iterOpener) open(lower, upper []byte, tune iterTuning) (*txnIter, error) {
	tune.stats = o.counters
	if o.frozen {
		return o.tx.newFixedIter(o.r, lower, upper, tune)
	}
	return o.tx.newTunedIter(lower, upper, o.onView, o.at, tune)
}

// rowArena returns the Arena the iterator's rows are decoded in, taken
// from the pool at the first row, so that an iterator that returns none
// takes none.
func (ri *rowIter) rowArena() *codec.Arena {
	if ri.arena == nil {
		ri.arena = codec.GetArena()
	}
	return ri.arena
}

func (t *Table) newRowIter(ctx *sql.Context, plan *lookupPlan) (*rowIter, error) {
	return t.newRowIterAt(ctx, plan, -1)
}

// newRowIterAt is newRowIter reading the statement view as of boundary at
// (-1: the current one). It chooses the access plan once it has the
// reader, whose kind the plan depends on (access.go), and runs that plan.
func (t *Table) newRowIterAt(ctx *sql.Context, lp *lookupPlan, at int) (*rowIter, error) {
	return t.newRowIterIn(ctx, lp, at, nil)
}

// newRowIterIn is newRowIterAt making the iterator and its parts in mem,
// when not nil; mem must not hold an iterator still open.
func (t *Table) newRowIterIn(ctx *sql.Context, lp *lookupPlan, at int, mem *rowIterMem) (*rowIter, error) {
	tx, release := t.store.view(ctx)
	if err := t.lockForRead(ctx, tx); err != nil { // mdl.go
		release()
		return nil, err
	}
	d := t.def
	var ri *rowIter
	if mem != nil {
		ri = &mem.ri
		*ri = rowIter{t: t, d: d, own: release, mem: mem}
	} else {
		ri = &rowIter{t: t, d: d, own: release}
	}
	if lp == nil {
		primaryPrefix := appendIndexPrefix(nil, d.id, primaryIndexID)
		ri.spans = []span{{start: primaryPrefix, end: prefixEnd(primaryPrefix), whole: true}}
		ri.ix = d.primary
	} else {
		ri.spans, ri.ix = lp.spans, lp.ix
	}
	st := stmtStatsOf(ctx)
	var counters *stats.Counters
	if st != nil {
		counters = st.counters()
	}
	if len(ri.spans) == 0 {
		if st != nil {
			st.record(d.name, lp.choose(false)) // Empty: nothing to read
		}
		return ri, nil
	}
	onView := !t.readsCurrent
	ri.lk = newRowLocker(ctx, tx, onView)
	if ri.lk != nil && at >= 0 {
		ri.lk.view = nil // a cursor's view may lag the shared one
	}
	if ri.lk == nil && tx.locker == nil && lockingRead(ctx) {
		guardLockedRead(ctx, d, ri.ix, ri.spans)
	}
	tx.mu.Lock()
	r, frozen, err := tx.readerLocked(onView, at)
	tx.mu.Unlock()
	if err != nil {
		release()
		return nil, wrapf(err, "sqlstore: reading %s", d.name)
	}
	var access planner.Plan
	if lp == nil {
		access = t.store.planScan(d, t.store.accessOptions(ctx), !frozen)
	} else {
		access = lp.choose(!frozen)
		// A locking read fetches the rows it locks, whatever the index
		// covers.
		if access.Covering && ri.lk == nil {
			ri.covered, ri.skip = true, indexPrefixLen(d.id, lp.ix.id)
			ri.need, _ = t.coveredColumns(lp.ix, lp.spans)
		}
	}
	if err := ri.open(tx, r, onView, access, at, counters); err != nil {
		release()
		return nil, err
	}
	if st != nil {
		st.record(d.name, access)
	}
	tx.mu.Lock()
	tx.readers++
	tx.mu.Unlock()
	ri.tx = tx
	return ri, nil
}

// open makes the source and the fetcher of access plan p over reader r,
// as p says: the plan was chosen for r (frozen: r stays as it is for as
// long as the transaction lives, and p reads it lazily; otherwise p reads
// at once, planner.Hints.Mutable).
func (ri *rowIter) open(tx *txn, r storage.Reader, onView bool, p planner.Plan, at int, counters *stats.Counters) error {
	frozen := !p.Mutable
	// AsyncIO lets MultiGet read a batch's uncached blocks at once; the
	// engine does so only when reads reach the device. A point read makes
	// its options with its source (or takes them from ri.mem).
	readOptions := storage.ReadOptions{Stats: counters, AsyncIO: true}
	var ro *storage.ReadOptions
	if ri.mem != nil {
		ro = &ri.mem.ro
		*ro = readOptions
	}
	ri.opener = iterOpener{tx: tx, r: r, frozen: frozen, onView: onView, at: at, counters: counters}
	switch p.Kind {
	case planner.Get, planner.MultiGet:
		if ri.lk != nil && ri.ix.primary {
			// A locking read of primary keys locks each key and then
			// reads it at the latest (nextLocked): a read before the
			// lock would be thrown away.
			ri.src = &keySource{spans: ri.spans, cur: -1}
			return nil
		}
		var ps *pointSource
		if ri.mem != nil {
			ps = &ri.mem.ps
		} else {
			x := &struct {
				ps pointSource
				ro storage.ReadOptions
			}{ro: readOptions}
			ps, ro = &x.ps, &x.ro
		}
		*ps = pointSource{r: r, ro: ro, spans: ri.spans, batch: max(p.Batch, 1)}
		if ri.mem != nil {
			ps.spare = &ri.mem.batch
		}
		if p.Mutable {
			// Read everything now, as an iterator made now would see it
			// (the plan's one batch).
			tx.mu.Lock()
			err := ps.fill(0, len(ri.spans))
			tx.mu.Unlock()
			if err != nil {
				return wrapf(err, "sqlstore: reading %s", ri.d.name)
			}
		}
		ri.src = ps
	case planner.MultiScan:
		ri.src = &multiScanSource{r: r, opts: storage.IterOptions{ReadOptions: readOptions}, spans: ri.spans, chunk: max(p.Chunk, 1)}
		ri.src.(*multiScanSource).opts.AsyncIO = p.Async
	default:
		var is *iterSource
		if ri.mem != nil {
			is = &ri.mem.is
		} else {
			is = new(iterSource)
		}
		*is = iterSource{spans: ri.spans, rev: p.Reverse, perSpan: p.IterPerRange, opener: &ri.opener}
		tune := iterTuning{readahead: p.Readahead, async: p.Async, dontFill: p.DontFillCache}
		if p.ReadaheadAfter > 0 {
			// Deferred: the iterator is reopened later, which must read
			// what the first one read (the plan is for a frozen reader).
			is.later, is.laterAfter = tune, p.ReadaheadAfter
			tune = iterTuning{}
		}
		if err := is.init(tune); err != nil {
			return wrapf(err, "sqlstore: reading %s", ri.d.name)
		}
		ri.src = is
	}
	if ri.ix.primary || ri.covered {
		return nil
	}
	if ro == nil {
		own := readOptions
		ro = &own
	}
	var f *fetcher
	if ri.mem != nil {
		f = &ri.mem.f
	} else {
		f = new(fetcher)
	}
	*f = fetcher{ri: ri, kind: p.Fetch.Kind, batch: max(p.Fetch.Batch, 1), r: r, ro: ro}
	if ri.ix.prefix != nil {
		f.runs = &prefixRuns{d: ri.d, ix: ri.ix, rev: p.Reverse}
	}
	if f.kind == planner.Scans || f.kind == planner.Empty {
		// Rows come through an iterator made now, which a rollback
		// invalidates and reopens (iter.go).
		primaryPrefix := appendIndexPrefix(nil, ri.d.id, primaryIndexID)
		var err error
		if f.pit, err = ri.opener.open(primaryPrefix, prefixEnd(primaryPrefix), iterTuning{readahead: -1}); err != nil {
			_ = ri.src.close()
			ri.src = nil
			return wrapf(err, "sqlstore: reading %s", ri.d.name)
		}
	}
	ri.fetch = f
	return nil
}

// Next implements sql.RowIter.
func (ri *rowIter) Next(ctx *sql.Context) (sql.Row, error) {
	if ri.src == nil {
		return nil, io.EOF
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ri.lk != nil {
		return ri.nextLocked(ctx)
	}
	if ri.fetch != nil {
		if ri.fetch.runs != nil {
			return ri.fetch.runs.next(ctx, ri.fetch)
		}
		return ri.fetch.next(ctx)
	}
	for {
		ok, err := ri.src.next(ctx)
		if err != nil {
			return nil, wrapf(err, "sqlstore: reading %s", ri.d.name)
		}
		if !ok {
			return nil, io.EOF
		}
		key, value, sp := ri.src.entry()
		var row sql.Row
		var found bool
		if ri.covered {
			row, found, err = ri.t.decodeCovered(ctx, key[ri.skip:], value, &ri.spans[sp], ri.ix, ri.need, &ri.full)
		} else {
			row, found, err = ri.t.decodeRow(ctx, value, &ri.spans[sp], ri.ix, &ri.full, ri.rowArena())
		}
		if err != nil {
			return nil, err
		}
		if found {
			return row, nil
		}
	}
}

// decodeRow decodes a stored row into the table's projection, after the
// span's residual checks (sp may be nil).
func (t *Table) decodeRow(ctx *sql.Context, value []byte, sp *span, ix *indexDef, scratch *sql.Row, a *codec.Arena) (sql.Row, bool, error) {
	d := t.def
	if sp != nil && len(sp.residual) > 0 {
		full, err := d.decodeRow(value, (*scratch)[:0], nil)
		if err != nil {
			return nil, false, err
		}
		*scratch = full
		ok, err := sp.matches(ctx, d, ix, full)
		if err != nil || !ok {
			return nil, false, err
		}
		if t.proj == nil {
			return append(sql.Row(nil), full...), true, nil
		}
		out := make(sql.Row, len(t.proj))
		for i, o := range t.proj {
			out[i] = full[o]
		}
		return out, true, nil
	}
	if t.proj == nil {
		row, err := d.decodeRow(value, nil, a)
		if err != nil {
			return nil, false, err
		}
		return row, true, nil
	}
	row, err := d.decodeColumns(value, t.proj, a)
	if err != nil {
		return nil, false, err
	}
	return row, true, nil
}

// Close implements sql.RowIter.
func (ri *rowIter) Close(*sql.Context) error {
	var err error
	if ri.src != nil {
		err = ri.src.close()
		ri.src = nil
	}
	if ri.fetch != nil {
		if cerr := ri.fetch.close(); err == nil {
			err = cerr
		}
		ri.fetch = nil
	}
	if ri.tx != nil {
		ri.tx.mu.Lock()
		ri.tx.readers--
		ri.tx.mu.Unlock()
		ri.tx = nil
	}
	if ri.own != nil {
		ri.own()
		ri.own = nil
	}
	if ri.arena != nil {
		ri.arena.Release() // the rows returned stay valid
		ri.arena = nil
	}
	return err
}
