package mysqlcompat

import (
	"fmt"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/shopspring/decimal"
)

// Assignments out of a column's range
//
// GMS converts the value an UPDATE (or ON DUPLICATE KEY UPDATE) assigns
// into the column's type and keeps the result whether or not it fit
// (expression.SetField ignores the conversion's in-range flag): SET i =
// 3000000000 stores 2147483647 in an INT, SET u = -1 stores 255 in a
// TINYINT UNSIGNED. INSERT checks the flag and fails with 1264, as MySQL
// does for both in strict mode. So every assignment to a numeric column
// goes through a rangeChecked value, which fails the same way, with
// MySQL's error naming the column and the row. Under IGNORE or out of
// strict mode it stores the value adjusted, as MySQL does, with MySQL's
// warning (lenient.go); so do assignments to strings and SETs, which are
// wrapped too.
//
// The rule is one of the value rules (install.go), which reach simple
// UPDATEs and INSERTs, and trigger bodies (SET NEW.col = ...), too.
//
// Targets GMS v0.20.0. Without it, TestAssignOutOfRange and
// TestTriggerAssignOutOfRange fail.

// checkAssignments wraps the value of each assignment to a numeric column
// in a rangeChecked.
func checkAssignments(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	// Most statements assign nothing: a query, a plain INSERT. They pass
	// without a walk of their tree.
	switch x := n.(type) {
	case *plan.Set:
		// A trigger's SET NEW.col = ..., analyzed on its own; SET of a
		// variable holds no column and is left as it is.
	case *plan.InsertInto:
		ins, same, err := checkBigIntInserts(x)
		if err != nil || len(x.OnDupExprs) == 0 {
			return ins, same, err
		}
		if same == transform.NewTree {
			n, _, err := checkAssignments(ctx, a, ins, scope, sel, qFlags)
			return n, transform.NewTree, err
		}
	default:
		if n.IsReadOnly() {
			return n, transform.SameTree, nil
		}
	}
	ignore := false
	transform.Inspect(n, func(n sql.Node) bool {
		switch n := n.(type) {
		case *plan.UpdateSource:
			ignore = ignore || n.Ignore
		case *plan.InsertInto:
			ignore = ignore || n.Ignore
		}
		return true
	})
	return transform.NodeExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		set, ok := e.(*expression.SetField)
		if !ok {
			return e, transform.SameTree, nil
		}
		col, ok := set.LeftChild.(*expression.GetField)
		if !ok || !adjustable(col.Type()) {
			return e, transform.SameTree, nil
		}
		switch set.RightChild.(type) {
		case *rangeChecked, *sql.ColumnDefaultValue, *expression.DefaultColumn:
			// Checked already; or a column default, which GMS finds by
			// its type and checks when it is defined.
			return e, transform.SameTree, nil
		}
		return expression.NewSetField(col, &rangeChecked{value: set.RightChild, col: col, ignore: ignore, rows: new(stmtRows)}), transform.NewTree, nil
	})
}

// fitsString reports whether s is short enough for the string type typ
// whatever its characters are, so that its length need not be checked
// here (SetField converts it).
func fitsString(typ sql.Type, s string) bool {
	st, ok := typ.(sql.StringType)
	if !ok {
		return false
	}
	if types.IsTextBlob(typ) {
		return int64(len(s)) <= st.MaxByteLength()
	}
	return int64(len(s)) <= st.MaxCharacterLength()
}

// adjustable reports whether out of strict mode an assignment to a column
// of the type typ may need its value adjusted (lenient.go).
func adjustable(typ sql.Type) bool {
	return types.IsNumber(typ) || types.IsSet(typ) || types.IsEnum(typ) || types.IsYear(typ) || types.IsTime(typ) || types.IsTimespan(typ) ||
		(types.IsText(typ) || types.IsBinaryType(typ)) && !types.IsJSON(typ)
}

// rangeChecked is an assigned value that fails, with MySQL's error for
// the column, when the column's type cannot hold it; with ignore or out of
// strict mode, it is the value adjusted into the type instead, and a
// warning (adjustValue).
type rangeChecked struct {
	value  sql.Expression
	col    *expression.GetField
	ignore bool
	// rows counts the rows of an UPDATE, insertRow is the INSERT's row
	// of an ON DUPLICATE KEY UPDATE: the row its warnings name.
	rows      *stmtRows
	insertRow *int64
}

// rowNum counts the row the value is evaluated for and returns its number
// in the statement.
func (r *rangeChecked) rowNum(ctx *sql.Context) int64 {
	if r.insertRow != nil {
		return *r.insertRow
	}
	if r.rows == nil {
		return 0
	}
	return r.rows.next(ctx)
}

var _ sql.Expression = (*rangeChecked)(nil)

