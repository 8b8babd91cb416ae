package mysqlcompat_test

import (
	"fmt"
	"testing"
)

// TestReviewGeneratedValuesPrepare: out of strict mode, SQL PREPARE and a
// trigger or procedure take a value for a generated column as a top-level
// INSERT does: ignored, with warning 1906.
func TestReviewGeneratedValuesPrepare(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, a INT, g INT AS (a * 2) VIRTUAL)")
	d.exec("CREATE TABLE trig (id INT PRIMARY KEY)")
	d.exec("SET sql_mode = ''")
	d.exec("INSERT INTO t (id, a, g) VALUES (1, 1, 5)")
	for _, q := range []string{
		"CREATE TRIGGER tr AFTER INSERT ON trig FOR EACH ROW INSERT INTO t (id, a, g) VALUES (NEW.id, 1, 5)",
		"CREATE PROCEDURE p(x INT) INSERT INTO t (id, a, g) VALUES (x, 1, 5)",
		"PREPARE s FROM 'INSERT INTO t (id, a, g) VALUES (?, 1, 5)'",
		"SET @x = 2",
		"EXECUTE s USING @x",
		"INSERT INTO trig VALUES (3)",
		"CALL p(4)",
	} {
		if _, err := query(d.e, d.ctx, q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	fmt.Println(d.exec("SELECT id, g FROM t ORDER BY id"))
}
