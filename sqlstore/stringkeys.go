package sqlstore

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Lookup joins that probe a string index with numbers
//
// MySQL compares a string with a number as two doubles: '01', '1.0', ' 1'
// and '1e0' all equal 1. A lookup join that probes a VARCHAR index with an
// INT key looks up one string, GMS's conversion of the key ('1'), and finds
// only the rows that hold exactly that text; the join lost the others.
// (A DATE key probing a string column is alike, but there GMS fails on a
// string that is no date where MySQL warns, so such joins keep the index
// until that differs.) No single probe can find values
// spread over the index like these, so such a join reads the inner table
// whole instead: unindexedStringJoins turns it back into the plain join it
// was planned from, with the comparisons the lookup had answered restored
// as its condition. MySQL cannot use the index there either.
//
// The same pass over the planned lookup joins puts back the comparison of
// each <=> key that the index column cannot hold (recheckNullSafeKeys).
//
// Targets GMS v0.20.0. Without it, TestLookupJoinStringIndexNumberKey,
// TestLookupJoinNullSafeKeyRechecked and TestSemiJoinStringIndexNumberKey
// fail.

// unindexedStringJoins replaces each lookup join in n whose probe compares
// a string index column with a number by the join of the same
// kind over the whole inner table.
func unindexedStringJoins(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		j, ok := n.(*plan.JoinNode)
		if !ok || !j.Op.IsLookup() {
			return n, transform.SameTree, nil
		}
		ita, named, ok := lookupSide(j.Right())
		if !ok {
			return n, transform.SameTree, nil
		}
		idx, ok := ita.Index().(*Index)
		keys := ita.Expressions()
		if !ok {
			return n, transform.SameTree, nil
		}
		if !probesStringsWithNumbers(idx, keys) {
			return recheckNullSafeKeys(j, ita, named, idx, keys)
		}
		rt, ok := ita.TableNode.(*plan.ResolvedTable)
		if !ok {
			return n, transform.SameTree, nil
		}
		it, ok := rt.Table.(*indexedTable)
		if !ok {
			return n, transform.SameTree, nil
		}
		scan, err := rt.ReplaceTable(it.Table)
		if err != nil {
			return n, transform.SameTree, nil
		}
		right, _, err := transform.Node(j.Right(), func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
			if n == sql.Node(ita) {
				return scan, transform.NewTree, nil
			}
			return n, transform.SameTree, nil
		})
		if err != nil {
			return nil, transform.SameTree, err
		}
		cond, ok := lookupCondition(ita, named, idx, keys, nil)
		if !ok {
			return n, transform.SameTree, nil
		}
		if l, ok := j.Filter.(*expression.Literal); j.Filter != nil && !(ok && l.Value() == true) {
			cond = expression.NewAnd(cond, j.Filter)
		}
		op, ok := unindexedOp(j.Op)
		if !ok {
			return n, transform.SameTree, nil
		}
		nn, err := j.WithChildren(j.Left(), right)
		if err != nil {
			return nil, transform.SameTree, err
		}
		nj := nn.(*plan.JoinNode)
		nj.Op, nj.Filter = op, cond
		return nj, transform.NewTree, nil
	})
}

// lookupSide returns the table access of a lookup join's inner side, and
// the node that names its columns above it: the access itself or the
// alias over it. Filters and projections of the inner table alone may sit
// above them.
func lookupSide(n sql.Node) (*plan.IndexedTableAccess, plan.TableIdNode, bool) {
	switch n := n.(type) {
	case *plan.Filter:
		return lookupSide(n.Child)
	case *plan.Project:
		return lookupSide(n.Child)
	case *plan.TableAlias:
		ita, ok := n.Child.(*plan.IndexedTableAccess)
		return ita, n, ok
	case *plan.IndexedTableAccess:
		return n, n, true
	}
	return nil, nil, false
}

