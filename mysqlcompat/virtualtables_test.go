package mysqlcompat_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShowVirtualTables: SHOW CREATE TABLE, SHOW INDEX and SHOW COLUMNS of
// a table with a VIRTUAL generated column show what they show of the same
// table without it: secondary indexes, CHECK constraints, foreign keys,
// AUTO_INCREMENT and comment (GMS asked its virtual-column wrapper, which
// has none of them, so dumps lost them), and the column with the keyword
// VIRTUAL, as MySQL prints it.
func TestShowVirtualTables(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE p (id INT PRIMARY KEY)")
	const cols = "id INT PRIMARY KEY AUTO_INCREMENT, pid INT, a INT, b INT, %s KEY kb (b), CHECK (a > 0), CONSTRAINT fk%s FOREIGN KEY (pid) REFERENCES p (id)"
	d.exec("CREATE TABLE plain (" + fmt.Sprintf(cols, "", "1") + ") COMMENT 'hello'")
	d.exec("CREATE TABLE virt (" + fmt.Sprintf(cols, "g INT AS (a * 2) VIRTUAL,", "2") + ") COMMENT 'hello'")
	d.exec("INSERT INTO plain (a) VALUES (1), (2)")
	d.exec("INSERT INTO virt (a) VALUES (1), (2)")

	show := func(q string) string { return fmt.Sprint(d.exec(q)) }
	plain, virt := show("SHOW CREATE TABLE plain"), show("SHOW CREATE TABLE virt")
	for _, part := range []string{"KEY `kb` (`b`)", "CHECK ((`a` > 0))", "FOREIGN KEY (`pid`) REFERENCES `p` (`id`)", "AUTO_INCREMENT=3", "COMMENT='hello'", "PRIMARY KEY (`id`)"} {
		require.Contains(t, plain, part)
		require.Contains(t, virt, part)
	}
	same := func(s, name, fk string) string {
		s = strings.ReplaceAll(s, name, "T")
		return strings.ReplaceAll(s, fk, "FK")
	}
	require.Contains(t, virt, "  `g` int GENERATED ALWAYS AS ((`a` * 2)) VIRTUAL,\n") // MySQL's keyword
	virt = strings.ReplaceAll(virt, "  `g` int GENERATED ALWAYS AS ((`a` * 2)) VIRTUAL,\n", "")
	require.Equal(t, same(plain, "plain", "fk1"), same(virt, "virt", "fk2"))

	require.Equal(t, same(show("SHOW INDEX FROM plain"), "plain", "fk1"), same(show("SHOW INDEX FROM virt"), "virt", "fk2"))
	require.Contains(t, show("SHOW INDEX FROM virt"), "kb")
	require.Equal(t, "[[b int YES MUL <nil> ]]", show("SHOW COLUMNS FROM virt LIKE 'b'"))
	require.Contains(t, show("SHOW FULL COLUMNS FROM virt"), "PRI")
}

// TestVirtualTableChecks: the CHECK constraints of a table with a VIRTUAL
// generated column hold for INSERT (VALUES, SELECT, ON DUPLICATE KEY
// UPDATE), REPLACE and UPDATE (with and without WHERE), as for a table
// without one, also a CHECK of the virtual column; GMS checked none of
// them there.
func TestVirtualTableChecks(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE plain (id INT PRIMARY KEY, a INT, CHECK (a > 0))")
	d.exec("CREATE TABLE virt (id INT PRIMARY KEY, a INT, g INT AS (a * 2) VIRTUAL, CHECK (a > 0), CONSTRAINT small CHECK (g < 100))")
	for _, table := range []string{"plain", "virt"} {
		d.exec("INSERT INTO " + table + " (id, a) VALUES (1, 1), (2, 2)")
		for _, q := range []string{
			"INSERT INTO %s (id, a) VALUES (3, -5)",
			"INSERT INTO %s (id, a) VALUES (3, 5), (4, -5)",
			"INSERT INTO %s (id, a) SELECT 3, -3",
			"INSERT INTO %s (id, a) VALUES (1, 5) ON DUPLICATE KEY UPDATE a = -7",
			"REPLACE INTO %s (id, a) VALUES (1, -5)",
			"UPDATE %s SET a = -1 WHERE id = 1",
			"UPDATE %s SET a = -1",
			"UPDATE %s SET a = a - 5 WHERE a > 1 ORDER BY id LIMIT 1",
		} {
			q = fmt.Sprintf(q, table)
			err := d.execErr(q)
			require.Error(t, err, q)
			require.Equal(t, 3819, mysqlErrno(err), q)
		}
		require.Equal(t, "[[1 1] [2 2]]", fmt.Sprint(d.exec("SELECT id, a FROM "+table+" ORDER BY id")))
	}
	err := d.execErr("INSERT INTO virt (id, a) VALUES (5, 60)")
	require.Equal(t, 3819, mysqlErrno(err))
	require.ErrorContains(t, err, "small")
	d.exec("UPDATE virt SET a = 40 WHERE id = 1")
}

