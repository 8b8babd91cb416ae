package sqlstore

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTriggerListCache checks that the catalog cache's trigger lists follow
// the catalog: a trigger created, replaced or dropped by one connection fires
// (or stops firing) at the next write of another, a transaction open
// across a DROP and CREATE TRIGGER leaves the list for the writes after it,
// and two databases with tables and triggers of the same names keep their
// own.
func TestTriggerListCache(t *testing.T) {
	ctx := context.Background()
	d := newTestDB(t)
	d.exec("CREATE DATABASE other")
	for _, db := range []string{"mydb", "other"} {
		d.exec("CREATE TABLE " + db + ".t (id INT PRIMARY KEY)")
		d.exec("CREATE TABLE " + db + ".tlog (n INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(20))")
	}
	e := d.s.OpenEngine()
	a, b := e.NewConn(), e.NewConn()
	t.Cleanup(func() { _ = a.Close(); _ = b.Close(); _ = e.Close() })
	require.NoError(t, a.UseDatabase(ctx, "mydb"))
	require.NoError(t, b.UseDatabase(ctx, "mydb"))
	exec := func(c *Conn, q string) {
		t.Helper()
		_, err := c.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	logOf := func(db string) []string {
		t.Helper()
		return queryAll(t, a, "SELECT what FROM "+db+".tlog ORDER BY n")
	}

	exec(b, "INSERT INTO t VALUES (1)") // the empty list is read, and cached
	exec(a, "CREATE TRIGGER ti AFTER INSERT ON t FOR EACH ROW INSERT INTO tlog (what) VALUES ('mydb')")
	exec(a, "CREATE TRIGGER ti AFTER INSERT ON other.t FOR EACH ROW INSERT INTO other.tlog (what) VALUES ('other')")
	exec(b, "INSERT INTO t VALUES (2)")
	exec(b, "INSERT INTO other.t VALUES (2)")
	require.Equal(t, []string{"[mydb]"}, logOf("mydb"))
	require.Equal(t, []string{"[other]"}, logOf("other"))

	// A trigger replaced while another connection's transaction is open
	// fires in the writes after it.
	exec(b, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
	exec(a, "DROP TRIGGER ti")
	exec(a, "CREATE TRIGGER ti AFTER INSERT ON t FOR EACH ROW INSERT INTO tlog (what) VALUES ('replaced')")
	exec(a, "INSERT INTO t VALUES (3)")
	exec(b, "COMMIT")
	exec(b, "INSERT INTO t VALUES (4)")
	require.Equal(t, []string{"[mydb]", "[replaced]", "[replaced]"}, logOf("mydb"))

	exec(a, "DROP TRIGGER ti")
	exec(b, "INSERT INTO t VALUES (5)")
	exec(b, "INSERT INTO other.t VALUES (5)")
	require.Equal(t, []string{"[mydb]", "[replaced]", "[replaced]"}, logOf("mydb"))
	require.Equal(t, []string{"[other]", "[other]"}, logOf("other"))
}
