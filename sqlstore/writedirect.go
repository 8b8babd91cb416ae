package sqlstore

import (
	"errors"
	"fmt"
	"io"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/strata-db/strata/mysqlcompat"
	"github.com/strata-db/strata/planner"
	"github.com/strata-db/strata/sqlstore/codec"
	"github.com/strata-db/strata/storage"
)

// Writes by primary key without GMS's iterators.
//
// A kept UPDATE or DELETE plan (writetemplate.go) still ran through GMS's
// executor: the exec builder made, at every execution, the update source,
// update, table-editor, accumulator, transaction-committing and tracking
// iterators over the plan, and the row went through each; with the
// rebuild of the plan for the execution's literals that was about half of
// a point UPDATE's CPU. When the plan is nothing but
//
//	Update -> [exactUpdate] -> UpdateSource(SET ...) -> IndexedTableAccess
//	DeleteFrom -> IndexedTableAccess
//
// over the primary key of one integer column of a table without generated
// columns (triggers, foreign keys, CHECK constraints, IGNORE, RETURNING,
// DEFAULT and ON UPDATE columns each show in the plan as a node, a field
// or an expression, and keep GMS's path), and the engine's executor is
// GMS's own, with nothing around it but builders that can hand over the
// checks they make as they build a plan without changing it (the server's
// privilege and read_only checks: mysqlcompat.DirectExec), a directWrite
// runs it, making those checks where the build would have. It binds the
// table's editor to the transaction first, once, as planning and GMS's
// editor come before any row is read: a READ ONLY transaction fails
// there, and the table's SHARED_WRITE metadata lock is taken (mdl.go; a definition changed while it was waited for
// sends the execution to planning). It then locks and reads the row as the
// table's locking scan does (locks.go), evaluates the plan's own SET
// expressions over it in order, with the execution's arguments read through argRef where the
// template's literals were, compares old and new rows under the update's
// schema and checks NOT NULL as GMS's update iterator does, writes through
// the table's editor within a statement bracket, giving it the row it read
// (no second read), and gives GMS's OK result (Rows matched / Changed,
// FOUND_ROWS, ROW_COUNT). The autocommit commit, the process list and
// statement statistics are done as GMS's wrappers and the row iterator do
// them. TestPreparedWriteMatchesPlanned compares it with full planning.

// directWrite is what runs one template by key (see above). It belongs to
// its PreparedWrite's connection.
type directWrite struct {
	kind writeKind
	tbl  *Table // the table written, unprojected
	def  *tableDef
	typ  sql.Type // the key column's type
	sets []directSet
	sch  sql.Schema // UPDATE: the schema rows compare under, GMS's updatable's
	// check is what the engine's executor would check building the plan
	// (mysqlcompat.DirectExec), nil when nothing.
	check func(*sql.Context) error

	ed       *editor // reused: its buffers carry over
	key      []byte
	old, new sql.Row
	iter     directIter
	rec      recoveringIter
}

// directSet is one assignment: the column, and the value's expression.
type directSet struct {
	field *expression.GetField
	value sql.Expression
}

