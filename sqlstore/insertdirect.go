package sqlstore

import (
	"io"
	"unicode/utf8"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	sqltypes "github.com/dolthub/vitess/go/sqltypes"

	"github.com/strata-db/strata/mysqlcompat"
)

// A single-row INSERT without GMS's iterators.
//
// A kept INSERT plan (writetemplate.go) ran through GMS's executor at every
// execution: the plan rebuilt around the execution's literals, then the
// insert, table-editor, accumulator, transaction-committing, tracking and
// expression-closing iterators built over it, the last two walking the
// whole plan (the destination's column defaults wrapped anew each time).
// For one row of arguments that was most of the statement's allocations.
// When the plan is nothing but
//
//	InsertInto -> InsertDestination -> ResolvedTable
//	           \_ [row counter] -> Project(columns) -> Values(?, ?, ...)
//
// into a table of ours with a primary key, the row given wholly by the
// arguments, and each column taken from an argument, its AUTO_INCREMENT
// wrapper or a literal default (no trigger, foreign key, CHECK, generated
// column, expression default, IGNORE, REPLACE, ON DUPLICATE KEY UPDATE or
// RETURNING: each shows in the plan as a node or an expression, and keeps
// GMS's path), and the engine's executor runs it as it is
// (mysqlcompat.DirectExec, as for writedirect.go; the server's read_only
// check is made first), an insertDirect runs it, doing in order what
// those iterators do:
//
//   - the editor bound to the transaction (a READ ONLY transaction's error,
//     then the table's SHARED_WRITE metadata lock; a definition changed
//     while it was waited for sends the execution to planning), and a
//     statement bracket opened;
//   - the row evaluated as the Values and Project iterators evaluate it
//     (ProjectRow), over the plan's own expressions: the AUTO_INCREMENT
//     column's is GMS's, which takes the table's next value for NULL or 0
//     (NO_AUTO_VALUE_ON_ZERO honoured); literal defaults evaluated once;
//   - the row counted, adjusted out of strict mode or checked in it
//     (mysqlcompat.AdjustInsertRow), then NOT NULL and each column's
//     conversion checked as GMS's insert iterator checks them, the errors
//     wrapped and worded as that iterator and mysqlcompat's insertErrors
//     word them;
//   - the row written through a reused editor (a duplicate is its 1062),
//     LAST_INSERT_ID set when the statement generated the value (as the
//     analysis decides from the literal given: NULL, or 0 without
//     NO_AUTO_VALUE_ON_ZERO), and GMS's OK result (one row affected, the
//     AUTO_INCREMENT column's value as insert id, ROW_COUNT 1);
//   - the autocommit commit and the end of the statement in the process list
//     as writedirect's directIter does them.
//
// TestInsertDirectMatchesPlanned compares it with full planning.

// insertDirect is what runs one INSERT template without GMS's iterators
// (see above). It belongs to its PreparedWrite's connection.
type insertDirect struct {
	ins  *plan.InsertInto
	def  *tableDef
	sch  sql.Schema       // the destination's columns
	vals []sql.Expression // the VALUES row, argRefs where the arguments are
	cols []insertColumn   // the projection onto the table's columns
	// auto is the column of the AUTO_INCREMENT expression, -1 when none.
	// Whether an execution generates its value is the template's decision
	// (writeTemplate.generates), from the argument it learned gives it.
	auto int
	t    *writeTemplate
	// check is what the engine's executor would check building the plan
	// (mysqlcompat.DirectExec), nil when nothing.
	check func(*sql.Context) error

	ed       *editor // reused: its buffers carry over
	src, row sql.Row // scratch: the VALUES row, the table's row
	orig     sql.Row // scratch: the row before conversion
	iter     insertResult
	rec      recoveringIter
	p        *PreparedWrite
}

// insertColumn is one column of the row: a constant (a literal default,
// evaluated once), or an expression over the VALUES row.
type insertColumn struct {
	expr     sql.Expression
	constant bool
	value    any
}

