package sqlstore

import (
	"bytes"
	"errors"
	"slices"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/strata-db/strata/storage"
)

// An INSERT's duplicate-key checks, read in one batch.
//
// The editor checks each row's primary key, and each unique key, before it
// writes the row: one read per key at the latest state (a pessimistic
// transaction) or at the transaction's snapshot, through its writes. GMS
// hands the editor one converted row at a time, so the editor cannot batch
// those reads by itself. For an INSERT ... VALUES of literals, though, the
// exec builder sees the whole VALUES list before the first row is inserted
// (noteInsert); at its first row the editor works out the keys the rows will
// most likely have (the literals converted to the columns' types), reads
// them all with one MultiGet, and then answers a row's check from that read
// when the row's key is the one foreseen.
//
// The keys foreseen are a guess; what makes an answer right is checked at
// each use, and any doubt sends the check back to its own read:
//
//   - the key computed from the row GMS hands over must equal the key
//     foreseen for that row (the rows come in VALUES order, one Insert
//     each; a row that did not reach the editor, or reached it twice, as
//     REPLACE retries, breaks the order and ends the batch);
//   - nothing but this editor's own inserts wrote to the transaction since
//     the batch was read (its write count is the one expected: a trigger's
//     write, a REPLACE's delete, an ON DUPLICATE KEY UPDATE's update or a
//     rolled-back row end the batch);
//   - a key foreseen for two rows of the statement is read again at the
//     second (the first may have written it);
//   - when the check reads the latest state, nothing was committed since
//     the batch was read (storage.Engine.LastVersion unchanged). The check
//     comes after the row's key is locked, so a commit a lock wait let in is
//     seen.
//
// Not for a store whose engine others share (Options.SharedCatalog): its
// LastVersion is a round trip and other processes commit all the time.

var (
	errTxnFinished = errors.New("sqlstore: transaction already finished")
	errNoMultiGet  = errors.New("sqlstore: the engine reads one key at a time")
)

// insertHint is what the exec builder saw of an INSERT: its plan, for the
// query (ctx.Pid) that built it. The first editor of that query and table
// to insert takes it.
type insertHint struct {
	pid  uint64
	node *plan.InsertInto
}

// noteInsert records an INSERT ... VALUES of literals for the editor that
// will insert its rows (called by the exec builder before GMS builds n).
func noteInsert(ctx *sql.Context, n *plan.InsertInto) {
	s, ok := ctx.Session.(*Session)
	if !ok {
		return
	}
	s.insertHint = insertHint{}
	if s.store.opts.SharedCatalog || s.noPrefetch {
		return
	}
	if _, _, ok := valuesOf(n); !ok {
		return
	}
	s.insertHint = insertHint{pid: ctx.Pid(), node: n}
}

// valuesOf returns the projection onto the table's columns and the VALUES
// under an INSERT's source, seen through wrappers that change nothing of
// the rows (mysqlcompat's row counter).
func valuesOf(n *plan.InsertInto) (*plan.Project, *plan.Values, bool) {
	src := n.Source
	for {
		w, ok := src.(interface{ Wrapped() sql.Node })
		if !ok {
			break
		}
		src = w.Wrapped()
	}
	p, ok := src.(*plan.Project)
	if !ok {
		return nil, nil, false
	}
	v, ok := p.Child.(*plan.Values)
	return p, v, ok
}

// insertPrefetch holds the duplicate-key reads of a statement's rows. Slot
// r*len(ixs)+j is row r's key in index ixs[j] (the primary index first):
// the key (nil when a NULL keeps the entry out of the unique check), its
// value as read (nil: absent) and whether the read still answers (false for
// a key an earlier row of the statement has too).
type insertPrefetch struct {
	tx     *txn // the transaction read
	ixs    []*indexDef
	rows   int
	keys   [][]byte
	vals   [][]byte
	known  []bool
	latest bool   // the reads were of the latest state
	at     uint64 // LastVersion before they were made (when latest)
	count  int    // the transaction's write count they are valid at
	next   int    // the rows Insert has seen (the current one is next-1)
}

