package mysqlcompat

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"
)

// Column names of a whole ALTER TABLE
//
// MySQL reads the column named by each CHANGE, MODIFY, RENAME COLUMN and
// DROP COLUMN of an ALTER TABLE in the table as it was before the
// statement, each column at most once, and then requires the names of the
// resulting table to be unique (1060). GMS instead applies the clauses one
// after another to the schema the previous ones left, and checked a
// CHANGE's new name against nothing: `CHANGE a b INT` with b present, or
// `MODIFY a INT, CHANGE b a INT`, made a table with two columns b (a). A
// second clause naming a column the first already changed (`MODIFY b INT,
// CHANGE b c ...`) was applied too, the last one winning.
//
// alterColumnNames checks the ALTER's clauses as MySQL does, before GMS
// resolves them, so a refused ALTER changes nothing. Names that are unique
// in the result but collide on the way (a swap: `CHANGE a b INT, CHANGE b
// a INT`) are legal in MySQL; GMS's one-at-a-time copy cannot apply them
// (it lost the first CHANGE and kept two columns a), so they are refused
// as not supported rather than run.
//
// Targets GMS v0.20.0 (analyzer/validate_create_table.go,
// resolveAlterColumn). Without it, TestAlterConvertSpec
// (sqlstore/testdata/alter_convert, "names") fails.

// errAlterSwap refuses an ALTER whose renames GMS would apply one after
// another and collide on the way (1235, as MySQL words a feature it lacks).
func errAlterSwap(what string) error {
	return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000", "This version of MySQL doesn't yet support '%s'", what)
}

// alterColumnNames runs before GMS's resolveAlterColumn.
func alterColumnNames(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if qFlags == nil || !qFlags.IsSet(sql.QFlagAlterTable) {
		return n, transform.SameTree, nil
	}
	var clauses []sql.Node
	if block, ok := n.(*plan.Block); ok {
		clauses = block.Children()
	} else {
		clauses = []sql.Node{n}
	}
	var table sql.Node
	for _, c := range clauses {
		switch c := c.(type) {
		case *plan.ModifyColumn:
			table = c.Table
		case *plan.RenameColumn:
			table = c.Table
		case *plan.AddColumn:
			table = c.Table
		case *plan.DropColumn:
			table = c.Table
		}
		if table != nil {
			break
		}
	}
	rt, ok := table.(*plan.ResolvedTable)
	if !ok {
		return n, transform.SameTree, nil
	}
	return n, transform.SameTree, checkAlterColumnNames(rt.Name(), rt.Schema(), clauses)
}

// alterColumn is a column of the table an ALTER starts from, or one it
// adds: the name it ends with, and whether a clause has already named it.
type alterColumn struct {
	orig, final string
	used        bool
	dropped     bool
}

