package mysqlcompat

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Window functions over grouped rows
//
// MySQL evaluates window functions after GROUP BY and HAVING, over the
// groups: `SELECT k, SUM(c), RANK() OVER (ORDER BY SUM(c) DESC) FROM t
// GROUP BY k` ranks the groups, and `SUM(SUM(c)) OVER ()` is the total of
// all groups. GMS's planner refuses any SELECT that has both (an error
// whose message it leaves unformatted), so such a SELECT is rewritten,
// right after parsing, into the two steps MySQL's evaluation implies:
//
//	SELECT <select list, windows kept, grouped values read from columns>
//	FROM (SELECT <group keys, aggregates and grouped columns>
//	      FROM ... WHERE ... GROUP BY ... HAVING ...) AS __grouped
//	WINDOW ... ORDER BY ... LIMIT ...
//
// In the outer SELECT an expression that is a GROUP BY expression, an
// aggregate call (not itself windowed), a column, or an expression around
// a subquery becomes a reference to a column of the derived table that
// computes it; every group key is a column too. Select items keep their
// names (the text they were written as, or their alias). GROUP BY and
// HAVING stay inside, with select-list aliases and positions replaced by
// the expressions they name. ORDER BY, DISTINCT, LIMIT, WINDOW and WITH
// stay outside: WITH so that the derived table still sees the CTEs.
//
// The same rewrite serves grouped SELECTs with subqueries whose group keys
// are not all selected (subqueriesOverGroups): GMS evaluates a subquery's
// references to the group right only when the keys are selected, as the
// derived table selects them.
//
// A column outside any aggregate under implicit grouping (aggregates and no
// GROUP BY) is an error in MySQL (1140, only_full_group_by), and such a
// statement is left to GMS, which fails it with that error. So are the
// statements the rewrite cannot express faithfully: * in the select list,
// a GROUP BY or HAVING alias that may shadow a column. The rewrite works
// on copies, so a statement it declines is left as parsed.
//
// Only statements whose text contains OVER or GROUP are examined, so no
// other statement pays for more than that scan.
//
// Targets GMS v0.20.0. Without it, TestWindowsOverGroups fails.

// groupedTable is the derived table's name; groupedColumn names its
// columns. Both start with "__" so that they cannot meet a user's
// unquoted identifiers by accident.
const (
	groupedTable  = "__grouped"
	groupedColumn = "__g"
)

// windowParser is GMS's parser with the rewrite applied to what it parses.
// The engine uses it for statements, prepared statements and the stored
// definitions of views, triggers and routines alike.
type windowParser struct{ sql.Parser }

func (p windowParser) ParseSimple(query string) (ast.Statement, error) {
	st, err := p.Parser.ParseSimple(query)
	return rewriteGroupedWindows(query, st, err)
}

func (p windowParser) Parse(ctx *sql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	st, q, rest, err := p.Parser.Parse(ctx, query, multi)
	st, err = rewriteGroupedWindows(q, st, err)
	return st, q, rest, err
}

func (p windowParser) ParseWithOptions(ctx context.Context, query string, delimiter rune, multi bool, options ast.ParserOptions) (ast.Statement, string, string, error) {
	st, q, rest, err := p.Parser.ParseWithOptions(ctx, query, delimiter, multi, options)
	st, err = rewriteGroupedWindows(q, st, err)
	return st, q, rest, err
}

func (p windowParser) ParseOneWithOptions(ctx context.Context, query string, options ast.ParserOptions) (ast.Statement, int, error) {
	st, n, err := p.Parser.ParseOneWithOptions(ctx, query, options)
	end := len(query)
	if n > 0 && n < end {
		end = n
	}
	st, err = rewriteGroupedWindows(query[:end], st, err)
	return st, n, err
}

