package sqlstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/kvstore"
)

// TestConstSelectMatchesPlanned runs SELECTs of constants on a connection
// that keeps their plans (constselect.go) and on one that plans every
// statement, autocommit on, inside BEGIN and autocommit off, text and
// prepared: columns, rows, and what the session shows afterwards
// (ROW_COUNT, FOUND_ROWS, warnings, an open transaction) are the same.
func TestConstSelectMatchesPlanned(t *testing.T) {
	ctx := context.Background()
	st, _, err := kvstore.Open(t.TempDir(), &kvstore.Options{NoSync: true})
	require.NoError(t, err)
	e := st.OpenEngine()
	cached, planned := e.NewConn(), e.NewConn()
	t.Cleanup(func() {
		require.NoError(t, cached.Close())
		require.NoError(t, planned.Close())
		require.NoError(t, e.Close())
	})
	// Each its own database, so that writes inside BEGIN do not wait on
	// each other.
	for c, db := range map[*sqlstore.Conn]string{cached: "c", planned: "p"} {
		require.NoError(t, c.UseDatabase(ctx, db))
		for _, q := range []string{
			"CREATE TABLE t (id INT PRIMARY KEY, k INT)",
			"INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)",
		} {
			_, err := c.Exec(ctx, q)
			require.NoError(t, err)
		}
	}
	_, err = planned.Exec(ctx, "SET strata_plan_reuse = OFF")
	require.NoError(t, err)

	exec := func(q string) {
		t.Helper()
		for _, c := range []*sqlstore.Conn{cached, planned} {
			_, err := c.Exec(ctx, q)
			require.NoError(t, err, q)
		}
	}
	// state is what a client sees of the session after a statement;
	// probe picks what is looked at, since looking changes it.
	state := func(c *sqlstore.Conn, probe int) any {
		holds := c.HoldsTransaction()
		if probe == 0 {
			return []any{holds, queryResult(t, c, "SELECT ROW_COUNT(), FOUND_ROWS()")}
		}
		return []any{holds, queryResult(t, c, "SHOW WARNINGS")}
	}
	consts := []string{
		"SELECT 1",
		"SELECT 1 AS x, 'a', NULL, -2, 1.5, 1e3, 0x1f, b'1', X'00ff', 18446744073709551615, TRUE",
		"select 'x' AS `y z`, _latin1'e', 'a' COLLATE utf8mb4_bin",
		"SELECT DATE '2020-01-02', TIMESTAMP '2020-01-02 03:04:05.5'",
		"SELECT 1 FROM dual",
		"SELECT @@autocommit, @@session.sql_mode AS m, @@global.max_connections, @@version",
	}
	// A system variable is read at each execution: another session's
	// SET GLOBAL is seen.
	other := e.NewConn()
	t.Cleanup(func() {
		_, err := other.Exec(ctx, "SET GLOBAL max_connections = 151")
		require.NoError(t, err)
		require.NoError(t, other.Close())
	})
	// Statements prepared once and run in every mode (the kept plan
	// found again through the statement, Stmt.fixedFor), and prepared
	// again for each execution.
	kept := map[*sqlstore.Conn]map[string]*sqlstore.Stmt{cached: {}, planned: {}}
	for c, m := range kept {
		for _, q := range consts {
			st, err := c.Prepare(ctx, q)
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			m[q] = st
		}
	}
	before := plansReused(t, cached)
	for _, mode := range []string{"autocommit", "begin", "autocommit=0"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "autocommit=0" {
				exec("SET autocommit = 0")
				defer exec("SET autocommit = 1")
			}
			for i := range 8 {
				for _, q := range consts {
					if mode == "begin" {
						exec("BEGIN")
					}
					// Leave FOUND_ROWS 3, then ROW_COUNT 1 and a warning
					// (1365) for the constant SELECT to replace.
					for _, c := range []*sqlstore.Conn{cached, planned} {
						r := queryResult(t, c, "SELECT id FROM t")
						require.Len(t, r.rows, 3)
					}
					_, err := other.Exec(ctx, fmt.Sprintf("SET GLOBAL max_connections = %d", 160+i))
					require.NoError(t, err)
					exec("INSERT INTO t VALUES (100, 1/0)")
					if mode == "autocommit=0" && i%2 == 1 {
						exec("COMMIT") // no transaction open: the SELECT opens one
					}
					switch i % 4 {
					case 0, 2:
						require.Equal(t, queryResult(t, planned, q), queryResult(t, cached, q), q)
					case 1:
						require.Equal(t, preparedResult(t, planned, q), preparedResult(t, cached, q), q)
					case 3:
						require.Equal(t, stmtResult(t, kept[planned][q]), stmtResult(t, kept[cached][q]), q)
					}
					require.Equal(t, state(planned, i%3), state(cached, i%3), q)
					exec("DELETE FROM t WHERE id = 100")
					if mode != "autocommit" {
						exec("COMMIT")
					}
				}
			}
		})
	}
	// A constant SELECT while another result of the connection is open
	// (its transaction in use): the planned path commits that
	// transaction at its end.
	open := func(c *sqlstore.Conn) (holds bool, rest result) {
		rows, err := c.Query(ctx, "SELECT id FROM t")
		require.NoError(t, err)
		_, err = rows.Next()
		require.NoError(t, err)
		r := queryResult(t, c, "SELECT 1")
		require.Len(t, r.rows, 1)
		holds = c.HoldsTransaction()
		for {
			vals, err := rows.Next()
			if err != nil {
				rest.err = err.Error()
				break
			}
			rest.rows = append(rest.rows, append([]any(nil), vals...))
		}
		require.NoError(t, rows.Close())
		return holds, rest
	}
	for range 3 {
		h1, r1 := open(planned)
		h2, r2 := open(cached)
		require.Equal(t, h1, h2)
		require.Equal(t, r1, r2)
	}
	for _, q := range consts {
		// A COLLATE clause, and a typed literal (a CAST, typedliterals.go),
		// is an expression GMS evaluates: not kept.
		kept := !strings.Contains(q, "COLLATE") && !strings.Contains(q, "DATE '")
		require.Equal(t, kept, sqlstore.ConstSelectKept(cached, q), q)
	}
	require.Greater(t, plansReused(t, cached)-before, int64(3*len(consts)))
}

// preparedResult is queryResult of a statement prepared and run once.
func preparedResult(t *testing.T, c *sqlstore.Conn, q string) result {
	t.Helper()
	st, err := c.Prepare(context.Background(), q)
	require.NoError(t, err)
	defer st.Close()
	return stmtResult(t, st)
}

// stmtResult is queryResult of a prepared statement's execution.
func stmtResult(t *testing.T, st *sqlstore.Stmt) result {
	t.Helper()
	rows, err := st.Query(context.Background())
	if err != nil {
		return result{err: err.Error()}
	}
	cols := append([]sqlstore.Column(nil), rows.Columns()...)
	var out [][]any
	for {
		vals, err := rows.Next()
		if err != nil {
			if err.Error() != "EOF" {
				_ = rows.Close()
				return result{err: err.Error()}
			}
			break
		}
		out = append(out, append([]any(nil), vals...))
	}
	require.NoError(t, rows.Close())
	return result{cols: cols, rows: out}
}
