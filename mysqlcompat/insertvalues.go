package mysqlcompat

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	sqltypes "github.com/dolthub/vitess/go/sqltypes"
)

// Errors of values an INSERT cannot store
//
// When an INSERT's value does not convert to its column's type, GMS's
// insert iterator fails with the conversion's own error, which names
// neither the column nor the row: 'abc' for a DECIMAL is "number has no
// digits" (1105), a DECIMAL too large "Out of range value for column of
// Decimal type", a bad date "Incorrect datetime value: 'x'" (1105). MySQL
// says which column and which row of the statement: 1366 "Incorrect
// decimal value: 'abc' for column 'price' at row 1", 1264 "Out of range
// value for column 'price' at row 2", 1292, 1265 ("Data truncated" for
// '7x' bound for an integer).
//
// numberInsertErrors puts insertRows under every INSERT's source: it counts
// the rows the source gives. The statement's iterator (valueRulesExec)
// is wrapped by insertErrors, which, when the statement fails with a
// conversion error of the row last given, converts that row's values again
// to find the column and words the error as MySQL does. Nothing is done
// per row but the count; the conversions run again only on failure.

// insertRows is an INSERT's source, counting the rows it gives.
type insertRows struct {
	child sql.Node
	exec  sql.NodeExecBuilder
	// n counts the rows of the current execution; shared by the copies
	// WithChildren makes, reset when the source is built. It points at
	// count of the node the rule made (one allocation for both).
	n     *int64
	count int64
	// sch is the INSERT's destination, whose values are adjusted out of
	// strict mode or under ignore (lenient.go).
	sch    sql.Schema
	ignore bool
	// nulls says in which order the columns are adjusted and how NULL
	// for a NOT NULL column is taken out of strict mode (lenient.go).
	nulls *insertNulls
}

var _ sql.ExecSourceRel = (*insertRows)(nil)

func (r *insertRows) Schema() sql.Schema   { return r.child.Schema() }
func (r *insertRows) Children() []sql.Node { return []sql.Node{r.child} }
func (r *insertRows) Resolved() bool       { return r.child.Resolved() }
func (r *insertRows) IsReadOnly() bool     { return r.child.IsReadOnly() }
func (r *insertRows) String() string       { return r.child.String() }
func (r *insertRows) DebugString() string  { return sql.DebugString(r.child) }

// Wrapped returns the source insertRows counts: it changes nothing of what
// the source does, so EXPLAIN describes the source in its place.
func (r *insertRows) Wrapped() sql.Node { return r.child }

// WithChildren implements sql.Node.
func (r *insertRows) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(r, len(children), 1)
	}
	return &insertRows{child: children[0], exec: r.exec, n: r.n, sch: r.sch, ignore: r.ignore, nulls: r.nulls}, nil
}

// CollationCoercibility implements sql.CollationCoercible.
func (r *insertRows) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, r.child)
}

// RowIter implements sql.ExecSourceRel.
func (r *insertRows) RowIter(ctx *sql.Context, row sql.Row) (sql.RowIter, error) {
	iter, err := r.exec.Build(ctx, r.child, row)
	if err != nil {
		return nil, err
	}
	*r.n = 0
	c := &countingIter{RowIter: iter, n: r.n}
	if lenientWrites(ctx, r.ignore) {
		c.sch, c.nulls = r.sch, r.nulls
	} else {
		c.strict = r.sch
	}
	return c, nil
}

// countingIter counts the rows of an INSERT's source and, when sch is set,
// adjusts their values to it (lenient.go).
type countingIter struct {
	sql.RowIter
	n     *int64
	sch   sql.Schema
	nulls *insertNulls
	// strict, in strict mode, is the destination whose values GMS would
	// take where MySQL refuses them (strictValues).
	strict sql.Schema
}

func (c *countingIter) Next(ctx *sql.Context) (sql.Row, error) {
	row, err := c.RowIter.Next(ctx)
	if err == nil {
		*c.n++
		switch {
		case c.sch != nil:
			adjustRow(ctx, c.sch, row, *c.n, c.nulls)
		case c.strict != nil:
			if err := strictRow(ctx, c.strict, row, *c.n); err != nil {
				return nil, err
			}
		}
	}
	return row, err
}