// rewriteGroupedWindows rewrites every SELECT of st that has window
// functions over grouped rows, or subqueries GMS would evaluate without
// their group's key (subqueriesOverGroups). query is st's text, for the
// cheap test.
func rewriteGroupedWindows(query string, st ast.Statement, err error) (ast.Statement, error) {
	if err != nil || st == nil || !containsFold(query, "over") && !containsFold(query, "group") {
		return st, err
	}
	var sels []*ast.Select
	visit := func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.Select:
			sels = append(sels, n)
		case *ast.DDL:
			// DDL's walk does not reach CREATE TABLE ... AS SELECT.
			if n.OptSelect != nil {
				collectSelects(n.OptSelect.Select, &sels)
			}
		case *ast.Explain:
			// Nor does EXPLAIN's reach its statement.
			collectSelects(n.Statement, &sels)
		}
		return true, nil
	}
	_ = ast.Walk(visit, st)
	for _, s := range sels {
		if !windowsOverGroups(s) && !subqueriesOverGroups(s) {
			continue
		}
		if err := rewriteSelect(s); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// collectSelects appends the SELECTs in n to sels.
func collectSelects(n ast.SQLNode, sels *[]*ast.Select) {
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		if s, ok := n.(*ast.Select); ok {
			*sels = append(*sels, s)
		}
		return true, nil
	}, n)
}

// isAggregate reports whether e is a grouping aggregate call: not windowed.
func isAggregate(e ast.SQLNode) bool {
	switch e := e.(type) {
	case *ast.FuncExpr:
		return e.Over == nil && ast.Aggregates[e.Name.Lowered()]
	case *ast.GroupConcatExpr:
		return true
	}
	return false
}

// windowsOverGroups reports whether s has window functions and groups its
// rows, explicitly or by an aggregate. Subqueries are their own SELECTs.
func windowsOverGroups(s *ast.Select) bool {
	var windows, aggregates bool
	visit := func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.FuncExpr:
			if n.Over != nil {
				windows = true
			}
		}
		if isAggregate(n) {
			aggregates = true
		}
		return true, nil
	}
	_ = ast.Walk(visit, s.SelectExprs, s.OrderBy)
	if !windows {
		return false
	}
	if s.Having != nil {
		_ = ast.Walk(visit, s.Having)
	}
	return aggregates || len(s.GroupBy) > 0 || s.Having != nil
}

// subqueriesOverGroups reports whether s groups by keys it does not select
// and has a subquery in its select list, HAVING or ORDER BY. GMS evaluates
// such a subquery's references to the grouped row wrongly: a scalar
// subquery failed with 1242 or an index error, and EXISTS answered for
// another row than its group's, silently. With every key selected (as
// the derived table selects them) GMS gets them right.
func subqueriesOverGroups(s *ast.Select) bool {
	if len(s.GroupBy) == 0 {
		return false
	}
	found := false
	nodes := []ast.SQLNode{s.SelectExprs, s.OrderBy}
	if s.Having != nil {
		nodes = append(nodes, s.Having)
	}
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		if _, ok := n.(*ast.Subquery); ok {
			found = true
		}
		return !found, nil
	}, nodes...)
	if !found {
		return false
	}
	selected := make(map[string]bool, len(s.SelectExprs))
	for _, se := range s.SelectExprs {
		if ae, ok := se.(*ast.AliasedExpr); ok {
			selected[ast.String(ae.Expr)] = true
		}
	}
	for _, e := range s.GroupBy {
		if _, ok := e.(*ast.SQLVal); ok {
			continue // a position: selected
		}
		if !selected[ast.String(e)] {
			return true
		}
	}
	return false
}

// errNotRewritten leaves a statement to GMS.
var errNotRewritten = fmt.Errorf("not rewritten")

// grouping is the state of one SELECT's rewrite.
type grouping struct {
	implicit bool            // aggregates without GROUP BY
	keys     map[string]bool // the GROUP BY expressions, by their text
	inner    ast.SelectExprs // the derived table's columns
	byText   map[string]string
	pos      int // the select item being rewritten, from 1; 0 elsewhere
}

