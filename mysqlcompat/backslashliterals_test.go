package mysqlcompat_test

import "testing"

// TestBackslashLiteralsSpec runs testdata/backslash_literals: \_ and \%
// keep their backslash wherever a string literal is written (executable
// comments, aliases, separators, stored programs and views, SHOW ... LIKE,
// text prepared statements), and NO_BACKSLASH_ESCAPES makes a backslash an
// ordinary character. Answers checked against MariaDB 10.11.
func TestBackslashLiteralsSpec(t *testing.T) {
	d := newTestDB(t)
	runSQLSpec(t, d, "testdata/backslash_literals")
}
