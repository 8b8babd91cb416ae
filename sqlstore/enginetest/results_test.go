package enginetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/enginetest"
	"github.com/dolthub/go-mysql-server/enginetest/queries"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
	"gopkg.in/src-d/go-errors.v1"

	"github.com/strata-db/strata/sqlstore"
)

// Where sqlstore answers as MySQL does and GMS does not, the suites'
// expectations are GMS's. One such difference is systematic: SUM and AVG
// over integers and DECIMALs are DECIMAL in MySQL and in sqlstore
// (sqlstore/exactagg.go), DOUBLE in GMS, so the suites expect float64s
// where sqlstore returns decimals of the same value. The harness converts
// such an expected float64 into the result column's DECIMAL type before
// GMS's own comparison, which then still fails on any other value. The
// other is the server's identity, which GMS's suites expect as GMS's
// ("8.0.31", "Dolt") and sqlstore's sessions give as Strata's
// (sqlstore.ServerVersion, sqlstore.VersionComment). A third is UPDATE's info line, whose
// Warnings GMS's suites expect to be 0 always and sqlstore counts (mysqlcompat/updateinfo.go):
// an expected 0 takes the actual count. Every other result is compared exactly as GMS
// compares it.

var _ enginetest.ResultEvaluationHarness = (*harness)(nil)

// gmsHarness hides the harness's ResultEvaluationHarness methods, so that
// enginetest.CheckResults applies GMS's default comparison.
type gmsHarness struct{ enginetest.Harness }

// EvaluateQueryResults implements enginetest.ResultEvaluationHarness.
func (h *harness) EvaluateQueryResults(t *testing.T, expectedRows []sql.Row, expectedCols []*sql.Column, sch sql.Schema, actualRows []sql.Row, query string, _ queries.WrapBehavior) {
	t.Helper()
	ctx := sql.NewEmptyContext()
	expectedRows = expectUpdateWarnings(expectIdentity(expectDecimals(ctx, sch, expectedRows)), actualRows)
	if expectedCols != nil {
		cols := make([]*sql.Column, len(expectedCols))
		for i, c := range expectedCols {
			cols[i] = c
			if i < len(sch) && c.Type == types.Float64 && types.IsDecimal(sch[i].Type) {
				nc := *c
				nc.Type = sch[i].Type
				cols[i] = &nc
			}
		}
		expectedCols = cols
	}
	enginetest.CheckResults(ctx, t, gmsHarness{h}, expectedRows, expectedCols, sch, actualRows, query, nil)
}

// expectDecimals returns rows with each float64 in a DECIMAL column of sch
// converted into that column's type.
func expectDecimals(ctx *sql.Context, sch sql.Schema, rows []sql.Row) []sql.Row {
	var out []sql.Row
	for r, row := range rows {
		var nrow sql.Row
		for i, v := range row {
			f, ok := v.(float64)
			if !ok || i >= len(sch) || !types.IsDecimal(sch[i].Type) {
				continue
			}
			d, _, err := sch[i].Type.Convert(ctx, f)
			if err != nil {
				continue
			}
			if dt, ok := sch[i].Type.(sql.DecimalType); ok {
				if dd, ok := d.(decimal.Decimal); ok {
					// As the result shows it: with the type's scale.
					d = dd.Round(int32(dt.Scale()))
				}
			}
			if nrow == nil {
				nrow = slices.Clone(row)
			}
			nrow[i] = d
		}
		if nrow != nil {
			if out == nil {
				out = slices.Clone(rows)
			}
			out[r] = nrow
		}
	}
	if out == nil {
		return rows
	}
	return out
}

// EvaluateExpectedError implements enginetest.ResultEvaluationHarness as
// GMS's default does, but for one systematic difference: a value its
// column cannot hold, which GMS's conversion words "error: 'x' is not a
// valid value for 'int'", MySQL and sqlstore word "Incorrect integer
// value: 'x' for column 'i' at row 1" (1366; mysqlcompat/assign.go and
// insertvalues.go). The failure is the same, so the statement's effects
// (a trigger's rolled back) are still checked by the script.
func (h *harness) EvaluateExpectedError(t *testing.T, expected string, err error) {
	t.Helper()
	if v, ok := gmsInvalidValue(expected); ok {
		if se := sqlstore.MySQLError(err); se != nil && se.Num == 1366 && strings.Contains(se.Message, "value: '"+v+"' for column") {
			return
		}
	}
	require.Equal(t, expected, err.Error())
}

// gmsInvalidValue returns the value of GMS's conversion error text
// "error: 'x' is not a valid value for 'int'" for an integer type.
func gmsInvalidValue(msg string) (string, bool) {
	rest, ok := strings.CutPrefix(msg, "error: '")
	if !ok {
		return "", false
	}
	v, typ, ok := strings.Cut(rest, "' is not a valid value for '")
	if !ok || !strings.Contains(typ, "int") {
		return "", false
	}
	return v, true
}

// EvaluateExpectedErrorKind implements enginetest.ResultEvaluationHarness
// as GMS's default does.
func (h *harness) EvaluateExpectedErrorKind(t *testing.T, expected *errors.Kind, err error) {
	t.Helper()
	require.True(t, expected.Is(err), "Expected error of type %s but got %s", expected, err)
}

// identity maps what GMS's suites expect of the server's identity to what
// sqlstore's sessions give: VERSION() and @@version, and the
// version_comment row of SHOW VARIABLES.
func identity(row sql.Row, v any) (any, bool) {
	switch {
	case v == "8.0.31":
		return sqlstore.ServerVersion, true
	case v == "Dolt" && len(row) == 2 && row[0] == "version_comment":
		return sqlstore.VersionComment, true
	}
	return nil, false
}

// expectIdentity returns rows with GMS's identity replaced by sqlstore's.
func expectIdentity(rows []sql.Row) []sql.Row {
	var out []sql.Row
	for r, row := range rows {
		for i, v := range row {
			nv, ok := identity(row, v)
			if !ok {
				continue
			}
			if out == nil {
				out = slices.Clone(rows)
			}
			if &out[r][0] == &rows[r][0] {
				out[r] = slices.Clone(row)
			}
			out[r][i] = nv
		}
	}
	if out == nil {
		return rows
	}
	return out
}

// expectUpdateWarnings returns rows with the Warnings of each expected
// UPDATE result that says 0 taken from the actual result in its place.
func expectUpdateWarnings(rows, actual []sql.Row) []sql.Row {
	if len(rows) != 1 || len(actual) != 1 || len(rows[0]) != 1 || len(actual[0]) != 1 {
		return rows
	}
	want, ok1 := rows[0][0].(types.OkResult)
	got, ok2 := actual[0][0].(types.OkResult)
	if !ok1 || !ok2 {
		return rows
	}
	wi, ok1 := want.Info.(plan.UpdateInfo)
	gi, ok2 := got.Info.(plan.UpdateInfo)
	if !ok1 || !ok2 || wi.Warnings != 0 {
		return rows
	}
	wi.Warnings = gi.Warnings
	want.Info = wi
	return []sql.Row{{want}}
}
