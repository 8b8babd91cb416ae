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

// Index lookups of single-table UPDATE and DELETE
//
// A few corrections change values GMS builds index ranges from, and so
// run before GMS plans lookups, in its once-before batch (Install):
// castStringInts (CAST of a string to an integer reads its prefix; in
// the same walk a string literal compared with a number becomes the
// number, a fixed-point literal kept from the binder its literal:
// numcompare.go),
// trimPaddedLiterals (a literal compared with a PAD SPACE string loses its
// trailing spaces, a light one becomes a padded comparison),
// and globalOnlyVars (a global-only variable read as its global value). GMS
// plans a single-table UPDATE or DELETE with fixed batches of its own
// (install.go), which none of them reach: its lookup took the key from
// GMS's own value and dropped the conjunct it covered, so DELETE FROM t
// WHERE id = CAST('3.9z' AS SIGNED) deleted id 0 where SELECT, and MySQL,
// find id 3, and the value rules that the exec builder applies later had
// nothing left to correct.
//
// So the planning is split. A table that answers lookups itself
// (sql.IndexSearchableTable) declines to let GMS plan a lookup from a
// filter holding such a value (NeedsRangeCorrection): it answers with no
// lookup, which leaves GMS's filter over the whole table as written. The
// exec builder, before the value rules, applies the corrections to a plan
// from the fixed batches and plans the lookups of the filters they left
// over tables, with GMS's own rule (planFixedRanges); the table then sees
// corrected values and answers or lets GMS cost them, as for a SELECT.
// The filter is never lost: either it stays whole above a full scan, or
// the lookup is planned from its corrected conjuncts.
//
// Targets GMS v0.20.0 (analyzer/node_batches.go, costed_index_scan.go:
// an IndexSearchableTable's empty lookup keeps the filter). Without it,
// TestDMLRowsSpec (testdata/dml_rows) fails.

// NeedsRangeCorrection reports whether a filter's conjuncts hold a value
// that the corrections run before index planning would change: a plan
// GMS analyzed without them (a single-table UPDATE or DELETE), whose
// lookup must wait until they are applied. It allocates nothing for the
// usual conjuncts (comparisons, AND, OR, NOT, IN, BETWEEN of columns,
// literals and parameters).
func NeedsRangeCorrection(ctx *sql.Context, exprs []sql.Expression) bool {
	for _, e := range exprs {
		if needsRangeCorrection(ctx, e) {
			return true
		}
	}
	return false
}

func needsRangeCorrection(ctx *sql.Context, e sql.Expression) bool {
	switch x := e.(type) {
	case nil, *expression.Literal, *expression.GetField, *expression.BindVar:
		return false
	case *exactLiteral:
		return true
	case *expression.And:
		return needsRangeCorrection(ctx, x.LeftChild) || needsRangeCorrection(ctx, x.RightChild)
	case *expression.Or:
		return needsRangeCorrection(ctx, x.LeftChild) || needsRangeCorrection(ctx, x.RightChild)
	case *expression.Not:
		return needsRangeCorrection(ctx, x.Child)
	case *expression.Convert:
		if castsStringInt(x) {
			return true
		}
		return needsRangeCorrection(ctx, x.Child)
	case *expression.SystemVar:
		_, same, err := globalOnlyVar(x)
		return err != nil || same == transform.NewTree
	case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual, *expression.GreaterThan, *expression.GreaterThanOrEqual:
		c := x.(expression.Comparer)
		if numStringCompared(c.Left(), c.Right()) || numStringCompared(c.Right(), c.Left()) || enumLiteralsNeeded(ctx, e) {
			return true
		}
		if stringLiteral(c.Left()) || stringLiteral(c.Right()) {
			if _, same, err := trimPaddedLiterals(ctx, e); err != nil || same == transform.NewTree {
				return true
			}
		}
		return needsRangeCorrection(ctx, c.Left()) || needsRangeCorrection(ctx, c.Right())
	case *expression.Between:
		if numStringCompared(x.Lower, x.Val) || numStringCompared(x.Upper, x.Val) || enumLiteralsNeeded(ctx, e) {
			return true
		}
		if stringLiteral(x.Lower) || stringLiteral(x.Upper) {
			if _, same, err := trimPaddedLiterals(ctx, e); err != nil || same == transform.NewTree {
				return true
			}
		}
		return needsRangeCorrection(ctx, x.Val) || needsRangeCorrection(ctx, x.Lower) || needsRangeCorrection(ctx, x.Upper)
	case *expression.InTuple:
		if enumLiteralsNeeded(ctx, e) {
			return true
		}
		if tup, ok := x.RightChild.(expression.Tuple); ok {
			for _, el := range tup {
				if numStringCompared(el, x.LeftChild) {
					return true
				}
			}
		}
		return needsRangeCorrection(ctx, x.LeftChild) || needsRangeCorrection(ctx, x.RightChild)
	case expression.Tuple:
		for _, el := range x {
			if needsRangeCorrection(ctx, el) {
				return true
			}
		}
		return false
	}
	for _, c := range e.Children() {
		if needsRangeCorrection(ctx, c) {
			return true
		}
	}
	return false
}

