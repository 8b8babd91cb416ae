package mysqlcompat_test

import (
	"context"
	"testing"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/sqltest"
	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/kvstore"
)

// testDB is a Strata store with an engine (sqlstore.Store.NewEngine, which
// installs the corrections) and one session, for tests.
type testDB struct {
	t   testing.TB
	dir string
	s   *sqlstore.Store
	e   *sqle.Engine
	ctx *sql.Context
}

func openTestDB(t testing.TB, dir string) *testDB {
	t.Helper()
	s, _, err := kvstore.Open(dir, &kvstore.Options{NoSync: true})
	require.NoError(t, err)
	d := &testDB{t: t, dir: dir, s: s, e: s.NewEngine()}
	d.ctx = d.newCtx()
	return d
}

// newTestDB opens a fresh store in a temporary directory with database
// mydb, closed at the end of the test.
func newTestDB(t testing.TB) *testDB {
	d := openTestDB(t, t.TempDir())
	d.exec("CREATE DATABASE IF NOT EXISTS mydb")
	t.Cleanup(func() { _ = d.s.Close() })
	return d
}

func (d *testDB) newCtx() *sql.Context {
	ctx := d.s.NewContext(context.Background(), "")
	if d.s.Provider().HasDatabase(ctx, "mydb") {
		ctx.SetCurrentDatabase("mydb")
	}
	return ctx
}

// query runs a statement in ctx and returns its rows or error.
func query(e *sqle.Engine, ctx *sql.Context, q string) ([]sql.Row, error) {
	return sqltest.Query(e, ctx, q)
}

func (d *testDB) exec(q string) []sql.Row {
	d.t.Helper()
	rows, err := query(d.e, d.ctx, q)
	require.NoError(d.t, err, q)
	if q == "CREATE DATABASE IF NOT EXISTS mydb" {
		d.ctx.SetCurrentDatabase("mydb")
	}
	return rows
}

func (d *testDB) execErr(q string) error {
	d.t.Helper()
	_, err := query(d.e, d.ctx, q)
	require.Error(d.t, err, q)
	return err
}

// reopen closes the store and opens it again in the same directory.
func (d *testDB) reopen() {
	d.t.Helper()
	require.NoError(d.t, d.s.Close())
	s, _, err := kvstore.Open(d.dir, &kvstore.Options{NoSync: true})
	require.NoError(d.t, err)
	d.s, d.e = s, s.NewEngine()
	d.ctx = d.newCtx()
	d.t.Cleanup(func() { _ = s.Close() })
}

// mysqlErrno returns the MySQL error number of err.
func mysqlErrno(err error) int {
	return sqlstore.MySQLError(err).Num
}

// queryTyped runs q and returns its rows, as a client reads their text, and
// its columns' types (sqltest.TypedRows).
func (d *testDB) queryTyped(q string) (string, []string) {
	d.t.Helper()
	return sqltest.TypedRows(d.t, d.e, d.ctx, q)
}
