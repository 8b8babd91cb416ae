package sqlstore

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// Analyzer rules of values
//
// Five rewrites close gaps in how GMS evaluates, compares and applies
// values: exactAggregates (exactagg.go: SUM and AVG exact and typed as in
// MySQL), checkAssignments (assign.go and bigint.go: assignments out of a
// column's range, values bound for BIGINT), compareUpdatesExactly
// (exactupdate.go: updates that change only letter case),
// checkIntArithmetic (intarith.go: integer arithmetic exact and typed as
// in MySQL) and exactHashKeys
// (hashkeys.go: hash joins over DECIMAL and mixed types). Simple UPDATEs and
// INSERTs skip most of GMS's analyzer (the node-specific batches of
// analyzer.getBatchesForNode); the rules of analyzer.OnceAfterAll run for
// every statement, and for the body of each trigger, which is analyzed on
// its own. So the five run there, as one rule, before the process
// tracking wraps the plan: GMS formats the name of a rule it does not
// know for every statement, a few allocations each.
//
// The rule is added when this package is loaded, before any analyzer is
// built.

// valueRules names the rule among GMS's analyzer rules.
const valueRules analyzer.RuleId = 10_002

func init() {
	rule := analyzer.Rule{Id: valueRules, Apply: applyValueRules}
	rules := analyzer.OnceAfterAll
	at := len(rules)
	for i, r := range rules {
		if r.Id == analyzer.TrackProcessId {
			at = i
		}
	}
	analyzer.OnceAfterAll = append(rules[:at:at], append([]analyzer.Rule{rule}, rules[at:]...)...)
}

// applyValueRules applies the five rewrites in turn, and under EXPLAIN
// lets full scans show their plans (explainScans, explain.go: a rule of its
// own would cost every statement the formatting of its name).
func applyValueRules(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	n, same, err := explainScans(ctx, n)
	if err != nil {
		return nil, transform.SameTree, err
	}
	for _, rule := range [...]analyzer.RuleFunc{exactAggregates, checkAssignments, compareUpdatesExactly, checkIntArithmetic, exactHashKeys} {
		nn, id, err := rule(ctx, a, n, scope, sel, qFlags)
		if err != nil {
			return nil, transform.SameTree, err
		}
		if id == transform.NewTree {
			n, same = nn, transform.NewTree
		}
	}
	return n, same, nil
}