// castsStringInt reports whether castStringInts replaces c.
func castsStringInt(c *expression.Convert) bool {
	if castOperand(c.Child) == castOther {
		return false
	}
	t := c.Type()
	return t == types.Int64 || t == types.Uint64
}

// stringLiteral reports whether e is a literal holding a string.
func stringLiteral(e sql.Expression) bool {
	l, ok := e.(*expression.Literal)
	if !ok {
		return false
	}
	_, ok = l.Value().(string)
	return ok
}

// rangeCorrections are the corrections of values GMS builds ranges from,
// in the order the once-before batch runs them (Install).
var rangeCorrections = ChainRules(keepLikes, globalOnlyVars, castStringInts)

// planFixedRanges returns n, a plan of GMS's fixed batches, with the
// corrections of range values applied and lookups planned for the
// filters over tables that wait for them (NeedsRangeCorrection). A plan
// without such a filter (a point write's lookup, GMS planned it) comes
// back as it is, at the cost of one walk of its nodes.
func planFixedRanges(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node) (sql.Node, error) {
	if !hasTableFilter(n) {
		return n, nil
	}
	n, same, err := rangeCorrections(ctx, a, n, nil, analyzer.DefaultRuleSelector, nil)
	if err != nil || same == transform.SameTree {
		return n, err
	}
	optimize, ok := ruleNamed(a, "optimizeJoins")
	if !ok {
		return nil, fmt.Errorf("mysqlcompat: the analyzer has no rule optimizeJoins")
	}
	// GMS's rule plans the lookups of a filter over one table (its
	// costedIndexScans), each filter on its own, wherever it sits: the
	// table filters inside trigger bodies are planned again too (from the
	// corrected values); the rest of the plan is left alone.
	n, _, err = transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		if !isTableFilter(n) {
			return n, transform.SameTree, nil
		}
		return optimize(ctx, a, n, nil, analyzer.DefaultRuleSelector, &sql.QueryFlags{})
	})
	return n, err
}

// hasTableFilter reports whether n has a filter directly over a table.
// The nodes of a write by key are followed by their fields, which
// allocates nothing; other nodes by their children.
func hasTableFilter(n sql.Node) bool {
	switch x := n.(type) {
	case *plan.Filter:
		return isTableFilter(x) || hasTableFilter(x.Child)
	case *plan.Update:
		return hasTableFilter(x.Child)
	case *plan.UpdateSource:
		return hasTableFilter(x.Child)
	case *plan.DeleteFrom:
		return hasTableFilter(x.Child)
	case *exactUpdate:
		return hasTableFilter(x.child)
	case *plan.IndexedTableAccess, *plan.ResolvedTable:
		return false
	}
	for _, c := range n.Children() {
		if hasTableFilter(c) {
			return true
		}
	}
	return false
}

func isTableFilter(n sql.Node) bool {
	f, ok := n.(*plan.Filter)
	if !ok {
		return false
	}
	switch c := f.Child.(type) {
	case *plan.ResolvedTable:
		return true
	case *plan.TableAlias:
		_, ok := c.Child.(*plan.ResolvedTable)
		return ok
	}
	return false
}

// PlanFixedLookups returns n, a plan about to be built with b or an
// executor wrapping it (an EXPLAIN of it, which an outer builder answers
// itself), with its lookups planned as the builder Install made will plan
// them when it builds n: the plan that runs. Other plans, and any plan
// when b holds no such builder, come back as they are.
func PlanFixedLookups(ctx *sql.Context, b sql.NodeExecBuilder, n sql.Node) (sql.Node, error) {
	for x := b; ; {
		if e, ok := x.(valueRulesExec); ok {
			if !fixedBatches(n) {
				return n, nil
			}
			return planFixedRanges(ctx, e.a, n)
		}
		u, ok := x.(interface{ Unwrap() sql.NodeExecBuilder })
		if !ok {
			return n, nil
		}
		x = u.Unwrap()
	}
}
