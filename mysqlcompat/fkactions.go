package mysqlcompat

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
// rule refuses them again, at the end of the analysis of a CREATE TABLE or
// ALTER TABLE, with GMS's error.
//
// Targets GMS v0.20.0. Without it, sqlstore/enginetest's
// TestGMS/ForeignKeys (script "SET DEFAULT not supported") fails.

// refuseSetDefault fails a CREATE TABLE or ALTER TABLE that defines a
// foreign key with a SET DEFAULT action.
func refuseSetDefault(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	// CREATE TEMPORARY TABLE sets no DDL flag: its node decides.
	if _, ok := n.(*plan.CreateTable); !ok && (qFlags == nil || !qFlags.IsSet(sql.QFlagDDL) && !qFlags.IsSet(sql.QFlagAlterTable)) {
		return n, transform.SameTree, nil
	}
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
