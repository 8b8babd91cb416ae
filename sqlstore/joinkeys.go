package sqlstore

import (
	"fmt"
	"math"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	sqltypes "github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"

	"github.com/strata-db/strata/mysqlcompat"
	"github.com/strata-db/strata/sqlstore/codec"
)

// Join keys the index column cannot hold
//
// A lookup join probes the inner table's index with the outer row's values.
// GMS converts each value into the index column's type before it builds
// the probe's range (plan.LookupBuilder), and drops the join condition the
// probe answers. That conversion clamps and rounds: a BIGINT 2147483648
// probes an INT key as 2147483647, a DOUBLE 1.5 as 2, a BIGINT UNSIGNED
// 18446744073709551615 a BIGINT key as its largest value, an INT -1 a
// BIGINT UNSIGNED key as 18446744073709551615. The inner row found there is
// joined although MySQL compares the two values unequal, and the storage
// layer only ever sees the converted key.
//
// The same happens to other keys: a DATETIME(6) 00:00:00.5 probes a
// DATETIME key as 00:00:01, a DATETIME with a time of day a DATE key as
// its day, a VARBINARY 'ab' a BINARY(3) key as 'ab\0'.
//
// So after the joins are planned, exactJoinKeys wraps every probe key whose
// type the index column does not contain (numbers, finer times, binary
// strings of another length) in an exactKey, which turns a value the column
// cannot hold exactly into NULL. Under = a NULL
// key matches nothing, which is right: no value of the column equals it.
// Keys under <=> are left alone, since there a NULL key matches the NULL
// rows; instead the join's condition compares such a key with the row
// found again (stringkeys.go: recheckNullSafeKeys). A string column probed by
// a number is another matter, one value matching many texts: such a join
// does without the index (stringkeys.go).
//
// Targets GMS v0.20.0. Without it, TestLookupJoinKeysExact fails.

// exactJoinKeys is a post-analysis rule: it wraps the lookup-join keys that
// the index columns do not contain (see above).
func exactJoinKeys(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	n, unindexed, err := unindexedStringJoins(n)
	if err != nil {
		return nil, transform.SameTree, err
	}
	n, same, err := transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		ita, ok := n.(*plan.IndexedTableAccess)
		if !ok {
			return n, transform.SameTree, nil
		}
		keys := ita.Expressions()
		idx, ok := ita.Index().(*Index)
		if len(keys) == 0 || !ok {
			return n, transform.SameTree, nil
		}
		nullSafe := ita.NullMask()
		var out []sql.Expression
		for i, k := range keys {
			if i >= len(idx.ix.cols) || (i < len(nullSafe) && nullSafe[i]) {
				continue
			}
			if _, done := k.(*exactKey); done {
				continue
			}
			col := idx.t.schema[idx.ix.cols[i]].Type
			if !needsExactKey(col, k.Type()) {
				continue
			}
			if out == nil {
				out = append([]sql.Expression(nil), keys...)
			}
			out[i] = &exactKey{key: k, col: col}
		}
		if out == nil {
			return n, transform.SameTree, nil
		}
		nn, err := ita.WithExpressions(out...)
		if err != nil {
			return nil, transform.SameTree, err
		}
		return nn, transform.NewTree, nil
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	if unindexed == transform.NewTree {
		same = transform.NewTree
	}
	return n, same, nil
}

// needsExactKey reports whether a probe key of type key needs checking
// against an index column of type col: the column is an integer or a
// decimal, and the key a string (which MySQL compares with a number as a
// double, and GMS converts into the column's type, clamping and rounding,
// or to zero when the text is not a number) or a number whose type holds
// values col does not. Float columns compare as MySQL does after GMS's
// conversion (both sides as doubles); other columns are left as they are.
func needsExactKey(col, key sql.Type) bool {
	if key == nil {
		return false
	}
	if types.IsTime(col) && types.IsTime(key) {
		return finerTime(col, key)
	}
	if col.Type() == sqltypes.Binary {
		// GMS pads a shorter key with zero bytes, so 'ab' probes a
		// BINARY(3) as 'ab\0', which MySQL compares unequal.
		kt, kok := key.(sql.StringType)
		ct, cok := col.(sql.StringType)
		return !kok || !cok || key.Type() != sqltypes.Binary || kt.MaxByteLength() != ct.MaxByteLength()
	}
	if types.IsText(key) {
		return types.IsInteger(col) || types.IsDecimal(col)
	}
	if !types.IsNumber(key) {
		return false
	}
	switch {
	case types.IsInteger(col):
		if !types.IsInteger(key) {
			return true // a fraction, or a decimal
		}
		return !intContains(col, key)
	case types.IsDecimal(col):
		cd := col.(sql.DecimalType)
		if kd, ok := key.(sql.DecimalType); ok {
			return kd.Scale() > cd.Scale() || kd.Precision()-kd.Scale() > cd.Precision()-cd.Scale()
		}
		if lo, hi, ok := codec.IntRange(key); ok && types.IsInteger(key) {
			digits := int(cd.Precision()) - int(cd.Scale())
			return digits < decimalDigits(lo, hi, key.Type() == sqltypes.Uint64)
		}
		return true
	}
	return false
}