// rewriteSelect turns s into a SELECT over a derived table that groups. On
// errNotRewritten s is left as it was.
func rewriteSelect(s *ast.Select) error {
	for _, se := range s.SelectExprs {
		if _, ok := se.(*ast.AliasedExpr); !ok {
			return nil // *, or t.*
		}
	}
	aliases := make(map[string]ast.Expr)
	for _, se := range s.SelectExprs {
		ae := se.(*ast.AliasedExpr)
		if !ae.As.IsEmpty() {
			aliases[ae.As.Lowered()] = ae.Expr
		}
	}
	groupBy, having, err := innerGrouping(s, aliases)
	if err != nil {
		return ignoreNotRewritten(err)
	}
	g := &grouping{
		implicit: len(s.GroupBy) == 0,
		keys:     make(map[string]bool, len(groupBy)),
		byText:   make(map[string]string),
	}
	for _, e := range groupBy {
		g.keys[ast.String(e)] = true
		// Every group key is a column, whether the outer part reads it or
		// not: GMS evaluates a correlated subquery of a grouped SELECT
		// only when the key it correlates on is selected.
		if isPointer(e) {
			c, err := copyExpr(e)
			if err != nil {
				return nil
			}
			g.column(c)
		}
	}
	items, err := g.outerItems(s.SelectExprs)
	if err != nil {
		return ignoreNotRewritten(err)
	}
	window, orderBy, err := g.outerWindowAndOrder(s, aliases)
	if err != nil {
		return ignoreNotRewritten(err)
	}
	if len(g.inner) == 0 {
		g.column(ast.NewIntVal([]byte("1")))
	}

	inner := &ast.Select{
		Comments:    s.Comments,
		SelectExprs: g.inner,
		From:        s.From,
		Where:       s.Where,
		GroupBy:     groupBy,
		Having:      having,
	}
	*s = ast.Select{
		QueryOpts:   s.QueryOpts,
		With:        s.With,
		SelectExprs: items,
		From: ast.TableExprs{&ast.AliasedTableExpr{
			Expr: &ast.Subquery{Select: inner},
			As:   ast.NewTableIdent(groupedTable),
			// As the parser marks a derived table: its tables carry
			// their own privilege checks.
			Auth: ast.AuthInformation{AuthType: ast.AuthType_IGNORE},
		}},
		Window:  window,
		OrderBy: orderBy,
		Limit:   s.Limit,
		Lock:    s.Lock,
		Into:    s.Into,
	}
	return nil
}

// innerGrouping returns the derived table's GROUP BY and HAVING, with
// aliases and positions resolved, on copies: the select items themselves
// are rewritten for the outer SELECT.
func innerGrouping(s *ast.Select, aliases map[string]ast.Expr) (ast.GroupBy, *ast.Where, error) {
	groupBy := make(ast.GroupBy, 0, len(s.GroupBy))
	for _, e := range s.GroupBy {
		e, err := resolveSelectRef(e, s.SelectExprs, aliases)
		if err != nil {
			return nil, nil, err
		}
		groupBy = append(groupBy, e)
	}
	var having *ast.Where
	if s.Having != nil {
		e, err := resolveAliases(s.Having.Expr, aliases)
		if err != nil {
			return nil, nil, err
		}
		having = &ast.Where{Type: s.Having.Type, Expr: e}
	}
	return groupBy, having, nil
}

// outerItems returns copies of the select items that read grouped values
// from the derived table, each keeping the name it was written with.
func (g *grouping) outerItems(exprs ast.SelectExprs) (ast.SelectExprs, error) {
	items := make(ast.SelectExprs, len(exprs))
	for i, se := range exprs {
		ae := *se.(*ast.AliasedExpr)
		if ae.InputExpression == "" && ae.As.IsEmpty() {
			ae.InputExpression = ast.String(ae.Expr)
		}
		g.pos = i + 1
		e, err := g.outerCopy(ae.Expr)
		if err != nil {
			return nil, err
		}
		ae.Expr = e
		items[i] = &ae
	}
	g.pos = 0
	return items, nil
}

// outerWindowAndOrder returns copies of s's named windows and ORDER BY that
// read grouped values from the derived table. An ORDER BY naming a select
// alias or a position is kept as it is.
func (g *grouping) outerWindowAndOrder(s *ast.Select, aliases map[string]ast.Expr) (ast.Window, ast.OrderBy, error) {
	var window ast.Window
	if len(s.Window) > 0 {
		window = make(ast.Window, len(s.Window))
	}
	for i, w := range s.Window {
		w2 := *w
		if err := g.windowDef((*ast.Over)(&w2)); err != nil {
			return nil, nil, err
		}
		window[i] = &w2
	}
	var orderBy ast.OrderBy
	if len(s.OrderBy) > 0 {
		orderBy = make(ast.OrderBy, len(s.OrderBy))
	}
	for i, o := range s.OrderBy {
		o2 := *o
		if !isAliasRef(o.Expr, aliases) && !isLiteral(o.Expr) {
			e, err := g.outerCopy(o.Expr)
			if err != nil {
				return nil, nil, err
			}
			o2.Expr = e
		}
		orderBy[i] = &o2
	}
	return window, orderBy, nil
}

