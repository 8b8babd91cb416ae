package mysqlcompat

import (
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// BenchmarkNumCompare evaluates d > 3.499 over a DECIMAL(5,2) value: GMS's
// comparison (which rounds the literal to 3.50) against numCompare.
func BenchmarkNumCompare(b *testing.B) {
	ctx := sql.NewEmptyContext()
	dt := types.MustCreateDecimalType(5, 2)
	lt := types.MustCreateDecimalType(4, 3)
	col := expression.NewGetField(0, dt, "d", true)
	lit := expression.NewLiteral(decimal.RequireFromString("3.499"), lt)
	gms := expression.NewGreaterThan(col, lit)
	ours := &numCompare{cmp: gms, op: opGt, kids: []sql.Expression{col, lit}, modes: []numMode{numDecimal}}
	row := sql.Row{decimal.RequireFromString("3.50")}
	for _, c := range []struct {
		name string
		e    sql.Expression
	}{{"gms", gms}, {"numCompare", ours}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := c.e.Eval(ctx, row); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
