package mysqlcompat

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/transform"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// CHECK constraints of a table with virtual columns
//
// For the same reason as SHOW (showvirtual.go), GMS's binder loads no CHECK
// constraint for an INSERT, REPLACE or single-table UPDATE of a table with
// a VIRTUAL generated column: it asks the wrapper that computes the
// virtual columns, which is no sql.CheckTable. The rows were written
// unchecked. virtualTableChecks gives such a statement the table's CHECK
// constraints, bound as the binder binds them, over the table's row in
// schema order (the row INSERT and UPDATE check).

// virtualTables is the rule for tables with virtual columns: their SHOW
// statements and their CHECK constraints. It runs with the value rules,
// at the end of every analysis and on the plans GMS analyzed with fixed
// batches.
func virtualTables(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	switch n.(type) {
	case *plan.InsertInto, *plan.Update, *plan.DeleteFrom, *plan.TriggerExecutor, *plan.BeginEndBlock,
		*plan.Block, *plan.TriggerBeginEndBlock:
		return virtualTableChecksTree(ctx, a, n)
	}
	return showVirtualTables(ctx, a, n, scope, sel, qFlags)
}

// virtualTableChecksTree applies virtualTableChecks over the whole tree
// of n: the statements of trigger bodies (under TriggerExecutor, on either
// side, and under the statement a BEFORE trigger runs for) and of blocks
// are in it. An INSERT's source, where its BEFORE triggers run, is no
// child of the INSERT, so it is walked apart.
func virtualTableChecksTree(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		n, same, err := virtualTableChecks(ctx, a, n)
		ii, ok := n.(*plan.InsertInto)
		if err != nil || !ok || ii.Source == nil {
			return n, same, err
		}
		src, srcSame, err := virtualTableChecksTree(ctx, a, ii.Source)
		if err != nil || srcSame == transform.SameTree {
			return n, same, err
		}
		return ii.WithSource(src), transform.NewTree, nil
	})
}

// virtualTableChecks adds the CHECK constraints to an INSERT or UPDATE of
// a table with virtual columns (see above). The checks of an UPDATE over
// a join (a multi-table UPDATE, or one GMS turned into a semi-join for an
// IN subquery) see the join's row: each updated table's checks read its
// columns where they are in that row, as GMS binds them for other tables.
func virtualTableChecks(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	switch x := n.(type) {
	case *plan.InsertInto:
		if len(x.Checks()) > 0 {
			return n, transform.SameTree, nil
		}
		db, t := virtualTarget(x.Destination)
		checks, err := boundChecks(ctx, a, db, t, 0)
		if err != nil || len(checks) == 0 {
			return n, transform.SameTree, err
		}
		return x.WithChecks(checks), transform.NewTree, nil
	case *plan.Update:
		if uj, ok := x.Child.(*plan.UpdateJoin); ok {
			return joinUpdateChecks(ctx, a, x, uj)
		}
		if len(x.Checks()) > 0 {
			return n, transform.SameTree, nil
		}
		db, t := virtualTarget(updatedTable(x.Child))
		checks, err := boundChecks(ctx, a, db, t, 0)
		if err != nil || len(checks) == 0 {
			return n, transform.SameTree, err
		}
		return x.WithChecks(checks), transform.NewTree, nil
	}
	return n, transform.SameTree, nil
}

// joinUpdateChecks adds to an UPDATE over a join the CHECK constraints of
// each table it updates that has virtual columns, over the join's row,
// after those GMS bound for the other tables. A check of the same name
// already there is not added again: the rule runs more than once on a
// plan.
func joinUpdateChecks(ctx *sql.Context, a *analyzer.Analyzer, u *plan.Update, uj *plan.UpdateJoin) (sql.Node, transform.TreeIdentity, error) {
	src, ok := uj.Child.(*plan.UpdateSource)
	if !ok {
		return u, transform.SameTree, nil
	}
	join := src.Child
	var checks sql.CheckConstraints
	for name := range uj.Updaters {
		db, t := joinTarget(join, name)
		if t == nil {
			continue
		}
		offset := -1
		for i, c := range join.Schema() {
			if strings.EqualFold(c.Source, name) {
				offset = i
				break
			}
		}
		if offset < 0 {
			return nil, transform.SameTree, fmt.Errorf("update of %s: no columns of it in the joined row", name)
		}
		tc, err := boundChecks(ctx, a, db, t, offset)
		if err != nil {
			return nil, transform.SameTree, err
		}
		for _, c := range tc {
			if !hasCheck(u.Checks(), c.Name) {
				checks = append(checks, c)
			}
		}
	}
	if len(checks) == 0 {
		return u, transform.SameTree, nil
	}
	return u.WithChecks(append(slices.Clip(u.Checks()), checks...)), transform.NewTree, nil
}

