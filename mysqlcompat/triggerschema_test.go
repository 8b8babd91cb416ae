package mysqlcompat_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTriggersSchemaAcrossDatabases: information_schema.TRIGGERS lists every
// database's triggers under their own database and table, whatever the
// session's current database holds (none of the names, or a table of the
// same name), and the current database is unchanged afterwards. VIEWS and
// ROUTINES list an embedded session's objects, which holds every privilege.
func TestTriggersSchemaAcrossDatabases(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE DATABASE a")
	d.exec("CREATE TABLE a.t (id INT PRIMARY KEY, v INT)")
	d.exec("USE a")
	d.exec("CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.v = NEW.v + 1")
	d.exec("CREATE DATABASE b")
	d.exec("USE b")
	const q = "SELECT TRIGGER_SCHEMA, TRIGGER_NAME, EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE FROM information_schema.TRIGGERS"
	want := "[[a tr a t]]"
	require.Equal(t, want, fmt.Sprint(d.exec(q)), "current database without t")
	d.exec("CREATE TABLE b.t (id INT PRIMARY KEY)")
	require.Equal(t, want, fmt.Sprint(d.exec(q)), "current database with its own t")
	require.Equal(t, "[[b]]", fmt.Sprint(d.exec("SELECT DATABASE()")))

	d.exec("USE a")
	d.exec("CREATE VIEW vv AS SELECT 1 AS x")
	d.exec("CREATE PROCEDURE p() SELECT 1")
	require.Equal(t, "[[a vv]]", fmt.Sprint(d.exec("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.VIEWS")))
	require.Equal(t, "[[a p]]", fmt.Sprint(d.exec("SELECT ROUTINE_SCHEMA, ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = 'a'")))
}
