package mysqlcompat

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// MIN and MAX of a primary key over no rows
//
// MySQL answers SELECT MAX(id) FROM t with one row, NULL when no row
// qualifies, and applications count on it (INSERT ... SELECT
// COALESCE(MAX(id), 0) + 1 FROM t). GMS's replaceAgg rule turns MIN or MAX
// of a table's first primary key column, the query's only aggregate, into
// ORDER BY that column LIMIT 1 without the aggregation, which returns no
// row at all when none qualifies.
//
// Two rules keep the shortcut and the answer. Before GMS's rules run,
// minMaxKeyRows puts the one-row read under the aggregation,
// GroupBy(MAX(id), Limit(1, Sort(id DESC, input))), which replaceAgg leaves
// alone: the aggregation of at most one row gives one row, NULL over none.
// A primary key column holds no NULL, so the first row of the order holds
// the extreme value. GMS's replaceIdxSort does not look below a GroupBy,
// so at the end of the once-after batch, when GMS has turned the input's
// filters into index ranges, minMaxKeyRead reads that one row through the
// primary index in the order asked (reversed for MAX): one row read, as
// with replaceAgg's plan.
//
// Targets GMS v0.20.0 (sql/analyzer/replace_sort.go, replaceAgg and
// replaceIdxSort). Without them, TestMinMaxKeyOverNoRows fails.
func minMaxKeyRows(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if qFlags != nil && !qFlags.IsSet(sql.QFlagAggregation) {
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		gb, ok := n.(*plan.GroupBy)
		if !ok || len(gb.SelectedExprs) != 1 || len(gb.GroupByExprs) != 0 {
			return n, transform.SameTree, nil
		}
		var field sql.Expression
		order := sql.Descending
		switch agg := gb.SelectedExprs[0].(type) {
		case *aggregation.Max:
			field = agg.Child
		case *aggregation.Min:
			field, order = agg.Child, sql.Ascending
		default:
			return n, transform.SameTree, nil
		}
		gf, ok := field.(*expression.GetField)
		if !ok || gf.IsNullable() || !firstKeyColumn(gb.Child, gf) {
			return n, transform.SameTree, nil
		}
		one := plan.NewLimit(expression.NewLiteral(int64(1), types.Int64),
			plan.NewSort(sql.SortFields{{Column: gf, Order: order}}, gb.Child))
		nn, err := gb.WithChildren(one)
		if err != nil {
			return nil, transform.SameTree, err
		}
		return nn, transform.NewTree, nil
	})
}

// firstKeyColumn reports whether gf is the first primary key column of the
// one table n reads (through filters and an alias), as replaceAgg requires.
func firstKeyColumn(n sql.Node, gf *expression.GetField) bool {
	for {
		switch x := n.(type) {
		case *plan.Filter:
			n = x.Child
			continue
		case *plan.TableAlias:
			n = x.Child
			continue
		case *plan.ResolvedTable:
			t, ok := x.UnderlyingTable().(sql.PrimaryKeyTable)
			if !ok {
				return false
			}
			if _, ok := x.UnderlyingTable().(sql.IndexAddressableTable); !ok {
				return false
			}
			ords := t.PrimaryKeySchema().PkOrdinals
			if len(ords) == 0 {
				return false
			}
			col := t.PrimaryKeySchema().Schema[ords[0]]
			return strings.EqualFold(col.Name, gf.Name()) && strings.EqualFold(col.Source, gf.Table())
		case *plan.IndexedTableAccess:
			return false
		}
		return false
	}
}

// minMaxKeyRead replaces the sort under the one-row limit that
// minMaxKeyRows put under a MIN or MAX of a primary key by a read of the
// primary index in the sort's order, where the input is the table or a
// static range lookup on its primary index whose ranges cannot interleave
// on the first key column (a one-column key, or one range). Any other input
// keeps the sort, which is right, only slower.
func minMaxKeyRead(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if qFlags != nil && !qFlags.IsSet(sql.QFlagAggregation) {
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		gb, ok := n.(*plan.GroupBy)
		if !ok || len(gb.SelectedExprs) != 1 || len(gb.GroupByExprs) != 0 {
			return n, transform.SameTree, nil
		}
		lim, ok := gb.Child.(*plan.Limit)
		if !ok {
			return n, transform.SameTree, nil
		}
		var fields sql.SortFields
		var input sql.Node
		switch s := lim.Child.(type) {
		case *plan.TopN:
			fields, input = s.Fields, s.Child
		case *plan.Sort:
			fields, input = s.SortFields, s.Child
		default:
			return n, transform.SameTree, nil
		}
		if len(fields) != 1 {
			return n, transform.SameTree, nil
		}
		gf, ok := fields[0].Column.(*expression.GetField)
		if !ok || !firstKeyColumnOf(input, gf) {
			return n, transform.SameTree, nil
		}
		read, ok, err := keyOrderRead(ctx, input, fields[0].Order == sql.Descending)
		if err != nil || !ok {
			return n, transform.SameTree, err
		}
		nl, err := lim.WithChildren(read)
		if err != nil {
			return nil, transform.SameTree, err
		}
		ng, err := gb.WithChildren(nl)
		if err != nil {
			return nil, transform.SameTree, err
		}
		return ng, transform.NewTree, nil
	})
}