// startPrefetch takes the statement's hint, when it is for this editor's
// table, and reads the keys of the rows it foresees. It never fails: without
// a batch, every check reads on its own.
func (e *editor) startPrefetch(ctx *sql.Context) {
	s, ok := ctx.Session.(*Session)
	if !ok || s.insertHint.node == nil {
		return
	}
	h := s.insertHint
	if h.pid != ctx.Pid() {
		s.insertHint = insertHint{}
		return
	}
	ins, err := plan.GetInsertable(h.node.Destination)
	if err != nil {
		return
	}
	t, ok := sql.GetUnderlyingTable(ins).(*Table)
	if !ok || t.def.id != e.def.id || e.def.keyless {
		return
	}
	s.insertHint = insertHint{}
	proj, values, _ := valuesOf(h.node)
	if len(values.ExpressionTuples) < 2 || len(proj.Projections) != len(e.def.schema) {
		return
	}
	pf := e.foresee(ctx, proj.Projections, values.ExpressionTuples)
	if pf == nil || pf.rows < 2 {
		return
	}
	pf.tx = e.tx
	if e.tx.readPrefetch(e.t.store.engine, pf) == nil {
		e.pf, e.pfSess = pf, s
	}
}

// foresee works out the keys of the rows of tuples in the primary index and
// in every unique index whose columns the rows give as literals. It stops at
// the first row whose primary key it cannot foresee.
func (e *editor) foresee(ctx *sql.Context, projs []sql.Expression, tuples [][]sql.Expression) *insertPrefetch {
	d := e.def
	// src[o] is the tuple ordinal giving column o (-1: none), auto the
	// columns that take an auto-increment value for NULL or 0.
	src := make([]int, len(d.schema))
	auto := make([]bool, len(d.schema))
	for o, p := range projs {
		src[o] = -1
		if ai, ok := p.(*expression.AutoIncrement); ok {
			p, auto[o] = ai.Child, true
		}
		if gf, ok := p.(*expression.GetField); ok {
			src[o] = gf.Index()
		}
	}
	given := func(ix *indexDef) bool {
		for _, o := range ix.cols {
			if src[o] < 0 {
				return false
			}
		}
		return true
	}
	if !given(d.primary) {
		return nil
	}
	pf := &insertPrefetch{ixs: []*indexDef{d.primary}}
	for _, ix := range d.secondary {
		if ix.unique && given(ix) {
			pf.ixs = append(pf.ixs, ix)
		}
	}
	// The columns to convert: those of the indexes read.
	var cols []int
	for _, ix := range pf.ixs {
		for _, o := range ix.cols {
			if !slices.Contains(cols, o) {
				cols = append(cols, o)
			}
		}
	}
	pkCol := make([]bool, len(d.schema))
	for _, o := range d.pkOrds {
		pkCol[o] = true
	}
	row := make(sql.Row, len(d.schema))
	var arena []byte
	var ends []int // end of each slot's key in arena; -1: no key
	pf.keys = make([][]byte, 0, len(tuples)*len(pf.ixs))
rows:
	for _, tuple := range tuples {
		for _, o := range cols {
			i := src[o]
			if i >= len(tuple) {
				break rows
			}
			lit, ok := tuple[i].(*expression.Literal)
			if !ok {
				break rows
			}
			v := lit.Value()
			if v != nil {
				conv, inRange, err := d.schema[o].Type.Convert(ctx, v)
				if err != nil || !inRange {
					break rows
				}
				v = conv
			}
			if (auto[o] || pkCol[o]) && (v == nil || (auto[o] && isZeroNumber(v))) {
				break rows
			}
			row[o] = v
		}
		start := len(ends)
		mark := len(arena)
		for j, ix := range pf.ixs {
			var err error
			slotStart := len(arena)
			if j == 0 {
				arena = appendIndexPrefix(arena, d.id, primaryIndexID)
				arena, err = d.appendPK(arena, row)
			} else {
				var hasNull bool
				arena = appendIndexPrefix(arena, d.id, ix.id)
				arena, hasNull, err = d.appendIndexCols(arena, ix, row)
				if hasNull && err == nil {
					arena = arena[:slotStart]
					ends = append(ends, -1)
					continue
				}
			}
			if err != nil {
				arena, ends = arena[:mark], ends[:start]
				break rows
			}
			ends = append(ends, len(arena))
		}
		pf.rows++
	}
	last := 0
	for _, end := range ends {
		if end < 0 {
			pf.keys = append(pf.keys, nil)
			continue
		}
		pf.keys = append(pf.keys, arena[last:end:end])
		last = end
	}
	pf.known = make([]bool, len(pf.keys))
	for i := range pf.known {
		pf.known[i] = true
	}
	pf.markRepeats()
	return pf
}

