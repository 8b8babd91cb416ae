package mysqlcompat

import (
	"fmt"
	"reflect"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// Subqueries of single-table UPDATE and DELETE
//
// GMS analyzes a single-table UPDATE or DELETE with fixed batches of its
// own (install.go), which neither analyze subqueries nor give them the
// builder that runs them. Its plan builder sends a statement with a
// subquery to the full analysis instead, but it misses EXISTS: UPDATE t SET
// v = 1 WHERE EXISTS (SELECT 1 FROM u WHERE u.x = t.x), and DELETE alike,
// failed with 1105 "attempted to evaluate uninitialized subquery", where
// MySQL runs it. analyzeFixedSubqueries gives such a plan GMS's own
// analysis of its subqueries (the engine's resolveSubqueries and
// finalizeSubqueries rules, as the full analysis runs them) before it is
// built.
//
// Targets GMS v0.20.0 (planbuilder/scalar.go: ExistsExpr does not set
// refsSubquery; analyzer/node_batches.go). Without it,
// TestPlanningSpec/dml_subqueries fails.
func analyzeFixedSubqueries(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node) (sql.Node, error) {
	if !hasUnbuiltSubquery(n) {
		return n, nil
	}
	// assignExecIndexes takes a shortcut for a single-table statement
	// that does not reach into subqueries: the statement is marked as
	// the plan builder should have marked it, and the rules run as the
	// full analysis runs them.
	n, ok := notSingleRel(n)
	if !ok {
		return n, nil
	}
	for _, name := range []string{"resolveSubqueries", "finalizeSubqueries", "assignExecIndexes"} {
		rule, ok := ruleNamed(a, name)
		if !ok {
			return nil, fmt.Errorf("mysqlcompat: the analyzer has no rule %s", name)
		}
		nn, _, err := rule(ctx, a, n, nil, analyzer.DefaultRuleSelector, nil)
		if err != nil {
			return nil, err
		}
		n = nn
	}
	return n, nil
}

// notSingleRel returns n, an UPDATE or DELETE under the executors of its
// triggers, marked as a statement with subqueries; ok is false for any
// other plan.
func notSingleRel(n sql.Node) (sql.Node, bool) {
	switch x := n.(type) {
	case *plan.TriggerExecutor:
		l, ok := notSingleRel(x.Left())
		if !ok {
			return n, false
		}
		nn, err := x.WithChildren(l, x.Right())
		return nn, err == nil
	case *plan.Update:
		u := *x
		u.HasSingleRel = false
		return &u, true
	case *plan.DeleteFrom:
		d := *x
		d.RefsSingleRel = false
		return &d, true
	}
	return n, false
}

// ruleNamed returns the rule of a's batches whose id prints as name.
func ruleNamed(a *analyzer.Analyzer, name string) (analyzer.RuleFunc, bool) {
	for _, b := range a.Batches {
		for _, r := range b.Rules {
			if r.Id.String() == name {
				return r.Apply, true
			}
		}
	}
	return nil, false
}

// hasUnbuiltSubquery reports whether a subquery of n has no builder:
// one no analysis reached. GMS does not say; its field does.
func hasUnbuiltSubquery(n sql.Node) bool {
	found := false
	transform.InspectExpressions(n, func(e sql.Expression) bool {
		if sq, ok := e.(*plan.Subquery); ok && reflect.ValueOf(sq).Elem().FieldByName("b").IsNil() {
			found = true
		}
		return !found
	})
	return found
}
