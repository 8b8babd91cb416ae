package sqlstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	sqltypes "github.com/dolthub/vitess/go/sqltypes"
	"github.com/stretchr/testify/require"
)

// TestLookupJoinKeysExact: a lookup join whose outer values the inner
// index column cannot hold (out of its range, or with a fraction it would
// round away) joins only the rows MySQL finds equal, through the primary
// key and through a secondary index, and keeps the outer row of a LEFT
// JOIN. The plan must be a lookup join, or the test proves nothing.
func TestLookupJoinKeysExact(t *testing.T) {
	d := newTestDB(t)
	for _, tc := range []struct {
		name            string
		outer, inner    string // column types
		outVals, inVals string
		want            []string // "outer=inner", sorted
	}{
		{"bigint into int", "BIGINT", "INT", "2147483648, 2147483647, -2147483649, -2147483648", "2147483647, -2147483648, 0",
			[]string{"-2147483648=-2147483648", "2147483647=2147483647"}},
		{"int into tinyint", "INT", "TINYINT", "128, 127, -129", "127, -128", []string{"127=127"}},
		{"int into int unsigned", "INT", "INT UNSIGNED", "-1, 5", "0, 5, 4294967295", []string{"5=5"}},
		{"double into int", "DOUBLE", "INT", "1.5, 2, -0.5, 1e300", "0, 1, 2", []string{"2=2"}},
		{"bigint unsigned into bigint", "BIGINT UNSIGNED", "BIGINT", "18446744073709551615, 9223372036854775808, 5",
			"9223372036854775807, 5", []string{"5=5"}},
		{"int into bigint unsigned", "INT", "BIGINT UNSIGNED", "-1, 5", "0, 5, 18446744073709551615", []string{"5=5"}},
		{"decimal into narrower decimal", "DECIMAL(10,3)", "DECIMAL(5,2)", "1.234, 1.230, 1234.5", "1.23, 1.24, 999.99",
			[]string{"1.230=1.23"}},
		{"int into decimal", "INT", "DECIMAL(4,1)", "5, 1000", "5.0, 999.9", []string{"5=5.0"}},
		{"same type", "INT", "INT", "1, 2", "2, 3", []string{"2=2"}},
		// MySQL compares a string with a number as doubles, reading the
		// string's numeric prefix.
		{"string into tinyint", "VARCHAR(20)", "TINYINT", "'1.5', '127.4', '300', '1e0', ' 2', '2abc', 'abc', '1.0'", "0, 1, 2, 127",
			[]string{" 2=2", "1.0=1", "1e0=1", "2abc=2", "abc=0"}},
		{"string into unsigned", "VARCHAR(20)", "TINYINT UNSIGNED", "'-1', '300', '255'", "0, 255", []string{"255=255"}},
		{"string into decimal", "VARCHAR(20)", "DECIMAL(5,1)", "'1.5', '1.55', 'x'", "1.5, 0.0", []string{"1.5=1.5", "x=0.0"}},
		// GMS rounds a finer time into the column's precision, cuts a
		// DATETIME to a DATE, and pads a shorter binary string.
		{"datetime(6) into datetime", "DATETIME(6)", "DATETIME", "'2020-01-01 00:00:00.5', '2020-01-01 00:00:00.4', '2020-01-01 00:00:02'",
			"'2020-01-01 00:00:00', '2020-01-01 00:00:01', '2020-01-01 00:00:02'", []string{"2020-01-01 00:00:02=2020-01-01 00:00:02"}},
		{"datetime into date", "DATETIME", "DATE", "'2020-01-01 10:00:00', '2020-01-02 00:00:00'", "'2020-01-01', '2020-01-02'",
			[]string{"2020-01-02 00:00:00=2020-01-02"}},
		{"varbinary into binary", "VARBINARY(5)", "BINARY(3)", "'ab', 'abc', 'abcd'", "'ab', 'abc'", []string{"abc=abc"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d.t = t
			for _, key := range []string{"PRIMARY KEY", "KEY"} {
				d.exec("DROP TABLE IF EXISTS o, i")
				d.exec(fmt.Sprintf("CREATE TABLE o (x %s)", tc.outer))
				if key == "KEY" {
					d.exec(fmt.Sprintf("CREATE TABLE i (id INT AUTO_INCREMENT PRIMARY KEY, k %s, KEY k (k))", tc.inner))
				} else {
					d.exec(fmt.Sprintf("CREATE TABLE i (k %s PRIMARY KEY)", tc.inner))
				}
				d.exec("INSERT INTO o (x) VALUES (" + strings.ReplaceAll(tc.outVals, ", ", "), (") + ")")
				d.exec("INSERT INTO i (k) VALUES (" + strings.ReplaceAll(tc.inVals, ", ", "), (") + ")")

				q := "SELECT /*+ LOOKUP_JOIN(o, i) JOIN_ORDER(o, i) */ CONCAT(o.x, '=', i.k) FROM o JOIN i ON o.x = i.k ORDER BY 1"
				require.Contains(t, fmt.Sprint(d.exec("EXPLAIN PLAN "+q)), "LookupJoin", key)
				require.Equal(t, tc.want, strs(d.exec(q)), key)

				// Every outer row once, matched or not.
				left := "SELECT /*+ LOOKUP_JOIN(o, i) JOIN_ORDER(o, i) */ COUNT(*), COUNT(i.k) FROM o LEFT JOIN i ON o.x = i.k"
				got := d.exec(left)
				require.Equal(t, []sql.Row{{int64(strings.Count(tc.outVals, ",") + 1), int64(len(tc.want))}}, got, key)
			}
		})
	}
}