// isZeroNumber reports whether v is a numeric zero, which, like NULL, asks
// an auto-increment column for its next value.
func isZeroNumber(v any) bool {
	switch x := v.(type) {
	case int8:
		return x == 0
	case int16:
		return x == 0
	case int32:
		return x == 0
	case int64:
		return x == 0
	case uint8:
		return x == 0
	case uint16:
		return x == 0
	case uint32:
		return x == 0
	case uint64:
		return x == 0
	case int:
		return x == 0
	case uint:
		return x == 0
	}
	return true // not an integer: not foreseen
}

// markRepeats marks unknown every slot whose key an earlier row of the same
// index has: that row may write it before the later one is checked. Keys
// that rise row by row (a load's primary keys) are told by one pass.
func (pf *insertPrefetch) markRepeats() {
	n := len(pf.ixs)
	var order []int
	for j := range n {
		rising := true
		var prev []byte
		for r := range pf.rows {
			k := pf.keys[r*n+j]
			if k == nil {
				continue
			}
			if prev != nil && bytes.Compare(prev, k) >= 0 {
				rising = false
				break
			}
			prev = k
		}
		if rising {
			continue
		}
		order = order[:0]
		for r := range pf.rows {
			if pf.keys[r*n+j] != nil {
				order = append(order, r*n+j)
			}
		}
		// Equal keys sort by row, so all but the first of a run are repeats.
		slices.SortFunc(order, func(a, b int) int {
			if c := bytes.Compare(pf.keys[a], pf.keys[b]); c != 0 {
				return c
			}
			return a - b
		})
		for i := 1; i < len(order); i++ {
			if bytes.Equal(pf.keys[order[i-1]], pf.keys[order[i]]) {
				pf.known[order[i]] = false
			}
		}
	}
}

// readPrefetch reads pf's keys as getRowValue would read each: the latest
// state with the transaction's writes in a pessimistic transaction, its
// snapshot with them otherwise. It fails when the reader cannot read many
// keys at once.
func (t *txn) readPrefetch(engine storage.Engine, pf *insertPrefetch) error {
	keys := make([][]byte, 0, len(pf.keys))
	for _, k := range pf.keys {
		if k != nil {
			keys = append(keys, k)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return errTxnFinished
	}
	var r storage.Reader = t.tx
	if t.locker != nil {
		pf.latest = true
		pf.at = engine.LastVersion()
		r = t.tx.Current()
	}
	mg, ok := r.(storage.MultiGetter)
	if !ok {
		return errNoMultiGet
	}
	got, err := mg.MultiGet(keys, nil, nil)
	if err != nil {
		return err
	}
	pf.vals = make([][]byte, len(pf.keys))
	i := 0
	for s, k := range pf.keys {
		if k != nil {
			pf.vals[s] = got[i]
			i++
		}
	}
	pf.count = t.tx.Count()
	return nil
}

// prefetched answers the check of the current row's key in pf.ixs[j]
// (key nil: the row has no entry to check there) when the batch read still
// answers it; ok false drops the batch, and the caller reads on its own.
func (e *editor) prefetched(j int, key []byte) (value []byte, found, ok bool) {
	pf := e.pf
	if pf == nil || j < 0 {
		return nil, false, false
	}
	r := pf.next - 1
	slot := r*len(pf.ixs) + j
	if r >= pf.rows || pf.tx != e.tx || !bytes.Equal(pf.keys[slot], key) || (key == nil) != (pf.keys[slot] == nil) ||
		e.tx.writeCount() != pf.count || (pf.latest && e.t.store.engine.LastVersion() != pf.at) {
		e.pf = nil
		return nil, false, false
	}
	if !pf.known[slot] {
		return nil, false, false
	}
	e.pfSess.prefetched++
	v := pf.vals[slot]
	return v, v != nil, true
}

// prefetchIndex returns the position of ix among the indexes pf read, or -1.
func (pf *insertPrefetch) prefetchIndex(ix *indexDef) int {
	if pf == nil {
		return -1
	}
	for j, x := range pf.ixs {
		if x == ix {
			return j
		}
	}
	return -1
}

// writeCount returns the number of writes the transaction holds.
func (t *txn) writeCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tx.Count()
}
