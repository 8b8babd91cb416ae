package mysqlcompat

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/strata-db/strata/sqlstore/codec"
)

// String functions that compare under the collation
//
// NULLIF(a, b) and STRCMP(a, b) compare strings as = and < do, so under a
// PAD SPACE collation NULLIF('A  ', 'a') is NULL and STRCMP('a\t', 'a') is
// -1 in MySQL; GMS's NULLIF builds its own Equals at every row and
// STRCMP calls the type's comparison, neither of which pads. FIELD(s, a,
// b, ...) of strings compares them under their collation, where GMS folds
// case whatever the collation (FIELD('A', 'a') is 0 under utf8mb4_bin) and
// never pads. padFunction gives each of them, when its arguments are
// strings (FIELD: all of them), an expression that compares as MySQL does;
// values that are not strings go to GMS's own evaluation.
//
// Targets GMS v0.20.0 (function/nullif.go, strcmp.go, field.go). Without
// it, TestPlanningSpec/pad_space fails.
func padFunction(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity) {
	switch f := e.(type) {
	case *function.NullIf:
		if coll, ok := paddedCollation(ctx, f.LeftChild, f.RightChild); ok {
			return &collatedFunc{orig: e, coll: coll, pad: true}, transform.NewTree
		}
	case *function.StrCmp:
		if coll, ok := paddedCollation(ctx, f.LeftChild, f.RightChild); ok {
			return &collatedFunc{orig: e, coll: coll, pad: true}, transform.NewTree
		}
	case *function.Field:
		for _, a := range f.Children() {
			if !types.IsText(a.Type()) || types.IsBinaryType(a.Type()) {
				return e, transform.SameTree
			}
		}
		coll, _ := f.CollationCoercibility(ctx)
		if coll == sql.Collation_Unspecified {
			coll = sql.Collation_Default
		}
		if coll.Sorter() == nil {
			return e, transform.SameTree
		}
		pad := codec.PadSpace(types.CreateLongText(coll))
		return &collatedFunc{orig: e, coll: coll, pad: pad}, transform.NewTree
	}
	return e, transform.SameTree
}

// collatedFunc is NULLIF, STRCMP or FIELD (orig) comparing strings under
// coll, padded when pad is set.
type collatedFunc struct {
	orig sql.Expression
	coll sql.CollationID
	pad  bool
}

var (
	_ sql.Expression         = (*collatedFunc)(nil)
	_ sql.CollationCoercible = (*collatedFunc)(nil)
)

func (c *collatedFunc) Resolved() bool             { return c.orig.Resolved() }
func (c *collatedFunc) String() string             { return c.orig.String() }
func (c *collatedFunc) DebugString() string        { return sql.DebugString(c.orig) }
func (c *collatedFunc) Type() sql.Type             { return c.orig.Type() }
func (c *collatedFunc) IsNullable() bool           { return c.orig.IsNullable() }
func (c *collatedFunc) Children() []sql.Expression { return c.orig.Children() }

func (c *collatedFunc) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, c.orig)
}

func (c *collatedFunc) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	o, err := c.orig.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &collatedFunc{orig: o, coll: c.coll, pad: c.pad}, nil
}

// compare compares two strings under the collation.
func (c *collatedFunc) compare(ctx *sql.Context, a, b string) (int, error) {
	if c.pad {
		return ComparePadded(c.coll, a, b), nil
	}
	return types.CreateLongText(c.coll).Compare(ctx, a, b)
}

// evalCollated evaluates e; ok is false when its value is not a string
// (NULL included).
func evalCollated(ctx *sql.Context, e sql.Expression, row sql.Row) (v any, s string, ok bool, err error) {
	if v, err = e.Eval(ctx, row); err != nil || v == nil {
		return v, "", false, err
	}
	if v, err = sql.UnwrapAny(ctx, v); err != nil {
		return nil, "", false, err
	}
	s, ok = v.(string)
	return v, s, ok, nil
}

func (c *collatedFunc) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	args := c.orig.Children()
	switch c.orig.(type) {
	case *function.Field:
		_, key, ok, err := evalCollated(ctx, args[0], row)
		if err != nil {
			return nil, err
		}
		if !ok {
			return c.orig.Eval(ctx, row)
		}
		for i := 1; i < len(args); i++ {
			_, s, ok, err := evalCollated(ctx, args[i], row)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			if r, err := c.compare(ctx, key, s); err != nil {
				return nil, err
			} else if r == 0 {
				return int64(i), nil
			}
		}
		return int64(0), nil
	default: // NULLIF, STRCMP
		lv, l, lok, err := evalCollated(ctx, args[0], row)
		if err != nil {
			return nil, err
		}
		_, r, rok, err := evalCollated(ctx, args[1], row)
		if err != nil {
			return nil, err
		}
		if !lok || !rok {
			return c.orig.Eval(ctx, row)
		}
		cmp, err := c.compare(ctx, l, r)
		if err != nil {
			return nil, err
		}
		if _, isStrcmp := c.orig.(*function.StrCmp); isStrcmp {
			return int8(cmp), nil // as GMS types it (Int8)
		}
		if cmp == 0 {
			return nil, nil
		}
		return lv, nil
	}
}
