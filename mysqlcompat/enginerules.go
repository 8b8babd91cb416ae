package mysqlcompat

import (
	"slices"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// How Install puts this package's rules into an engine's analyzer, and how
// another package that adds rules to the same engine can do the same.
//
// An analyzer's batches hold GMS's package-level rule slices, which every
// analyzer shares: a rule goes into a copy of its batch's slice, never into
// the shared one. And GMS formats the name of every rule it runs, which for
// an id it does not know costs each statement a few allocations; so the
// rules run inside rules GMS knows (WrapRule) or chained behind one of this
// package's (ChainRules), never as many rules of their own.

// AddRule appends r to a's batch named desc.
func AddRule(a *analyzer.Analyzer, desc string, r analyzer.Rule) {
	for _, b := range a.Batches {
		if b.Desc == desc {
			b.Rules = append(slices.Clip(b.Rules), r)
		}
	}
}

// WrapRule replaces the first rule of a whose id matches by wrap of it,
// and reports whether there was one.
func WrapRule(a *analyzer.Analyzer, match func(analyzer.RuleId) bool, wrap func(analyzer.RuleFunc) analyzer.RuleFunc) bool {
	for _, b := range a.Batches {
		for i, r := range b.Rules {
			if !match(r.Id) {
				continue
			}
			rules := slices.Clone(b.Rules)
			rules[i].Apply = wrap(r.Apply)
			b.Rules = rules
			return true
		}
	}
	return false
}

// ChainRules returns a rule that applies fs in turn, each to the plan the
// one before returned.
func ChainRules(fs ...analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
		same := transform.SameTree
		for _, f := range fs {
			nn, id, err := f(ctx, a, n, scope, sel, qFlags)
			if err != nil {
				return nil, transform.SameTree, err
			}
			if id == transform.NewTree {
				n, same = nn, transform.NewTree
			}
		}
		return n, same, nil
	}
}
