package mysqlcompat_test

import (
	"fmt"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/mysqlcompat"
)

// TestGeneratedValuesSpec runs testdata/generated_values: values given for
// generated columns are refused with 3105 in strict mode, as in MySQL 8,
// and ignored with warning 1906 out of it, as in MariaDB; DEFAULT is taken
// in both. Commands:
//
//	exec
//	  statements, one a line
//	query
//	  one statement; prints its rows or its error, then the warnings it
//	  left, in the order they were raised
func TestGeneratedValuesSpec(t *testing.T) {
	d := newTestDB(t)
	runSQLSpec(t, d, "testdata/generated_values")
}

// TestGeneratedValuesStrictCostsNothing: in strict mode (the default) the
// rewrite of an INSERT or UPDATE that holds no DEFAULT and no ON DUPLICATE
// KEY UPDATE looks up no table and allocates nothing, also on a table with
// generated columns, and neither does the rewrite of triggers created in
// strict mode, nor that of a trigger created out of it once its catalog
// version was seen; out of strict mode it rewrites the statement.
func TestGeneratedValuesStrictCostsNothing(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, a INT, g INT AS (a * 2))")
	parse := func(q string) ast.Statement {
		st, err := ast.Parse(q)
		require.NoError(t, err)
		return st
	}
	for _, q := range []string{
		"INSERT INTO t (id, a) VALUES (1, 2), (3, 4)",
		"INSERT INTO t VALUES (1, 2, 3)",
		"UPDATE t SET a = a + 1 WHERE id = 1",
	} {
		st := parse(q)
		before := ast.String(st)
		allocs := testing.AllocsPerRun(100, func() { mysqlcompat.RewriteGeneratedValues(d.e, d.ctx, st) })
		require.Zero(t, allocs, q)
		require.Equal(t, before, ast.String(st), q) // unchanged
	}
	// The store hands GMS the triggers of a database for every statement
	// planned in it: those created in strict mode cost no parse.
	defs := []sql.TriggerDefinition{{Name: "tr", CreateStatement: "CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW INSERT INTO t VALUES (1, 2, 3)", SqlMode: sql.DefaultSqlMode}}
	allocs := testing.AllocsPerRun(100, func() { _ = mysqlcompat.BindableTriggers(d.ctx, nil, defs, mysqlcompat.CatalogVersion{}) })
	require.Zero(t, allocs)
	// Those created out of strict mode are parsed once for a catalog
	// version.
	defs[0].SqlMode = "NO_ENGINE_SUBSTITUTION"
	db, err := d.e.Analyzer.Catalog.Database(d.ctx, d.ctx.GetCurrentDatabase())
	require.NoError(t, err)
	at := mysqlcompat.CatalogVersion{Owner: d.s, Version: 1}
	bound := mysqlcompat.BindableTriggers(d.ctx, db, defs, at)
	require.Contains(t, bound[0].CreateStatement, "strata_generated_values_ignored_in_body")
	allocs = testing.AllocsPerRun(100, func() { _ = mysqlcompat.BindableTriggers(d.ctx, db, defs, at) })
	require.Equal(t, 1.0, allocs) // the copy of defs that holds the text
	d.exec("SET sql_mode = ''")
	st := parse("INSERT INTO t VALUES (1, 2, 3)")
	mysqlcompat.RewriteGeneratedValues(d.e, d.ctx, st)
	require.Equal(t, "insert into t(id, a) values (strata_generated_values_ignored(1, 't', 'g', 3), 2)", ast.String(st))
}

// BenchmarkGeneratedValuesRewrite: what the rewrite adds to the parse of a
// strict-mode INSERT and UPDATE (against the parse itself), on a table
// with a generated column.
func BenchmarkGeneratedValuesRewrite(b *testing.B) {
	d := newTestDB(b)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, a INT, g INT AS (a * 2))")
	for _, q := range []string{"INSERT INTO t (id, a) VALUES (1, 2)", "UPDATE t SET a = 1 WHERE id = 1"} {
		st, err := ast.Parse(q)
		require.NoError(b, err)
		b.Run("parse/"+q[:6], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = ast.Parse(q)
			}
		})
		b.Run("rewrite/"+q[:6], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				mysqlcompat.RewriteGeneratedValues(d.e, d.ctx, st)
			}
		})
	}
}

// TestGeneratedValuesSQLPrepare: out of strict mode, an INSERT prepared with
// SQL PREPARE takes a value for a generated column as a top-level INSERT
// does (ignored, warning 1906).
func TestGeneratedValuesSQLPrepare(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, a INT, g INT AS (a * 2) VIRTUAL)")
	d.exec("SET sql_mode = ''")
	d.exec("INSERT INTO t (id, a, g) VALUES (1, 1, 5)")
	for _, q := range []string{
		"PREPARE s FROM 'INSERT INTO t (id, a, g) VALUES (?, 1, 5)'",
		"SET @x = 2",
		"EXECUTE s USING @x",
	} {
		_, err := query(d.e, d.ctx, q)
		require.NoError(t, err, q)
	}
	require.Contains(t, fmt.Sprint(d.exec("SHOW WARNINGS")), "1906")
	require.Equal(t, "[[1 2] [2 2]]", fmt.Sprint(d.exec("SELECT id, g FROM t ORDER BY id")))
}