// hasCheck reports whether checks holds one named name.
func hasCheck(checks sql.CheckConstraints, name string) bool {
	for _, c := range checks {
		if strings.EqualFold(c.Name, name) {
			return true
		}
	}
	return false
}

// joinTarget returns the database and the table with virtual columns that
// the join n reads under name (its alias, or its own name), or nil.
func joinTarget(n sql.Node, name string) (db string, t sql.Table) {
	transform.Inspect(n, func(n sql.Node) bool {
		if t != nil {
			return false
		}
		nn, ok := n.(sql.Nameable)
		if !ok || !strings.EqualFold(nn.Name(), name) {
			return true
		}
		switch x := n.(type) {
		case *plan.TableAlias:
			db, t = virtualTarget(updatedTable(x.Child))
		case *plan.IndexedTableAccess:
			db, t = virtualTarget(x.TableNode)
		case *plan.ResolvedTable:
			db, t = virtualTarget(x)
		}
		return t == nil
	})
	return db, t
}

// updatedTable returns the table node a single-table UPDATE's source
// reads, through the nodes its plans put over it, or nil. Each UPDATE
// executed costs this walk, which allocates nothing (Children would).
func updatedTable(n sql.Node) sql.Node {
	for {
		switch x := n.(type) {
		case *plan.UpdateSource:
			n = x.Child
		case *plan.Filter:
			n = x.Child
		case *plan.Project:
			n = x.Child
		case *plan.Limit:
			n = x.Child
		case *plan.Sort:
			n = x.Child
		case *plan.TopN:
			n = x.Child
		case *plan.TableAlias:
			n = x.Child
		case *plan.IndexedTableAccess:
			return x.TableNode
		default:
			return n
		}
	}
}

// virtualTarget returns the database and the table n reads through GMS's
// virtual-column wrapper (n, or an INSERT's destination over it), or nil.
func virtualTarget(n sql.Node) (string, sql.Table) {
	if d, ok := n.(*plan.InsertDestination); ok {
		n = d.Child
	}
	rt, ok := n.(*plan.ResolvedTable)
	if !ok || rt.Database() == nil {
		return "", nil
	}
	t := virtualUnderlying(rt.Table)
	if t == nil {
		return "", nil
	}
	return rt.Database().Name(), t
}

// virtualUnderlying returns the table t reads through GMS's virtual-column
// wrapper, under any other wrappers (the process tracker's), or nil.
func virtualUnderlying(t sql.Table) sql.Table {
	for {
		switch w := t.(type) {
		case *plan.VirtualColumnTable:
			return w.Underlying()
		case sql.TableWrapper:
			t = w.Underlying()
		default:
			return nil
		}
	}
}

