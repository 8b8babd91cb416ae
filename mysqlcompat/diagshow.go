package mysqlcompat

import (
	"context"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// SHOW ERRORS, SHOW COUNT(*) WARNINGS and SHOW COUNT(*) ERRORS
//
// vitess parses them (a Show of type "errors", or CountStar), but GMS
// builds only SHOW WARNINGS and fails the others with 1105. They read the
// session's diagnostics area as SHOW WARNINGS does and, like it, do not
// clear it. GMS clears the area for every statement but SHOW WARNINGS
// (engine.go, clearWarnings, which looks at the bound plan), so the parser
// hands GMS a SHOW WARNINGS whose LIMIT offset is a tuple of the kind of
// statement written and the statement's own offset: no LIMIT a client
// writes is a tuple (the grammar takes a number, a parameter or a name
// there, and a parameter binds to a value), so the kind travels out of
// band. orderWarnings (showwarnings.go) then replaces the plan by the
// statement's (diagnosticShow).
//
// Targets GMS v0.20.0 (planbuilder/show.go, buildShowWarnings; engine.go,
// clearWarnings). Without it, TestDiagnosticsSpec fails.
//
// SHOW WARNINGS with an offset goes the same way (kind diagWarnings): GMS
// reads an offset past an int64 as a negative one and shows every row,
// where MySQL shows none. An offset past the conditions shows nothing.
const (
	diagErrors        = 1
	diagCountWarnings = 2
	diagCountErrors   = 3
	diagWarnings      = 4
)

// diagnosticsParser wraps an engine's parser (install.go): the SHOW
// statements above become SHOW WARNINGS with the kind in the offset.
type diagnosticsParser struct{ sql.Parser }

func (p diagnosticsParser) ParseSimple(query string) (ast.Statement, error) {
	st, err := p.Parser.ParseSimple(query)
	if err == nil {
		markDiagnosticShow(st)
	}
	return st, err
}

func (p diagnosticsParser) Parse(ctx *sql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	st, q, rest, err := p.Parser.Parse(ctx, query, multi)
	if err == nil {
		markDiagnosticShow(st)
	}
	return st, q, rest, err
}

func (p diagnosticsParser) ParseWithOptions(ctx context.Context, query string, delimiter rune, multi bool, options ast.ParserOptions) (ast.Statement, string, string, error) {
	st, q, rest, err := p.Parser.ParseWithOptions(ctx, query, delimiter, multi, options)
	if err == nil {
		markDiagnosticShow(st)
	}
	return st, q, rest, err
}

func (p diagnosticsParser) ParseOneWithOptions(ctx context.Context, query string, options ast.ParserOptions) (ast.Statement, int, error) {
	st, n, err := p.Parser.ParseOneWithOptions(ctx, query, options)
	if err == nil {
		markDiagnosticShow(st)
	}
	return st, n, err
}

// markDiagnosticShow rewrites st in place when it is SHOW ERRORS or SHOW
// COUNT(*) WARNINGS or ERRORS.
func markDiagnosticShow(st ast.Statement) {
	s, ok := st.(*ast.Show)
	if !ok {
		return
	}
	var kind int64
	switch {
	case s.CountStar && strings.EqualFold(s.Type, "warnings"):
		kind = diagCountWarnings
	case s.CountStar && strings.EqualFold(s.Type, "errors"):
		kind = diagCountErrors
	case strings.EqualFold(s.Type, "errors"):
		kind = diagErrors
	case strings.EqualFold(s.Type, "warnings") && s.Limit != nil && s.Limit.Offset != nil:
		kind = diagWarnings
	default:
		return
	}
	var offset ast.Expr = ast.NewIntVal([]byte("0"))
	rowcount := ast.Expr(ast.NewIntVal([]byte(strconv.FormatInt(int64(^uint64(0)>>1), 10))))
	if s.Limit != nil {
		if s.Limit.Offset != nil {
			offset = s.Limit.Offset
		}
		if s.Limit.Rowcount != nil {
			rowcount = s.Limit.Rowcount
			// A count past an int64 (GMS's LIMIT fails on it) is every row.
			if v, ok := rowcount.(*ast.SQLVal); ok && v.Type == ast.IntVal {
				if _, err := strconv.ParseInt(string(v.Val), 10, 64); err != nil {
					rowcount = ast.NewIntVal([]byte(strconv.FormatInt(int64(^uint64(0)>>1), 10)))
				}
			}
		}
	}
	s.Type = "warnings"
	s.CountStar = false
	kindVal := ast.NewIntVal([]byte(strconv.FormatInt(kind, 10)))
	s.Limit = &ast.Limit{Offset: ast.ValTuple{kindVal, offset}, Rowcount: rowcount}
}

// diagnosticShows is an analyzer rule: the plan of the statement a SHOW
// WARNINGS markDiagnosticShow made stands for. It runs before GMS's
// validateOffsetAndLimit (install.go), which refuses the marked offset.
func diagnosticShows(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if qFlags != nil && !qFlags.IsSet(sql.QFlagShowWarnings) {
		return n, transform.SameTree, nil
	}
	d, ok, err := diagnosticShow(ctx, n)
	if !ok || err != nil {
		return n, transform.SameTree, err
	}
	return d, transform.NewTree, nil
}

// diagnosticShow returns the plan of the statement n stands for when n is
// a SHOW WARNINGS markDiagnosticShow made: Limit over Offset (the mark)
// over the session's warnings, newest first.
func diagnosticShow(ctx *sql.Context, n sql.Node) (sql.Node, bool, error) {
	lim, ok := n.(*plan.Limit)
	if !ok {
		return n, false, nil
	}
	off, ok := lim.Child.(*plan.Offset)
	if !ok {
		return n, false, nil
	}
	sw, ok := off.Child.(plan.ShowWarnings)
	if !ok {
		return n, false, nil
	}
	mark, ok := off.Offset.(expression.Tuple)
	if !ok || len(mark) != 2 {
		return n, false, nil
	}
	lit, ok := mark[0].(*expression.Literal)
	if !ok {
		return n, false, nil
	}
	v, _, err := types.Int64.Convert(ctx, lit.Value())
	if err != nil {
		return n, false, nil
	}
	kind, _ := v.(int64)
	// The statement's own offset, a number or a bound parameter. One
	// past any count of conditions (it may not fit an int64) shows
	// nothing; one not bound yet (a statement being prepared, whose plan
	// does not run) counts as 0.
	offset := uint64(0)
	if o, err := mark[1].Eval(ctx, nil); err == nil && o != nil {
		u, _, err := types.Uint64.Convert(ctx, o)
		if u, ok := u.(uint64); ok && err == nil {
			offset = u
		} else {
			offset = ^uint64(0)
		}
	}
	errs := 0
	for _, w := range sw {
		if w.Level == "Error" {
			errs++
		}
	}
	switch kind {
	case diagCountWarnings:
		return &diagnosticCount{name: "@@session.warning_count", n: int64(len(sw))}, true, nil
	case diagCountErrors:
		return &diagnosticCount{name: "@@session.error_count", n: int64(errs)}, true, nil
	case diagErrors, diagWarnings:
		list := make([]*sql.Warning, 0, len(sw))
		for i := len(sw) - 1; i >= 0; i-- { // raised order
			if kind == diagWarnings || sw[i].Level == "Error" {
				list = append(list, sw[i])
			}
		}
		list = list[min(offset, uint64(len(list))):]
		c, err := lim.WithChildren(&warningList{list: list})
		return c, err == nil, err
	}
	return n, false, nil
}

// diagnosticCount is SHOW COUNT(*) WARNINGS or ERRORS: one row, named as
// MySQL names it.
type diagnosticCount struct {
	name string
	n    int64
}

var (
	_ sql.ExecSourceRel      = (*diagnosticCount)(nil)
	_ sql.CollationCoercible = (*diagnosticCount)(nil)
)

// RowIter implements sql.ExecSourceRel.
func (d *diagnosticCount) RowIter(*sql.Context, sql.Row) (sql.RowIter, error) {
	return sql.RowsToRowIter(sql.NewRow(d.n)), nil
}

func (d *diagnosticCount) Schema() sql.Schema {
	return sql.Schema{{Name: d.name, Type: types.Int64}}
}
func (d *diagnosticCount) Children() []sql.Node { return nil }
func (d *diagnosticCount) Resolved() bool       { return true }
func (d *diagnosticCount) IsReadOnly() bool     { return true }
func (d *diagnosticCount) String() string       { return "SHOW COUNT(*)" }

func (d *diagnosticCount) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(d, len(children), 0)
	}
	return d, nil
}

func (d *diagnosticCount) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_binary, 7
}