func ignoreNotRewritten(err error) error {
	if err == errNotRewritten {
		return nil
	}
	return err
}

// outerCopy returns a copy of e, a part of the outer SELECT, with grouped
// values read from columns of the derived table.
func (g *grouping) outerCopy(e ast.Expr) (ast.Expr, error) {
	e, err := copyExpr(e)
	if err != nil {
		return nil, err
	}
	return g.outer(e)
}

// outer rewrites e in place (see outerCopy). Windowed calls keep their
// place, their arguments and window rewritten.
func (g *grouping) outer(e ast.Expr) (ast.Expr, error) {
	var targets []ast.Expr
	var err error
	visit := func(n ast.SQLNode) (bool, error) {
		x, ok := n.(ast.Expr)
		if !ok {
			return true, nil
		}
		if fn, ok := x.(*ast.FuncExpr); ok && fn.Over != nil {
			for _, a := range fn.Exprs {
				if ae, ok := a.(*ast.AliasedExpr); ok {
					if ae.Expr, err = g.outer(ae.Expr); err != nil {
						return false, err
					}
				}
			}
			return false, g.windowDef(fn.Over)
		}
		if isPointer(x) && g.keys[ast.String(x)] {
			targets = append(targets, x)
			return false, nil
		}
		if isAggregate(x) {
			targets = append(targets, x)
			return false, nil
		}
		if hasSubquery(x) && !hasWindow(x) {
			// Evaluated per group, where its outer references are
			// grouped columns, as in MySQL: the whole expression
			// around the subquery, as EXISTS and IN take it as rows.
			targets = append(targets, x)
			return false, nil
		}
		if _, ok := x.(*ast.ColName); ok {
			if g.implicit && g.pos > 0 {
				return false, errNotRewritten // only_full_group_by
			}
			targets = append(targets, x)
			return false, nil
		}
		return true, nil
	}
	if err := ast.Walk(visit, e); err != nil {
		return nil, err
	}
	for _, t := range targets {
		e = ast.ReplaceExpr(e, t, g.column(t))
	}
	// Every target must have been found where it stood.
	left := false
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		for _, t := range targets {
			if x, ok := n.(ast.Expr); ok && x == t {
				left = true
			}
		}
		return !left, nil
	}, e)
	if left {
		return nil, errNotRewritten
	}
	return e, nil
}

// windowDef rewrites a window's PARTITION BY and ORDER BY in place.
func (g *grouping) windowDef(w *ast.Over) error {
	if w == nil {
		return nil
	}
	// Empty lists stay nil: GMS takes an empty, non-nil ORDER BY for one
	// that orders, and gives the window a running frame.
	if len(w.PartitionBy) == 0 && len(w.OrderBy) == 0 {
		return nil
	}
	part := make(ast.Exprs, len(w.PartitionBy))
	for i, e := range w.PartitionBy {
		e, err := g.outerCopy(e)
		if err != nil {
			return err
		}
		part[i] = e
	}
	if len(part) > 0 {
		w.PartitionBy = part
	}
	if len(w.OrderBy) == 0 {
		return nil
	}
	order := make(ast.OrderBy, len(w.OrderBy))
	for i, o := range w.OrderBy {
		o2 := *o
		e, err := g.outerCopy(o.Expr)
		if err != nil {
			return err
		}
		o2.Expr = e
		order[i] = &o2
	}
	w.OrderBy = order
	return nil
}

// column returns a reference to the derived table's column for e, adding
// the column the first time e's text is seen.
func (g *grouping) column(e ast.Expr) ast.Expr {
	text := ast.String(e)
	name, ok := g.byText[text]
	if !ok {
		name = fmt.Sprintf("%s%d", groupedColumn, len(g.inner)+1)
		g.byText[text] = name
		g.inner = append(g.inner, &ast.AliasedExpr{Expr: e, As: ast.NewColIdent(name)})
	}
	return &ast.ColName{Name: ast.NewColIdent(name)}
}