// newDirect returns the directWrite of template t (plan n, learned with
// literals lits), or nil when the plan is not of the shape above.
func (p *PreparedWrite) newDirect(ctx *sql.Context, t *writeTemplate, n sql.Node, lits []*expression.Literal) *directWrite {
	check, ok := mysqlcompat.DirectExec(t.exec, n)
	if !ok {
		// The engine's executor would build another plan than n (the
		// server confines files, reads globals): the plan is built.
		return nil
	}
	rt, ok := t.ita.TableNode.(*plan.ResolvedTable)
	if !ok {
		return nil
	}
	tbl, ok := rt.UnderlyingTable().(*Table)
	ix, isOurs := t.index.(*Index)
	if !ok || !isOurs || !ix.ix.primary || tbl.readsCurrent || tbl.def == nil || tbl.def.keyless {
		return nil
	}
	def := tbl.def
	if len(rt.Schema()) != len(def.schema) || len(def.pkOrds) != 1 {
		return nil
	}
	for _, c := range def.schema {
		if c.Generated != nil || c.Virtual {
			return nil
		}
	}
	d := &directWrite{kind: p.kind, tbl: tbl.full(), def: def, typ: def.schema[def.pkOrds[0]].Type, check: check}
	switch x := n.(type) {
	case *plan.Update:
		if p.kind != writeUpdate || x.Ignore || len(x.Returning) > 0 || len(x.Checks()) > 0 {
			return nil
		}
		child := x.Child
		if c, exact := mysqlcompat.ExactUpdateChild(child); exact {
			child = c
		}
		us, ok := child.(*plan.UpdateSource)
		if !ok || us.Ignore || !sameNode(us.Child, t.ita) {
			return nil
		}
		target, err := plan.GetUpdatable(x.Child)
		if err != nil {
			return nil
		}
		d.sch = target.Schema()
		if len(d.sch) != len(def.schema) {
			return nil
		}
		// The arguments other than WHERE's, each where the plan has it
		// and nowhere else.
		inSets := make([]int, len(lits))
		for _, e := range us.UpdateExprs {
			sf, ok := e.(*expression.SetField)
			if !ok {
				return nil
			}
			gf, ok := sf.LeftChild.(*expression.GetField)
			if !ok || gf.Index() < 0 || gf.Index() >= len(def.schema) {
				return nil
			}
			if _, isDefault := sf.RightChild.(*sql.ColumnDefaultValue); isDefault {
				return nil
			}
			v, _, err := transform.Expr(sf.RightChild, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
				if l, ok := e.(*expression.Literal); ok {
					for i, s := range lits {
						if l == s {
							inSets[i]++
							return &argRef{p: p, i: i}, transform.NewTree, nil
						}
					}
				}
				return e, transform.SameTree, nil
			})
			if err != nil {
				return nil
			}
			d.sets = append(d.sets, directSet{field: gf, value: v})
		}
		found := make([]int, len(lits))
		inspectWriteExprs(n, func(e sql.Expression) bool {
			for i, s := range lits {
				if e == sql.Expression(s) {
					found[i]++
				}
			}
			return true
		})
		for i := range lits[:len(lits)-1] {
			if inSets[i] != found[i] {
				return nil
			}
		}
		if inSets[len(lits)-1] != 0 {
			return nil
		}
	case *plan.DeleteFrom:
		if p.kind != writeDelete || x.HasExplicitTargets() || !sameNode(x.Child, t.ita) || len(lits) != 1 {
			return nil
		}
	default:
		return nil
	}
	d.ed = &editor{t: d.tbl, def: def}
	return d
}

// argRef is an argument of the running execution where the template had
// the literal it was learned with: the execution's literal, of the same
// type (templates are kept per kind of literals).
type argRef struct {
	p *PreparedWrite
	i int
}

var (
	_ sql.Expression         = (*argRef)(nil)
	_ sql.CollationCoercible = (*argRef)(nil)
)

func (a *argRef) lit() *expression.Literal { return a.p.lits[a.i] }

func (a *argRef) Resolved() bool                                  { return true }
func (a *argRef) String() string                                  { return a.lit().String() }
func (a *argRef) Type() sql.Type                                  { return a.lit().Type() }
func (a *argRef) IsNullable() bool                                { return a.lit().IsNullable() }
func (a *argRef) Children() []sql.Expression                      { return nil }
func (a *argRef) Eval(ctx *sql.Context, row sql.Row) (any, error) { return a.lit().Eval(ctx, row) }

func (a *argRef) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return a.lit().CollationCoercibility(ctx)
}

func (a *argRef) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(a, len(children), 0)
	}
	return a, nil
}

// errNotDirect: the execution goes to the template's GMS path.
var errNotDirect = errors.New("sqlstore: not run directly")

// runDirect starts an execution of template t by key, as run starts one
// on the template's plan: errStalePlan when the template no longer serves,
// errNotDirect when this execution needs GMS's path (a statement text
// whose locking the scan would read differently).
func (p *PreparedWrite) runDirect(ctx *sql.Context, e *sqle.Engine, t *writeTemplate, query string) (schema sql.Schema, iter sql.RowIter, err error) {
	defer recoverInto(&err, query)
	d := t.direct
	if sl := stmtLockingOf(ctx); sl.locking || !sl.locks {
		// A statement text read otherwise than as an UPDATE or DELETE.
		return nil, nil, errNotDirect
	}
	v, ok := literalInt(p.lits[len(p.lits)-1].Value())
	if !ok || !intFits(ctx, t.typ, v) {
		return nil, nil, errStalePlan
	}
	if err := startDirect(ctx, e, t.version, d.check, d.ed, d.def, query); err != nil {
		return nil, nil, err
	}
	it := &d.iter
	if it.busy() {
		// A result of this statement is still open (Query): a fresh one.
		it = &directIter{}
	}
	*it = directIter{d: d, v: v}
	rec := &d.rec
	if it != &d.iter {
		rec = &recoveringIter{}
	}
	*rec = recoveringIter{RowIter: it, query: query}
	d.tbl.store.directWrites.Add(1)
	return types.OkResultSchema, rec, nil
}