// finerTime reports whether the time type key holds values the time type
// col would round or cut: a DATETIME(6) key on a DATETIME column (GMS
// rounds 00:00:00.5 to 00:00:01), a DATETIME key on a DATE column (cut to
// its day).
func finerTime(col, key sql.Type) bool {
	if key.Type() == sqltypes.Date {
		return false
	}
	if col.Type() == sqltypes.Date {
		return true
	}
	cp, kp := 0, 0
	if dt, ok := col.(sql.DatetimeType); ok {
		cp = dt.Precision()
	}
	if dt, ok := key.(sql.DatetimeType); ok {
		kp = dt.Precision()
	}
	return kp > cp || key.Type() == sqltypes.Time
}

// intContains reports whether every value of the integer type key is one of
// the integer type col's.
func intContains(col, key sql.Type) bool {
	clo, chi, ok1 := codec.IntRange(col)
	klo, khi, ok2 := codec.IntRange(key)
	if !ok1 || !ok2 {
		return false
	}
	cu, ku := col.Type() == sqltypes.Uint64, key.Type() == sqltypes.Uint64
	switch {
	case ku:
		return cu // only BIGINT UNSIGNED holds all of BIGINT UNSIGNED
	case cu:
		return klo >= 0 // col holds every non-negative int64
	}
	return clo <= klo && khi <= chi
}

// decimalDigits returns how many integer digits a decimal needs to hold
// every value in [lo, hi] (hi being MaxUint64 when unsigned64).
func decimalDigits(lo, hi int64, unsigned64 bool) int {
	if unsigned64 {
		return 20
	}
	n := 1
	for m := max(-(lo + 1), hi); m >= 10; m /= 10 {
		n++
	}
	return n
}

// exactKey is a lookup-join key that is NULL when the index column cannot
// hold its value exactly (see exactJoinKeys).
type exactKey struct {
	key sql.Expression
	col sql.Type
}

var _ sql.Expression = (*exactKey)(nil)

// Eval implements sql.Expression.
func (e *exactKey) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := e.key.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	switch {
	case types.IsTime(e.col):
		if !convertsExactly(ctx, e.col, types.DatetimeMaxPrecision, v) {
			return nil, nil
		}
		return v, nil
	case e.col.Type() == sqltypes.Binary:
		var n int
		switch x := v.(type) {
		case string:
			n = len(x)
		case []byte:
			n = len(x)
		default:
			return v, nil
		}
		if st, ok := e.col.(sql.StringType); ok && int64(n) != st.MaxByteLength() {
			return nil, nil
		}
		return v, nil
	}
	switch x := v.(type) {
	case string:
		v = mysqlcompat.NumericPrefix(x)
	case []byte:
		v = mysqlcompat.NumericPrefix(string(x))
	}
	if !joinKeyHeld(ctx, e.col, v) {
		return nil, nil
	}
	return v, nil
}

// joinKeyHeld reports whether the integer or decimal type typ holds v
// exactly: in range, and without a fraction typ would round away.
func joinKeyHeld(ctx *sql.Context, typ sql.Type, v any) bool {
	if types.IsDecimal(typ) {
		return convertsExactly(ctx, typ, types.InternalDecimalType, v)
	}
	switch k := v.(type) {
	case int64, int32, uint64, uint32:
		return holdsExactly(ctx, typ, v)
	case float64:
		if math.IsNaN(k) || math.IsInf(k, 0) || math.Trunc(k) != k {
			return false
		}
	case float32:
		return joinKeyHeld(ctx, typ, float64(k))
	case decimal.Decimal:
		if !k.Equal(k.Truncate(0)) {
			return false
		}
	}
	return holdsExactly(ctx, typ, v)
}

// Type implements sql.Expression: a string key on a numeric column is read
// as a double.
func (e *exactKey) Type() sql.Type {
	if types.IsText(e.key.Type()) && types.IsNumber(e.col) {
		return types.Float64
	}
	return e.key.Type()
}

// IsNullable implements sql.Expression.
func (e *exactKey) IsNullable() bool { return true }

// Resolved implements sql.Expression.
func (e *exactKey) Resolved() bool { return e.key.Resolved() }

// Children implements sql.Expression.
func (e *exactKey) Children() []sql.Expression { return []sql.Expression{e.key} }

// WithChildren implements sql.Expression.
func (e *exactKey) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(e, len(children), 1)
	}
	return &exactKey{key: children[0], col: e.col}, nil
}

// String implements sql.Expression: the key as written, so that EXPLAIN
// shows the join as before.
func (e *exactKey) String() string { return e.key.String() }

// DebugString implements sql.DebugStringer.
func (e *exactKey) DebugString() string {
	return fmt.Sprintf("exactKey(%s, %s)", sql.DebugString(e.key), e.col)
}
