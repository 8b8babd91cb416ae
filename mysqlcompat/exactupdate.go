package mysqlcompat

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Updates that change only letter case
//
// GMS's update iterator skips a row whose new values compare equal to the
// old ones under the columns' types, and a string type compares under its
// collation. Under a case-insensitive collation UPDATE t SET name = 'Bob'
// WHERE name = 'bob' therefore matched the row and silently kept 'bob'
// (as did a change of accents or trailing spaces). MySQL stores the new
// value.
//
// The iterator takes the schema it compares under from the UPDATE's target
// (plan.GetUpdatable), which returns the first node of the UPDATE's child
// tree that is itself an updatable table. So an analyzer rule (install.go) puts an
// exactUpdate over the child of every single-table UPDATE of a table with
// collated string columns: a node that runs the child unchanged and is the
// target GMS finds, with the target's updater and a schema whose string
// columns compare bytes. The count of changed rows uses the same schema,
// so it counts such a change too. A multi-table UPDATE ... JOIN compares
// under its join's schema, which exactUpdateJoin makes exact alike.
//
// Targets GMS v0.20.0. Without it, TestUpdateCollationEqual and
// TestUpdateJoinCollationEqual fail.

// compareUpdatesExactly puts an exactUpdate over the child of each UPDATE
// whose target has a collated string column.
func compareUpdatesExactly(_ *sql.Context, a *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	switch n.(type) {
	case *plan.InsertInto, *plan.DeleteFrom:
		return n, transform.SameTree, nil
	}
	if n.IsReadOnly() {
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		u, ok := n.(*plan.Update)
		if !ok {
			return n, transform.SameTree, nil
		}
		if _, done := u.Child.(*exactUpdate); done {
			return n, transform.SameTree, nil
		}
		if uj, join := u.Child.(*plan.UpdateJoin); join {
			nj, err := exactUpdateJoin(uj)
			if err != nil || nj == nil {
				return n, transform.SameTree, err
			}
			nn, err := u.WithChildren(nj)
			if err != nil {
				return nil, transform.SameTree, err
			}
			return nn, transform.NewTree, nil
		}
		target, err := plan.GetUpdatable(u.Child)
		if err != nil {
			return n, transform.SameTree, nil
		}
		sch, ok := exactSchema(target.Schema())
		if !ok {
			return n, transform.SameTree, nil
		}
		nn, err := u.WithChildren(&exactUpdate{child: u.Child, sch: sch, exec: a.ExecBuilder})
		if err != nil {
			return nil, transform.SameTree, err
		}
		return nn, transform.NewTree, nil
	})
}

// exactUpdateJoin returns uj with its join's rows passed through a Project
// whose string columns compare bytes, or nil when the join has no collated
// string columns. GMS's UPDATE ... JOIN compares each table's old and new
// rows under the schema of the join below its UpdateSource, and so skipped
// case-only changes as a single-table UPDATE did. A Project is a node GMS
// sees through where it looks for the join (an outer join's unmatched
// rows are not updated), and it keeps every column's name, table and
// nullability, by which GMS splits the rows among the tables.
func exactUpdateJoin(uj *plan.UpdateJoin) (sql.Node, error) {
	us, ok := uj.Child.(*plan.UpdateSource)
	if !ok {
		return nil, nil
	}
	sch, ok := exactSchema(us.Child.Schema())
	if !ok {
		return nil, nil
	}
	cols := make([]sql.Expression, len(sch))
	for i, c := range sch {
		cols[i] = expression.NewGetFieldWithTable(i, 0, c.Type, c.DatabaseSource, c.Source, c.Name, c.Nullable)
	}
	nus, err := us.WithChildren(plan.NewProject(cols, us.Child))
	if err != nil {
		return nil, err
	}
	return uj.WithChildren(nus)
}