// Eval implements sql.Expression.
func (r *rangeChecked) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := r.value.Eval(ctx, row)
	rowNum := r.rowNum(ctx)
	if err == nil {
		// The value's expression warned where strict mode fails
		// (strictwarnings.go).
		err = strictWarningError(ctx, r.ignore)
	}
	if v == nil && err == nil && !r.col.IsNullable() && !r.ignore && !strictMode(ctx) {
		// NULL for a NOT NULL column: its type's implicit default, as
		// MySQL stores it out of strict mode (IGNORE's is GMS's).
		ctx.Warn(mysql.ERBadNullError, "Column '%s' cannot be null", r.col.Name())
		return implicitDefault(r.col.Type()), nil
	}
	if err != nil || v == nil {
		return v, err
	}
	typ := r.col.Type()
	if s, ok := v.(string); ok && fitsString(typ, s) {
		return v, nil // what most assignments to strings are: no conversion
	}
	if isBigInt(typ) {
		if x, inRange, ok := ExactInteger(typ, v); ok {
			switch {
			case inRange:
				return x, nil
			case lenientWrites(ctx, r.ignore):
				return adjustValue(ctx, typ, r.col.Name(), v, rowNum), nil
			}
			return nil, r.valueError(v, rowNum, false, nil)
		}
	}
	if types.IsYear(typ) {
		// GMS truncates 1999.6 and refuses '1900.9' and '2000x' in its own
		// words: MySQL's year, warning or error (yearOf).
		if y, code, ok := yearOf(v); ok {
			switch {
			case code == 0:
				return y, nil
			case lenientWrites(ctx, r.ignore):
				return adjustValue(ctx, typ, r.col.Name(), v, rowNum), nil
			}
			return nil, yearError(r.col.Name(), v, code, rowNum)
		}
	}
	if s, ok := v.(string); ok && endsInSpace(s) && types.IsTime(typ) {
		v = trimDateSpaces(s) // MySQL ignores it (datespaces.go)
	}
	cv, inRange, cerr := typ.Convert(ctx, v)
	if types.ErrConvertToDecimalLimit.Is(cerr) {
		// A DECIMAL reports its range as an error, not a flag.
		inRange, cerr = sql.OutOfRange, nil
	}
	switch {
	case cerr == nil && inRange != sql.OutOfRange && !blankNumber(typ, v) && !enumZero(ctx, typ, v):
		if t, ok := cv.(time.Time); ok && t.Equal(zeroDate) && types.IsTime(typ) && !r.ignore && strictMode(ctx) && noZeroDate(ctx) {
			// NO_ZERO_DATE in strict mode (strictwarnings.go).
			return nil, r.valueError(zeroDateValue(typ, v), rowNum, true, nil)
		}
		return v, nil
	case lenientWrites(ctx, r.ignore):
		return adjustValue(ctx, typ, r.col.Name(), v, rowNum), nil
	}
	return nil, r.valueError(v, rowNum, bool(inRange), cerr)
}

// valueError is MySQL's error for v, which the column cannot hold, at the
// statement's row rowNum (insertvalues.go words it); GMS's own when it is
// not one MySQL words.
func (r *rangeChecked) valueError(v any, rowNum int64, inRange bool, cerr error) error {
	col := &sql.Column{Name: r.col.Name(), Type: r.col.Type(), Source: r.col.Table()}
	if se := valueError(col, v, rowNum, inRange, cerr); se != nil {
		return se
	}
	if cerr == nil {
		cerr = sql.ErrValueOutOfRange.New(v, r.col.Name())
	}
	return sql.NewWrappedTypeConversionError(v, r.col.Index(), cerr)
}

// Type implements sql.Expression.
func (r *rangeChecked) Type() sql.Type { return r.value.Type() }

// IsNullable implements sql.Expression.
func (r *rangeChecked) IsNullable() bool { return r.value.IsNullable() }

// Resolved implements sql.Expression.
func (r *rangeChecked) Resolved() bool { return r.value.Resolved() }

// Children implements sql.Expression. The column is a child too, so that
// the analyzer's later renumbering of fields reaches it: its index is
// where UPDATE IGNORE puts the clamped value.
func (r *rangeChecked) Children() []sql.Expression { return []sql.Expression{r.value, r.col} }

// WithChildren implements sql.Expression.
func (r *rangeChecked) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	col, ok := children[len(children)-1].(*expression.GetField)
	if len(children) != 2 || !ok {
		return nil, sql.ErrInvalidChildrenNumber.New(r, len(children), 2)
	}
	return &rangeChecked{value: children[0], col: col, ignore: r.ignore, rows: r.rows, insertRow: r.insertRow}, nil
}

// String implements sql.Expression: the value as written, so that plans
// read as before.
func (r *rangeChecked) String() string { return r.value.String() }

// DebugString implements sql.DebugStringer.
func (r *rangeChecked) DebugString() string {
	return fmt.Sprintf("rangeChecked(%s, %s)", sql.DebugString(r.value), r.col.Type())
}

// decimalEnd returns the end of the DECIMAL type typ nearest v, which typ
// cannot hold: 99.99 for DECIMAL(4,2) and a v above it.
func decimalEnd(ctx *sql.Context, typ sql.Type, v any) any {
	dt, ok := typ.(sql.DecimalType)
	if !ok {
		return nil
	}
	p, sc := int32(dt.Precision()), int32(dt.Scale())
	end := decimal.New(1, p-sc).Sub(decimal.New(1, -sc))
	if d, ok := asDecimal(ctx, v); ok && d.Sign() < 0 {
		end = end.Neg()
	}
	return end
}
