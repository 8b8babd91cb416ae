package mysqlcompat

import (
	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// GroupedTable is the name of the derived table that windows over grouped
// rows read (groupwindow.go), for the tests of package mysqlcompat_test.
const GroupedTable = groupedTable

// RewriteGeneratedValues applies genvalues.go's rewrite of parsed
// statements, with the tables of e's catalog.
func RewriteGeneratedValues(e *sqle.Engine, ctx *sql.Context, st ast.Statement) {
	generatedValuesParser{cat: e.Analyzer.Catalog}.rewrite(ctx, st)
}