// exactSchema returns a copy of sch whose collated string columns compare
// bytes, and whether there were any.
func exactSchema(sch sql.Schema) (sql.Schema, bool) {
	var out sql.Schema
	for i, col := range sch {
		st, ok := col.Type.(sql.StringType)
		if !ok || st.Collation() == sql.Collation_binary {
			continue
		}
		if out == nil {
			out = sch.Copy()
		}
		out[i].Type = types.LongBlob
	}
	return out, out != nil
}

// exactUpdate is the target GMS's update iterator finds for an UPDATE (see
// above): it runs child, and compares rows under sch.
type exactUpdate struct {
	child sql.Node
	sch   sql.Schema
	exec  sql.NodeExecBuilder
}

var (
	_ sql.ExecSourceRel      = (*exactUpdate)(nil)
	_ sql.UpdatableTable     = (*exactUpdate)(nil)
	_ sql.CollationCoercible = (*exactUpdate)(nil)
)

// target returns the updatable table under the child.
func (e *exactUpdate) target() (sql.UpdatableTable, error) { return plan.GetUpdatable(e.child) }

// RowIter runs the child, as if the exactUpdate were not there.
func (e *exactUpdate) RowIter(ctx *sql.Context, row sql.Row) (sql.RowIter, error) {
	return e.exec.Build(ctx, e.child, row)
}

// Updater returns the target's updater. It is wrapped so that GMS does not
// recognize a foreign key handler in it and count changes under that
// handler's own (collated) schema.
func (e *exactUpdate) Updater(ctx *sql.Context) sql.RowUpdater {
	t, err := e.target()
	if err != nil {
		return failingUpdater{err}
	}
	return exactUpdater{t.Updater(ctx)}
}

func (e *exactUpdate) Schema() sql.Schema         { return e.sch }
func (e *exactUpdate) Children() []sql.Node       { return []sql.Node{e.child} }
func (e *exactUpdate) Resolved() bool             { return e.child.Resolved() }
func (e *exactUpdate) IsReadOnly() bool           { return false }
func (e *exactUpdate) String() string             { return e.child.String() }
func (e *exactUpdate) DebugString() string        { return sql.DebugString(e.child) }
func (e *exactUpdate) Collation() sql.CollationID { return sql.Collation_Default }

func (e *exactUpdate) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, e.child)
}

func (e *exactUpdate) Name() string {
	if t, err := e.target(); err == nil {
		return t.Name()
	}
	return ""
}

func (e *exactUpdate) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(e, len(children), 1)
	}
	ne := *e
	ne.child = children[0]
	return &ne, nil
}

// Partitions and PartitionRows make an exactUpdate a sql.Table, as the
// update iterator requires; nothing reads it as one.
func (e *exactUpdate) Partitions(*sql.Context) (sql.PartitionIter, error) {
	return nil, fmt.Errorf("mysqlcompat: an UPDATE's target is not read as a table")
}

func (e *exactUpdate) PartitionRows(*sql.Context, sql.Partition) (sql.RowIter, error) {
	return nil, fmt.Errorf("mysqlcompat: an UPDATE's target is not read as a table")
}

// ExactUpdateChild returns the child of n when n is the node
// compareUpdatesExactly puts over an UPDATE's child, for callers that run
// the UPDATE themselves: they compare old and new rows under n.Schema().
func ExactUpdateChild(n sql.Node) (sql.Node, bool) {
	e, ok := n.(*exactUpdate)
	if !ok {
		return nil, false
	}
	return e.child, true
}

// exactUpdater is a table's updater behind exactUpdate.
type exactUpdater struct{ sql.RowUpdater }

// failingUpdater reports err at the first update.
type failingUpdater struct{ err error }

func (f failingUpdater) StatementBegin(*sql.Context)                 {}
func (f failingUpdater) DiscardChanges(*sql.Context, error) error    { return nil }
func (f failingUpdater) StatementComplete(*sql.Context) error        { return nil }
func (f failingUpdater) Update(*sql.Context, sql.Row, sql.Row) error { return f.err }
func (f failingUpdater) Close(*sql.Context) error                    { return nil }
