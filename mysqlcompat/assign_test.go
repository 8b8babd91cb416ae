package mysqlcompat_test

import (
	"fmt"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"
)

// TestAssignOutOfRange: under IGNORE, an assignment beyond its column's
// type stores the value clamped to the type's end, with MySQL's warning;
// without, a DECIMAL too large fails as the integers do.
func TestAssignOutOfRange(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, tiny TINYINT, u INT UNSIGNED, d DECIMAL(4,2))")
	d.exec("INSERT INTO t VALUES (1, 1, 1, 1), (2, 2, 2, 2)")
	d.exec("UPDATE IGNORE t SET tiny = 300, u = -5 WHERE id = 1")
	warnings := fmt.Sprint(d.exec("SHOW WARNINGS"))
	require.Contains(t, warnings, "1264 Out of range value for column 'tiny'")
	require.Contains(t, warnings, "1264 Out of range value for column 'u'")
	require.Equal(t, "[[1 127 0 1] [2 2 2 2]]", fmt.Sprint(d.exec("SELECT * FROM t ORDER BY id")))

	d.exec("UPDATE IGNORE t SET d = 1000 WHERE id = 1")
	require.Contains(t, fmt.Sprint(d.exec("SHOW WARNINGS")), "1264 Out of range value for column 'd'")
	require.Equal(t, "[[99.99]]", fmt.Sprint(d.exec("SELECT d FROM t WHERE id = 1")))
	d.exec("UPDATE IGNORE t SET d = -1000 WHERE id = 1")
	require.Equal(t, "[[-99.99]]", fmt.Sprint(d.exec("SELECT d FROM t WHERE id = 1")))
	d.exec("UPDATE t SET d = 1 WHERE id = 1")
	d.exec("UPDATE t SET tiny = 100, u = 4294967295 WHERE id = 2") // the ends themselves fit
	require.Equal(t, mysql.ERWarnDataOutOfRange, mysqlErrno(d.execErr("UPDATE t SET d = 123.456")))
	require.Equal(t, "[[1 127 0 1] [2 100 4294967295 2]]", fmt.Sprint(d.exec("SELECT * FROM t ORDER BY id")))
}

// TestTriggerAssignOutOfRange: a trigger's SET NEW.col beyond the column's
// type fails the statement with 1264, as the statement's own value would.
func TestTriggerAssignOutOfRange(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE tr (id INT PRIMARY KEY, a TINYINT)")
	d.exec("CREATE TRIGGER bi BEFORE INSERT ON tr FOR EACH ROW SET NEW.a = NEW.a * 100")
	d.exec("CREATE TRIGGER bu BEFORE UPDATE ON tr FOR EACH ROW SET NEW.a = NEW.a * 100")
	d.exec("INSERT INTO tr VALUES (1, 1)")
	require.Equal(t, mysql.ERWarnDataOutOfRange, mysqlErrno(d.execErr("INSERT INTO tr VALUES (2, 2)")))
	require.Equal(t, mysql.ERWarnDataOutOfRange, mysqlErrno(d.execErr("UPDATE tr SET a = 3 WHERE id = 1")))
	require.Equal(t, "[[1 100]]", fmt.Sprint(d.exec("SELECT * FROM tr")))
}
