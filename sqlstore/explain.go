package sqlstore

import (
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// EXPLAIN. GMS prints a table read through an index as an
// IndexedTableAccess node; in EXPLAIN FORMAT=DEBUG it lets the table add
// its own description when the table is a sql.TableWrapper and a
// sql.DebugStringer. indexedTable is both: its description is GMS's own
// table description plus the access plan its lookup gets, for example
//
//	IndexedTableAccess(sbtest)
//	 ├─ index: [sbtest.id]
//	 ├─ static: [{[1, 1]}, {[5, 5]}, {[9, 9]}]
//	 ├─ ...
//	 └─ Table
//	     ├─ name: sbtest
//	     ├─ columns: [c]
//	     └─ access: MultiGet(keys=3, batch=32)
//
// A full table scan is a plain ResolvedTable over the table, which GMS
// describes without asking the table; under EXPLAIN (and only there, so
// that no other statement pays for it) explainScans gives such a node an
// explainedScan to describe, the same table with its plan:
//
//	ProcessTable
//	 └─ Table
//	     ├─ name: sbtest
//	     ├─ columns: [id c]
//	     └─ access: FullScan(readahead=1MiB after 100 rows, async, no cache fill)
//
// The plans are those that run: chosen with what the statement's
// transaction is (planner.Hints.Mutable: in a transaction that has written,
// its reads happen at once, access.go), as the row iterator chooses them
// (scan.go). The MySQL forms of EXPLAIN (explainout.go) show the same
// plans in Extra, the tree and JSON; Strata_last_access (stmtstats.go)
// shows the plans a statement ran.

var (
	_ sql.TableWrapper  = (*indexedTable)(nil)
	_ sql.DebugStringer = (*indexedTable)(nil)
	_ sql.TableWrapper  = (*explainedScan)(nil)
	_ sql.DebugStringer = (*explainedScan)(nil)
)

// explainedScan is a table read by a full scan, in the plan of an EXPLAIN.
// It reads as the table does (EXPLAIN ANALYZE runs it).
type explainedScan struct {
	*Table
	access string
}

// Underlying implements sql.TableWrapper.
func (e *explainedScan) Underlying() sql.Table { return e.Table }

// DebugString implements sql.DebugStringer.
func (e *explainedScan) DebugString() string {
	return plan.TableDebugString(e.Table, "access: "+e.access)
}

// explainScansRule is explainScans as an analyzer rule.
func explainScansRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return explainScans(ctx, n)
}

// explainScans wraps the tables n reads by full scans in explainedScans
// when ctx's statement is an EXPLAIN of a query.
func explainScans(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	if !explaining(ctx) {
		return n, transform.SameTree, nil
	}
	if _, ok := n.(*plan.ShowColumns); ok { // DESCRIBE t
		return n, transform.SameTree, nil
	}
	// An INSERT's destination (a ResolvedTable, or one under an
	// InsertDestination) is written, not scanned.
	var written []sql.Node
	transform.Inspect(n, func(n sql.Node) bool {
		if ii, ok := n.(*plan.InsertInto); ok {
			transform.Inspect(ii.Destination, func(n sql.Node) bool {
				written = append(written, n)
				return true
			})
		}
		return true
	})
	return transform.NodeWithOpaque(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		rt, ok := n.(*plan.ResolvedTable)
		if !ok || slices.Contains(written, n) {
			return n, transform.SameTree, nil
		}
		tbl := rt.Table
		if pt, ok := tbl.(*plan.ProcessTable); ok {
			// A statement of GMS's fixed batches, process tracking
			// included, reaches the rule when its plan is built.
			tbl = pt.Underlying()
		}
		t, ok := tbl.(*Table)
		if !ok {
			return n, transform.SameTree, nil
		}
		access := t.store.planScan(t.def, t.store.accessOptions(ctx), t.store.readerMutable(ctx, !t.readsCurrent)).String()
		nn, err := rt.WithTable(&explainedScan{Table: t, access: access})
		if err != nil {
			return nil, transform.SameTree, err
		}
		return nn, transform.NewTree, nil
	})
}

// explaining reports whether ctx runs an EXPLAIN (or DESCRIBE) statement,
// by its text, as the shell, the driver and the server give it.
func explaining(ctx *sql.Context) bool {
	if ctx == nil {
		return false
	}
	first, _ := LeadingWords(ctx.Query())
	return strings.EqualFold(first, "explain") || strings.EqualFold(first, "describe") || strings.EqualFold(first, "desc")
}

// Underlying implements sql.TableWrapper: the table without its lookup.
func (it *indexedTable) Underlying() sql.Table { return it.Table }

// DebugString implements sql.DebugStringer.
func (it *indexedTable) DebugString() string {
	return plan.TableDebugString(it.Table, "access: "+it.Access())
}

// Access describes the access plan of the table's lookup, as EXPLAIN
// FORMAT=DEBUG shows it: the plan that runs for the reader of the statement
// that made the table (indexedTable.mutable). A lookup join's lookup (GMS marks those on a
// unique key as point lookups, which static lookups never are) is shown as
// one probe "per outer row".
func (it *indexedTable) Access() string {
	lp, err := it.plan(sql.NewEmptyContext(), it.lookup, it.lookup.IsPointLookup)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	p := lp.choose(it.mutable)
	if it.lookup.IsPointLookup {
		return p.String() + " per outer row"
	}
	return p.String()
}