// numberInsertErrors returns the rule, for an engine whose analyzer is a,
// that puts insertRows under every INSERT. Run again over its own output
// it changes nothing. The function it applies to each node is made once.
func numberInsertErrors(a *analyzer.Analyzer) analyzer.RuleFunc {
	visit := func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		ins, ok := n.(*plan.InsertInto)
		if !ok || ins.Source == nil {
			return n, transform.SameTree, nil
		}
		if _, done := ins.Source.(*insertRows); done {
			return n, transform.SameTree, nil
		}
		ignore := ins.Ignore
		if ld := loadDataOf(ins); ld != nil && ld.Local {
			ignore = true // LOCAL loads as IGNORE does, in MySQL
		}
		src := &insertRows{child: ins.Source, exec: a.ExecBuilder, sch: ins.Destination.Schema(), ignore: ignore,
			nulls: &insertNulls{deferred: ins.DeferredDefaults, multiRow: !singleRowValues(ins.Source), takesNull: !ignore, order: columnOrder(ins)}}
		src.n = &src.count
		ins = ins.WithSource(src)
		// An ON DUPLICATE KEY UPDATE's warnings name the INSERT's row.
		if len(ins.OnDupExprs) > 0 {
			exprs := make([]sql.Expression, len(ins.OnDupExprs))
			for i, e := range ins.OnDupExprs {
				e, _, err := transform.Expr(e, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
					if rc, ok := e.(*rangeChecked); ok && rc.insertRow == nil {
						c := *rc
						c.insertRow = src.n
						return &c, transform.NewTree, nil
					}
					return e, transform.SameTree, nil
				})
				if err != nil {
					return nil, transform.SameTree, err
				}
				exprs[i] = e
			}
			ins.OnDupExprs = exprs
		}
		return ins, transform.NewTree, nil
	}
	return func(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
		if qFlags != nil && !qFlags.IsSet(sql.QFlagInsert) && !loadsData(n) {
			return n, transform.SameTree, nil
		}
		return transform.Node(n, visit)
	}
}

// columnOrder returns the indexes of ins's destination columns in the
// order the statement names them, then the others: the order MySQL checks
// a row's values in, and so of their warnings. nil for the table's order.
func columnOrder(ins *plan.InsertInto) []int {
	sch := ins.Destination.Schema()
	if len(ins.ColumnNames) == 0 {
		return nil
	}
	order := make([]int, 0, len(sch))
	named := make([]bool, len(sch))
	for _, name := range ins.ColumnNames {
		if i := sch.IndexOfColName(name); i >= 0 && !named[i] {
			named[i] = true
			order = append(order, i)
		}
	}
	sorted := true
	for i := range sch {
		if !named[i] {
			order = append(order, i)
		}
		if i > 0 && order[i] < order[i-1] {
			sorted = false
		}
	}
	if sorted {
		return nil
	}
	return order
}

// loadsData reports whether n is the plan of a LOAD DATA, whose query
// flags do not say INSERT.
func loadsData(n sql.Node) bool {
	for {
		switch x := n.(type) {
		case *plan.TriggerExecutor:
			n = x.Left()
		case *plan.InsertInto:
			return loadDataOf(x) != nil
		default:
			return false
		}
	}
}

// loadDataOf returns the LOAD DATA that is the source of ins, under the
// projection that fills in the columns it does not load; nil when there is
// none.
func loadDataOf(ins *plan.InsertInto) *plan.LoadData {
	src := ins.Source
	for {
		switch x := src.(type) {
		case *plan.LoadData:
			return x
		case *plan.Project:
			src = x.Child
		default:
			return nil
		}
	}
}

// insertOf returns the INSERT a statement's plan runs, under the nodes GMS
// puts above it, and its counting source; nil when there is none.
func insertOf(n sql.Node) (*plan.InsertInto, *insertRows) {
	for {
		switch x := n.(type) {
		case *plan.TriggerExecutor:
			n = x.Left()
		case *plan.InsertInto:
			src, ok := x.Source.(*insertRows)
			if !ok {
				return nil, nil
			}
			return x, src
		default:
			return nil, nil
		}
	}
}

// insertErrors is the iterator of an INSERT statement, rewording the
// conversion errors of its rows (see above). It is a sql.MutableRowIter,
// so that GMS puts its row accumulator under it.
type insertErrors struct {
	sql.RowIter
	sch sql.Schema
	n   *int64
}

var _ sql.MutableRowIter = (*insertErrors)(nil)

func (e *insertErrors) GetChildIter() sql.RowIter { return e.RowIter }

func (e *insertErrors) WithChildIter(child sql.RowIter) sql.RowIter {
	return &insertErrors{RowIter: child, sch: e.sch, n: e.n}
}

func (e *insertErrors) Next(ctx *sql.Context) (sql.Row, error) {
	row, err := e.RowIter.Next(ctx)
	if err != nil && err != io.EOF {
		// (io.EOF, every statement's end, is not looked into: errors.As
		// would allocate for it.)
		if se := insertValueError(ctx, e.sch, *e.n, err); se != nil {
			return nil, se
		}
	}
	return row, err
}

// insertValueError returns MySQL's error for err when it is the failure to
// convert a value of the row rowNum of an INSERT into sch, else nil.
func insertValueError(ctx *sql.Context, sch sql.Schema, rowNum int64, err error) error {
	var wi sql.WrappedInsertError
	if !errors.As(err, &wi) || !conversionError(wi.Cause) {
		return nil
	}
	row := wi.OffendingRow
	if len(row) > len(sch) {
		row = row[len(row)-len(sch):]
	}
	if len(row) != len(sch) {
		return nil
	}
	for i, col := range sch {
		v := row[i]
		if v == nil {
			continue
		}
		_, inRange, cerr := col.Type.Convert(ctx, v)
		if cerr == nil && inRange {
			continue
		}
		if se := valueError(col, v, rowNum, bool(inRange), cerr); se != nil {
			return se
		}
		return nil
	}
	return nil
}

