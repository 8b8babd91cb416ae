package driver_test

import (
	"database/sql"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
)

// TestTypes binds one argument of every kind to a column of every type
// through a prepared statement and reads it back.
func TestTypes(t *testing.T) {
	db, _ := openDB(t)
	ts := time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC)
	day := time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		col  string
		arg  any
		want any
		db   string // ColumnTypeDatabaseTypeName
	}{
		{"tinyint", "TINYINT", int64(-128), int64(-128), "TINYINT"},
		{"smallint unsigned", "SMALLINT UNSIGNED", uint64(65535), int64(65535), "SMALLINT"},
		{"int from int", "INT", 42, int64(42), "INT"},
		{"bigint", "BIGINT", int64(math.MinInt64), int64(math.MinInt64), "BIGINT"},
		{"bigint unsigned max", "BIGINT UNSIGNED", uint64(math.MaxUint64), uint64(math.MaxUint64), "BIGINT"},
		{"bool", "BOOLEAN", true, int64(1), "TINYINT"},
		{"float", "FLOAT", 1.1, 1.1, "FLOAT"},
		{"double", "DOUBLE", 2.5e-300, 2.5e-300, "DOUBLE"},
		{"decimal from string", "DECIMAL(10,2)", "12.5", "12.50", "DECIMAL"},
		{"decimal from decimal", "DECIMAL(30,10)", decimal.RequireFromString("12345678901234567890.0123456789"), "12345678901234567890.0123456789", "DECIMAL"},
		{"decimal from float", "DECIMAL(6,3)", 0.25, "0.250", "DECIMAL"},
		{"char", "CHAR(5)", "ab", "ab", "CHAR"},
		{"varchar utf8", "VARCHAR(20)", "héllo, 世界", "héllo, 世界", "VARCHAR"},
		{"text", "TEXT", "long text", "long text", "TEXT"},
		{"binary", "VARBINARY(10)", []byte{0, 1, 0xff}, []byte{0, 1, 0xff}, "VARBINARY"},
		{"blob", "BLOB", []byte("blob\x00data"), []byte("blob\x00data"), "BLOB"},
		{"date", "DATE", day, day, "DATE"},
		{"date from string", "DATE", "2024-02-29", day, "DATE"},
		{"datetime", "DATETIME(6)", ts, ts, "DATETIME"},
		{"datetime local zone", "DATETIME(6)", ts.In(time.FixedZone("X", 3600)), ts, "DATETIME"},
		{"timestamp", "TIMESTAMP", ts, ts.Truncate(time.Second), "TIMESTAMP"},
		{"time", "TIME", "-01:02:03", "-01:02:03", "TIME"},
		{"time fraction", "TIME(6)", "10:11:12.5", "10:11:12.500000", "TIME"},
		{"year", "YEAR", 2024, int64(2024), "YEAR"},
		{"bit", "BIT(8)", 5, int64(5), "BIT"},
		{"enum", "ENUM('red','green')", "green", "green", "ENUM"},
		{"enum by index", "ENUM('red','green')", 1, "red", "ENUM"},
		{"set", "SET('a','b','c')", "c,a", "a,c", "SET"},
		{"json", "JSON", `{"b": [1, 2], "a": null}`, []byte(`{"a": null, "b": [1, 2]}`), "JSON"},
		{"null", "INT", nil, nil, "INT"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tbl := "t" + string(rune('a'+i/26)) + string(rune('a'+i%26))
			mustExec(t, db, "CREATE TABLE "+tbl+" (id INT PRIMARY KEY, c "+tc.col+")")
			ins, err := db.Prepare("INSERT INTO " + tbl + " VALUES (?, ?)")
			require.NoError(t, err)
			defer ins.Close()
			_, err = ins.Exec(1, tc.arg)
			require.NoError(t, err)

			rows, err := db.Query("SELECT c FROM "+tbl+" WHERE id = ?", 1)
			require.NoError(t, err)
			defer rows.Close()
			cts, err := rows.ColumnTypes()
			require.NoError(t, err)
			require.Equal(t, tc.db, cts[0].DatabaseTypeName())
			require.True(t, rows.Next())
			var got any
			require.NoError(t, rows.Scan(&got))
			require.Equal(t, tc.want, got)
			require.False(t, rows.Next())
			require.NoError(t, rows.Err())

			if tc.arg != nil {
				// The same argument finds the row again in a WHERE clause.
				n := queryInt(t, db, "SELECT COUNT(*) FROM "+tbl+" WHERE c = ?", tc.arg)
				if tc.name != "float" && tc.name != "json" && tc.name != "enum by index" && tc.name != "set" && tc.name != "timestamp" && tc.name != "time fraction" {
					require.Equal(t, int64(1), n)
				}
			}
		})
	}
}