// startDirect begins a direct write's statement (this file's, and
// insertdirect.go's) as building its plan would: the statement started,
// the plan checked to serve the transaction's catalog (errStalePlan: the
// execution is planned afresh), the engine's read-only state and the
// executor's checks (the server's read_only) before any row is touched,
// then the table's editor bound as planning and GMS's editor bind it: a
// READ ONLY transaction's error first, then the table's SHARED_WRITE
// metadata lock (mdl.go), after which the definition locked must be the
// one the plan was made for.
func startDirect(ctx *sql.Context, e *sqle.Engine, version uint64, check func(*sql.Context) error, ed *editor, def *tableDef, query string) error {
	if err := startStatement(ctx); err != nil {
		return err
	}
	tx := txnOf(ctx)
	if tx == nil {
		return errStalePlan
	}
	if v, current := tx.catalogVersion(); !current || v != version {
		return errStalePlan
	}
	if e.IsReadOnly() || e.IsServerLocked {
		clearAutocommit(ctx)
		return StatementError(query, sql.ErrReadOnly.New())
	}
	if check != nil {
		if err := check(ctx); err != nil {
			clearAutocommit(ctx)
			return StatementError(query, err)
		}
	}
	ed.retryLock()
	if err := ed.bind(ctx); err != nil {
		clearAutocommit(ctx)
		return StatementError(query, err)
	}
	if ed.def != def {
		return errStalePlan // changed while its lock was waited for
	}
	return nil
}

// DirectWrites returns how many executions of kept UPDATEs and DELETEs by
// key and single-row INSERTs the store ran without GMS's iterators
// (writedirect.go, insertdirect.go), for tests of its callers.
func (s *Store) DirectWrites() int64 { return s.directWrites.Load() }

// directIter is the result of one execution: the write is made at the
// first Next, which returns its OK row; Close commits an autocommit
// statement and ends the query in the process list.
type directIter struct {
	d      *directWrite
	v      int64 // the key
	ran    bool
	closed bool
	row    [1]any
}

// busy reports whether it is the result of an execution, not closed yet.
func (it *directIter) busy() bool { return it.d != nil && !it.closed }

func (it *directIter) Next(ctx *sql.Context) (sql.Row, error) {
	if it.ran {
		return nil, io.EOF
	}
	it.ran = true
	res, err := it.d.exec(ctx, it.v)
	if err != nil {
		return nil, err
	}
	if ok, isOK := res.(types.OkResult); isOK && ctx.Session.WarningCount() > 0 {
		// The info line counts the statement's warnings (values adjusted
		// out of strict mode), as GMS's path does (mysqlcompat/updateinfo.go).
		if info, isUpdate := ok.Info.(plan.UpdateInfo); isUpdate {
			info.Warnings = int(ctx.Session.WarningCount())
			ok.Info = info
			res = ok
		}
	}
	it.row[0] = res
	return it.row[:], nil
}

// okUpdate and okDelete are the OK results of writes by key, boxed once
// (a result boxed at every execution was an allocation of each):
// okUpdate[matched][changed][affected], okDelete[affected].
var okUpdate, okDelete = func() (u [2][2][2]any, d [2]any) {
	for m := range 2 {
		for c := range 2 {
			for a := range 2 {
				u[m][c][a] = types.OkResult{RowsAffected: uint64(a), Info: plan.UpdateInfo{Matched: m, Updated: c}}
			}
		}
		d[m] = types.NewOkResult(m)
	}
	return u, d
}()

// Close does what GMS's transaction-committing and tracking iterators do
// at the end of a statement.
func (it *directIter) Close(ctx *sql.Context) error {
	if it.closed {
		return nil
	}
	it.closed = true
	var err error
	if sess, ok := ctx.Session.(*Session); ok && sess.Autocommitting(ctx) {
		if tx := ctx.GetTransaction(); tx != nil {
			if err = sess.CommitTransaction(ctx, tx); err == nil {
				ctx.SetTransaction(nil)
			}
		}
	}
	endStatement(ctx)
	return err
}

// exec makes the write of key v in a statement bracket of the editor, as
// GMS's table-editor iterator brackets it, and returns its OK result.
func (d *directWrite) exec(ctx *sql.Context, v int64) (any, error) {
	return d.ed.runStatement(ctx, func() (any, error) { return d.write(ctx, v) })
}

