package mysqlcompat

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"
)

// Global-only system variables read without a scope.
//
// MySQL reads @@max_connections, a variable with no session value, from
// its global value, and refuses @@session.max_connections (1238). GMS
// binds both to the session's copy, which every session takes at its
// start: after SET GLOBAL max_connections = 200 the session that set it
// still read 151. globalOnlyVars binds such references to the global
// value, outside the targets of SET (GMS refuses SET SESSION of them
// itself).

// globalOnlyVars is the rule; it looks at plans only when the statement's
// text names a system variable.
func globalOnlyVars(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if !strings.Contains(ctx.Query(), "@@") {
		return n, transform.SameTree, nil
	}
	return transform.NodeWithOpaque(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		if set, ok := n.(*plan.Set); ok {
			return globalOnlyInSet(set)
		}
		ne, ok := n.(sql.Expressioner)
		if !ok {
			return n, transform.SameTree, nil
		}
		exprs := ne.Expressions()
		var out []sql.Expression
		for i, e := range exprs {
			x, same, err := transform.Expr(e, globalOnlyVar)
			if err != nil {
				return nil, transform.SameTree, err
			}
			if same == transform.NewTree {
				if out == nil {
					out = append([]sql.Expression(nil), exprs...)
				}
				out[i] = x
			}
		}
		if out == nil {
			return n, transform.SameTree, nil
		}
		nn, err := ne.WithExpressions(out...)
		return nn, transform.NewTree, err
	})
}

// globalOnlyInSet rewrites the values a SET assigns, never its targets.
func globalOnlyInSet(set *plan.Set) (sql.Node, transform.TreeIdentity, error) {
	exprs := set.Expressions()
	var out []sql.Expression
	for i, e := range exprs {
		sf, ok := e.(*expression.SetField)
		if !ok {
			continue
		}
		r, same, err := transform.Expr(sf.RightChild, globalOnlyVar)
		if err != nil {
			return nil, transform.SameTree, err
		}
		if same == transform.NewTree {
			if out == nil {
				out = append([]sql.Expression(nil), exprs...)
			}
			nf, err := sf.WithChildren(sf.LeftChild, r)
			if err != nil {
				return nil, transform.SameTree, err
			}
			out[i] = nf
		}
	}
	if out == nil {
		return set, transform.SameTree, nil
	}
	nn, err := set.WithExpressions(out...)
	return nn, transform.NewTree, err
}

// globalOnlyVar binds a session-scoped reference to a global-only
// variable to its global value, or refuses it when the text said SESSION.
func globalOnlyVar(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	v, ok := e.(*expression.SystemVar)
	if !ok {
		return e, transform.SameTree, nil
	}
	sc, ok := v.Scope.(*sql.MysqlScope)
	if !ok || sc.Type != sql.SystemVariableScope_Session {
		return e, transform.SameTree, nil
	}
	sv, _, ok := sql.SystemVariables.GetGlobal(v.Name)
	if !ok || !sv.IsGlobalOnly() {
		return e, transform.SameTree, nil
	}
	if strings.EqualFold(v.SpecifiedScope, "session") || strings.EqualFold(v.SpecifiedScope, "local") {
		return nil, transform.SameTree, mysql.NewSQLError(mysql.ERIncorrectGlobalLocalVar, "HY000", "Variable '%s' is a GLOBAL variable", v.Name)
	}
	g := *v
	g.Scope = sql.GetMysqlScope(sql.SystemVariableScope_Global)
	return &g, transform.NewTree, nil
}