func TestScanIntoTypedValues(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, d DECIMAL(8,3), j JSON, dt DATETIME, n VARCHAR(5))")
	mustExec(t, db, `INSERT INTO t VALUES (1, 3.25, '{"k": 1}', '2020-01-02 03:04:05', NULL)`)
	var (
		id int
		d  float64
		j  []byte
		dt time.Time
		n  sql.NullString
	)
	require.NoError(t, db.QueryRow("SELECT id, d, j, dt, n FROM t").Scan(&id, &d, &j, &dt, &n))
	require.Equal(t, 1, id)
	require.Equal(t, 3.25, d)
	require.JSONEq(t, `{"k": 1}`, string(j))
	require.Equal(t, time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC), dt)
	require.False(t, n.Valid)
}

// TestIntArgumentTypes checks that an integer argument has the value and
// the type the same digits written into the statement would have: the
// driver builds integer literals itself, choosing their type as the SQL
// parser does.
func TestIntArgumentTypes(t *testing.T) {
	db, _ := openDB(t)
	for _, x := range []any{
		int64(0), int64(-128), int64(127), int64(128), int64(255), int64(256), int64(-129),
		int64(math.MaxInt16), int64(math.MaxInt16 + 1), int64(math.MaxUint16), int64(math.MaxUint16 + 1),
		int64(math.MinInt32), int64(math.MaxInt32), int64(math.MaxUint32), int64(math.MaxUint32 + 1),
		int64(math.MinInt64), int64(math.MaxInt64), uint64(math.MaxInt64), uint64(math.MaxInt64 + 1),
		uint64(math.MaxUint64), true, false,
	} {
		digits := fmt.Sprint(x)
		switch x {
		case true:
			digits = "1"
		case false:
			digits = "0"
		}
		describe := func(q string, args ...any) (string, string, string) {
			rows, err := db.Query(q, args...)
			require.NoError(t, err, q)
			defer rows.Close()
			cts, err := rows.ColumnTypes()
			require.NoError(t, err)
			require.True(t, rows.Next())
			var v, w string
			require.NoError(t, rows.Scan(&v, &w))
			return cts[0].DatabaseTypeName() + " " + cts[1].DatabaseTypeName(), v, w
		}
		// The argument alone and in arithmetic, whose result type
		// follows the operand's (+ 0: + 1 overflows at the ends, 1690).
		gotType, gotV, gotW := describe("SELECT ?, ? + 0", x, x)
		wantType, wantV, wantW := describe("SELECT " + digits + ", " + digits + " + 0")
		require.Equal(t, wantType, gotType, "%v", x)
		require.Equal(t, wantV, gotV, "%v", x)
		require.Equal(t, wantW, gotW, "%v", x)
	}
}

