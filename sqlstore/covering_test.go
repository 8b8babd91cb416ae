package sqlstore

import (
	"fmt"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/strata-db/strata/kv/stats"
	"github.com/stretchr/testify/require"
)

// TestCoveringMatchesFetch reads columns of every type whose keys give back
// their values through covering indexes, and checks that the rows are those
// the same lookups return when they fetch each row by primary key (the
// query also selecting a string column, which no index covers): values,
// Go types, NULLs, negative numbers, the unique form with and without NULL,
// and residual checks.
func TestCoveringMatchesFetch(t *testing.T) {
	d := newTestDB(t)
	d.exec(`CREATE TABLE ty (id BIGINT, id2 SMALLINT UNSIGNED, i8 TINYINT, mi MEDIUMINT, u64 BIGINT UNSIGNED,
		y YEAR, bt BIT(5), e ENUM('a','b','c'), st SET('x','y'), d DECIMAL(7,2), dt DATE, dtm DATETIME(6),
		ts TIMESTAMP(3), tm TIME, pad VARCHAR(10),
		PRIMARY KEY (id, id2), KEY k1 (i8, mi, u64, y, bt, e, st), KEY k2 (dt, dtm, ts, tm), UNIQUE KEY u3 (mi))`)
	d.exec(insertValues("ty", 0, 300, func(i int) string {
		v := func(s string) string {
			if i%7 == 3 {
				return "NULL"
			}
			return s
		}
		mi := func(s string) string { // rarer NULLs: a lookup of them is selective
			if i%59 == 5 {
				return "NULL"
			}
			return s
		}
		return fmt.Sprintf("(%d, %d, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 'p%d')",
			i/3-40, i%3, v(fmt.Sprint(i%21-10)), mi(fmt.Sprint((i*7919)%20001-10000)), v(fmt.Sprint(uint64(i)*61489261234567)),
			v(fmt.Sprint(1901+i%200)), v(fmt.Sprint(i%32)), v(fmt.Sprintf("'%c'", "abc"[i%3])), v([]string{"''", "'x'", "'y'", "'x,y'"}[i%4]),
			v(fmt.Sprintf("%d.%02d", i%200-100, i%100)), v(fmt.Sprintf("'2020-01-%02d'", 1+i%28)),
			v(fmt.Sprintf("'2020-01-%02d 10:11:12.%06d'", 1+i%28, i*3331)), v(fmt.Sprintf("'2021-02-%02d 01:02:03.%03d'", 1+i%28, i)),
			v(fmt.Sprintf("'%s%02d:34:56'", []string{"-", ""}[i%2], i%24)), i)
	}))
	require.NoError(t, d.s.kvDB().Flush())
	d.exec("INSERT INTO ty (id, id2, i8, mi, d, pad) VALUES (1000, 1, 5, NULL, NULL, 'mem'), (1000, 2, -3, 77, 1.5, 'mem')") // in the memtable

	k1 := "id, id2, i8, mi, u64, y, bt, e, st"
	k2 := "id2, dt, dtm, ts, tm, id" // not d: a DECIMAL keeps the digits it was written with
	u3 := "mi, id, id2"
	for _, tc := range []struct{ cols, where string }{
		{k1, "i8 IN (-3, 0, 5)"},
		{k1, "i8 BETWEEN -2 AND 4 AND mi > 0"},
		{k1, "i8 = 5 AND u64 > 100000000000000"},
		{k1, "i8 IS NULL"},
		{k2, "dt BETWEEN '2020-01-05' AND '2020-01-09'"},
		{k2, "dt IN ('2020-01-03', '2020-01-20') OR dt IS NULL"},
		{k2, "dt = '2020-01-07' AND dtm > '2020-01-07 10:11:12.5'"},
		{u3, "mi IN (77, 7919, -2081)"},
		{u3, "mi IS NULL OR mi = 77"},
		{u3, "mi BETWEEN 9000 AND 9100"},
	} {
		cols, where := tc.cols, tc.where
		t.Run(where, func(t *testing.T) {
			d.t = t
			covered := "SELECT " + cols + " FROM ty WHERE " + where
			fetched := "SELECT " + cols + ", pad FROM ty WHERE " + where
			for _, a := range d.accessOf(covered) {
				require.Contains(t, a, "covering", covered)
			}
			for _, a := range d.accessOf(fetched) {
				require.NotContains(t, a, "covering", fetched)
			}
			got := d.exec(covered)
			want := d.exec(fetched)
			require.NotEmpty(t, want)
			require.Len(t, got, len(want))
			for i := range want {
				require.Equal(t, want[i][:len(want[i])-1], got[i], "row %d", i)
			}
		})
	}
	// Only the keys' columns: COUNT(*) over an index reads no row.
	d.t = t
	count := "SELECT COUNT(*) FROM ty WHERE dt = '2020-01-07'"
	rows, snap, ran := d.run(count)
	require.Equal(t, []string{"ty: Range(readahead=off) covering"}, ran) // a few blocks, by the tables' indexes
	require.Zero(t, snap.Get(stats.MultiGetKeys)+snap.Get(stats.GetCalls), "no row fetched")
	require.Equal(t, d.exec("SELECT COUNT(pad) FROM ty WHERE dt = '2020-01-07'"), rows)
	require.NotEqual(t, []sql.Row{{int64(0)}}, rows)
}

