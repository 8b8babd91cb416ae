package sqlstore

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
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
// Other EXPLAIN formats show no table-provided text; Strata_last_access
// (stmtstats.go) shows the plans a statement ran.

var (
	_ sql.TableWrapper  = (*indexedTable)(nil)
	_ sql.DebugStringer = (*indexedTable)(nil)
)

// Underlying implements sql.TableWrapper: the table without its lookup.
func (it *indexedTable) Underlying() sql.Table { return it.Table }

// DebugString implements sql.DebugStringer.
func (it *indexedTable) DebugString() string {
	return plan.TableDebugString(it.Table, "access: "+it.Access())
}

// Access describes the access plan of the table's lookup, as EXPLAIN
// FORMAT=DEBUG shows it. A lookup join's lookup (GMS marks those on a
// unique key as point lookups, which static lookups never are) is shown as
// one probe "per outer row".
func (it *indexedTable) Access() string {
	lp, err := it.plan(sql.NewEmptyContext(), it.lookup, it.lookup.IsPointLookup)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	if it.lookup.IsPointLookup {
		return lp.access.String() + " per outer row"
	}
	return lp.access.String()
}
