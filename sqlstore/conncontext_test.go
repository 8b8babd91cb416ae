package sqlstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/kvstore"
)

// TestStatementContextReuse: a connection reuses the context of a
// statement that ended for its next statement (Conn.stmtContext), never
// the context of one still open. A statement left open while others run
// keeps its own context (its cancellation still stops it), and a context
// reused after a cancelled statement holds the new caller's.
func TestStatementContextReuse(t *testing.T) {
	st, _, err := kvstore.Open(t.TempDir(), &kvstore.Options{NoSync: true})
	require.NoError(t, err)
	e := st.OpenEngine()
	defer e.Close()
	c := e.NewConn()
	defer c.Close()
	bg := context.Background()
	require.NoError(t, c.UseDatabase(bg, "mydb"))
	_, err = c.Exec(bg, "CREATE TABLE t (id INT PRIMARY KEY, k INT)")
	require.NoError(t, err)
	_, err = c.Exec(bg, "INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)")
	require.NoError(t, err)
	sel, err := c.Prepare(bg, "SELECT k FROM t WHERE id = ?")
	require.NoError(t, err)
	defer sel.Close()

	drain := func(rows *sqlstore.Rows, err error) (n int, _ error) {
		if err != nil {
			return 0, err
		}
		for {
			if _, err := rows.Next(); err != nil {
				if err.Error() != "EOF" {
					_ = rows.Close()
					return n, err
				}
				return n, rows.Close()
			}
			n++
		}
	}
	for i := range 5 {
		ctx1, cancel1 := context.WithCancel(bg)
		open, err := c.Query(ctx1, "SELECT id FROM t WHERE id IN (1, 2, 3)")
		require.NoError(t, err)
		_, err = open.Next()
		require.NoError(t, err)
		// Statements that start and end while the first is open.
		for range 3 {
			n, err := drain(c.Query(bg, "SELECT 1"))
			require.NoError(t, err)
			require.Equal(t, 1, n)
			n, err = drain(sel.Query(bg, sqlstore.Arg{Ordinal: 1, Value: int64(2)}))
			require.NoError(t, err)
			require.Equal(t, 1, n)
			_, err = c.Exec(bg, "SET @x = 1")
			require.NoError(t, err)
		}
		cancel1()
		_, err = open.Next()
		require.True(t, errors.Is(err, context.Canceled), "open statement's context: %v", err)
		_ = open.Close()
		// The cancelled statement's context serves the next one, with
		// the next caller's context.Context and a query time of its own.
		n, err := drain(c.Query(bg, "SELECT id FROM t WHERE id IN (1, 2, 3)"))
		require.NoError(t, err, "iteration %d", i)
		require.Equal(t, 3, n)
		rows, err := c.Query(bg, "SELECT NOW(6)")
		require.NoError(t, err)
		vals, err := rows.Next()
		require.NoError(t, err)
		now, ok := vals[0].(time.Time)
		require.True(t, ok, "%T", vals[0])
		require.Greater(t, now.Year(), 2000)
		require.NoError(t, rows.Close())
	}
}

// TestStatementContextReuseConcurrent runs statements on several
// connections at once, each reusing its contexts, and one statement per
// connection left open across others (run it with -race).
func TestStatementContextReuseConcurrent(t *testing.T) {
	st, _, err := kvstore.Open(t.TempDir(), &kvstore.Options{NoSync: true})
	require.NoError(t, err)
	e := st.OpenEngine()
	defer e.Close()
	bg := context.Background()
	setup := e.NewConn()
	require.NoError(t, setup.UseDatabase(bg, "mydb"))
	_, err = setup.Exec(bg, "CREATE TABLE t (id INT PRIMARY KEY, k INT)")
	require.NoError(t, err)
	_, err = setup.Exec(bg, "INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)")
	require.NoError(t, err)
	require.NoError(t, setup.Close())
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := e.NewConn()
			defer c.Close()
			if err := c.UseDatabase(bg, "mydb"); err != nil {
				errs <- err
				return
			}
			for i := range 200 {
				open, err := c.Query(bg, "SELECT id FROM t WHERE id IN (1, 2, 3)")
				if err != nil {
					errs <- err
					return
				}
				if _, err := open.Next(); err != nil {
					errs <- err
					return
				}
				if _, err := c.Exec(bg, "UPDATE t SET k = ? WHERE id = ?", sqlstore.Arg{Ordinal: 1, Value: int64(i)}, sqlstore.Arg{Ordinal: 2, Value: int64(w%3 + 1)}); err != nil && !errors.Is(err, sqlstore.ErrConflict) {
					// A lost conflict is retried by Exec; others fail.
					errs <- err
					return
				}
				rows, err := c.Query(bg, "SELECT 1")
				if err != nil {
					errs <- err
					return
				}
				for {
					if _, err := rows.Next(); err != nil {
						break
					}
				}
				if err := rows.Close(); err != nil {
					errs <- err
					return
				}
				for {
					if _, err := open.Next(); err != nil {
						break
					}
				}
				if err := open.Close(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