// TestBytesArguments: a []byte argument is a binary string, as the MySQL
// protocol binds one: "42" into an INT is 42, compares equal to 42, and
// arbitrary bytes round-trip through BLOB and VARBINARY. It used to be bound
// as a hex literal, the number 13362 in a numeric context.
func TestBytesArguments(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE b (id INT PRIMARY KEY, n INT, d DOUBLE, u BIGINT UNSIGNED, bl BLOB, vb VARBINARY(10), mb MEDIUMBLOB)")
	raw := []byte{0xff, 0x00, 0x80, '\'', '\\'}
	mustExec(t, db, "INSERT INTO b (id, n, d, u, bl, vb) VALUES (1, ?, ?, ?, ?, ?)", []byte("42"), []byte("2.5"), []byte("7"), raw, raw)
	var n int64
	var d float64
	var u uint64
	var bl, vb []byte
	require.NoError(t, db.QueryRow("SELECT n, d, u, bl, vb FROM b WHERE id = 1").Scan(&n, &d, &u, &bl, &vb))
	require.Equal(t, int64(42), n)
	require.Equal(t, 2.5, d)
	require.Equal(t, uint64(7), u)
	require.Equal(t, raw, bl)
	require.Equal(t, raw, vb)
	require.EqualValues(t, 1, queryInt(t, db, "SELECT COUNT(*) FROM b WHERE n = ?", []byte("42")))
	require.EqualValues(t, 1, queryInt(t, db, "SELECT COUNT(*) FROM b WHERE vb = ?", raw))
	big := make([]byte, 70000)
	big[0], big[len(big)-1] = 1, 2
	mustExec(t, db, "INSERT INTO b (id, mb) VALUES (2, ?)", big)
	require.NoError(t, db.QueryRow("SELECT mb FROM b WHERE id = 2").Scan(&bl))
	require.Equal(t, big, bl)
}

// TestZeroDates: a zero DATE or DATETIME reads as time.Time{}, as the
// package documents, and time.Time{} binds as the zero date, so it
// round-trips.
func TestZeroDates(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE z (id INT PRIMARY KEY, d DATE, dt DATETIME)")
	mustExec(t, db, "INSERT INTO z VALUES (1, '0000-00-00', '0000-00-00 00:00:00'), (2, ?, ?)", time.Time{}, time.Time{})
	for id := 1; id <= 2; id++ {
		var d, dt time.Time
		require.NoError(t, db.QueryRow("SELECT d, dt FROM z WHERE id = ?", id).Scan(&d, &dt))
		require.True(t, d.IsZero(), "row %d: DATE %v", id, d)
		require.True(t, dt.IsZero(), "row %d: DATETIME %v", id, dt)
	}
	require.EqualValues(t, 2, queryInt(t, db, "SELECT COUNT(*) FROM z WHERE d = ?", time.Time{}))
}

// TestTimeArgumentRounds: a time.Time argument finer than microseconds is
// rounded to them, as MySQL rounds (and the MySQL protocol server does),
// not cut.
func TestTimeArgumentRounds(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE tr (id INT PRIMARY KEY, dt DATETIME(6))")
	mustExec(t, db, "INSERT INTO tr VALUES (1, ?), (2, ?)",
		time.Date(2024, 1, 1, 23, 59, 59, 999999999, time.UTC), time.Date(2024, 1, 1, 0, 0, 0, 1400, time.UTC))
	var a, b time.Time
	require.NoError(t, db.QueryRow("SELECT dt FROM tr WHERE id = 1").Scan(&a))
	require.NoError(t, db.QueryRow("SELECT dt FROM tr WHERE id = 2").Scan(&b))
	require.Equal(t, time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), a)
	require.Equal(t, time.Date(2024, 1, 1, 0, 0, 0, 1000, time.UTC), b)
}

// TestExactSum checks SUM over BIGINT through prepared statements whose plan
// is reused: exact, typed DECIMAL.
func TestExactSum(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, n BIGINT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 9223372036854775807), (2, 9223372036854775807), (3, 1)")
	stmt, err := db.Prepare("SELECT SUM(n) FROM t WHERE id BETWEEN ? AND ?")
	require.NoError(t, err)
	defer stmt.Close()
	for _, tc := range []struct {
		hi   int
		want string
	}{{2, "18446744073709551614"}, {3, "18446744073709551615"}, {2, "18446744073709551614"}} {
		rows, err := stmt.Query(1, tc.hi)
		require.NoError(t, err)
		cols, err := rows.ColumnTypes()
		require.NoError(t, err)
		require.Equal(t, "DECIMAL", cols[0].DatabaseTypeName())
		require.True(t, rows.Next())
		var s string
		require.NoError(t, rows.Scan(&s))
		require.NoError(t, rows.Close())
		require.Equal(t, tc.want, s)
	}
}
