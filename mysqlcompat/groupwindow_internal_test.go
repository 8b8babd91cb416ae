package mysqlcompat

import (
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/stretchr/testify/require"
)

// The rewrite leaves statements without windows over groups as parsed,
// and keeps bind variables.
func TestWindowParserRewrites(t *testing.T) {
	p := windowParser{sql.GlobalParser}
	for _, tc := range []struct {
		q       string
		rewrote bool
	}{
		{"SELECT k, SUM(c) FROM t GROUP BY k", false},
		{"SELECT c, SUM(c) OVER () FROM t", false},
		{"SELECT * FROM t WHERE id = 1", false},
		{"SELECT k, SUM(c), RANK() OVER (ORDER BY SUM(c)) FROM t GROUP BY k", true},
		{"SELECT COUNT(*), ROW_NUMBER() OVER () FROM t", true},
		{"SELECT k, ROW_NUMBER() OVER () FROM t GROUP BY k HAVING SUM(c) > ?", true},
		{"SELECT (SELECT 1) FROM t GROUP BY k", true},
		{"SELECT k, (SELECT 1) FROM t GROUP BY k", false},
		{"SELECT SUM(c) FROM t GROUP BY k", false},
		// Left to GMS: * in the select list, an alias naming its own column.
		{"SELECT *, ROW_NUMBER() OVER () FROM t GROUP BY k", false},
		{"SELECT k + 1 AS k, ROW_NUMBER() OVER () FROM t GROUP BY k", false},
	} {
		st, _, err := p.ParseOneWithOptions(t.Context(), tc.q, ast.ParserOptions{})
		require.NoError(t, err, tc.q)
		want, _, err := sql.GlobalParser.ParseOneWithOptions(t.Context(), tc.q, ast.ParserOptions{})
		require.NoError(t, err, tc.q)
		got := ast.String(st)
		require.Equal(t, tc.rewrote, got != ast.String(want), "%s: %s", tc.q, got)
		if tc.rewrote {
			require.Contains(t, got, groupedTable, tc.q)
		}
		if strings.Contains(tc.q, "?") {
			require.Contains(t, got, ":v1", tc.q)
		}
	}
}
