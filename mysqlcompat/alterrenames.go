package mysqlcompat

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// Columns renamed earlier in the same ALTER TABLE
//
// GMS gives each clause of an ALTER TABLE the table's schema as the
// clauses before it leave it (resolveAlterColumn), but it puts a CHANGE's
// new column in place by the new name, which the schema does not hold yet:
// the clauses after `CHANGE a n INT` saw column a as it was, and the table
// copy of the next one (`MODIFY b DATE`) wrote a back under its old name
// and type, losing the CHANGE without a word. renamedAlterTargets puts the
// renamed column in the schemas of the clauses after it.
//
// Targets GMS v0.20.0 (analyzer/validate_create_table.go, replaceInSchema).
// Without it, TestAlterConvertSpec (sqlstore/testdata/alter_convert) fails.

// renamedAlterTargets follows resolveAlterColumn.
func renamedAlterTargets(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if qFlags == nil || !qFlags.IsSet(sql.QFlagAlterTable) {
		return n, transform.SameTree, nil
	}
	block, ok := n.(*plan.Block)
	if !ok {
		return n, transform.SameTree, nil
	}
	type rename struct {
		from string
		col  *sql.Column
	}
	var renames []rename
	children := block.Children()
	changed := false
	for i, child := range children {
		if len(renames) > 0 {
			if st, ok := child.(sql.SchemaTarget); ok {
				sch := st.TargetSchema().Copy()
				fixed := false
				for _, r := range renames {
					for j, c := range sch {
						if strings.EqualFold(c.Name, r.from) && sch.IndexOfColName(r.col.Name) < 0 {
							nc := *r.col
							nc.PrimaryKey, nc.Source = c.PrimaryKey, c.Source
							if nc.PrimaryKey {
								nc.Nullable = false
							}
							sch[j] = &nc
							fixed = true
						}
					}
				}
				if fixed {
					nn, err := st.WithTargetSchema(sch)
					if err != nil {
						return nil, transform.SameTree, err
					}
					children[i], changed = nn, true
				}
			}
		}
		if m, ok := child.(*plan.ModifyColumn); ok && !strings.EqualFold(m.Column(), m.NewColumn().Name) {
			renames = append(renames, rename{from: m.Column(), col: m.NewColumn()})
		}
	}
	if !changed {
		return n, transform.SameTree, nil
	}
	nb, err := block.WithChildren(children...)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return nb, transform.NewTree, nil
}