// strs returns the first column of rows as strings.
func strs(rows []sql.Row) []string {
	out := []string{}
	for _, r := range rows {
		out = append(out, fmt.Sprint(r[0]))
	}
	return out
}

// TestNeedsExactKey: which key types a column must check.
func TestNeedsExactKey(t *testing.T) {
	dec := func(p, s uint8) sql.Type { return types.MustCreateDecimalType(p, s) }
	for _, tc := range []struct {
		col, key sql.Type
		want     bool
	}{
		{types.Int32, types.Int32, false},
		{types.Int32, types.Int64, true},
		{types.Int64, types.Int32, false},
		{types.Int64, types.Uint32, false},
		{types.Int64, types.Uint64, true},
		{types.Uint64, types.Uint32, false},
		{types.Uint64, types.Int8, true},
		{types.Uint32, types.Uint16, false},
		{types.Int8, types.Uint8, true},
		{types.Int16, types.Uint8, false},
		{types.Int32, types.Float64, true},
		{types.Float64, types.Int64, false},
		{dec(5, 2), dec(4, 2), false},
		{dec(5, 2), dec(6, 3), true},
		{dec(5, 2), dec(5, 1), true},
		{dec(12, 2), types.Int32, false},
		{dec(5, 0), types.Int32, true},
		{dec(20, 0), types.Uint64, false},
		{dec(19, 0), types.Uint64, true},
		{types.Text, types.Int32, false},
		{types.Int32, types.Text, true},
		{dec(5, 2), types.Text, true},
		{types.Float64, types.Text, false},
		{types.Datetime, types.Datetime, false},
		{types.Datetime, types.DatetimeMaxPrecision, true},
		{types.DatetimeMaxPrecision, types.Datetime, false},
		{types.Date, types.Datetime, true},
		{types.Datetime, types.Date, false},
		{types.Date, types.Date, false},
		{types.MustCreateBinary(sqltypes.Binary, 3), types.MustCreateBinary(sqltypes.Binary, 3), false},
		{types.MustCreateBinary(sqltypes.Binary, 3), types.MustCreateBinary(sqltypes.VarBinary, 3), true},
		{types.MustCreateBinary(sqltypes.Binary, 3), types.MustCreateBinary(sqltypes.Binary, 4), true},
	} {
		require.Equal(t, tc.want, needsExactKey(tc.col, tc.key), "column %s, key %s", tc.col, tc.key)
	}
}
