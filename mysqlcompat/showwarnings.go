package mysqlcompat

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// SHOW WARNINGS in the order the warnings were raised
//
// MySQL lists a statement's warnings in the order it raised them (the
// first row's truncation before the second row's). GMS's session keeps
// them in that order but hands them out newest first
// (BaseSession.Warnings), and SHOW WARNINGS prints that list as it is.
// The session's order is left alone (GMS's engine relies on it when it
// keeps the warnings planning raised); orderWarnings replaces the list
// SHOW WARNINGS prints by one in raised order, once: the node it leaves
// is of another type, so a second pass finds nothing to do.
//
// Targets GMS v0.20.0 (sql/base_session.go, Warnings). Without it,
// TestShowWarningsOrder fails.
func orderWarnings(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if qFlags != nil && !qFlags.IsSet(sql.QFlagShowWarnings) {
		return n, transform.SameTree, nil
	}
	// SHOW ERRORS and SHOW COUNT(*) (diagshow.go) first: they are SHOW
	// WARNINGS under a marked offset.
	if d, ok, err := diagnosticShow(ctx, n); ok || err != nil {
		return d, transform.NewTree, err
	}
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		sw, ok := n.(plan.ShowWarnings)
		if !ok {
			return n, transform.SameTree, nil
		}
		raised := make([]*sql.Warning, len(sw))
		for i, w := range sw {
			raised[len(sw)-1-i] = w
		}
		return &warningList{list: raised}, transform.NewTree, nil
	})
}

// warningList is SHOW WARNINGS with its warnings in raised order.
type warningList struct {
	list []*sql.Warning
}

var (
	_ sql.ExecSourceRel      = (*warningList)(nil)
	_ sql.CollationCoercible = (*warningList)(nil)
)

// RowIter implements sql.ExecSourceRel.
func (w *warningList) RowIter(*sql.Context, sql.Row) (sql.RowIter, error) {
	rows := make([]sql.Row, len(w.list))
	for i, x := range w.list {
		rows[i] = sql.NewRow(x.Level, x.Code, x.Message)
	}
	return sql.RowsToRowIter(rows...), nil
}

func (w *warningList) Schema() sql.Schema   { return plan.ShowWarnings(nil).Schema() }
func (w *warningList) Children() []sql.Node { return nil }
func (w *warningList) Resolved() bool       { return true }
func (w *warningList) IsReadOnly() bool     { return true }
func (w *warningList) String() string       { return "SHOW WARNINGS" }

func (w *warningList) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(w, len(children), 0)
	}
	return w, nil
}

func (w *warningList) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_binary, 7
}
