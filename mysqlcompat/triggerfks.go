package mysqlcompat

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// Foreign keys of the statements of a BEGIN ... END trigger body.
//
// GMS analyzes a trigger's body as one plan. Its foreign key rule puts the
// checks and referential actions (ForeignKeyHandler) on an INSERT, UPDATE
// or DELETE that is the root of the plan it is given, and looks no
// further: a one-statement body gets them, the statements of a BEGIN ...
// END body do not, and a row that no parent has is written without error
// (MySQL: 1452). Procedure bodies are not affected: their statements are
// analyzed one by one.
//
// triggerBlockForeignKeys wraps that rule: given the body of a BEGIN ...
// END trigger, it applies the rule to each write statement inside it
// (nested in IF, loops and inner blocks too), as to a statement of its
// own. A statement already under a ForeignKeyHandler is left alone, so
// that an analysis that runs the rule twice does not check twice.
func triggerBlockForeignKeys(apply analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
		if _, ok := n.(*plan.TriggerBeginEndBlock); !ok {
			return apply(ctx, a, n, scope, sel, qFlags)
		}
		return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
			switch x := n.(type) {
			case *plan.InsertInto:
				if _, done := x.Destination.(*plan.ForeignKeyHandler); done {
					return n, transform.SameTree, nil
				}
			case *plan.Update:
				if _, done := x.Child.(*plan.ForeignKeyHandler); done {
					return n, transform.SameTree, nil
				}
			case *plan.DeleteFrom:
				for _, t := range x.Children() {
					if _, done := t.(*plan.ForeignKeyHandler); done {
						return n, transform.SameTree, nil
					}
				}
			default:
				return n, transform.SameTree, nil
			}
			return apply(ctx, a, n, scope, sel, qFlags)
		})
	}
}
