package mysqlcompat

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// ENUM compared with strings
//
// MySQL compares an ENUM with a string as strings, the member's text
// under the column's collation: e = '2' is false for ENUM('a','b') holding
// 'b', and under a PAD SPACE collation g = 'A ' is true for 'a'. GMS
// converts the string as a write would, to a member or to an index
// ('2' is the second member), and compares the indexes, so e = '2' was
// true and g = 'A ' false. A value rule (textValues, install.go), run before the PAD
// SPACE comparisons (keydistinct.go, padspace.go), gives the ENUM side of
// =, <=>, <, <=, > and >= with a string an enumText: the member's text,
// typed as a string in the ENUM's collation.
//
// Targets GMS v0.20.0 (types/enum.go Compare). Without it,
// TestDerivedCollationSpec (testdata/derived_collation) fails.

// enumString gives the ENUM side of e, a comparison with a string, an
// enumText.
func enumString(_ *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	switch e.(type) {
	case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual, *expression.GreaterThan, *expression.GreaterThanOrEqual:
	default:
		return e, transform.SameTree, nil
	}
	ch := e.Children()
	l, r := ch[0], ch[1]
	switch {
	case isEnum(l) && isString(r):
		l = &enumText{child: l, typ: l.Type().(sql.EnumType)}
	case isEnum(r) && isString(l):
		r = &enumText{child: r, typ: r.Type().(sql.EnumType)}
	default:
		return e, transform.SameTree, nil
	}
	ne, err := e.WithChildren(l, r)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return ne, transform.NewTree, nil
}

func isEnum(e sql.Expression) bool {
	_, ok := e.Type().(sql.EnumType)
	return ok
}

// isString reports whether e is a character string (not an ENUM or SET).
func isString(e sql.Expression) bool {
	t := e.Type()
	return types.IsText(t) && !types.IsBinaryType(t)
}

// enumText is an ENUM's member text, a string in the ENUM's collation.
type enumText struct {
	child sql.Expression
	typ   sql.EnumType
}

var (
	_ sql.Expression         = (*enumText)(nil)
	_ sql.CollationCoercible = (*enumText)(nil)
)

func (t *enumText) Resolved() bool             { return t.child.Resolved() }
func (t *enumText) IsNullable() bool           { return t.child.IsNullable() }
func (t *enumText) Children() []sql.Expression { return []sql.Expression{t.child} }
func (t *enumText) String() string             { return t.child.String() }
func (t *enumText) DebugString() string        { return sql.DebugString(t.child) }

// Type implements sql.Expression: a string in the ENUM's collation.
func (t *enumText) Type() sql.Type { return types.CreateLongText(t.typ.Collation()) }

func (t *enumText) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, t.child)
}

func (t *enumText) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	return &enumText{child: children[0], typ: t.typ}, nil
}

// Eval implements sql.Expression.
func (t *enumText) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := t.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	i, ok := v.(uint16)
	if !ok {
		return v, nil // already the text
	}
	s, _ := t.typ.At(int(i))
	return s, nil
}
