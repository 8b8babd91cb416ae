package sqlstore

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// MySQL parses ON DELETE SET DEFAULT and ON UPDATE SET DEFAULT, and InnoDB
// rejects a table that uses them. GMS refuses them while it builds the
// plan only when the engine's parser is GMS's own MySQL parser (a type
// check), which the engine's parser wrapper (windowParser) is not; so a
// rule refuses them again, first in every analysis, with GMS's error.

// refuseSetDefaultRule names the rule among the analyzer's rules.
const refuseSetDefaultRule analyzer.RuleId = 10_005

// installRefuseSetDefault puts the rule first in a's once-before batch, in
// a new slice: the batch's is GMS's shared one.
func installRefuseSetDefault(a *analyzer.Analyzer) {
	for _, b := range a.Batches {
		if b.Desc == "once-before" {
			b.Rules = append([]analyzer.Rule{{Id: refuseSetDefaultRule, Apply: refuseSetDefault}}, b.Rules...)
			return
		}
	}
}

// refuseSetDefault fails a CREATE TABLE or ALTER TABLE that defines a
// foreign key with a SET DEFAULT action.
func refuseSetDefault(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	var err error
	transform.Inspect(n, func(n sql.Node) bool {
		var fks []*sql.ForeignKeyConstraint
		switch n := n.(type) {
		case *plan.CreateTable:
			fks = n.ForeignKeys()
		case *plan.CreateForeignKey:
			fks = []*sql.ForeignKeyConstraint{n.FkDef}
		}
		for _, fk := range fks {
			if fk != nil && (fk.OnDelete == sql.ForeignKeyReferentialAction_SetDefault || fk.OnUpdate == sql.ForeignKeyReferentialAction_SetDefault) {
				err = sql.ErrForeignKeySetDefault.New()
				return false
			}
		}
		return true
	})
	return n, transform.SameTree, err
}
