package mysqlcompat

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// A single-row INSERT run without GMS's iterators (the engine's direct
// path for kept plans) must do to its row what the plan's source and the
// statement's iterator do here: count it, adjust its values out of strict
// mode or check them in it (lenient.go), and word a conversion error of it
// as MySQL does (insertvalues.go). These expose exactly that, over the
// plan the rules made, so that both paths share one definition.

// InsertValuesSource returns the source of ins under the row counter the
// value rules put there, and whether ins has that counter: a plan without
// it is not one the value rules corrected.
func InsertValuesSource(ins *plan.InsertInto) (sql.Node, bool) {
	r, ok := ins.Source.(*insertRows)
	if !ok {
		return nil, false
	}
	return r.child, true
}

// AdjustInsertRow does to row, the first and only row of ins's source
// (the destination's columns), what the counting source does to it: out of
// strict mode (or under IGNORE) its values are adjusted with MySQL's
// warnings, in strict mode the values GMS would take where MySQL refuses
// them fail with MySQL's error. ins must have the row counter
// (InsertValuesSource).
func AdjustInsertRow(ctx *sql.Context, ins *plan.InsertInto, row sql.Row) error {
	r := ins.Source.(*insertRows)
	if lenientWrites(ctx, r.ignore) {
		adjustRow(ctx, r.sch, row, 1, r.nulls)
		return nil
	}
	return strictRow(ctx, r.sch, row, 1)
}

// InsertRowError returns the error the statement's iterator gives for
// err, the failure of the first row of an INSERT into sch: MySQL's for a
// conversion error of that row, err itself otherwise.
func InsertRowError(ctx *sql.Context, sch sql.Schema, err error) error {
	if se := insertValueError(ctx, sch, 1, err); se != nil {
		return se
	}
	return err
}