// TestCoveringCases checks covered reads against the rows naive mode
// fetches, where the entries come from elsewhere than a flushed table: a
// table without a primary key, a transaction's own writes (inserted,
// updated and deleted rows) and a locking read. A table with a virtual
// column is not projected, so never covered: its rows are fetched.
func TestCoveringCases(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE v (id INT PRIMARY KEY, a INT, b INT AS (a * 2) VIRTUAL, KEY kb (b))")
	d.exec("CREATE TABLE c (id INT PRIMARY KEY, a INT, s INT, KEY ks (s))")
	d.exec("CREATE TABLE nk (a INT, b INT, KEY ka (a))")
	d.exec(insertValues("v (id, a)", 0, 200, func(i int) string { return fmt.Sprintf("(%d, %d)", i, i%50-20) }))
	d.exec(insertValues("c", 0, 200, func(i int) string { return fmt.Sprintf("(%d, %d, %d)", i, i%50-20, i%50-19) }))
	d.exec("INSERT INTO nk VALUES (1, 10), (2, 20), (1, 11), (NULL, 5), (3, 30), (1, 12)")
	require.NoError(t, d.s.kvDB().Flush())
	same := func(q string, covering bool) {
		t.Helper()
		access := d.accessOf(q)
		require.NotEmpty(t, access, q)
		for _, a := range access {
			if covering {
				require.Contains(t, a, "covering", q)
			} else {
				require.NotContains(t, a, "covering", q)
			}
		}
		d.exec("SET strata_access = 'naive'")
		naive := d.exec(q)
		d.exec("SET strata_access = 'default'")
		require.NotEmpty(t, naive, q)
		require.Equal(t, naive, d.exec(q), q)
	}
	same("SELECT a FROM nk WHERE a = 1", true)
	same("SELECT COUNT(*) FROM nk WHERE a IN (1, 3)", true)
	same("SELECT id, s FROM c WHERE s IN (1, 5, 9)", true)
	qv := "SELECT id, b FROM v WHERE b BETWEEN -10 AND 10"
	_, _, ran := d.run(qv)
	require.Equal(t, []string{"v: Range(readahead=auto) then MultiGet(batch=32) by primary key"}, ran)
	d.exec("SET strata_access = 'naive'")
	naive := d.exec(qv)
	d.exec("SET strata_access = 'default'")
	require.Len(t, naive, 44)
	require.Equal(t, naive, d.exec(qv))

	d.exec("START TRANSACTION")
	d.exec("INSERT INTO c VALUES (1000, 4, 5), (1001, 8, 9)")
	d.exec("UPDATE c SET s = 101 WHERE id = 5")
	d.exec("DELETE FROM c WHERE id = 9")
	same("SELECT id, s FROM c WHERE s IN (5, 9, 101)", true)
	same("SELECT id, s FROM c WHERE s BETWEEN 1 AND 9 FOR UPDATE", true)
	d.exec("COMMIT")
	same("SELECT id, s FROM c WHERE s IN (5, 9, 101)", true)
}
