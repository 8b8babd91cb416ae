package sqlstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"
)

// mysqlErrno returns the MySQL error number a client sees for err.
func mysqlErrno(err error) int {
	return MySQLError(err).Num
}

// TestBadInput: each bad statement fails with the error MySQL gives, and
// leaves the data as it was (the whole statement is undone, including the
// rows of a multi-row INSERT before the bad one).
func TestBadInput(t *testing.T) {
	d := newTestDB(t)
	d.exec(`CREATE TABLE t (
		id INT PRIMARY KEY, n INT NOT NULL, s VARCHAR(5), u INT, tiny TINYINT,
		UNIQUE KEY ku (u), CHECK (n >= 0))`)
	d.exec("CREATE TABLE p (id INT PRIMARY KEY)")
	d.exec("CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))")
	d.exec("INSERT INTO t VALUES (1, 1, 'a', 10, 1), (2, 2, 'b', 20, 2)")
	d.exec("INSERT INTO p VALUES (1)")
	state := func() string {
		return fmt.Sprint(d.exec("SELECT * FROM t ORDER BY id"), d.exec("SELECT * FROM c"),
			d.exec("SELECT id FROM t WHERE u = 10"), d.exec("SELECT COUNT(*) FROM t WHERE u > 0"))
	}
	before := state()
	for _, tc := range []struct {
		q     string
		errno int
	}{
		{"INSERT INTO t VALUES (3, 'abc', 'x', 30, 3)", mysql.ERTruncatedWrongValueForField}, // 1366
		{"INSERT INTO t VALUES (3, 3, 'toolong', 30, 3)", mysql.ERDataTooLong},               // 1406
		{"INSERT INTO t VALUES (3, 3, 'x', 30, 300)", mysql.ERWarnDataOutOfRange},            // 1264
		{"INSERT INTO t VALUES (3, NULL, 'x', 30, 3)", mysql.ERBadNullError},                 // 1048
		{"INSERT INTO t VALUES (3, 3, 'x', 30, 3), (1, 1, 'dup', 40, 4)", mysql.ERDupEntry},  // 1062, PK
		{"INSERT INTO t VALUES (3, 3, 'x', 30, 3), (4, 4, 'y', 10, 4)", mysql.ERDupEntry},    // 1062, unique
		{"UPDATE t SET u = 10 WHERE id = 2", mysql.ERDupEntry},
		{"UPDATE t SET id = 1 WHERE id = 2", mysql.ERDupEntry},
		{"INSERT INTO nope VALUES (1)", mysql.ERNoSuchTable},                 // 1146
		{"SELECT nope FROM t", mysql.ERBadFieldError},                        // 1054
		{"INSERT INTO t (id, nope) VALUES (3, 1)", mysql.ERBadFieldError},    // 1054
		{"INSERT INTO t VALUES (3, -1, 'x', 30, 3)", 3819},                   // check constraint violated
		{"INSERT INTO c VALUES (1, 99)", mysql.ErNoReferencedRow2},           // 1452
		{"INSERT INTO t (id, s) VALUES (3, 'x')", mysql.ERNoDefaultForField}, // 1364
		{"CREATE TABLE t (id INT PRIMARY KEY)", mysql.ERTableExists},         // 1050
		{"SELEC * FROM t", mysql.ERParseError},                               // 1064
		{"SELECT * FROM t WHERE", mysql.ERParseError},
	} {
		t.Run(tc.q, func(t *testing.T) {
			err := d.execErr(tc.q)
			require.Equal(t, tc.errno, mysqlErrno(err), "%v", err)
			require.Equal(t, before, state())
		})
	}
	// The message of a duplicate names the key.
	err := d.execErr("INSERT INTO t VALUES (1, 1, 'x', 99, 9)")
	require.True(t, strings.Contains(err.Error(), "[1]"), err.Error())
}