// TestVirtualTableChecksJoinsAndBodies: the CHECK constraints of a table
// with a VIRTUAL column hold for the statements TestVirtualTableChecks does
// not try: an UPDATE whose WHERE holds an IN subquery (a semi-join),
// multi-table UPDATEs, and INSERT and UPDATE run by a trigger (AFTER or
// BEFORE, of an INSERT or a DELETE) of another table or by a procedure. A table without the virtual column refuses each
// with 3819 too, and takes the same statements with valid values.
func TestVirtualTableChecksJoinsAndBodies(t *testing.T) {
	for _, table := range []string{"plain", "virt"} {
		t.Run(table, func(t *testing.T) {
			d := newTestDB(t)
			d.exec("CREATE TABLE plain (id INT PRIMARY KEY, a INT, CHECK (a > 0))")
			d.exec("CREATE TABLE virt (id INT PRIMARY KEY, a INT, g INT AS (a * 2) VIRTUAL, CHECK (a > 0))")
			d.exec("CREATE TABLE other (id INT PRIMARY KEY)")
			d.exec("INSERT INTO other VALUES (1), (2)")
			d.exec("INSERT INTO " + table + " (id, a) VALUES (1, 1), (2, 2)")
			d.exec("CREATE TABLE trig (id INT PRIMARY KEY)")
			d.exec(fmt.Sprintf("CREATE TRIGGER tr AFTER INSERT ON trig FOR EACH ROW INSERT INTO %s (id, a) VALUES (NEW.id, -NEW.id)", table))
			d.exec("CREATE TABLE trig2 (id INT PRIMARY KEY)")
			d.exec(fmt.Sprintf("CREATE TRIGGER tr2 AFTER INSERT ON trig2 FOR EACH ROW UPDATE %s SET a = -9 WHERE id = NEW.id", table))
			d.exec("CREATE TABLE trig3 (id INT PRIMARY KEY)")
			d.exec("INSERT INTO trig3 VALUES (1)")
			d.exec(fmt.Sprintf("CREATE TRIGGER tr3 BEFORE INSERT ON trig3 FOR EACH ROW UPDATE %s SET a = -3 WHERE id = 1", table))
			d.exec(fmt.Sprintf("CREATE TRIGGER tr4 BEFORE DELETE ON trig3 FOR EACH ROW BEGIN UPDATE %s SET a = -4 WHERE id = OLD.id; END", table))
			d.exec(fmt.Sprintf("CREATE PROCEDURE p() BEGIN INSERT INTO %s (id, a) VALUES (7, -7); END", table))
			d.exec(fmt.Sprintf("CREATE PROCEDURE p2() BEGIN UPDATE %s SET a = -8 WHERE id = 1; END", table))
			for _, q := range []string{
				"UPDATE %[1]s SET a = -1 WHERE id IN (SELECT id FROM other)",
				"UPDATE %[1]s JOIN other ON %[1]s.id = other.id SET %[1]s.a = -1",
				"UPDATE %[1]s, other SET %[1]s.a = -1 WHERE %[1]s.id = other.id",
				"UPDATE other JOIN %[1]s x ON x.id = other.id SET x.a = -1",
				"INSERT INTO trig VALUES (5)",
				"INSERT INTO trig2 VALUES (1)",
				"INSERT INTO trig3 VALUES (2)",
				"DELETE FROM trig3 WHERE id = 1",
				"CALL p()",
				"CALL p2()",
			} {
				if strings.Contains(q, "%[1]s") {
					q = fmt.Sprintf(q, table)
				}
				_, err := query(d.e, d.ctx, q)
				if err == nil || mysqlErrno(err) != 3819 {
					t.Errorf("%s: got %v, want error 3819", q, err)
				}
			}
			assert.Equal(t, "[[1 1] [2 2]]", fmt.Sprint(d.exec("SELECT id, a FROM "+table+" ORDER BY id")))
			for _, q := range []string{
				"UPDATE %[1]s SET a = 3 WHERE id IN (SELECT id FROM other WHERE id = 1)",
				"UPDATE other JOIN %[1]s x ON x.id = other.id SET x.a = x.a + 10 WHERE other.id = 2",
			} {
				_, err := query(d.e, d.ctx, fmt.Sprintf(q, table))
				assert.NoError(t, err, q)
			}
			assert.Equal(t, "[[1 3] [2 12]]", fmt.Sprint(d.exec("SELECT id, a FROM "+table+" ORDER BY id")))
		})
	}
}

