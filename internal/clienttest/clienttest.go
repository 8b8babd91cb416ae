// Package clienttest holds what the tests of concurrent database/sql
// clients share, over the embedded driver and over the server alike: a
// fan-out of workers and the FOR UPDATE counter transaction.
package clienttest

import (
	"database/sql"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Concurrently runs f(0) to f(n-1) in goroutines of their own, waits for
// them all, and fails t with the errors they returned.
func Concurrently(t *testing.T, n int, f func(g int) error) {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() { errs[g] = f(g) })
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
}

// IncrementForUpdate adds one to row 1 of table c (id, n) in a
// transaction that reads it FOR UPDATE with arguments, so through a
// prepared statement.
func IncrementForUpdate(db *sql.DB) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	var n int
	if err := tx.QueryRow("SELECT n FROM c WHERE id = ? FOR UPDATE", 1).Scan(&n); err != nil {
		_ = tx.Rollback()
		return err
	}
	if _, err := tx.Exec("UPDATE c SET n = ? WHERE id = ?", n+1, 1); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
