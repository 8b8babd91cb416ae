package mysqlcompat_test

import (
	"fmt"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"
)

// TestUnsignedFromDecimal: DECIMAL values (integer literals above the
// BIGINT range are DECIMALs) go into BIGINT UNSIGNED exactly, rounded, or
// fail with 1264; under IGNORE they become the nearest end with a warning.
// GMS's own conversion stored 18446744073709551616 as 9223372036854775808.
func TestUnsignedFromDecimal(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE u (id INT PRIMARY KEY, b BIGINT UNSIGNED)")
	for _, tc := range []struct {
		id   int
		q    string
		want string // b afterwards, or "" when the statement fails with 1264
	}{
		{1, "INSERT INTO u VALUES (1, 18446744073709551615)", "18446744073709551615"},
		{2, "INSERT INTO u VALUES (2, 18446744073709551616)", ""},
		{3, "INSERT INTO u (id, b) VALUES (3, 99999999999999999999)", ""},
		{4, "INSERT INTO u VALUES (4, 18446744073709551615.5)", ""},
		{5, "INSERT INTO u VALUES (5, 18446744073709551614.4)", "18446744073709551614"},
		{6, "INSERT INTO u VALUES (6, -0.4)", "0"},
		{7, "INSERT INTO u VALUES (7, -0.5)", ""},
		{8, "REPLACE INTO u VALUES (8, 18446744073709551616)", ""},
		{9, "INSERT INTO u VALUES (9, 1) ON DUPLICATE KEY UPDATE b = 18446744073709551616", "1"},
		{9, "INSERT INTO u VALUES (9, 1) ON DUPLICATE KEY UPDATE b = 18446744073709551616", ""},
		{9, "UPDATE u SET b = 18446744073709551616 WHERE id = 9", ""},
		{9, "UPDATE u SET b = CAST('18446744073709551613' AS DECIMAL(20,0)) WHERE id = 9", "18446744073709551613"},
	} {
		sel := fmt.Sprintf("SELECT b FROM u WHERE id = %d", tc.id)
		before := fmt.Sprint(d.exec(sel))
		if tc.want == "" {
			err := d.execErr(tc.q)
			require.Equal(t, mysql.ERWarnDataOutOfRange, mysqlErrno(err), "%s: %v", tc.q, err)
			require.Equal(t, before, fmt.Sprint(d.exec(sel)), "%s changed the row", tc.q)
			continue
		}
		d.exec(tc.q)
		require.Equal(t, "[["+tc.want+"]]", fmt.Sprint(d.exec(sel)), tc.q)
	}

	d.exec("INSERT IGNORE INTO u VALUES (10, 18446744073709551616), (11, -5.5)")
	require.Contains(t, fmt.Sprint(d.exec("SHOW WARNINGS")), "1264 Out of range value for column 'b'")
	require.Equal(t, "[[10 18446744073709551615] [11 0]]", fmt.Sprint(d.exec("SELECT id, b FROM u WHERE id IN (10, 11) ORDER BY id")))
}

// TestNonFiniteFloats: NaN and the infinities, which GMS converts from the
// strings 'nan' and 'inf', are refused with 1264 on insert and update, as
// MySQL refuses them; an indexed DOUBLE could not even store them.
func TestNonFiniteFloats(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE f (id INT PRIMARY KEY, d DOUBLE, g FLOAT, x DOUBLE, KEY (x))")
	d.exec("INSERT INTO f VALUES (1, 1.5, 2.5, 3.5)")
	for _, q := range []string{
		"INSERT INTO f VALUES (2, 'nan', 1, 1)",
		"INSERT INTO f VALUES (3, 'inf', 1, 1)",
		"INSERT INTO f VALUES (4, 1, '-infinity', 1)",
		"INSERT INTO f VALUES (5, 1, 1, 'nan')",
		"REPLACE INTO f VALUES (1, 'nan', 1, 1)",
		"UPDATE f SET d = 'nan' WHERE id = 1",
		"UPDATE f SET g = 'inf' WHERE id = 1",
		"UPDATE f SET d = d * 1e308 * 10 WHERE id = 1",
	} {
		err := d.execErr(q)
		require.Equal(t, mysql.ERWarnDataOutOfRange, mysqlErrno(err), "%s: %v", q, err)
	}
	require.Equal(t, "[[1 1.5 2.5 3.5]]", fmt.Sprint(d.exec("SELECT * FROM f")))
}

// TestBigIntFromString: numeric strings and DECIMALs beyond BIGINT's range
// fail with 1264 (GMS stored -9223372036854775808 for all of them), in range
// they round half away from zero, and non-numeric strings are left to GMS.
func TestBigIntFromString(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE b (id INT PRIMARY KEY, n BIGINT)")
	for _, tc := range []struct {
		q, want string // want: n afterwards; "" when the statement fails with 1264
	}{
		{"INSERT INTO b VALUES (1, '9223372036854775808')", ""},
		{"INSERT INTO b VALUES (1, '1e19')", ""},
		{"INSERT INTO b VALUES (1, '-9223372036854775809')", ""},
		{"INSERT INTO b VALUES (1, 9223372036854775807.6)", ""},
		{"INSERT INTO b VALUES (1, '9223372036854775807.4')", "9223372036854775807"},
		{"REPLACE INTO b VALUES (1, ' -12 ')", "-12"},
		{"REPLACE INTO b VALUES (1, '1e3')", "1000"},
		{"UPDATE b SET n = '2.5' WHERE id = 1", "3"},
		{"UPDATE b SET n = '-5.5' WHERE id = 1", "-6"},
		{"UPDATE b SET n = '9223372036854775808' WHERE id = 1", ""},
		{"UPDATE b SET n = -9223372036854775808.5 WHERE id = 1", ""},
	} {
		before := fmt.Sprint(d.exec("SELECT n FROM b WHERE id = 1"))
		if tc.want == "" {
			err := d.execErr(tc.q)
			require.Equal(t, mysql.ERWarnDataOutOfRange, mysqlErrno(err), "%s: %v", tc.q, err)
			require.Equal(t, before, fmt.Sprint(d.exec("SELECT n FROM b WHERE id = 1")), "%s changed the row", tc.q)
			continue
		}
		d.exec(tc.q)
		require.Equal(t, "[["+tc.want+"]]", fmt.Sprint(d.exec("SELECT n FROM b WHERE id = 1")), tc.q)
	}
	require.Error(t, d.execErr("INSERT INTO b VALUES (2, '12abc')"))
	d.exec("INSERT IGNORE INTO b VALUES (3, '1e30')")
	require.Contains(t, fmt.Sprint(d.exec("SHOW WARNINGS")), "1264 Out of range value for column 'n'")
	require.Equal(t, "[[9223372036854775807]]", fmt.Sprint(d.exec("SELECT n FROM b WHERE id = 3")))
}
