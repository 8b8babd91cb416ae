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
		{"UPDATE t SET tiny = 300 WHERE id = 1", mysql.ERWarnDataOutOfRange}, // GMS alone stores 127
		{"UPDATE t SET tiny = -129", mysql.ERWarnDataOutOfRange},
		{"UPDATE t SET n = n + 3000000000", mysql.ERWarnDataOutOfRange},
		{"INSERT INTO t VALUES (1, 1, 'a', 10, 1) ON DUPLICATE KEY UPDATE tiny = 128", mysql.ERWarnDataOutOfRange},
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
	// The message of a duplicate names the entry and the key.
	err := d.execErr("INSERT INTO t VALUES (1, 1, 'x', 99, 9)")
	require.Equal(t, "Duplicate entry '1' for key 't.PRIMARY'", MySQLError(err).Message, err.Error())
}

// TestConstraintMessages: NULL into NOT NULL, a violated CHECK and a row of
// the wrong length fail with MySQL's numbers and messages, and under
// IGNORE NULL into NOT NULL is MySQL's warning.
func TestConstraintMessages(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE c (id INT PRIMARY KEY, n TINYINT, s VARCHAR(3) NOT NULL, CONSTRAINT ck CHECK (n >= 0))")
	for _, tc := range []struct {
		q     string
		num   int
		state string
		msg   string
	}{
		{"INSERT INTO c VALUES (1, 1, NULL)", mysql.ERBadNullError, "23000", "Column 's' cannot be null"},
		{"INSERT INTO c VALUES (1, -1, 'a')", 3819, mysql.SSUnknownSQLState, "Check constraint 'ck' is violated."},
		{"INSERT INTO c VALUES (1, 1, 'a'), (2, 2)", mysql.ERWrongValueCountOnRow, "21S01", "Column count doesn't match value count"},
	} {
		se := MySQLError(d.execErr(tc.q))
		require.Equal(t, tc.num, se.Num, tc.q)
		require.Equal(t, tc.state, se.State, tc.q)
		require.Equal(t, tc.msg, se.Message, tc.q)
	}
	for _, tc := range []struct {
		q    string
		code int
		msg  string
	}{
		{"INSERT IGNORE INTO c VALUES (1, 1, NULL)", mysql.ERBadNullError, "Column 's' cannot be null"},
	} {
		d.exec(tc.q)
		w := d.exec("SHOW WARNINGS")
		require.Len(t, w, 1, tc.q)
		require.Equal(t, "Warning", w[0][0], tc.q)
		require.EqualValues(t, tc.code, w[0][1], tc.q)
		require.Equal(t, tc.msg, w[0][2], tc.q)
	}
	// The NULL became the column's implicit default.
	rows := d.exec("SELECT id, s FROM c")
	require.Len(t, rows, 1)
	require.EqualValues(t, 1, rows[0][0])
	require.Equal(t, "", rows[0][1])
}

// TestDuplicateEntryMessages: a duplicate key fails with MySQL's 1062 and
// its message, the key's values joined by '-' as text of their types and
// cut to 64 characters, and the key named table.index; from INSERT, UPDATE,
// a keyless table's unique index and ALTER TABLE adding a unique index,
// and as the warning of INSERT IGNORE.
func TestDuplicateEntryMessages(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(100), d DATE, UNIQUE KEY ab (a, b, d), KEY plain (a))")
	d.exec("CREATE TABLE kl (x DECIMAL(5,2), UNIQUE KEY ux (x))")
	long := strings.Repeat("é", 70)
	d.exec("INSERT INTO t VALUES (1, 7, 'x', '2024-01-02'), (2, 8, '" + long + "', NULL), (3, 9, 'z', NULL)")
	d.exec("INSERT INTO kl VALUES (1.5)")
	for _, tc := range []struct{ q, msg string }{
		{"INSERT INTO t VALUES (1, 0, 'y', NULL)", "Duplicate entry '1' for key 't.PRIMARY'"},
		{"UPDATE t SET id = 1 WHERE id = 2", "Duplicate entry '1' for key 't.PRIMARY'"},
		{"INSERT INTO t VALUES (4, 7, 'x', '2024-01-02')", "Duplicate entry '7-x-2024-01-02' for key 't.ab'"},
		{"UPDATE t SET a = 8, b = '" + long + "', d = NULL WHERE id = 3", ""}, // NULLs never collide
		{"INSERT INTO t VALUES (5, 8, '" + long + "', '2024-01-01'), (6, 8, '" + long + "', '2024-01-01')",
			"Duplicate entry '8-" + strings.Repeat("é", 62) + "' for key 't.ab'"},
		{"INSERT INTO kl VALUES (1.50)", "Duplicate entry '1.50' for key 'kl.ux'"},
		{"ALTER TABLE t ADD UNIQUE KEY ua (a)", "Duplicate entry '8' for key 't.ua'"},
	} {
		if tc.msg == "" {
			d.exec(tc.q)
			continue
		}
		err := d.execErr(tc.q)
		se := MySQLError(err)
		require.Equal(t, mysql.ERDupEntry, se.Num, "%s: %v", tc.q, err)
		require.Equal(t, "23000", se.State, tc.q)
		require.Equal(t, tc.msg, se.Message, tc.q)
	}
	// INSERT IGNORE skips the row with MySQL's warning.
	d.exec("INSERT IGNORE INTO t VALUES (1, 0, 'y', NULL)")
	w := d.exec("SHOW WARNINGS")
	require.Len(t, w, 1)
	require.Equal(t, "Warning", w[0][0])
	require.EqualValues(t, mysql.ERDupEntry, w[0][1])
	require.Equal(t, "Duplicate entry '1' for key 't.PRIMARY'", w[0][2])
}

