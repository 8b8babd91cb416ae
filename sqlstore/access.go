package sqlstore

import (
	"math"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/shopspring/decimal"
	"github.com/strata-db/strata/planner"
	"github.com/strata-db/strata/storage"
)

// Access paths. Every read of table data goes through a planner.Plan,
// chosen when the row iterator is made (scan.go), once its reader is known,
// and run as chosen: an index lookup's from the planner's input that
// LookupPartitions prepared (planLookup, lookupPlan.choose), a full table
// scan's in PartitionRows (planScan). The plans:
//
//	Get, MultiGet   the spans' start keys, through storage.Reader.Get or
//	                storage.MultiGetter in batches, in the lookup's order
//	Range, FullScan one iterator with the plan's readahead and async I/O
//	Scans           one iterator, sought to each span in turn
//	MultiScan       storage.MultiScanner over chunks of spans
//	Fetch           for a secondary index that does not cover the query,
//	                the rows by primary key: MultiGet in batches, in index
//	                order (or one Get per row)
//
// The planner's input comes from the spans: a span is a point for the
// planner when it is an exact point of a unique index (at most one entry),
// and its size is estimated from the table's row count and bytes
// (rowCounters) and, for a range over an integer column that ends a unique
// key, from the width of its bounds. A single range whose size that leaves
// unknown gets the bytes of table data it spans (the engine's
// storage.SizeEstimator; the embedded engine reads them from its tables'
// indexes). Other sizes are unknown, which the planner treats as short
// enough for automatic readahead.
//
// Reads see the transaction as iterators do (iter.go): the snapshot, plus
// the statement view or all its writes. When what they read cannot change
// while the statement runs (the snapshot alone, which is every read of a
// transaction that has not written yet, or a cursor's private view), point
// reads are batched lazily and ranges may be prepared as a MultiScan. When
// it can (the statement view of a transaction that wrote, or all its
// writes for foreign key checks), the planner is told so
// (planner.Hints.Mutable) and plans reads that happen at once: points read
// when the iterator is made, in one batch, fetches through an iterator
// made at the same moment, Scans instead of a MultiScan, readahead not
// deferred. Reads then see the transaction exactly as of that moment, and a
// rollback (after which the reader's iterators must not be used) cannot
// reach them.
// EXPLAIN plans with what the statement's transaction is when it runs
// (readerMutable), so it shows the plans that run, in a transaction that
// has written too.

// Access modes of the strata_access session variable.
const (
	accessDefault = "default" // the store's Options.Access.Mode
	accessPlanned = "planned"
	accessNaive   = "naive"
)

// accessVar is the session variable that overrides the store's access
// mode for a session: SET strata_access = 'naive'.
const accessVar = "strata_access"

// plannerVar is the session variable that sets the planner's thresholds
// for a session, as planner.ParseOptions reads them:
// SET strata_planner = 'multiget_batch=64,long_range=1MiB'. Thresholds it
// does not name are the store's; the empty string (the default) names
// none. A value that does not parse is refused by the SET, with 1231.
const plannerVar = "strata_planner"

// accessOptions returns the planner options for a statement of ctx: the
// store's, with the session's strata_access mode and strata_planner
// thresholds when they are set.
func (s *Store) accessOptions(ctx *sql.Context) planner.Options {
	o := s.opts.Access
	if ctx == nil || ctx.Session == nil {
		return o
	}
	access, accessErr := any(nil), error(nil)
	thresholds, thresholdsErr := any(nil), error(nil)
	if sess, ok := ctx.Session.(*Session); ok {
		v := sess.vars(ctx)
		access, accessErr, thresholds, thresholdsErr = v.access, v.accessErr, v.planner, v.plannerErr
	} else {
		access, accessErr = ctx.GetSessionVariable(ctx, accessVar)
		thresholds, thresholdsErr = ctx.GetSessionVariable(ctx, plannerVar)
	}
	if v, err := access, accessErr; err == nil {
		switch v {
		case accessPlanned:
			o.Mode = planner.Planned
		case accessNaive:
			o.Mode = planner.Naive
		}
	}
	if v, err := thresholds, thresholdsErr; err == nil {
		if text, _ := v.(string); text != "" {
			o = sessionThresholds(ctx, text, o)
		}
	}
	return o
}

// parsedThresholds caches a session's last strata_planner value parsed
// over the store's options: sessions set it rarely and read it at every
// lookup.
type parsedThresholds struct {
	text string
	base planner.Options
	o    planner.Options
}