// probesStringsWithNumbers reports whether a probe key of a number meets a
// string column of idx.
func probesStringsWithNumbers(idx *Index, keys []sql.Expression) bool {
	for i, k := range keys {
		if i >= len(idx.ix.cols) {
			break
		}
		col := idx.t.schema[idx.ix.cols[i]].Type
		if types.IsText(col) && types.IsNumber(k.Type()) {
			return true
		}
	}
	return false
}

// lookupCondition returns the comparisons of ita's index columns with its
// probe keys (<=> where the probe matches NULLs), which the planner removed
// from the join's condition when the lookup took them over, the columns
// named as named names them (only those at the positions only marks, when
// it is not nil); false when a column is not among those the table access
// reads.
func lookupCondition(ita *plan.IndexedTableAccess, named plan.TableIdNode, idx *Index, keys []sql.Expression, only []bool) (sql.Expression, bool) {
	sch := named.Schema()
	// Column ids are the first one's plus the column's place in the
	// table's full schema, as GMS numbers them, whatever the access reads.
	first, ok := named.Columns().Next(1)
	if !ok {
		return nil, false
	}
	nullSafe := ita.NullMask()
	var cond sql.Expression
	for i, k := range keys {
		if i >= len(idx.ix.cols) {
			return nil, false
		}
		if only != nil && !only[i] {
			continue
		}
		name := idx.t.schema[idx.ix.cols[i]].Name
		pos := sch.IndexOfColName(name)
		if pos < 0 {
			return nil, false
		}
		c := sch[pos]
		id := first + sql.ColumnId(idx.ix.cols[i])
		col := expression.NewGetFieldWithTable(int(id), int(named.Id()), c.Type, c.DatabaseSource, c.Source, c.Name, c.Nullable)
		var eq sql.Expression
		if i < len(nullSafe) && nullSafe[i] {
			eq = expression.NewNullSafeEquals(col, k)
		} else {
			eq = expression.NewEquals(col, k)
		}
		if cond == nil {
			cond = eq
		} else {
			cond = expression.NewAnd(cond, eq)
		}
	}
	return cond, cond != nil
}

// unindexedOp returns the join type a lookup join type was made from.
func unindexedOp(op plan.JoinType) (plan.JoinType, bool) {
	switch op {
	case plan.JoinTypeLookup:
		return plan.JoinTypeInner, true
	case plan.JoinTypeLeftOuterLookup:
		return plan.JoinTypeLeftOuter, true
	case plan.JoinTypeSemiLookup:
		return plan.JoinTypeSemi, true
	case plan.JoinTypeAntiLookup:
		return plan.JoinTypeAnti, true
	}
	return op, false
}

// recheckNullSafeKeys adds to a lookup join's condition the comparison of
// each <=> probe key that the index column cannot hold exactly. GMS
// converts such a key into the column's type, clamping and rounding (an
// INT 1000 probes a TINYINT index as 127), and exactJoinKeys cannot turn it
// into NULL there as it does under =, NULL matching the NULL rows under
// <=>. So the probe may find rows that do not match, and the condition,
// evaluated on each joined row, drops them; the join keeps its index.
func recheckNullSafeKeys(j *plan.JoinNode, ita *plan.IndexedTableAccess, named plan.TableIdNode, idx *Index, keys []sql.Expression) (sql.Node, transform.TreeIdentity, error) {
	nullSafe := ita.NullMask()
	var only []bool
	for i, k := range keys {
		if i >= len(idx.ix.cols) || i >= len(nullSafe) || !nullSafe[i] {
			continue
		}
		if _, done := k.(*exactKey); done || !needsExactKey(idx.t.schema[idx.ix.cols[i]].Type, k.Type()) {
			continue
		}
		if only == nil {
			only = make([]bool, len(keys))
		}
		only[i] = true
	}
	if only == nil {
		return j, transform.SameTree, nil
	}
	cond, ok := lookupCondition(ita, named, idx, keys, only)
	if !ok {
		return j, transform.SameTree, nil
	}
	if j.Filter != nil {
		cond = expression.NewAnd(j.Filter, cond)
	}
	nj := *j
	nj.Filter = cond
	return &nj, transform.NewTree, nil
}
