package mysqlcompat

import (
	"context"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
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
// hands GMS a SHOW WARNINGS whose LIMIT offset tells which statement was
// written: an offset above diagMark, which no SHOW WARNINGS a client
// writes would use (it would show nothing), carries the kind and the
// statement's own offset. orderWarnings (showwarnings.go) then replaces
// the plan by the statement's (diagnosticShow).
//
// Targets GMS v0.20.0 (planbuilder/show.go, buildShowWarnings; engine.go,
// clearWarnings). Without it, TestDiagnosticsSpec fails.
const (
	diagMark  = int64(1) << 62
	diagShift = 40
	diagMax   = int64(1)<<diagShift - 1 // largest offset carried

	diagErrors        = 1
	diagCountWarnings = 2
	diagCountErrors   = 3
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
	default:
		return
	}
	offset := int64(0)
	rowcount := ast.Expr(ast.NewIntVal([]byte(strconv.FormatInt(int64(^uint64(0)>>1), 10))))
	if s.Limit != nil {
		if v, ok := s.Limit.Offset.(*ast.SQLVal); ok && v.Type == ast.IntVal {
			if n, err := strconv.ParseInt(string(v.Val), 10, 64); err == nil {
				offset = min(n, diagMax)
			}
		}
		if s.Limit.Rowcount != nil {
			rowcount = s.Limit.Rowcount
		}
	}
	s.Type = "warnings"
	s.CountStar = false
	mark := diagMark | kind<<diagShift | offset
	s.Limit = &ast.Limit{Offset: ast.NewIntVal([]byte(strconv.FormatInt(mark, 10))), Rowcount: rowcount}
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
	lit, ok := off.Offset.(*expression.Literal)
	if !ok {
		return n, false, nil
	}
	v, _, err := types.Int64.Convert(ctx, lit.Value())
	if err != nil {
		return n, false, nil
	}
	mark, _ := v.(int64)
	if mark < diagMark {
		return n, false, nil
	}
	kind, offset := (mark&^diagMark)>>diagShift, mark&diagMax
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
	case diagErrors:
		list := make([]*sql.Warning, 0, errs)
		for i := len(sw) - 1; i >= 0; i-- { // raised order
			if sw[i].Level == "Error" {
				list = append(list, sw[i])
			}
		}
		list = list[min(int(offset), len(list)):]
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
