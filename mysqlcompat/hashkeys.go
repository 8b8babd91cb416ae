package mysqlcompat

import (
	"fmt"
	"strconv"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Hash join keys
//
// A hash join (plan.HashLookup) converts both sides' key values into the
// probe side's type and uses the Go value as a map key. A DECIMAL is a
// struct holding a pointer, so two equal DECIMALs are different keys:
// a.x = b.y over DECIMAL columns matched almost nothing (2.000 never met
// 2.00, nor 2.00 itself). A string key against a number was converted
// into the number's type, where MySQL compares the two as doubles, and a
// VARCHAR = TINYINT hash join returned no rows.
//
// So the keys of such joins are wrapped in hashKey, which turns each value
// into a map key that is equal exactly when MySQL compares the values
// equal: a double when either side is a float or one side is a string and
// the other a number (a string is read as its numeric prefix, as MySQL
// does), and otherwise, when a side is a DECIMAL, the decimal's shortest
// text ("2" for 2.000 and 2). String keys under a collation that takes
// different bytes for equal (case- or accent-insensitive, PAD SPACE) are
// collation keys (collationKey, keydistinct.go). Multi-column keys are
// wrapped column by column.
//
// Targets GMS v0.20.0. Without it, TestHashJoinKeys fails.

// keyForm is how a hashKey turns a value into a map key.
type keyForm uint8

const (
	keyAsDouble keyForm = iota + 1
	keyAsDecimal
)

// hashKeyForm returns how the keys of types l and r must be compared, or 0
// when GMS's own key is right.
func hashKeyForm(l, r sql.Type) keyForm {
	switch {
	case l == nil || r == nil:
		return 0
	case types.IsFloat(l) && types.IsNumber(r), types.IsNumber(l) && types.IsFloat(r):
		return keyAsDouble
	case types.IsText(l) && types.IsNumber(r), types.IsNumber(l) && types.IsText(r):
		return keyAsDouble
	case types.IsDecimal(l) && types.IsNumber(r), types.IsNumber(l) && types.IsDecimal(r):
		return keyAsDecimal
	}
	return 0
}

// exactHashKeys wraps the keys of hash joins that need it (see above).
func exactHashKeys(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if ins, ok := n.(*plan.InsertInto); ok && ins.LiteralValueSource {
		// No join; and a walk of its expressions allocates.
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		hl, ok := n.(*plan.HashLookup)
		if !ok {
			return n, transform.SameTree, nil
		}
		right, left, changed := wrapHashKeys(ctx, hl.RightEntryKey, hl.LeftProbeKey)
		if !changed {
			return n, transform.SameTree, nil
		}
		nn, err := hl.WithExpressions(right, left)
		if err != nil {
			return nil, transform.SameTree, err
		}
		return nn, transform.NewTree, nil
	})
}

// wrapHashKeys returns the entry and probe keys wrapped as their types
// need, element by element for tuples of equal length.
func wrapHashKeys(ctx *sql.Context, right, left sql.Expression) (sql.Expression, sql.Expression, bool) {
	rt, rok := right.(expression.Tuple)
	lt, lok := left.(expression.Tuple)
	if rok && lok && len(rt) == len(lt) {
		nr, nl := make(expression.Tuple, len(rt)), make(expression.Tuple, len(lt))
		changed := false
		for i := range rt {
			var c bool
			nr[i], nl[i], c = wrapHashKeys(ctx, rt[i], lt[i])
			changed = changed || c
		}
		return nr, nl, changed
	}
	if _, done := left.(*hashKey); done {
		return right, left, false
	}
	if _, done := left.(*collationKey); done {
		return right, left, false
	}
	form := hashKeyForm(right.Type(), left.Type())
	if form == 0 {
		if typ, ok := collatedKeyType(ctx, right, left); ok {
			return &collationKey{child: right, typ: typ}, &collationKey{child: left, typ: typ}, true
		}
		return right, left, false
	}
	return &hashKey{e: right, form: form}, &hashKey{e: left, form: form}, true
}

// collatedKeyType returns the type under which two string join keys
// compare, when equal strings under it may differ in bytes (a case- or
// accent-insensitive or a PAD SPACE collation): their map keys must be
// collation keys, which GMS's were not.
func collatedKeyType(ctx *sql.Context, right, left sql.Expression) (sql.Type, bool) {
	rt, lt := right.Type(), left.Type()
	if !types.IsText(rt) || !types.IsText(lt) || types.IsBinaryType(rt) || types.IsBinaryType(lt) {
		return nil, false
	}
	rc, rco := sql.GetCoercibility(ctx, right)
	lc, lco := sql.GetCoercibility(ctx, left)
	coll, _ := sql.ResolveCoercibility(rc, rco, lc, lco)
	switch coll {
	case sql.Collation_Unspecified, sql.Collation_binary, sql.Collation_utf8mb4_0900_bin:
		return nil, false
	}
	return types.CreateLongText(coll), true
}

// hashKey is one side's value of a hash join key, as a map key that is
// equal exactly when MySQL compares the values equal.
type hashKey struct {
	e    sql.Expression
	form keyForm
}

var _ sql.Expression = (*hashKey)(nil)

// Eval implements sql.Expression.
func (k *hashKey) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := k.e.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	if k.form == keyAsDouble {
		switch x := v.(type) {
		case string:
			return NumericPrefix(x), nil
		case []byte:
			return NumericPrefix(string(x)), nil
		}
		f, _, err := types.Float64.Convert(ctx, v)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	if d, ok := asDecimal(ctx, v); ok {
		return d.String(), nil // the shortest text: 2.000 and 2 are "2"
	}
	return nil, fmt.Errorf("mysqlcompat: hash join key %v is not a number", v)
}

// Type implements sql.Expression: the type of the map keys.
func (k *hashKey) Type() sql.Type {
	if k.form == keyAsDouble {
		return types.Float64
	}
	return types.LongText
}

// IsNullable implements sql.Expression.
func (k *hashKey) IsNullable() bool { return k.e.IsNullable() }

// Resolved implements sql.Expression.
func (k *hashKey) Resolved() bool { return k.e.Resolved() }

// Children implements sql.Expression.
func (k *hashKey) Children() []sql.Expression { return []sql.Expression{k.e} }

// WithChildren implements sql.Expression.
func (k *hashKey) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(k, len(children), 1)
	}
	return &hashKey{e: children[0], form: k.form}, nil
}

// String implements sql.Expression: the key as written.
func (k *hashKey) String() string { return k.e.String() }

// DebugString implements sql.DebugStringer.
func (k *hashKey) DebugString() string {
	return fmt.Sprintf("hashKey(%s, %d)", sql.DebugString(k.e), k.form)
}

// NumericPrefix is the double MySQL reads from a string compared with a
// number: the longest prefix that is a number, after leading spaces ("2abc"
// is 2, "abc" is 0, " 1e1x" is 10).
func NumericPrefix(s string) float64 {
	num, _, ok := numberPrefix(s)
	if !ok {
		return 0
	}
	f, _ := strconv.ParseFloat(num, 64) // out of range: ±Inf, which no column holds
	return f
}
