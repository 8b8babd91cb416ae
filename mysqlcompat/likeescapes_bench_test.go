package mysqlcompat

import (
	"context"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// BenchmarkParseWildcardEscapes parses through the engine's wrapper a
// statement with \_ in its strings and one without a backslash.
func BenchmarkParseWildcardEscapes(b *testing.B) {
	p := typedLiteralParser{sql.GlobalParser}
	for _, bc := range []struct{ name, q string }{
		{"backslash", `SELECT id, s FROM t WHERE s LIKE 'a\_b%' AND c = 'x' AND d IN ('p\%', 'q', 'r') ORDER BY id LIMIT 10`},
		{"plain", `SELECT id, s FROM t WHERE s LIKE 'a_b%' AND c = 'x' AND d IN ('p%', 'q', 'r') ORDER BY id LIMIT 10`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, _, err := p.ParseWithOptions(context.Background(), bc.q, ';', false, ast.ParserOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
