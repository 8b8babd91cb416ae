package mysqlcompat_test

import (
	"context"
	"fmt"
	"testing"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/mysqlcompat"
)

// TestSimpleStatementsValueRules: the statements GMS analyzes with fixed
// batches of its own (an INSERT of literal VALUES, a single-table UPDATE
// or DELETE) get the value rules, as does a trigger body that is such a
// statement, whichever way its statement is analyzed. Each fails without
// the rules applied when the exec builder builds the plan (Install).
func TestSimpleStatementsValueRules(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE b (id INT PRIMARY KEY, v BIGINT)")
	d.exec("CREATE TABLE n (id INT PRIMARY KEY, i INT)")
	d.exec("CREATE TABLE s (id INT PRIMARY KEY, v VARCHAR(10) COLLATE utf8mb4_0900_ai_ci)")
	d.exec("INSERT INTO n VALUES (1, 1)")
	d.exec("INSERT INTO s VALUES (1, 'abc')")

	// INSERT ... VALUES: a string beyond BIGINT fails (bigint.go); GMS
	// stored -2^63.
	require.Equal(t, 1264, mysqlErrno(d.execErr("INSERT INTO b VALUES (1, '9223372036854775808')")))
	// UPDATE: an assignment beyond INT fails (assign.go); GMS stored the
	// type's end.
	require.Equal(t, 1264, mysqlErrno(d.execErr("UPDATE n SET i = 3000000000 WHERE id = 1")))
	// UPDATE: a change of letter case only is stored (exactupdate.go).
	d.exec("UPDATE s SET v = 'ABC' WHERE id = 1")
	require.Equal(t, "[[ABC]]", fmt.Sprint(d.exec("SELECT v FROM s")))
	// DELETE: integer arithmetic past BIGINT fails with 1690 (intarith.go).
	require.Equal(t, 1690, mysqlErrno(d.execErr("DELETE FROM n WHERE i + 9223372036854775807 > 0")))

	// A trigger body that is a single-table UPDATE, under an INSERT of
	// VALUES (fixed batches) and under an INSERT ... SELECT (the engine's).
	d.exec("CREATE TABLE src (id INT PRIMARY KEY, x BIGINT)")
	d.exec("CREATE TRIGGER tr AFTER INSERT ON src FOR EACH ROW UPDATE n SET i = NEW.x WHERE id = 1")
	require.Equal(t, 1264, mysqlErrno(d.execErr("INSERT INTO src VALUES (1, 3000000000)")))
	require.Equal(t, 1264, mysqlErrno(d.execErr("INSERT INTO src SELECT 2, 3000000000")))
	require.Equal(t, "[[1]]", fmt.Sprint(d.exec("SELECT i FROM n")))

	// A procedure's statements, which GMS runs as statements of their own.
	d.exec("CREATE PROCEDURE p() INSERT INTO b VALUES (2, '9223372036854775808')")
	require.Equal(t, 1264, mysqlErrno(d.execErr("CALL p()")))
	require.Equal(t, "[]", fmt.Sprint(d.exec("SELECT * FROM b")))
}

// TestStockEngineUnchanged: an engine built by GMS alone, in a process
// where an engine with the corrections exists, behaves as GMS: Install
// changed none of GMS's package state.
func TestStockEngineUnchanged(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, v BIGINT)")
	d.exec("INSERT INTO t VALUES (1, 1), (2, 2)")

	pro := memory.NewDBProvider(memory.NewDatabase("mydb"))
	stock := sqle.NewDefault(pro)
	ctx := sql.NewContext(context.Background(), sql.WithSession(memory.NewSession(sql.NewBaseSession(), pro)))
	ctx.SetCurrentDatabase("mydb")
	run := func(q string) ([]sql.Row, sql.Schema, error) {
		sch, iter, _, err := stock.Query(ctx, q)
		if err != nil {
			return nil, nil, err
		}
		rows, err := sql.RowIterToRows(ctx, iter)
		return rows, sch, err
	}
	_, _, err := run("CREATE TABLE t (id INT PRIMARY KEY, v BIGINT)")
	require.NoError(t, err)
	_, _, err = run("INSERT INTO t VALUES (1, 1), (2, 2)")
	require.NoError(t, err)

	require.Equal(t, stock.Analyzer.ExecBuilder, rowexec.DefaultBuilder)
	require.Equal(t, stock.Analyzer.Parser, sql.GlobalParser)
	for _, b := range stock.Analyzer.Batches {
		for _, r := range b.Rules {
			require.Less(t, int(r.Id), 10_000, "batch %s: rule %d is not GMS's", b.Desc, r.Id)
		}
	}
	for _, r := range analyzer.OnceAfterAll {
		require.Less(t, int(r.Id), 10_000, "OnceAfterAll: rule %d is not GMS's", r.Id)
	}

	// SUM of integers: DECIMAL with the corrections, GMS's DOUBLE without.
	_, typs := d.queryTyped("SELECT SUM(v) FROM t")
	require.Equal(t, []string{"decimal(41,0) null"}, typs)
	_, sch, err := run("SELECT SUM(v) FROM t")
	require.NoError(t, err)
	require.Equal(t, "double", sch[0].Type.String())

	// A simple INSERT (GMS's fixed batches): a string beyond BIGINT fails
	// with the corrections; GMS stores it converted.
	require.Equal(t, 1264, mysqlErrno(d.execErr("INSERT INTO t VALUES (3, '9223372036854775808')")))
	_, _, err = run("INSERT INTO t VALUES (3, '9223372036854775808')")
	require.NoError(t, err)

	// Windows over grouped rows: rewritten with the corrections, refused
	// by GMS.
	d.exec("SELECT id, RANK() OVER (ORDER BY SUM(v)) FROM t GROUP BY id")
	_, _, err = run("SELECT id, RANK() OVER (ORDER BY SUM(v)) FROM t GROUP BY id")
	require.Error(t, err)
}

// TestRuleId: the package's analyzer rule has an id of its own, none of
// GMS's (GMS tells rules apart by id in its selectors).
func TestRuleId(t *testing.T) {
	id := mysqlcompat.AfterJoinsRule
	require.Equal(t, fmt.Sprintf("RuleId(%d)", id), id.String(), "GMS names rule %d", id)
}