// firstKeyColumnOf reports whether gf is the first primary key column of
// the table input reads, input being the table, a lookup on it or an
// alias of either.
func firstKeyColumnOf(input sql.Node, gf *expression.GetField) bool {
	switch x := input.(type) {
	case *plan.TableAlias:
		return firstKeyColumnOf(x.Child, gf)
	case *plan.IndexedTableAccess:
		rt, ok := x.TableNode.(*plan.ResolvedTable)
		return ok && firstKeyColumn(rt, gf)
	case *plan.ResolvedTable:
		return firstKeyColumn(x, gf)
	}
	return false
}

// keyOrderRead returns input read through its table's primary index in key
// order (reverse: descending), ok false when that cannot be done safely.
func keyOrderRead(ctx *sql.Context, input sql.Node, reverse bool) (sql.Node, bool, error) {
	switch x := input.(type) {
	case *plan.TableAlias:
		c, ok, err := keyOrderRead(ctx, x.Child, reverse)
		if err != nil || !ok {
			return nil, false, err
		}
		nn, err := x.WithChildren(c)
		return nn, err == nil, err
	case *plan.ResolvedTable:
		t, ok := x.UnderlyingTable().(sql.IndexAddressableTable)
		if !ok {
			return nil, false, nil
		}
		idx, err := primaryIndex(ctx, t)
		if err != nil || idx == nil {
			return nil, false, err
		}
		lookup, err := sql.NewMySQLIndexBuilder(idx).Build(ctx)
		if err != nil {
			return nil, false, err
		}
		ranges, ok := lookup.Ranges.(sql.MySQLRangeCollection)
		if !ok || !idx.CanSupport(ctx, ranges.ToRanges()...) {
			return nil, false, nil
		}
		return keyLookup(ctx, x, idx, ranges, lookup, reverse)
	case *plan.IndexedTableAccess:
		if !x.IsStatic() {
			return nil, false, nil
		}
		lookup, err := x.GetLookup(ctx, nil)
		if err != nil {
			return nil, false, err
		}
		if lookup.Index == nil || lookup.Index.ID() != "PRIMARY" || lookup.IsReverse {
			return nil, false, nil
		}
		ranges, ok := lookup.Ranges.(sql.MySQLRangeCollection)
		if !ok || (len(lookup.Index.Expressions()) > 1 && len(ranges) > 1) {
			return nil, false, nil
		}
		return keyLookup(ctx, x.TableNode, lookup.Index, ranges, lookup, reverse)
	}
	return nil, false, nil
}

// keyLookup returns a static read of ranges of idx on table, in reverse
// when asked and the index can.
func keyLookup(ctx *sql.Context, table sql.TableNode, idx sql.Index, ranges sql.MySQLRangeCollection, lookup sql.IndexLookup, reverse bool) (sql.Node, bool, error) {
	if oi, ok := idx.(sql.OrderedIndex); ok && (oi.Order() == sql.IndexOrderNone || (reverse && !oi.Reversible())) {
		return nil, false, nil
	}
	lookup = sql.NewIndexLookup(idx, ranges, lookup.IsPointLookup, lookup.IsEmptyRange, lookup.IsSpatialLookup, reverse)
	nn, err := plan.NewStaticIndexedAccessForTableNode(ctx, table, lookup)
	if err != nil {
		return nil, false, err
	}
	return nn, true, nil
}

// primaryIndex returns t's primary index, nil if it has none.
func primaryIndex(ctx *sql.Context, t sql.IndexAddressableTable) (sql.Index, error) {
	idxs, err := t.GetIndexes(ctx)
	if err != nil {
		return nil, err
	}
	for _, idx := range idxs {
		if idx.ID() == "PRIMARY" {
			return idx, nil
		}
	}
	return nil, nil
}