// sessionThresholds returns base with the thresholds of text, which the
// SET that stored it has already checked.
func sessionThresholds(ctx *sql.Context, text string, base planner.Options) planner.Options {
	sess, _ := ctx.Session.(*Session)
	if sess != nil {
		if c := sess.thresholds.Load(); c != nil && c.text == text && c.base == base {
			return c.o
		}
	}
	o, err := planner.ParseOptions(text, base)
	if err != nil {
		return base
	}
	if sess != nil {
		sess.thresholds.Store(&parsedThresholds{text: text, base: base, o: o})
	}
	return o
}

// checkThresholds is strata_planner's check at SET time.
func checkThresholds(_ *sql.Context, _ sql.SystemVariableScope, v sql.SystemVarValue) error {
	text, _ := v.Val.(string)
	if _, err := planner.ParseOptions(text, planner.Options{}); err != nil {
		return mysql.NewSQLError(mysql.ERWrongValueForVar, "42000", "Variable '%s' can't be set to the value of '%s' (%s)", plannerVar, text, strings.TrimPrefix(err.Error(), "planner: "))
	}
	return nil
}

// accessInput is the planner's input for an encoded lookup, but for
// whether its reader can change, which is known when it runs.
type accessInput struct {
	ranges []planner.KeyRange
	idx    planner.Index
	opts   *planner.Options // the statement's, which do not change
}

// choose returns the read path of lp for a reader that can change under
// the statement (mutable) or not: the plan that runs.
func (lp *lookupPlan) choose(mutable bool) planner.Plan {
	a := &lp.access
	return planner.Choose(a.ranges, a.idx, planner.Hints{Reverse: lp.reverse, Probe: lp.probe, Mutable: mutable}, *a.opts)
}

// planLookup prepares the planner's input for an encoded lookup on table
// d (lp.access, from which lp.choose chooses the read path); covering: the
// entries of the lookup's secondary index hold all the query needs
// (covering.go).
func (s *Store) planLookup(ctx *sql.Context, d *tableDef, lp *lookupPlan, covering bool, o *planner.Options) {
	ix := lp.ix
	rows, bytes, known := s.counters.estimate(d.id)
	entryBytes := int64(0)
	if known && rows > 0 {
		entryBytes = max(bytes/rows, 1)
	}
	ranges := make([]planner.KeyRange, len(lp.spans))
	for i := range lp.spans {
		sp := &lp.spans[i]
		r := &ranges[i]
		if sp.whole {
			r.Start, r.End = nil, nil
		} else {
			r.Start, r.End = sp.start, sp.end
		}
		r.Point = sp.point && (ix.primary || ix.unique)
		if !known {
			continue
		}
		per := entryBytes
		if !ix.primary {
			// An index entry: the span's prefix plus a primary key.
			per = int64(2*len(sp.start)) + 8
		}
		if n := spanRows(ctx, d, ix, sp, rows); n > 0 {
			r.EstBytes = n * per
		}
	}
	if len(ranges) == 1 && !ranges[0].Point && ranges[0].EstBytes == 0 && !lp.spans[0].whole && !lp.probe && !lp.reverse {
		// One range of unknown size (open-ended, over strings, over a
		// secondary index): the bytes of table data it spans, from the
		// tables' indexes, decide its readahead.
		if s.sizes != nil {
			if n, err := s.sizes.ApproximateSize(lp.spans[0].start, lp.spans[0].end); err == nil && n > 0 {
				ranges[0].EstBytes = n
			}
		}
	}
	idx := planner.Index{Primary: ix.primary, Unique: ix.primary || ix.unique, Covering: ix.primary || covering}
	lp.access = accessInput{ranges: ranges, idx: idx, opts: o}
}

// planScan returns the read path of a full scan of table d, for a reader
// that can change under the statement (mutable) or not.
func (s *Store) planScan(d *tableDef, o planner.Options, mutable bool) planner.Plan {
	r := []planner.KeyRange{{}}
	if _, bytes, known := s.counters.estimate(d.id); known {
		r[0].EstBytes = max(bytes, 1)
	}
	return planner.Choose(r, planner.Index{Primary: true, Unique: true, Covering: true}, planner.Hints{Mutable: mutable}, o)
}

// nonUniquePointRows is the guess at the entries of one value of a
// non-unique index (an equality on a secondary index is usually
// selective; nothing better is known without a histogram).
const nonUniquePointRows = 16

