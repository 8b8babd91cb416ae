package driver_test

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	_ "github.com/strata-db/strata/driver"
)

// openDB opens a *sql.DB over a fresh folder with database mydb, closed at
// the end of the test.
func openDB(t testing.TB) (*sql.DB, string) {
	t.Helper()
	dir := t.TempDir()
	db, err := sql.Open("strata", dir+"?db=mydb&sync=false")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	return db, dir
}

func mustExec(t testing.TB, db interface {
	Exec(string, ...any) (sql.Result, error)
}, q string, args ...any) sql.Result {
	t.Helper()
	res, err := db.Exec(q, args...)
	require.NoError(t, err, q)
	return res
}

func queryInt(t testing.TB, db interface {
	QueryRow(string, ...any) *sql.Row
}, q string, args ...any) int64 {
	t.Helper()
	var n int64
	require.NoError(t, db.QueryRow(q, args...).Scan(&n), q)
	return n
}
