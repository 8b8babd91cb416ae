package mysqlcompat_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShowVirtualTables: SHOW CREATE TABLE, SHOW INDEX and SHOW COLUMNS of
// a table with a VIRTUAL generated column show what they show of the same
// table without it: secondary indexes, CHECK constraints, foreign keys,
// AUTO_INCREMENT and comment (GMS asked its virtual-column wrapper, which
// has none of them, so dumps lost them).
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
	virt = strings.ReplaceAll(virt, "  `g` int GENERATED ALWAYS AS ((`a` * 2)),\n", "")
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