// conversionError reports whether err is one a column's conversion raises.
func conversionError(err error) bool {
	if err == nil {
		return false
	}
	if sql.ErrValueOutOfRange.Is(err) || types.ErrConvertToDecimalLimit.Is(err) || sql.ErrInvalidValue.Is(err) ||
		types.ErrConvertingToEnum.Is(err) || sql.ErrInvalidSetValue.Is(err) || sql.ErrConvertingToSet.Is(err) || types.ErrLengthBeyondLimit.Is(err) ||
		types.ErrConvertingToTime.Is(err) || types.ErrConvertingToYear.Is(err) || types.ErrConvertingToTimeOutOfRange.Is(err) || sql.ErrInvalidJson.Is(err) {
		return true
	}
	msg := err.Error()
	// Errors GMS's conversions make without a kind: a decimal's parser,
	// strconv's, the time parsers'.
	return strings.Contains(msg, "number has no digits") || strings.Contains(msg, "can't convert") ||
		strings.HasPrefix(msg, "Incorrect") || strings.Contains(msg, "invalid syntax") ||
		strings.Contains(msg, "value out of range") || strings.Contains(msg, "is not a valid value for")
}

// valueError words the failure to store v in col as MySQL does.
func valueError(col *sql.Column, v any, rowNum int64, inRange bool, cerr error) *mysql.SQLError {
	at := fmt.Sprintf(" at row %d", rowNum)
	if rowNum <= 0 {
		at = ""
	}
	typ := col.Type
	outOfRange := func() *mysql.SQLError {
		return mysql.NewSQLError(mysql.ERWarnDataOutOfRange, "22003", "Out of range value for column '%s'%s", col.Name, at)
	}
	if cerr == nil && !inRange || sql.ErrValueOutOfRange.Is(cerr) || types.ErrConvertToDecimalLimit.Is(cerr) {
		return outOfRange()
	}
	text := messageValue(v)
	switch {
	case types.IsDecimal(typ):
		if _, isStr := v.(string); !isStr {
			return outOfRange()
		}
		return mysql.NewSQLError(mysql.ERTruncatedWrongValueForField, mysql.SSUnknownSQLState,
			"Incorrect decimal value: '%s' for column '%s'%s", text, col.Name, at)
	case types.IsInteger(typ):
		str, isStr := v.(string)
		if !isStr {
			return outOfRange()
		}
		if _, _, ok := numberPrefix(str); ok {
			// A number with more after it ('7x'): MySQL stores the
			// number, or fails in strict mode, as truncated.
			return mysql.NewSQLError(mysql.ERWarnDataTruncated, "01000", "Data truncated for column '%s'%s", col.Name, at)
		}
		return mysql.NewSQLError(mysql.ERTruncatedWrongValueForField, mysql.SSUnknownSQLState,
			"Incorrect integer value: '%s' for column '%s'%s", text, col.Name, at)
	case types.IsFloat(typ):
		if _, isStr := v.(string); !isStr {
			return outOfRange()
		}
		return mysql.NewSQLError(mysql.ERTruncatedWrongValueForField, mysql.SSUnknownSQLState,
			"Incorrect double value: '%s' for column '%s'%s", text, col.Name, at)
	case types.IsYear(typ):
		if _, code, ok := yearOf(v); ok && code != 0 {
			return yearError(col.Name, v, code, rowNum)
		}
		return outOfRange()
	case types.IsTime(typ) || types.IsTimespan(typ):
		kind := "datetime"
		switch typ.Type() {
		case sqltypes.Date:
			kind = "date"
		case sqltypes.Time:
			kind = "time"
		}
		return mysql.NewSQLError(mysql.ERTruncatedWrongValue, "22007",
			"Incorrect %s value: '%s' for column '%s'%s", kind, text, col.Name, at)
	case types.IsEnum(typ) || types.IsSet(typ):
		return mysql.NewSQLError(mysql.ERWarnDataTruncated, "01000", "Data truncated for column '%s'%s", col.Name, at)
	case types.IsJSON(typ):
		detail := strings.TrimPrefix(cerr.Error(), "Invalid JSON text: ")
		return mysql.NewSQLError(3140, "22032", "Invalid JSON text: \"%s\" at position 0 in value for column '%s.%s'.",
			detail, col.Source, col.Name)
	case types.IsText(typ) || types.IsBinaryType(typ):
		if types.ErrLengthBeyondLimit.Is(cerr) {
			return mysql.NewSQLError(mysql.ERDataTooLong, "22001", "Data too long for column '%s'%s", col.Name, at)
		}
	}
	return nil
}

// messageValue is a value as MySQL quotes it in a message: its text, cut to
// 64 characters.
func messageValue(v any) string {
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		s = fmt.Sprint(v)
	}
	if r := []rune(s); len(r) > 64 {
		s = string(r[:64])
	}
	return s
}
