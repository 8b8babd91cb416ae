package sqlstore

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTxnSizeBound: a transaction whose writes would outgrow
// Options.MaxTxnBytes fails the statement that would cross the bound with
// 1197, rolled back; the transaction's earlier statements stay and
// commit, and schema changes are not bounded.
func TestTxnSizeBound(t *testing.T) {
	d := newTestDBWith(t, &testOptions{NoSync: true, Options: Options{MaxTxnBytes: 64 << 10}})
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(200))")
	count := func() string { return fmt.Sprint(d.exec("SELECT COUNT(*) FROM t")) }

	// 100 rows of about 110 bytes each fit; 1,000 in one statement do not.
	d.exec("INSERT INTO t WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) SELECT i, REPEAT('x', 100) FROM n")
	err := d.execErr("INSERT INTO t WITH RECURSIVE n(i) AS (SELECT 1001 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) SELECT i, REPEAT('x', 100) FROM n")
	require.Equal(t, 1197, MySQLError(err).Num, "%v", err)
	require.Equal(t, "[[100]]", count())

	// In a transaction, statements of 200 rows until one crosses the
	// bound: it alone is rolled back.
	d.exec("BEGIN")
	var failed int
	for i := 0; i < 10 && failed == 0; i++ {
		lo := 10_000 + i*200
		_, err := query(d.e, d.ctx, fmt.Sprintf("INSERT INTO t WITH RECURSIVE n(i) AS (SELECT %d UNION ALL SELECT i + 1 FROM n WHERE i < %d) SELECT i, REPEAT('y', 100) FROM n", lo, lo+199))
		if err != nil {
			require.Equal(t, 1197, MySQLError(err).Num, "%v", err)
			failed = i
		}
	}
	require.Greater(t, failed, 0, "no statement crossed the bound")
	d.exec("COMMIT")
	require.Equal(t, fmt.Sprintf("[[%d]]", 100+failed*200), count())

	// A schema change over more than the bound is not bounded.
	d.exec("CREATE INDEX s_idx ON t (s)")
	d.exec("ALTER TABLE t ADD COLUMN u INT NOT NULL DEFAULT 7")
	require.Equal(t, fmt.Sprintf("[[%d]]", 100+failed*200), fmt.Sprint(d.exec("SELECT COUNT(*) FROM t WHERE u = 7 AND s > ''")))
}