// TestVirtualTableChecksJoinRow: the checks of a table with a VIRTUAL
// column, updated in a join after another table or by a trigger, read the
// table's own columns, the virtual one included: a CHECK on it refuses a
// value only it rules out, and takes one it allows.
func TestVirtualTableChecksJoinRow(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE virt (id INT PRIMARY KEY, a INT, g INT AS (a * 2) VIRTUAL, CONSTRAINT small CHECK (g < 100))")
	d.exec("CREATE TABLE other (id INT PRIMARY KEY, b INT)")
	d.exec("INSERT INTO other VALUES (1, 500), (2, 500)")
	d.exec("INSERT INTO virt (id, a) VALUES (1, 1), (2, 2)")
	d.exec("CREATE TABLE trig (id INT PRIMARY KEY)")
	d.exec("CREATE TRIGGER tr AFTER INSERT ON trig FOR EACH ROW UPDATE virt SET a = NEW.id WHERE id = 2")
	for _, q := range []string{
		"UPDATE other JOIN virt ON virt.id = other.id SET virt.a = 60",
		"UPDATE other, virt SET virt.a = other.id + 60 WHERE virt.id = other.id",
		"INSERT INTO trig VALUES (60)",
	} {
		err := d.execErr(q)
		require.Error(t, err, q)
		require.Equal(t, 3819, mysqlErrno(err), q)
		require.ErrorContains(t, err, "small", q)
	}
	d.exec("UPDATE other JOIN virt ON virt.id = other.id SET virt.a = 40 WHERE other.id = 1")
	d.exec("INSERT INTO trig VALUES (7)")
	require.Equal(t, "[[1 40 80] [2 7 14]]", fmt.Sprint(d.exec("SELECT id, a, g FROM virt ORDER BY id")))
}