// runStatement makes do's writes in a statement bracket of the editor, as
// GMS's table-editor iterator brackets them, binding the editor again
// first when another statement ended the transaction it was bound to
// before the result was read; a failed or cancelled statement's writes
// are undone. It returns do's result (the direct paths' OK result).
func (ed *editor) runStatement(ctx *sql.Context, do func() (any, error)) (any, error) {
	if tx := txnOf(ctx); tx != ed.tx || tx.isDone() {
		if err := ed.bind(ctx); err != nil {
			return nil, err
		}
	}
	ed.err = nil
	ed.openStatement()
	res, err := do()
	if err == nil {
		select {
		case <-ctx.Done():
			err = ctx.Err()
		default:
		}
	}
	if err != nil {
		_ = ed.DiscardChanges(ctx, err)
		_ = ed.Close(ctx)
		return nil, err
	}
	err = ed.StatementComplete(ctx)
	if cerr := ed.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// oneRange stands for the one key of a point write's access plan.
var oneRange [1]planner.KeyRange

// write locks and reads the row of key v, and updates or deletes it, in
// the transaction the editor is bound to.
func (d *directWrite) write(ctx *sql.Context, v int64) (any, error) {
	tx := d.ed.tx
	def := d.def
	key := appendIndexPrefix(d.key[:0], def.id, primaryIndexID)
	key, ok := codec.AppendIntKey(key, d.typ, v, codec.Asc)
	if !ok {
		return nil, fmt.Errorf("sqlstore: table %s: key %d does not fit its column", def.name, v)
	}
	d.key = key
	value, found, err := d.read(ctx, tx, key)
	if err != nil {
		return nil, err
	}
	var matched, changed int
	if found {
		old, err := def.decodeRow(value, d.old[:0], nil)
		if err != nil {
			return nil, err
		}
		d.old = old
		matched = 1
		if d.kind == writeDelete {
			pk := key[indexPrefixLen(def.id, primaryIndexID):]
			if err := d.ed.remove(old, pk, key, len(value)); err != nil {
				return nil, err
			}
		} else if changed, err = d.update(ctx, old, key, len(value)); err != nil {
			return nil, err
		}
	}
	if d.kind == writeDelete {
		ctx.SetLastQueryInfoInt(sql.RowCount, int64(matched))
		return okDelete[matched], nil
	}
	affected := changed
	if ctx.Client().Capabilities&mysql.CapabilityClientFoundRows != 0 {
		affected = matched
	}
	ctx.SetLastQueryInfoInt(sql.FoundRows, int64(matched))
	ctx.SetLastQueryInfoInt(sql.RowCount, int64(affected))
	return okUpdate[matched][changed][affected], nil
}

// read reads the row under key as the table's scan of a point lookup
// reads it for this statement: in a pessimistic transaction locked
// exclusively and read at the latest state plus the transaction's writes
// up to the statement's boundary (noted for the editor, locks.go), else
// from the statement view.
func (d *directWrite) read(ctx *sql.Context, tx *txn, key []byte) ([]byte, bool, error) {
	if st := stmtStatsOf(ctx); st != nil {
		tx.mu.Lock()
		mutable := tx.mutableLocked(true, -1)
		tx.mu.Unlock()
		st.record(d.def.name, planner.Plan{Kind: planner.Get, Ranges: oneRange[:], Mutable: mutable})
	}
	lk, locks := statementLock(ctx, tx)
	if locks {
		if err := tx.lockKey(ctx, lk.opts, key); err != nil {
			return nil, false, err
		}
	}
	tx.mu.Lock()
	defer tx.mu.Unlock()
	r, _, err := tx.readerLocked(true, -1)
	if err != nil {
		return nil, false, wrapf(err, "sqlstore: reading %s", d.def.name)
	}
	if locks {
		r = tx.locker.LatestView()
	}
	value, found, err := getFound(r, key)
	if err != nil {
		return nil, false, wrapf(err, "sqlstore: reading %s", d.def.name)
	}
	if locks && lk.opts.Mode == storage.LockExclusive {
		tx.noteLockedRead(value, tx.tx.Count())
	}
	return value, found, nil
}

// update computes the new row from old (stored under key, size bytes) as
// GMS's update source does, and writes it when it differs, as GMS's update
// iterator does; changed is 1 when it did.
func (d *directWrite) update(ctx *sql.Context, old sql.Row, key []byte, size int) (changed int, err error) {
	row := append(d.new[:0], old...)
	d.new = row
	for _, s := range d.sets {
		// SetField.Eval, without its copy of the row.
		val, err := s.value.Eval(ctx, row)
		if err != nil {
			return 0, err
		}
		idx := s.field.Index()
		if val != nil {
			conv, _, err := s.field.Type().Convert(ctx, val)
			if err != nil {
				if types.ErrLengthBeyondLimit.Is(err) {
					return 0, sql.NewWrappedTypeConversionError(val, idx, types.ErrLengthBeyondLimit.New(val, s.field.Name()))
				}
				return 0, sql.NewWrappedTypeConversionError(val, idx, err)
			}
			val = conv
		}
		row[idx] = val
	}
	equal, err := old.Equals(ctx, row, d.sch)
	if err != nil {
		return 0, err
	}
	if equal {
		return 0, nil
	}
	for i, c := range d.sch {
		if !c.Nullable && row[i] == nil {
			return 0, sql.ErrInsertIntoNonNullableProvidedNull.New(c.Name)
		}
	}
	if err := d.ed.updateStored(ctx, old, row, key, size); err != nil {
		return 0, err
	}
	return 1, nil
}
