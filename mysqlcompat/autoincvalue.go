package mysqlcompat

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// An INSERT that gives an AUTO_INCREMENT column NULL, or a value that is
// zero without NO_AUTO_VALUE_ON_ZERO, generates the column's next value,
// and LAST_INSERT_ID reports the first such. GMS generates from the value
// (its AutoIncrement compares it with zero in the column's type) but
// decides LAST_INSERT_ID from the literal's type: for a string '0' it
// generated an id that LAST_INSERT_ID did not report. A rule decides the
// row LAST_INSERT_ID is taken from by the value, as the generation does.
//
// Targets GMS v0.20.0. Without it, sqlstore's TestLastInsertIDFromValue
// fails on its planned path.

// GeneratesAutoInc reports whether v, given in an INSERT for an
// AUTO_INCREMENT column of type typ, makes the column take its next value:
// NULL, or, unless noAutoOnZero (NO_AUTO_VALUE_ON_ZERO), a value equal to
// zero in the column's type, a string '0' too. A value that does not
// convert is no zero; its INSERT fails or warns elsewhere.
func GeneratesAutoInc(ctx *sql.Context, typ sql.Type, v any, noAutoOnZero bool) bool {
	if v == nil {
		return true
	}
	if noAutoOnZero {
		return false
	}
	cmp, err := typ.Compare(ctx, v, typ.Zero())
	return err == nil && cmp == 0
}

// AutoIncValue returns the AUTO_INCREMENT expression of the projection an
// INSERT of VALUES puts over its rows and the position in each row of the
// value it is given; ok is false when the INSERT has no such column, its
// source is not VALUES, or the column is not among those the rows give.
func AutoIncValue(ins *plan.InsertInto) (ai *expression.AutoIncrement, values *plan.Values, col int, ok bool) {
	src := ins.Source
	for {
		w, isWrapper := src.(interface{ Wrapped() sql.Node })
		if !isWrapper {
			break
		}
		src = w.Wrapped()
	}
	proj, isProj := src.(*plan.Project)
	if !isProj {
		return nil, nil, -1, false
	}
	if values, ok = proj.Child.(*plan.Values); !ok {
		return nil, nil, -1, false
	}
	for _, e := range proj.Projections {
		if ai, ok = e.(*expression.AutoIncrement); !ok {
			continue
		}
		gf, isField := ai.Child.(*expression.GetField)
		if !isField || gf.Index() < 0 {
			return nil, nil, -1, false
		}
		for _, row := range values.ExpressionTuples {
			if gf.Index() >= len(row) {
				return nil, nil, -1, false
			}
		}
		return ai, values, gf.Index(), true
	}
	return nil, nil, -1, false
}

// lastInsertIDRow sets the row of each INSERT of VALUES whose generated
// value LAST_INSERT_ID reports: the first that gives DEFAULT, or a literal
// GeneratesAutoInc says generates. Rows that give another expression keep
// GMS's decision (none).
func lastInsertIDRow(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if qFlags != nil && !qFlags.IsSet(sql.QFlagInsert) {
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		ins, ok := n.(*plan.InsertInto)
		if !ok {
			return n, transform.SameTree, nil
		}
		ai, values, col, ok := AutoIncValue(ins)
		if !ok {
			return n, transform.SameTree, nil
		}
		noAutoOnZero := sql.LoadSqlMode(ctx).ModeEnabled(sql.NoAutoValueOnZero)
		first := -1
		for i, row := range values.ExpressionTuples {
			e := row[col]
			if w, isWrapper := e.(*expression.Wrapper); isWrapper {
				e = w.Unwrap()
			}
			if _, isDefault := e.(*sql.ColumnDefaultValue); isDefault {
				first = i
				break
			}
			if l, isLit := e.(*expression.Literal); isLit && GeneratesAutoInc(ctx, ai.Type(), l.Value(), noAutoOnZero) {
				first = i
				break
			}
		}
		if first == ins.FirstGeneratedAutoIncRowIdx {
			return n, transform.SameTree, nil
		}
		return ins.WithAutoIncrementIdx(first), transform.NewTree, nil
	})
}