// TestVirtualTableAlterChecks: ALTER TABLE of a table with a VIRTUAL
// generated column treats its CHECK constraints as it treats those of the
// same table without it: DROP and RENAME COLUMN of a column a CHECK reads
// with another are refused, DROP COLUMN of the only column a CHECK reads
// drops the CHECK, and DROP CONSTRAINT and DROP CHECK drop them (GMS asked
// its virtual-column wrapper, which has no constraints: the table kept
// CHECKs over a column it no longer had, and refused to drop them).
func TestVirtualTableAlterChecks(t *testing.T) {
	d := newTestDB(t)
	const cols = "id INT PRIMARY KEY, a INT, b INT, c INT, %s CHECK (a < 100), CONSTRAINT %[2]s_ab CHECK (a < b), CONSTRAINT %[2]s_c CHECK (c > 0)"
	d.exec("CREATE TABLE plain (" + fmt.Sprintf(cols, "", "plain") + ")")
	d.exec("CREATE TABLE virt (" + fmt.Sprintf(cols, "g INT AS (a * 2) VIRTUAL,", "virt") + ")")
	for _, q := range []string{
		"ALTER TABLE %s RENAME COLUMN b TO x",
		"ALTER TABLE %s DROP COLUMN b",
		"ALTER TABLE %s DROP COLUMN a, DROP COLUMN c",
	} {
		errs := map[string]string{}
		for _, table := range []string{"plain", "virt"} {
			err := d.execErr(fmt.Sprintf(q, table))
			errs[table] = strings.ReplaceAll(err.Error(), table, "T")
		}
		require.Equal(t, errs["plain"], errs["virt"], q)
	}
	for _, q := range []string{
		"ALTER TABLE %[1]s DROP CONSTRAINT %[1]s_ab",
		"ALTER TABLE %[1]s DROP CHECK %[1]s_chk_1",
		"ALTER TABLE %s DROP COLUMN c",
		"ALTER TABLE %s RENAME COLUMN b TO x",
	} {
		for _, table := range []string{"plain", "virt"} {
			d.exec(fmt.Sprintf(q, table))
		}
	}
	show := func(table string) string {
		s := fmt.Sprint(d.exec("SHOW CREATE TABLE " + table))
		s = strings.ReplaceAll(s, "  `g` int GENERATED ALWAYS AS ((`a` * 2)) VIRTUAL,\n", "")
		return strings.ReplaceAll(s, table, "T")
	}
	require.Equal(t, show("plain"), show("virt"))
	require.NotContains(t, show("virt"), "CHECK")
}

// TestVirtualTableLike: CREATE TABLE ... LIKE a table with a VIRTUAL
// generated column copies its secondary indexes and CHECK constraints, as
// it copies those of the same table without it (GMS copied them from its
// virtual-column wrapper, which has none); a CREATE TABLE of the same name
// after a LIKE that failed copies nothing.
func TestVirtualTableLike(t *testing.T) {
	d := newTestDB(t)
	const cols = "id INT PRIMARY KEY AUTO_INCREMENT, a INT, b INT, %s KEY kb (b), UNIQUE KEY ua (a, b), CHECK (a < 100), CONSTRAINT %s_ab CHECK (a < b)"
	d.exec("CREATE TABLE plain (" + fmt.Sprintf(cols, "", "plain") + ")")
	d.exec("CREATE TABLE virt (" + fmt.Sprintf(cols, "g INT AS (a * 2) VIRTUAL,", "virt") + ")")
	d.exec("CREATE TABLE plain2 LIKE plain")
	d.exec("CREATE TABLE virt2 LIKE mydb.virt")
	show := func(table string) string {
		s := fmt.Sprint(d.exec("SHOW CREATE TABLE " + table))
		s = strings.ReplaceAll(s, "  `g` int GENERATED ALWAYS AS ((`a` * 2)) VIRTUAL,\n", "")
		return strings.ReplaceAll(s, table, "T")
	}
	require.Contains(t, show("virt2"), "KEY `kb` (`b`)")
	require.Contains(t, show("virt2"), "CHECK ((`a` < `b`))")
	require.Equal(t, show("plain2"), show("virt2"))
	for _, table := range []string{"plain2", "virt2"} {
		err := d.execErr("INSERT INTO " + table + " (a, b) VALUES (5, 1)")
		require.Contains(t, err.Error(), "violated", table)
	}

	d.execErr("CREATE TABLE virt2 LIKE virt") // exists
	d.exec("DROP TABLE virt2")
	d.exec("CREATE TABLE virt2 (x INT PRIMARY KEY)")
	require.NotContains(t, show("virt2"), "CHECK")
}
