package mysqlcompat

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// The warnings of UPDATE's info
//
// MySQL ends an UPDATE with "Rows matched: M  Changed: C  Warnings: W",
// W the warnings the statement raised (a value cut to its column under
// UPDATE IGNORE or out of strict mode, one per row and column). GMS's
// accumulator writes Warnings: 0 always. updateWarnings wraps the row
// iterator of an UPDATE: GMS puts its accumulator under the wrapper
// (sql.MutableRowIter, rowexec.AddAccumulatorIter), so the wrapper sees
// the result row, once the rows are written, and fills in the session's
// warning count, which GMS clears at the start of each statement.
//
// Targets GMS v0.20.0 (rowexec/dml_iters.go, updateRowHandler.okResult).
// Without it, TestPlanningSpec/update_info fails.

// withUpdateWarnings returns iter, the iterator of n, wrapped when n is
// an UPDATE (under the executors of its triggers).
func withUpdateWarnings(n sql.Node, iter sql.RowIter) sql.RowIter {
	for {
		switch x := n.(type) {
		case *plan.TriggerExecutor:
			n = x.Left()
			continue
		case *plan.Update:
			return &updateWarnings{RowIter: iter}
		}
		return iter
	}
}

// updateWarnings is an UPDATE's row iterator whose result counts the
// statement's warnings.
type updateWarnings struct {
	sql.RowIter
}

var _ sql.MutableRowIter = (*updateWarnings)(nil)

func (u *updateWarnings) GetChildIter() sql.RowIter { return u.RowIter }

func (u *updateWarnings) WithChildIter(child sql.RowIter) sql.RowIter {
	return &updateWarnings{RowIter: child}
}

func (u *updateWarnings) Next(ctx *sql.Context) (sql.Row, error) {
	row, err := u.RowIter.Next(ctx)
	if err != nil || len(row) != 1 || ctx.Session == nil {
		return row, err
	}
	ok, isOk := row[0].(types.OkResult)
	if !isOk {
		return row, nil
	}
	info, isUpdate := ok.Info.(plan.UpdateInfo)
	if !isUpdate {
		return row, nil
	}
	info.Warnings = int(ctx.Session.WarningCount())
	ok.Info = info
	return sql.Row{ok}, nil
}