// spanRows estimates the entries of a span: 1 for a point of a unique
// index, nonUniquePointRows for a point of a non-unique one, every row for
// the whole index, the width of the bounds for a range over an integer
// column that ends a unique key (each value is at most one row), and 0
// (unknown) otherwise.
func spanRows(ctx *sql.Context, d *tableDef, ix *indexDef, sp *span, rows int64) int64 {
	unique := ix.primary || ix.unique
	switch {
	case sp.whole:
		return rows
	case sp.point && unique:
		return 1
	case sp.point:
		return min(nonUniquePointRows, max(rows, 1))
	case sp.rangeCol < 0 || !unique || sp.rangeCol != len(ix.cols)-1:
		return 0
	}
	col := d.schema[ix.cols[sp.rangeCol]]
	if !types.IsInteger(col.Type) {
		return 0
	}
	if sp.rng == nil {
		return int64(min(sp.width, float64(max(rows, 1))))
	}
	ce := sp.rng[sp.rangeCol]
	var lo, hi float64
	switch c := ce.LowerBound.(type) {
	case sql.Below:
		v, ok := toFloat(c.Key)
		if !ok {
			return 0
		}
		lo = math.Ceil(v)
	case sql.Above:
		v, ok := toFloat(c.Key)
		if !ok {
			return 0
		}
		lo = math.Floor(v) + 1
	default:
		return 0
	}
	switch c := ce.UpperBound.(type) {
	case sql.Above:
		v, ok := toFloat(c.Key)
		if !ok {
			return 0
		}
		hi = math.Floor(v)
	case sql.Below:
		v, ok := toFloat(c.Key)
		if !ok {
			return 0
		}
		hi = math.Ceil(v) - 1
	default:
		return 0
	}
	if hi < lo {
		return 0
	}
	return int64(min(hi-lo+1, float64(max(rows, 1))))
}

// toFloat converts a numeric range key.
func toFloat(v any) (float64, bool) {
	switch v := v.(type) {
	case int8:
		return float64(v), true
	case int16:
		return float64(v), true
	case int32:
		return float64(v), true
	case int64:
		return float64(v), true
	case int:
		return float64(v), true
	case uint8:
		return float64(v), true
	case uint16:
		return float64(v), true
	case uint32:
		return float64(v), true
	case uint64:
		return float64(v), true
	case float32:
		return float64(v), true
	case float64:
		return v, !math.IsNaN(v)
	case decimal.Decimal:
		return v.InexactFloat64(), true
	}
	return 0, false
}

// estimate returns a table's committed row count and bytes, exact or
// approximate; known is false until either was taken (the first lookup
// after Open approximates the count from the engine, a RowCount
// establishes it).
func (c *rowCounters) estimate(id uint64) (rows, bytes int64, known bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rc, ok := c.m[id]
	if !ok || !rc.valued() {
		return 0, 0, false
	}
	return max(rc.rows, 0), max(rc.bytes, 0), true
}

// readerMutable reports whether the reader of a statement of ctx, reading
// the statement view (onView) or the transaction's batch, can change under
// the statement: what readerLocked would say of it now, without making it.
// EXPLAIN plans with it.
func (s *Store) readerMutable(ctx *sql.Context, onView bool) bool {
	t := txnOf(ctx)
	if t == nil || t.store != s {
		return false // a read-only transaction of its own (view)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mutableLocked(onView, -1)
}

// mutableLocked reports whether the reader readerLocked returns for onView
// and at can change under the statement (readerLocked's frozen is its
// negation).
// REQUIRES: t.mu held.
func (t *txn) mutableLocked(onView bool, at int) bool {
	switch {
	case t.done:
		return false
	case !onView:
		return true
	case at >= 0 && at < t.boundary:
		return false
	}
	// AdvanceView at 0 is the snapshot alone.
	return t.boundary > 0
}

// readerLocked returns what a statement's point reads and prepared scans
// read as of statement view boundary at (-1: the last), with onView, or the
// whole transaction without: the reader, and whether it stays as it is for as
// long as the transaction lives (see the top of this file). REQUIRES: t.mu
// held.
func (t *txn) readerLocked(onView bool, at int) (r storage.Reader, frozen bool, err error) {
	frozen = !t.mutableLocked(onView, at)
	switch {
	case t.done:
		return t.tx.Snapshot(), frozen, nil
	case !onView && t.locker != nil:
		// A pessimistic foreign key check reads the latest (locks.go).
		return t.tx.Current(), frozen, nil
	case !onView:
		return t.tx, frozen, nil
	case at >= 0 && at < t.boundary:
		r, err = t.tx.ViewAt(at)
		return r, frozen, err
	}
	r, err = t.tx.AdvanceView(t.boundary)
	return r, frozen, err
}
