package mysqlcompat_test

import (
	gosql "database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	_ "github.com/strata-db/strata/driver"
)

// BenchmarkTriggersPreparedInsert: a prepared INSERT into a table with two
// triggers (BEFORE INSERT setting a column, AFTER INSERT writing another
// table), the triggers created out of strict mode ("lenient", whose texts
// the database hands GMS through BindableTriggers) or in it ("strict",
// handed as stored), each in a database of its own; the statement runs in
// the default (strict) mode.
//
//	go test ./mysqlcompat -run '^$' -bench TriggersPreparedInsert -benchmem
func BenchmarkTriggersPreparedInsert(b *testing.B) {
	db, err := gosql.Open("strata", b.TempDir()+"?db=mysql&sync=false")
	require.NoError(b, err)
	b.Cleanup(func() { _ = db.Close() })
	db.SetMaxOpenConns(1)
	exec := func(q string, args ...any) {
		b.Helper()
		_, err := db.Exec(q, args...)
		require.NoError(b, err, q)
	}
	for _, c := range []struct{ name, mode string }{{"lenient", "NO_ENGINE_SUBSTITUTION"}, {"strict", "STRICT_TRANS_TABLES"}} {
		exec("CREATE DATABASE " + c.name)
		exec("USE " + c.name)
		exec("SET sql_mode = '" + c.mode + "'")
		exec("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")
		exec("CREATE TABLE log (id INT PRIMARY KEY, b INT)")
		exec("CREATE TRIGGER tb BEFORE INSERT ON t FOR EACH ROW SET NEW.b = NEW.a + 1")
		exec("CREATE TRIGGER ta AFTER INSERT ON t FOR EACH ROW INSERT INTO log VALUES (NEW.id, NEW.b)")
	}
	exec("SET sql_mode = DEFAULT")
	for _, name := range []string{"lenient", "strict", "lenient", "strict"} {
		b.Run(name, func(b *testing.B) {
			exec("USE " + name)
			exec("DELETE FROM t")
			exec("DELETE FROM log")
			st, err := db.Prepare("INSERT INTO t (id, a) VALUES (?, ?)")
			require.NoError(b, err)
			defer st.Close()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if _, err := st.Exec(i, i); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestTriggerTextsFollowTheCatalog: the texts of triggers created out of
// strict mode are kept per catalog version (BindableTriggers), and the
// next statement, prepared or not, sees a trigger replaced or dropped and
// a table its body names altered to hold a generated column.
func TestTriggerTextsFollowTheCatalog(t *testing.T) {
	db, err := gosql.Open("strata", t.TempDir()+"?db=mysql&sync=false")
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	db.SetMaxOpenConns(1)
	exec := func(q string, args ...any) {
		t.Helper()
		_, err := db.Exec(q, args...)
		require.NoError(t, err, q)
	}
	rows := func() string {
		t.Helper()
		r, err := db.Query("SELECT id, a, x FROM g ORDER BY id")
		require.NoError(t, err)
		defer r.Close()
		var out []string
		for r.Next() {
			var id, a, x int
			require.NoError(t, r.Scan(&id, &a, &x))
			out = append(out, fmt.Sprint(id, a, x))
		}
		require.NoError(t, r.Err())
		return strings.Join(out, ",")
	}
	exec("CREATE DATABASE d")
	exec("USE d")
	exec("CREATE TABLE g (id INT PRIMARY KEY, a INT, x INT)")
	exec("CREATE TABLE trig (id INT PRIMARY KEY)")
	exec("SET sql_mode = ''")
	exec("CREATE TRIGGER tr AFTER INSERT ON trig FOR EACH ROW INSERT INTO g (id, a, x) VALUES (NEW.id, 1, 5)")
	exec("SET sql_mode = DEFAULT")
	ins, err := db.Prepare("INSERT INTO trig VALUES (?)")
	require.NoError(t, err)
	defer ins.Close()

	_, err = ins.Exec(1)
	require.NoError(t, err)
	exec("INSERT INTO trig VALUES (2)")
	require.Equal(t, "1 1 5,2 1 5", rows())

	// x becomes generated: the body's value for it is ignored (1906), as
	// the trigger was created out of strict mode.
	exec("ALTER TABLE g DROP COLUMN x")
	exec("ALTER TABLE g ADD COLUMN x INT AS (a * 2)")
	_, err = ins.Exec(3)
	require.NoError(t, err)
	exec("INSERT INTO trig VALUES (4)")
	require.Equal(t, "1 1 2,2 1 2,3 1 2,4 1 2", rows())

	// Replaced: the new body runs.
	exec("DROP TRIGGER tr")
	exec("SET sql_mode = ''")
	exec("CREATE TRIGGER tr AFTER INSERT ON trig FOR EACH ROW INSERT INTO g (id, a, x) VALUES (NEW.id, 7, 0)")
	exec("SET sql_mode = DEFAULT")
	_, err = ins.Exec(5)
	require.NoError(t, err)
	exec("INSERT INTO trig VALUES (6)")
	require.Equal(t, "1 1 2,2 1 2,3 1 2,4 1 2,5 7 14,6 7 14", rows())

	// Dropped: nothing more.
	exec("DROP TRIGGER tr")
	_, err = ins.Exec(7)
	require.NoError(t, err)
	exec("INSERT INTO trig VALUES (8)")
	require.Equal(t, "1 1 2,2 1 2,3 1 2,4 1 2,5 7 14,6 7 14", rows())

	// x no longer generated: the value is stored again.
	exec("SET sql_mode = ''")
	exec("CREATE TRIGGER tr AFTER INSERT ON trig FOR EACH ROW INSERT INTO g (id, a, x) VALUES (NEW.id, 1, 5)")
	exec("SET sql_mode = DEFAULT")
	_, err = ins.Exec(9)
	require.NoError(t, err)
	exec("ALTER TABLE g MODIFY COLUMN x INT")
	_, err = ins.Exec(10)
	require.NoError(t, err)
	require.Equal(t, "1 1 2,2 1 2,3 1 2,4 1 2,5 7 14,6 7 14,9 1 2,10 1 5", rows())
}