// TestRenameQualified: a rename whose database qualifiers name another
// database than the current one (which GMS would ignore, renaming the
// current database's table of that name) fails with 1235 and changes
// nothing; qualifiers naming the current database are fine.
func TestRenameQualified(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE DATABASE d2")
	d.exec("CREATE TABLE t (id INT PRIMARY KEY)")
	d.exec("INSERT INTO t VALUES (1)")
	d.exec("CREATE TABLE d2.t (id INT PRIMARY KEY)")
	d.exec("INSERT INTO d2.t VALUES (2)")
	d.exec("CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES t (id))")
	withText := func(q string) error {
		_, err := query(d.e, d.ctx.WithQuery(q), q)
		return err
	}
	for _, q := range []string{
		"RENAME TABLE d2.t TO d2.t9", "RENAME TABLE t TO d2.moved", "RENAME TABLE d2.t TO mydb.moved",
		"ALTER TABLE t RENAME TO d2.moved", "RENAME TABLE mydb.t TO mydb.t1, d2.t TO d2.t1",
	} {
		err := withText(q)
		require.Error(t, err, q)
		require.Equal(t, mysql.ERNotSupportedYet, mysqlErrno(err), "%s: %v", q, err)
		require.Equal(t, "[[1]]", fmt.Sprint(d.exec("SELECT id FROM mydb.t")), q)
		require.Equal(t, "[[2]]", fmt.Sprint(d.exec("SELECT id FROM d2.t")), q)
		require.Equal(t, "[[1]]", fmt.Sprint(d.exec("SELECT COUNT(*) FROM information_schema.referential_constraints WHERE referenced_table_name = 't'")), q)
	}
	require.NoError(t, withText("RENAME TABLE mydb.t TO mydb.t1"))
	require.Equal(t, "[[1]]", fmt.Sprint(d.exec("SELECT id FROM t1")))
	require.Equal(t, "[[2]]", fmt.Sprint(d.exec("SELECT id FROM d2.t")))
}

// TestAutoIncrementBelowLargest: ALTER TABLE ... AUTO_INCREMENT below the
// largest value moves the counter just past it, as InnoDB does, so the next
// inserts do not collide; above it the value is kept, also after reopening.
func TestAutoIncrementBelowLargest(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v INT) AUTO_INCREMENT=100")
	d.exec("INSERT INTO t (v) VALUES (1), (2), (3)") // 100..102
	d.exec("ALTER TABLE t AUTO_INCREMENT = 50")
	d.exec("INSERT INTO t (v) VALUES (4)")
	require.Equal(t, "[[103]]", fmt.Sprint(d.exec("SELECT id FROM t WHERE v = 4")))
	d.exec("ALTER TABLE t AUTO_INCREMENT = 500")
	d.reopen()
	d.exec("INSERT INTO t (v) VALUES (5)")
	require.Equal(t, "[[500]]", fmt.Sprint(d.exec("SELECT id FROM t WHERE v = 5")))
	truncate := "TRUNCATE TABLE t"
	_, err := query(d.e, d.ctx.WithQuery(truncate), truncate)
	require.NoError(t, err)
	d.exec("INSERT INTO t (v) VALUES (6)")
	require.Equal(t, "[[1]]", fmt.Sprint(d.exec("SELECT id FROM t WHERE v = 6")))
}

// TestDDLErrorNumbers: DDL mistakes fail with MySQL's numbers, not 1105.
func TestDDLErrorNumbers(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE p (id INT PRIMARY KEY, a INT, KEY ka (a), CONSTRAINT ck CHECK (a >= 0))")
	d.exec("CREATE TABLE c (id INT PRIMARY KEY, pid INT, CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p (id))")
	for _, tc := range []struct {
		q     string
		errno int
	}{
		{"CREATE TABLE x (a INT, a INT)", mysql.ERDupFieldName},
		{"ALTER TABLE p ADD COLUMN a INT", mysql.ERDupFieldName},
		{"ALTER TABLE p ADD INDEX ka (id)", mysql.ERDupKeyName},
		{"ALTER TABLE p ADD CONSTRAINT ck CHECK (a < 10)", 3822},
		{"ALTER TABLE p DROP CHECK nope", 3940},
		{"DROP TABLE p", 3730},
		{"ALTER TABLE c DROP COLUMN pid", 1828},
	} {
		t.Run(tc.q, func(t *testing.T) {
			err := d.execErr(tc.q)
			require.Equal(t, tc.errno, mysqlErrno(err), "%v", err)
		})
	}
}
