package sqlstore

import (
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
)

// TestGeneratedColumns reads virtual and stored generated columns through
// every kind of access, with and without the other columns.
func TestGeneratedColumns(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT, v INT AS (k * 2) VIRTUAL, s INT AS (k + 1) STORED, KEY k_idx (k))")
	d.exec("INSERT INTO t (id, k) VALUES (1, 10), (2, 20), (3, 30)")
	tests := []struct {
		q    string
		want []sql.Row
	}{
		{"SELECT v FROM t", []sql.Row{{int32(20)}, {int32(40)}, {int32(60)}}},
		{"SELECT v, s FROM t WHERE id = 2", []sql.Row{{int32(40), int32(21)}}},
		{"SELECT id, v FROM t WHERE id BETWEEN 2 AND 3", []sql.Row{{int32(2), int32(40)}, {int32(3), int32(60)}}},
		{"SELECT v FROM t WHERE id IN (1, 3)", []sql.Row{{int32(20)}, {int32(60)}}},
		{"SELECT id FROM t WHERE v = 40", []sql.Row{{int32(2)}}},
		{"SELECT s, v FROM t WHERE k = 30", []sql.Row{{int32(31), int32(60)}}},
		{"SELECT * FROM t WHERE id = 1", []sql.Row{{int32(1), int32(10), int32(20), int32(11)}}},
		{"SELECT SUM(v) FROM t", []sql.Row{{decimal.NewFromInt(120)}}},
	}
	check := func() {
		t.Helper()
		for _, tc := range tests {
			require.Equal(t, tc.want, d.exec(tc.q), tc.q)
		}
	}
	check()
	d.reopen()
	check()
	d.exec("UPDATE t SET k = 50 WHERE id = 3")
	require.Equal(t, []sql.Row{{int32(100), int32(51)}}, d.exec("SELECT v, s FROM t WHERE id = 3"))
}