// boundChecks returns t's CHECK constraints bound over its rows: each
// definition's text parsed and bound by GMS's binder against the table,
// its columns then indexed by their place in t's schema, after offset
// columns of other tables.
func boundChecks(ctx *sql.Context, a *analyzer.Analyzer, db string, t sql.Table, offset int) (sql.CheckConstraints, error) {
	ct, ok := t.(sql.CheckTable)
	if !ok {
		return nil, nil
	}
	defs, err := ct.GetChecks(ctx)
	if err != nil || len(defs) == 0 {
		return nil, err
	}
	sch := t.Schema()
	from := &ast.AliasedTableExpr{Expr: ast.TableName{Name: ast.NewTableIdent(t.Name()), DbQualifier: ast.NewTableIdent(db)}}
	checks := make(sql.CheckConstraints, 0, len(defs))
	for _, d := range defs {
		q := "SELECT " + d.CheckExpression
		st, err := ast.Parse(q)
		st, err = wrapDecimalLiterals(q, st, err) // numliteral.go
		sel, _ := st.(*ast.Select)
		if err != nil || sel == nil || len(sel.SelectExprs) != 1 {
			return nil, fmt.Errorf("check constraint %s: cannot parse %q: %v", d.Name, d.CheckExpression, err)
		}
		ae, ok := sel.SelectExprs[0].(*ast.AliasedExpr)
		if !ok {
			return nil, fmt.Errorf("check constraint %s: cannot parse %q", d.Name, d.CheckExpression)
		}
		e, err := bindScalar(ctx, a, ae.Expr, from)
		if err != nil {
			return nil, fmt.Errorf("check constraint %s: %w", d.Name, err)
		}
		e, _, err = transform.Expr(e, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
			gf, ok := e.(*expression.GetField)
			if !ok {
				return e, transform.SameTree, nil
			}
			for i, c := range sch {
				if strings.EqualFold(c.Name, gf.Name()) {
					return gf.WithIndex(offset + i), transform.NewTree, nil
				}
			}
			return nil, transform.SameTree, sql.ErrColumnNotFound.New(gf.Name())
		})
		if err == nil {
			// Bound after the value rules ran: numbers compared as
			// MySQL does (numcompare.go).
			e, _, err = transform.Expr(e, exactCompare)
		}
		if err != nil {
			return nil, fmt.Errorf("check constraint %s: %w", d.Name, err)
		}
		checks = append(checks, &sql.CheckConstraint{Name: d.Name, Expr: e, Enforced: d.Enforced})
	}
	return checks, nil
}

// bindScalar binds e over the table from reads, as the binder binds a
// CHECK's expression; the binder's errors, which it raises as panics,
// come back as errors.
func bindScalar(ctx *sql.Context, a *analyzer.Analyzer, e ast.Expr, from ast.TableExpr) (out sql.Expression, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
				return
			}
			err = fmt.Errorf("%v", r)
		}
	}()
	b := planbuilder.New(ctx, a.Catalog, nil, a.Parser)
	b.DisableAuth() // the statement's own binding checked its privileges
	return b.BuildScalarWithTable(e, from), nil
}

// virtualAlterChecks corrects ALTER TABLE of a table with virtual
// columns, whose binder read the table through the wrapper that computes
// those columns, where GMS asks the table for its constraints:
//
//   - DROP COLUMN and RENAME COLUMN get the table's CHECK constraints,
//     which the binder asked the wrapper for: GMS then refuses to drop or
//     rename a column a CHECK reads with others, and drops the CHECKs that
//     read only the column dropped, as for any table (without them, the
//     table kept CHECKs over a column it no longer had, and SHOW CREATE
//     TABLE failed);
//   - DROP CONSTRAINT and DROP CHECK get the table itself, which has the
//     constraints (the wrapper has none: "the table does not support check
//     constraint operations").
//
// It runs before GMS resolves DROP CONSTRAINT and validates the ALTER's
// clauses, at the end of validateCreateTable.
func virtualAlterChecks(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if !analyzer.FlagIsSet(qFlags, sql.QFlagAlterTable) {
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		var table sql.Node
		var withChecks func(sql.CheckConstraints) sql.Node
		switch x := n.(type) {
		case *plan.DropColumn:
			if len(x.Checks()) > 0 {
				return n, transform.SameTree, nil
			}
			table, withChecks = x.Table, x.WithChecks
		case *plan.RenameColumn:
			if len(x.Checks()) > 0 {
				return n, transform.SameTree, nil
			}
			table, withChecks = x.Table, x.WithChecks
		case *plan.DropConstraint:
			if rt, _ := unwrapVirtual(x.Child); rt != nil {
				nn, err := x.WithChildren(rt)
				return nn, transform.NewTree, err
			}
			return n, transform.SameTree, nil
		case *plan.DropCheck:
			if rt, _ := unwrapVirtual(x.Table); rt != nil {
				dc := *x
				dc.Table = rt
				return &dc, transform.NewTree, nil
			}
			return n, transform.SameTree, nil
		default:
			return n, transform.SameTree, nil
		}
		db, t := virtualTarget(table)
		checks, err := boundChecks(ctx, a, db, t, 0)
		if err != nil || len(checks) == 0 {
			return n, transform.SameTree, err
		}
		return withChecks(checks), transform.NewTree, nil
	})
}