// newInsertDirect returns the insertDirect of template t (plan n, learned
// with literals lits), or nil when the plan is not of the shape above.
func (p *PreparedWrite) newInsertDirect(ctx *sql.Context, t *writeTemplate, n sql.Node, lits []*expression.Literal) *insertDirect {
	check, ok := mysqlcompat.DirectExec(t.exec, n)
	if !ok {
		return nil
	}
	ins, ok := n.(*plan.InsertInto)
	if !ok || ins.IsReplace || ins.Ignore || len(ins.OnDupExprs) > 0 || len(ins.Checks()) > 0 || len(ins.Returning) > 0 {
		return nil
	}
	dst, ok := ins.Destination.(*plan.InsertDestination)
	if !ok {
		return nil
	}
	rt, ok := dst.Child.(*plan.ResolvedTable)
	if !ok {
		return nil
	}
	tbl, ok := rt.UnderlyingTable().(*Table)
	if !ok || tbl.readsCurrent || tbl.def == nil || tbl.def.keyless || len(tbl.def.checks) > 0 {
		return nil
	}
	def := tbl.def
	sch := dst.Schema()
	if len(sch) != len(def.schema) {
		return nil
	}
	for _, c := range def.schema {
		if c.Generated != nil || c.Virtual {
			return nil
		}
	}
	src, counted := mysqlcompat.InsertValuesSource(ins)
	proj, isProj := src.(*plan.Project)
	if !counted || !isProj || len(proj.Projections) != len(sch) {
		return nil
	}
	values, ok := proj.Child.(*plan.Values)
	if !ok || len(values.ExpressionTuples) != 1 || len(values.ExpressionTuples[0]) != len(lits) {
		return nil
	}
	d := &insertDirect{ins: ins, def: def, sch: sch, auto: -1, t: t, p: p, check: check}
	// The VALUES row is the arguments, in order, each once and nowhere
	// else in the plan, as they are or under what the value rules put
	// around them (mysqlcompat's BIGINT checks).
	for i, e := range values.ExpressionTuples[0] {
		seen := 0
		v, _, err := transform.Expr(e, func(x sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
			if l, isLit := x.(*expression.Literal); isLit && l == lits[i] {
				seen++
				return &argRef{p: p, i: i}, transform.NewTree, nil
			}
			return x, transform.SameTree, nil
		})
		if err != nil || seen != 1 {
			return nil
		}
		d.vals = append(d.vals, v)
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
	for _, c := range found {
		if c != 1 {
			return nil
		}
	}
	// Each column from an argument, the AUTO_INCREMENT wrapper of one (or
	// of no value), or a literal default.
	for i, e := range proj.Projections {
		switch x := e.(type) {
		case *expression.GetField:
			if x.Index() < 0 || x.Index() >= len(d.vals) {
				return nil
			}
			d.cols = append(d.cols, insertColumn{expr: x})
		case *expression.AutoIncrement:
			if d.auto >= 0 || !sch[i].AutoIncrement {
				return nil
			}
			// The argument giving the value is the one the template
			// learned (t.autoArg), none when the statement gives none.
			switch given := x.Child.(type) {
			case *expression.GetField:
				if given.Index() < 0 || given.Index() >= len(d.vals) || given.Index() != t.autoArg {
					return nil
				}
			case *sql.ColumnDefaultValue:
				if given != nil || t.autoArg >= 0 {
					return nil
				}
			default:
				return nil
			}
			d.auto = i
			d.cols = append(d.cols, insertColumn{expr: x})
		default:
			if w, isWrapper := e.(*expression.Wrapper); isWrapper {
				e = w.Unwrap()
			}
			dv, isDefault := e.(*sql.ColumnDefaultValue)
			if !isDefault {
				return nil
			}
			var v any
			if dv != nil {
				if _, isLit := dv.Expr.(*expression.Literal); !isLit || !dv.IsLiteral() {
					return nil
				}
				var err error
				if v, err = dv.Eval(ctx, nil); err != nil {
					return nil
				}
				if _, isBytes := v.([]byte); isBytes {
					// Handed to the editor and kept by errors: evaluated
					// at each execution.
					d.cols = append(d.cols, insertColumn{expr: dv})
					continue
				}
				v = normalizeNegativeZero(v)
			}
			d.cols = append(d.cols, insertColumn{constant: true, value: v})
		}
	}
	if d.auto < 0 && ins.FirstGeneratedAutoIncRowIdx >= 0 {
		return nil
	}
	// The prefetch of duplicate-key reads serves statements of many rows:
	// never started for this editor's single ones.
	d.ed = &editor{t: tbl.full(), def: def, pfStarted: true}
	d.src = make(sql.Row, len(d.vals))
	d.row = make(sql.Row, len(sch))
	d.orig = make(sql.Row, len(sch))
	return d
}

// normalizeNegativeZero is -0 as 0, as GMS's projection stores it.
func normalizeNegativeZero(v any) any {
	switch v {
	case float32(0):
		return float32(0)
	case float64(0):
		return float64(0)
	}
	return v
}

// runInsertDirect starts an execution of INSERT template t without GMS's
// iterators, as runDirect starts one by key: errStalePlan when the template
// no longer serves.
func (p *PreparedWrite) runInsertDirect(ctx *sql.Context, e *sqle.Engine, t *writeTemplate, query string) (schema sql.Schema, iter sql.RowIter, err error) {
	defer recoverInto(&err, query)
	d := t.insert
	if err := startDirect(ctx, e, t.version, d.check, d.ed, d.def, query); err != nil {
		return nil, nil, err
	}
	it := &d.iter
	if it.busy() {
		// A result of this statement is still open (Query): a fresh one.
		it = &insertResult{}
	}
	*it = insertResult{directIter: directIter{}, d: d}
	rec := &d.rec
	if it != &d.iter {
		rec = &recoveringIter{}
	}
	*rec = recoveringIter{RowIter: it, query: query}
	d.ed.t.store.directWrites.Add(1)
	return types.OkResultSchema, rec, nil
}

// insertResult is the result of one execution: the row is written at the
// first Next, which returns the OK row; Close is directIter's.
type insertResult struct {
	directIter
	d *insertDirect
}

// busy reports whether it is the result of an execution, not closed yet.
func (it *insertResult) busy() bool { return it.d != nil && !it.closed }

func (it *insertResult) Next(ctx *sql.Context) (sql.Row, error) {
	if it.ran {
		return nil, io.EOF
	}
	it.ran = true
	res, err := it.d.exec(ctx)
	if err != nil {
		return nil, err
	}
	it.row[0] = res
	return it.row[:], nil
}

// exec makes the insert in a statement bracket of the editor, as GMS's
// table-editor iterator brackets it, and returns its OK result.
func (d *insertDirect) exec(ctx *sql.Context) (any, error) {
	return d.ed.runStatement(ctx, func() (any, error) { return d.insert(ctx) })
}

// insert evaluates, checks and writes the row, with the errors of GMS's
// insert iterator as mysqlcompat words them.
func (d *insertDirect) insert(ctx *sql.Context) (any, error) {
	row, err := d.makeRow(ctx)
	if err != nil {
		return nil, mysqlcompat.InsertRowError(ctx, d.sch, err)
	}
	ctx.SetLastQueryInfoInt(sql.RowCount, 1)
	var id uint64
	if d.auto >= 0 {
		id = uint64(autoIncInt64(row[d.auto]))
		if d.t.generates(ctx, d.p.lits) {
			ctx.SetLastQueryInfoInt(sql.LastInsertId, int64(id))
		}
	}
	return types.OkResult{RowsAffected: 1, InsertID: id}, nil
}

// autoIncArg returns the argument (by its literal among lits) that gives
// the AUTO_INCREMENT column's value in INSERT ins of one VALUES row, -1
// when the statement gives it none or the plan is not of that shape.
func autoIncArg(ins *plan.InsertInto, lits []*expression.Literal) int {
	proj, values, ok := valuesOf(ins)
	if !ok || len(values.ExpressionTuples) != 1 {
		return -1
	}
	for _, e := range proj.Projections {
		ai, isAuto := e.(*expression.AutoIncrement)
		if !isAuto {
			continue
		}
		gf, isField := ai.Child.(*expression.GetField)
		if !isField || gf.Index() < 0 || gf.Index() >= len(values.ExpressionTuples[0]) {
			return -1
		}
		found := -1
		transform.InspectExpr(values.ExpressionTuples[0][gf.Index()], func(x sql.Expression) bool {
			for i, l := range lits {
				if x == sql.Expression(l) {
					found = i
				}
			}
			return false
		})
		return found
	}
	return -1
}

// makeRow evaluates the row, checks it and writes it: the work of GMS's
// Values, Project, insert iterators and mysqlcompat's row counter, in
// their order. Its errors are the insert iterator's.
func (d *insertDirect) makeRow(ctx *sql.Context) (sql.Row, error) {
	src := d.src
	for i, e := range d.vals {
		v, err := e.Eval(ctx, src)
		if err != nil {
			return nil, sql.NewWrappedInsertError(nil, err)
		}
		src[i] = normalizeNegativeZero(v)
	}
	row := d.row
	for i, c := range d.cols {
		if c.constant {
			row[i] = c.value
			continue
		}
		v, err := c.expr.Eval(ctx, src)
		if err != nil {
			return nil, sql.NewWrappedInsertError(nil, err)
		}
		row[i] = normalizeNegativeZero(v)
	}
	if err := mysqlcompat.AdjustInsertRow(ctx, d.ins, row); err != nil {
		return nil, sql.NewWrappedInsertError(nil, err)
	}
	for i, col := range d.sch {
		if !col.Nullable && row[i] == nil {
			if d.ins.DeferredDefaults.Contains(i) {
				return nil, sql.NewWrappedInsertError(copyRow(row), sql.ErrInsertIntoNonNullableDefaultNullColumn.New(col.Name))
			}
			return nil, sql.NewWrappedInsertError(copyRow(row), sql.ErrInsertIntoNonNullableProvidedNull.New(col.Name))
		}
	}
	copy(d.orig, row)
	for i, col := range d.sch {
		if row[i] == nil {
			continue
		}
		if sameString(col.Type, row[i]) {
			continue
		}
		conv, inRange, err := col.Type.Convert(ctx, row[i])
		if err == nil && !inRange {
			err = sql.ErrValueOutOfRange.New(row[i], col.Type)
		}
		if err != nil {
			if types.ErrLengthBeyondLimit.Is(err) {
				err = types.ErrLengthBeyondLimit.New(row[i], col.Name)
			} else if sql.ErrNotMatchingSRID.Is(err) {
				err = sql.ErrNotMatchingSRIDWithColName.New(col.Name, err)
			}
			return nil, sql.NewWrappedInsertError(copyRow(d.orig), err)
		}
		row[i] = conv
	}
	if err := d.ed.Insert(ctx, row); err != nil {
		return nil, sql.NewWrappedInsertError(copyRow(row), err)
	}
	return row, nil
}

// sameString reports whether v is a string that the character string type
// typ converts to itself, without error: GMS's StringType.Convert copies
// such a string twice (to bytes and back) and returns the same text, for
// CHAR, VARCHAR and TEXT when the text is valid UTF-8 and within the
// type's length (counted as ConvertToBytes counts it). Any other value, or
// one that fails, is left to Convert.
func sameString(typ sql.Type, v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	st, ok := typ.(types.StringType)
	if !ok || types.IsBinaryType(st) {
		return false
	}
	switch st.Type() {
	case sqltypes.Char, sqltypes.VarChar, sqltypes.Text:
	default:
		return false
	}
	if !utf8.ValidString(s) {
		return false
	}
	n := int64(len(s))
	switch {
	case st.Type() == sqltypes.Text:
		return n <= st.MaxByteLength()
	case st.CharacterSet().MaxLength() == 1:
		// A character set of one byte a character: GMS counts bytes.
		return n <= st.MaxCharacterLength()
	}
	return n <= st.MaxCharacterLength() || int64(utf8.RuneCountInString(s)) <= st.MaxCharacterLength()
}

// copyRow returns a copy of row for an error, which outlives the scratch.
func copyRow(row sql.Row) sql.Row {
	return append(sql.Row(nil), row...)
}

// autoIncInt64 is the insert id of an AUTO_INCREMENT value, as GMS's
// insert iterator reads it.
func autoIncInt64(v any) int64 {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case uint8:
		return int64(x)
	case int16:
		return int64(x)
	case uint16:
		return int64(x)
	case int32:
		return int64(x)
	case uint32:
		return int64(x)
	case int64:
		return x
	case uint64:
		return int64(x)
	case int:
		return int64(x)
	case uint:
		return int64(x)
	case float32:
		return int64(x)
	case float64:
		return int64(x)
	}
	return 0
}
