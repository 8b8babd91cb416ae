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

// enumLiterals rewrites e, a comparison of an ENUM with string literals,
// before GMS plans index lookups (castStringInts's walk, so also
// planFixedRanges): GMS builds a lookup by converting the literal into
// the ENUM, which fails with 1105 for a string no member equals (MySQL:
// no rows), and orders a range by the members' indexes, not their text
// (ENUM('c','b','a'): e >= 'b' found 'b' alone). An equality (=, <=>, IN)
// whose strings all equal members under the ENUM's collation gets the
// members' own texts, whose lookup GMS builds; any other comparison with
// a string literal (a non-member, <, <=, >, >=, BETWEEN) compares the
// member's text (enumText), which no lookup is built from.
func enumLiterals(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	var ne sql.Expression
	var err error
	switch x := e.(type) {
	case *expression.Equals, *expression.NullSafeEquals:
		c := x.(expression.Comparer)
		l, r := c.Left(), c.Right()
		switch {
		case isEnum(l) && stringLiteral(r):
			m, ok := memberLiteral(ctx, l, r)
			if ok && m == r {
				return e, transform.SameTree, nil
			}
			if ok {
				r = m
			} else {
				l = &enumText{child: l, typ: l.Type().(sql.EnumType)}
			}
		case isEnum(r) && stringLiteral(l):
			m, ok := memberLiteral(ctx, r, l)
			if ok && m == l {
				return e, transform.SameTree, nil
			}
			if ok {
				l = m
			} else {
				r = &enumText{child: r, typ: r.Type().(sql.EnumType)}
			}
		default:
			return e, transform.SameTree, nil
		}
		ne, err = e.WithChildren(l, r)
	case *expression.LessThan, *expression.LessThanOrEqual, *expression.GreaterThan, *expression.GreaterThanOrEqual:
		c := x.(expression.Comparer)
		l, r := c.Left(), c.Right()
		switch {
		case isEnum(l) && stringLiteral(r):
			l = &enumText{child: l, typ: l.Type().(sql.EnumType)}
		case isEnum(r) && stringLiteral(l):
			r = &enumText{child: r, typ: r.Type().(sql.EnumType)}
		default:
			return e, transform.SameTree, nil
		}
		ne, err = e.WithChildren(l, r)
	case *expression.Between:
		if !isEnum(x.Val) || !stringLiteral(x.Lower) && !stringLiteral(x.Upper) {
			return e, transform.SameTree, nil
		}
		ne, err = x.WithChildren(&enumText{child: x.Val, typ: x.Val.Type().(sql.EnumType)}, x.Lower, x.Upper)
	case *expression.InTuple:
		tup, ok := x.RightChild.(expression.Tuple)
		if !ok || !isEnum(x.LeftChild) {
			return e, transform.SameTree, nil
		}
		var members expression.Tuple
		for i, el := range tup {
			if !stringLiteral(el) {
				return e, transform.SameTree, nil
			}
			m, ok := memberLiteral(ctx, x.LeftChild, el)
			if !ok {
				members = nil
				ne, err = x.WithChildren(&enumText{child: x.LeftChild, typ: x.LeftChild.Type().(sql.EnumType)}, tup)
				break
			}
			if m != el && members == nil {
				members = append(expression.Tuple(nil), tup...)
			}
			if members != nil {
				members[i] = m
			}
		}
		if ne == nil && err == nil {
			if members == nil {
				return e, transform.SameTree, nil
			}
			ne, err = x.WithChildren(x.LeftChild, members)
		}
	default:
		return e, transform.SameTree, nil
	}
	if err != nil {
		return nil, transform.SameTree, err
	}
	return ne, transform.NewTree, nil
}

// memberLiteral returns lit, a string literal compared with enum, as the
// literal of the member it equals under the ENUM's collation (lit itself
// when it is the member's text); false when it equals none.
func memberLiteral(ctx *sql.Context, enum, lit sql.Expression) (sql.Expression, bool) {
	typ := enum.Type().(sql.EnumType)
	s := lit.(*expression.Literal).Value().(string)
	n := int(typ.NumberOfElements())
	for i := 1; i <= n; i++ {
		if m, _ := typ.At(i); m == s {
			return lit, true
		}
	}
	text := types.CreateLongText(typ.Collation())
	for i := 1; i <= n; i++ {
		m, _ := typ.At(i)
		if c, err := text.Compare(ctx, m, s); err == nil && c == 0 {
			return expression.NewLiteral(m, lit.Type()), true
		}
	}
	return nil, false
}

// enumLiteralsNeeded reports whether enumLiterals rewrites e
// (NeedsRangeCorrection).
func enumLiteralsNeeded(ctx *sql.Context, e sql.Expression) bool {
	// Without an ENUM operand, at no cost.
	switch x := e.(type) {
	case *expression.Between:
		if !isEnum(x.Val) {
			return false
		}
	case *expression.InTuple:
		if !isEnum(x.LeftChild) {
			return false
		}
	case expression.Comparer:
		if !isEnum(x.Left()) && !isEnum(x.Right()) {
			return false
		}
	}
	_, same, err := enumLiterals(ctx, e)
	return err != nil || same == transform.NewTree
}