// checkAlterColumnNames checks the column names the clauses of one ALTER
// TABLE of table (schema sch) read and make, in MySQL's order: each
// clause's column must be one of the table's not yet changed, renamed or
// dropped (1054), and the names the table ends with unique (1060).
func checkAlterColumnNames(table string, sch sql.Schema, clauses []sql.Node) error {
	cols := make([]alterColumn, 0, len(sch)+2)
	for _, c := range sch {
		cols = append(cols, alterColumn{orig: c.Name, final: c.Name})
	}
	// existing finds the table's column name, not yet named by a clause.
	existing := func(name string) (*alterColumn, error) {
		for i := range cols {
			c := &cols[i]
			if c.orig != "" && strings.EqualFold(c.orig, name) {
				if c.used {
					break
				}
				c.used = true
				return c, nil
			}
		}
		return nil, sql.ErrTableColumnNotFound.New(table, name)
	}
	renamed := false
	for _, cl := range clauses {
		switch cl := cl.(type) {
		case *plan.ModifyColumn:
			c, err := existing(cl.Column())
			if err != nil {
				return err
			}
			c.final = cl.NewColumn().Name
			renamed = renamed || !strings.EqualFold(c.orig, c.final)
		case *plan.RenameColumn:
			c, err := existing(cl.ColumnName)
			if err != nil {
				return err
			}
			c.final = cl.NewColumnName
			renamed = renamed || !strings.EqualFold(c.orig, c.final)
		case *plan.DropColumn:
			c, err := existing(cl.Column)
			if err != nil {
				// DROP COLUMN IF EXISTS and GMS's own wording of a
				// missing column are GMS's.
				continue
			}
			c.dropped = true
		case *plan.AddColumn:
			cols = append(cols, alterColumn{final: cl.Column().Name, used: true})
		}
	}
	for i := range cols {
		if cols[i].dropped {
			continue
		}
		for j := i + 1; j < len(cols); j++ {
			if !cols[j].dropped && strings.EqualFold(cols[i].final, cols[j].final) {
				return sql.ErrColumnExists.New(cols[j].final)
			}
		}
	}
	if !renamed {
		return nil
	}
	// GMS applies the clauses one after another: a new name may not be
	// one a column still has at that point.
	cur := make([]string, 0, len(cols))
	for _, c := range sch {
		cur = append(cur, c.Name)
	}
	idx := func(name string) int {
		for i, s := range cur {
			if strings.EqualFold(s, name) {
				return i
			}
		}
		return -1
	}
	rename := func(from, to string) error {
		i := idx(from)
		if i < 0 || strings.EqualFold(from, to) {
			return nil
		}
		if idx(to) >= 0 {
			return errAlterSwap("giving a column the name of another column renamed in the same ALTER TABLE")
		}
		cur[i] = to
		return nil
	}
	for _, cl := range clauses {
		var err error
		switch cl := cl.(type) {
		case *plan.ModifyColumn:
			err = rename(cl.Column(), cl.NewColumn().Name)
		case *plan.RenameColumn:
			err = rename(cl.ColumnName, cl.NewColumnName)
		case *plan.DropColumn:
			if i := idx(cl.Column); i >= 0 {
				cur = append(cur[:i], cur[i+1:]...)
			}
		case *plan.AddColumn:
			if idx(cl.Column().Name) >= 0 {
				return errAlterSwap("adding a column with the name of a column renamed in the same ALTER TABLE")
			}
			cur = append(cur, cl.Column().Name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Columns added FIRST earlier in the same ALTER TABLE
//
// GMS's resolveAlterColumn gives each clause the schema the clauses before
// it leave, but places a column added FIRST at the end of it
// (ValidateAddColumn reads only AFTER). The table's copy for a later
// clause (`ADD c INT FIRST, MODIFY b INT`) then read each row's values
// one column off: the primary key got c's NULL (1138). firstAddedTargets
// moves those columns to the front of the later clauses' schemas, as the
// ADD puts them in the table.
//
// Targets GMS v0.20.0 (analyzer/validate_create_table.go,
// ValidateAddColumn). Without it, TestAlterConvertSpec
// (sqlstore/testdata/alter_convert, "FIRST") fails.

// firstAddedTargets runs after GMS's resolveAlterColumn.
func firstAddedTargets(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if qFlags == nil || !qFlags.IsSet(sql.QFlagAlterTable) {
		return n, transform.SameTree, nil
	}
	block, ok := n.(*plan.Block)
	if !ok {
		return n, transform.SameTree, nil
	}
	var firsts []string
	children := block.Children()
	changed := false
	for i, child := range children {
		if st, ok := child.(sql.SchemaTarget); ok && len(firsts) > 0 {
			var sch sql.Schema // copied when a column moves
			for _, name := range firsts {
				if sch == nil {
					if j := st.TargetSchema().IndexOfColName(name); j <= 0 {
						continue
					}
					sch = st.TargetSchema().Copy()
				}
				if j := sch.IndexOfColName(name); j > 0 {
					c := sch[j]
					copy(sch[1:j+1], sch[:j])
					sch[0] = c
				}
			}
			if sch != nil {
				nn, err := st.WithTargetSchema(sch)
				if err != nil {
					return nil, transform.SameTree, err
				}
				children[i], changed = nn, true
			}
		}
		if ac, ok := child.(*plan.AddColumn); ok && ac.Order() != nil && ac.Order().First {
			firsts = append(firsts, ac.Column().Name)
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
