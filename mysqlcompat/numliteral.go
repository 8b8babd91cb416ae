package mysqlcompat

import (
	"context"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Decimal literals compared with columns
//
// GMS's binder converts a literal compared with a column into the
// column's type when both are DECIMALs and the column's printed width is
// at least the literal's (planbuilder typeExpandComparisonLiteral): on a
// DECIMAL(5,2) column, d > 3.499 is bound as d > 3.50, before any rule of
// an engine sees the plan. So the engine's parser (Install) wraps each
// fixed-point literal that a comparison sets against a column in a call of
// exactLiteralName, which binds to exactLiteral: the literal as it is, but
// not an *expression.Literal, so the binder leaves it alone. It is
// replaced by its literal before GMS plans index lookups (numStringExpr,
// in castStringInts's walk of the once-before batch, and for the
// single-table UPDATE and DELETE in planFixedRanges: NeedsRangeCorrection
// holds their lookups for it), and it prints as its literal. Of DDL only
// a view's query is rewritten.
//
// Targets GMS v0.20.0. Without it, TestNumberCompareSpec fails.

// exactLiteralName is the function exactLiteral binds from; "__" keeps it
// from a user's names.
const exactLiteralName = "__exact_literal"

// exactLiteralFunction resolves exactLiteralName (Function).
func exactLiteralFunction(name string) (sql.Function, bool) {
	if name != exactLiteralName {
		return nil, false
	}
	return sql.Function1{Name: exactLiteralName, Fn: func(e sql.Expression) sql.Expression {
		return &exactLiteral{e}
	}}, true
}

// literalParser is a parser whose statements' fixed-point literals
// compared with columns are wrapped in exactLiteralName.
type literalParser struct{ sql.Parser }

func (p literalParser) ParseSimple(query string) (ast.Statement, error) {
	st, err := p.Parser.ParseSimple(query)
	return wrapDecimalLiterals(query, st, err)
}

func (p literalParser) Parse(ctx *sql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	st, q, rest, err := p.Parser.Parse(ctx, query, multi)
	st, err = wrapDecimalLiterals(q, st, err)
	return st, q, rest, err
}

func (p literalParser) ParseWithOptions(ctx context.Context, query string, delimiter rune, multi bool, options ast.ParserOptions) (ast.Statement, string, string, error) {
	st, q, rest, err := p.Parser.ParseWithOptions(ctx, query, delimiter, multi, options)
	st, err = wrapDecimalLiterals(q, st, err)
	return st, q, rest, err
}

func (p literalParser) ParseOneWithOptions(ctx context.Context, query string, options ast.ParserOptions) (ast.Statement, int, error) {
	st, n, err := p.Parser.ParseOneWithOptions(ctx, query, options)
	st, err = wrapDecimalLiterals(query, st, err)
	return st, n, err
}

// fixedPointText reports whether query may hold a fixed-point literal: a
// point next to a digit. Most statements hold none, and are not walked.
func fixedPointText(query string) bool {
	for i := 0; i < len(query); i++ {
		if query[i] != '.' {
			continue
		}
		if i > 0 && query[i-1] >= '0' && query[i-1] <= '9' || i+1 < len(query) && query[i+1] >= '0' && query[i+1] <= '9' {
			return true
		}
	}
	return false
}

// wrapDecimalLiterals wraps, in place, the fixed-point literals st's
// comparisons set against columns.
func wrapDecimalLiterals(query string, st ast.Statement, err error) (ast.Statement, error) {
	if p, ok := st.(*ast.Prepare); ok && err == nil {
		keepPreparedPlaceholders(p)
		return st, nil
	}
	return wrapExactOperands(query, st, err, false)
}

// keepPreparedPlaceholders rewrites the text of p, PREPARE name FROM
// 'text', so that its placeholders compared with columns are wrapped as
// fixed-point literals are: EXECUTE ... USING @v binds a DECIMAL variable
// as a fixed-point literal, which the binder rounded to the column's
// scale (d > ? with @v = 3.499 was d > 3.50). A value of another type is
// its literal again before index planning. The text is written back by
// vitess only when it changed and parses again, its typed literals as
// their CASTs.
func keepPreparedPlaceholders(p *ast.Prepare) {
	if !strings.Contains(p.Expr, "?") {
		return // no placeholder, or the text of a user variable (@name)
	}
	st, err := ast.Parse(p.Expr)
	if err != nil {
		return
	}
	// vitess writes DATE '...', TIME '...' and TIMESTAMP '...' back as
	// plain strings: their CASTs, given first, keep their types.
	typeLiterals(p.Expr, st)
	before := ast.String(st)
	if _, err := wrapExactOperands(p.Expr, st, nil, true); err != nil {
		return
	}
	after := ast.String(st)
	if after == before {
		return
	}
	if _, err := ast.Parse(after); err == nil {
		p.Expr = after
	}
}

// wrapExactOperands wraps, in place, the fixed-point literals st's
// comparisons set against columns, and their placeholders too when
// placeholders.
func wrapExactOperands(query string, st ast.Statement, err error, placeholders bool) (ast.Statement, error) {
	if err != nil || st == nil || !fixedPointText(query) && !(placeholders && strings.ContainsAny(query, "?:")) {
		return st, err
	}
	var root ast.SQLNode = st
	if x, ok := st.(*ast.Explain); ok {
		// Walk does not enter an EXPLAIN.
		root = x.Statement
	}
	var roots []ast.SQLNode
	switch x := root.(type) {
	case *ast.DDL:
		roots = ddlExprs(nil, x)
	case *ast.AlterTable:
		for _, d := range x.Statements {
			roots = ddlExprs(roots, d)
		}
	default:
		roots = []ast.SQLNode{root}
	}
	_ = walkSQL(func(n ast.SQLNode) (bool, error) {
		c, ok := n.(*ast.ComparisonExpr)
		if !ok {
			return true, nil
		}
		switch c.Operator {
		case ast.EqualStr, ast.LessThanStr, ast.GreaterThanStr, ast.LessEqualStr, ast.GreaterEqualStr, ast.NotEqualStr, ast.NullSafeEqualStr:
		default:
			return true, nil
		}
		_, colL := c.Left.(*ast.ColName)
		_, colR := c.Right.(*ast.ColName)
		if colL && (fixedPoint(c.Right) || placeholders && placeholder(c.Right)) {
			c.Right = ExactLiteralArg(c.Right)
		} else if colR && (fixedPoint(c.Left) || placeholders && placeholder(c.Left)) {
			c.Left = ExactLiteralArg(c.Left)
		}
		return true, nil
	}, roots...)
	return st, nil
}

// ddlExprs appends to roots the expressions of d whose literals keep
// their value: a view's query, which GMS binds from this statement for
// the session that creates it (its stored text is parsed again), and the
// CHECK constraints and generated columns of a CREATE or ALTER TABLE,
// which are stored as the bound expression's text (so 3.499 compared with
// a DECIMAL(5,2) column was stored as 3.50) and bound from it again, with
// the engine's parser, for every write.
func ddlExprs(roots []ast.SQLNode, d *ast.DDL) []ast.SQLNode {
	if d == nil {
		return roots
	}
	if d.ViewSpec != nil && d.ViewSpec.ViewExpr != nil {
		roots = append(roots, d.ViewSpec.ViewExpr)
	}
	if ts := d.TableSpec; ts != nil {
		for _, c := range ts.Columns {
			if c != nil && c.Type.GeneratedExpr != nil {
				roots = append(roots, c.Type.GeneratedExpr)
			}
		}
		for _, c := range ts.Constraints {
			if c == nil {
				continue
			}
			if ch, ok := c.Details.(*ast.CheckConstraintDefinition); ok && ch != nil && ch.Expr != nil {
				roots = append(roots, ch.Expr)
			}
		}
	}
	return roots
}

// placeholder reports whether e is a placeholder (? or :name).
func placeholder(e ast.Expr) bool {
	v, ok := e.(*ast.SQLVal)
	return ok && v.Type == ast.ValArg
}

// fixedPoint reports whether e is a literal GMS binds as a DECIMAL: digits
// with a point, no exponent.
func fixedPoint(e ast.Expr) bool {
	v, ok := e.(*ast.SQLVal)
	if !ok || v.Type != ast.FloatVal {
		return false
	}
	for _, c := range v.Val {
		if c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}

// ExactLiteralArg returns e, a fixed-point literal of the text or one given
// for a placeholder, as it must be bound: kept from GMS's binder, which would
// round it to the scale of a DECIMAL column it is compared with.
func ExactLiteralArg(e ast.Expr) ast.Expr {
	return &ast.FuncExpr{Name: ast.NewColIdent(exactLiteralName), Exprs: ast.SelectExprs{&ast.AliasedExpr{Expr: e}}}
}

// exactLiteral is a literal kept from GMS's binder (see above): it is its
// child in every way but its Go type.
type exactLiteral struct{ lit sql.Expression }

var _ sql.Expression = (*exactLiteral)(nil)

func (e *exactLiteral) Resolved() bool                                { return e.lit.Resolved() }
func (e *exactLiteral) String() string                                { return e.lit.String() }
func (e *exactLiteral) Type() sql.Type                                { return e.lit.Type() }
func (e *exactLiteral) IsNullable() bool                              { return e.lit.IsNullable() }
func (e *exactLiteral) Children() []sql.Expression                    { return []sql.Expression{e.lit} }
func (e *exactLiteral) Eval(ctx *sql.Context, r sql.Row) (any, error) { return e.lit.Eval(ctx, r) }

// WithChildren implements sql.Expression.
func (e *exactLiteral) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	if len(kids) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(e, len(kids), 1)
	}
	return &exactLiteral{kids[0]}, nil
}

// literalOf returns the literal of an exactLiteral, or e.
func literalOf(e sql.Expression) sql.Expression {
	if x, ok := e.(*exactLiteral); ok {
		if _, isLit := x.lit.(*expression.Literal); isLit {
			return x.lit
		}
	}
	return e
}
