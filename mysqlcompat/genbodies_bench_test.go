package mysqlcompat_test

import (
	gosql "database/sql"
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