// TestGeneratedValuesTriggerTexts: a trigger whose body gives a generated
// column a value, created out of strict mode, shows the text it was
// created with in SHOW CREATE TRIGGER, SHOW TRIGGERS and
// information_schema.TRIGGERS (GMS binds a rewritten text, which the
// database hands it), before and after the store is opened again; it
// fires, and DROP TRIGGER and DROP TABLE take it.
func TestGeneratedValuesTriggerTexts(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, a INT, g INT AS (a * 2) VIRTUAL, s INT AS (a + 1) STORED)")
	d.exec("CREATE TABLE trig (id INT PRIMARY KEY)")
	d.exec("SET sql_mode = ''")
	const (
		simple = "INSERT INTO t VALUES (NEW.id, 1, 5, 6)"
		follow = "INSERT INTO t (id, a, g) VALUES (NEW.id + 10, 1, 5)"
		block  = "BEGIN\n  UPDATE t SET g = 7 WHERE id = OLD.id;\n  UPDATE t SET a = a + 1, s = 0 WHERE id = NEW.id;\nEND"
	)
	texts := map[string]string{
		"tr": "CREATE TRIGGER tr AFTER INSERT ON trig FOR EACH ROW " + simple,
		"tf": "CREATE DEFINER=`root`@`localhost` TRIGGER tf AFTER INSERT ON trig FOR EACH ROW FOLLOWS tr   " + follow,
		"tu": "CREATE TRIGGER tu BEFORE UPDATE ON trig FOR EACH ROW\n" + block,
	}
	bodies := map[string]string{"tr": simple, "tf": follow, "tu": block}
	for _, n := range []string{"tr", "tf", "tu"} {
		d.exec(texts[n])
	}
	d.exec("SET sql_mode = DEFAULT")
	check := func() {
		t.Helper()
		for n, text := range texts {
			rows := d.exec("SHOW CREATE TRIGGER " + n)
			require.Equal(t, text, rows[0][2], n)
		}
		for _, row := range d.exec("SHOW TRIGGERS") {
			require.Equal(t, bodies[row[0].(string)], row[3], row[0])
		}
		for _, row := range d.exec("SHOW TRIGGERS LIKE 't%'") {
			require.Equal(t, bodies[row[0].(string)], row[3], row[0])
		}
		for _, row := range d.exec("SELECT TRIGGER_NAME, ACTION_STATEMENT FROM information_schema.TRIGGERS") {
			require.Equal(t, bodies[row[0].(string)], row[1], row[0])
		}
	}
	check()
	d.exec("INSERT INTO trig VALUES (1)")
	d.reopen()
	d.exec("SET sql_mode = ''")
	check()
	d.exec("UPDATE trig SET id = 1")
	require.Equal(t, "[[1 2 4 3] [11 1 2 2]]", fmt.Sprint(d.exec("SELECT * FROM t ORDER BY id")))
	d.exec("DROP TRIGGER tu")
	d.exec("DROP TABLE trig")
	require.Empty(t, d.exec("SHOW TRIGGERS"))
}

// BenchmarkGeneratedValuesTrigger: an INSERT that fires a trigger created
// out of strict mode whose body gives a generated column a value (its text
// rewritten whenever GMS binds it), against the same trigger whose body
// gives none (its text as stored); each in a database of its own, as GMS
// binds every trigger of the statement's database.
func BenchmarkGeneratedValuesTrigger(b *testing.B) {
	d := newTestDB(b)
	d.exec("SET sql_mode = ''")
	for _, name := range []string{"plain", "ignored"} {
		d.exec("CREATE DATABASE " + name)
		d.exec("CREATE TABLE " + name + ".t (id INT PRIMARY KEY, a INT, g INT AS (a * 2) VIRTUAL)")
		d.exec("CREATE TABLE " + name + ".trig (id INT PRIMARY KEY)")
		body := "INSERT INTO t (id, a) VALUES (NEW.id, 1)"
		if name == "ignored" {
			body = "INSERT INTO t (id, a, g) VALUES (NEW.id, 1, 5)"
		}
		d.exec("USE " + name)
		d.exec("CREATE TRIGGER tr AFTER INSERT ON trig FOR EACH ROW " + body)
	}
	d.exec("SET sql_mode = DEFAULT")
	for _, name := range []string{"plain", "ignored", "plain", "ignored"} {
		b.Run(name, func(b *testing.B) {
			d.exec("USE " + name)
			d.exec("DELETE FROM trig")
			d.exec("DELETE FROM t")
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if _, err := query(d.e, d.ctx, fmt.Sprintf("INSERT INTO trig VALUES (%d)", i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