// resolveSelectRef returns the expression a GROUP BY item stands for: the
// select item at a position, or the expression under an alias (a copy).
func resolveSelectRef(e ast.Expr, items ast.SelectExprs, aliases map[string]ast.Expr) (ast.Expr, error) {
	if v, ok := e.(*ast.SQLVal); ok && v.Type == ast.IntVal {
		var n int
		if _, err := fmt.Sscan(string(v.Val), &n); err != nil || n < 1 || n > len(items) {
			return nil, errNotRewritten
		}
		return copyExpr(items[n-1].(*ast.AliasedExpr).Expr)
	}
	return resolveAliases(e, aliases)
}

// resolveAliases returns a copy of e with unqualified names of select
// aliases replaced by copies of their expressions. An alias whose
// expression names a column of the same name is ambiguous (MySQL takes the
// column in GROUP BY and HAVING), and its statement is left to GMS.
func resolveAliases(e ast.Expr, aliases map[string]ast.Expr) (ast.Expr, error) {
	e, err := copyExpr(e)
	if err != nil {
		return nil, err
	}
	var refs []*ast.ColName
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.ColName:
			if n.Qualifier.IsEmpty() && aliases[n.Name.Lowered()] != nil {
				refs = append(refs, n)
			}
		}
		return true, nil
	}, e)
	for _, c := range refs {
		target := aliases[c.Name.Lowered()]
		if namesColumn(target, c.Name) || hasWindow(target) {
			return nil, errNotRewritten
		}
		to, err := copyExpr(target)
		if err != nil {
			return nil, err
		}
		e = ast.ReplaceExpr(e, c, to)
	}
	return e, nil
}

// copyExpr returns a deep copy of e, by printing and parsing it again.
func copyExpr(e ast.Expr) (ast.Expr, error) {
	st, err := ast.Parse("select " + ast.String(e))
	if err != nil {
		return nil, errNotRewritten
	}
	s, ok := st.(*ast.Select)
	if !ok || len(s.SelectExprs) != 1 {
		return nil, errNotRewritten
	}
	ae, ok := s.SelectExprs[0].(*ast.AliasedExpr)
	if !ok {
		return nil, errNotRewritten
	}
	return ae.Expr, nil
}

// namesColumn reports whether e refers to a column called name.
func namesColumn(e ast.Expr, name ast.ColIdent) bool {
	return exprHolds(e, func(n ast.SQLNode) bool {
		c, ok := n.(*ast.ColName)
		return ok && c.Name.Equal(name)
	})
}

func hasSubquery(e ast.Expr) bool {
	return exprHolds(e, func(n ast.SQLNode) bool {
		_, ok := n.(*ast.Subquery)
		return ok
	})
}

func hasWindow(e ast.Expr) bool {
	return exprHolds(e, func(n ast.SQLNode) bool {
		f, ok := n.(*ast.FuncExpr)
		return ok && f.Over != nil
	})
}

// exprHolds reports whether e or a node within it satisfies match.
func exprHolds(e ast.Expr, match func(ast.SQLNode) bool) bool {
	found := false
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		found = found || match(n)
		return !found, nil
	}, e)
	return found
}

// isAliasRef reports whether e names a select alias: MySQL resolves an
// unqualified ORDER BY name to the alias before any column.
func isAliasRef(e ast.Expr, aliases map[string]ast.Expr) bool {
	c, ok := e.(*ast.ColName)
	return ok && c.Qualifier.IsEmpty() && aliases[c.Name.Lowered()] != nil
}

func isLiteral(e ast.Expr) bool {
	_, ok := e.(*ast.SQLVal)
	return ok
}

// isPointer reports whether e can be told apart from an equal expression
// elsewhere by identity, which ReplaceExpr relies on.
func isPointer(e ast.Expr) bool {
	return reflect.TypeOf(e).Kind() == reflect.Pointer && !isLiteral(e)
}

// containsFold reports whether s contains the lower-case ASCII sub, in any
// case, without allocating.
func containsFold(s, sub string) bool {
	first := sub[0]
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i]|0x20 == first && strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}
