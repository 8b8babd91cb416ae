package sqlstore

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/stretchr/testify/require"
)

// staleConns opens three connections on a store holding t (id, v, w, index
// kv on v) with two rows and t2 (id, v, w, x) empty, as TestStalePlanAfterDDL's
// sessions: a holder, a DDL session and a writer.
func staleConns(t *testing.T) (*testDB, [3]*Conn) {
	t.Helper()
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT, w INT, KEY kv (v))")
	d.exec("CREATE TABLE t2 (id INT PRIMARY KEY, v INT, w INT, x INT)")
	d.exec("CREATE TABLE other (id INT PRIMARY KEY)")
	d.exec("INSERT INTO t VALUES (1, 1, 1), (2, 2, 2)")
	e := d.s.OpenEngine()
	t.Cleanup(func() { _ = e.Close() })
	var cs [3]*Conn
	for i := range cs {
		cs[i] = directConnOn(t, e, txnPessimistic)
	}
	return d, cs
}

// stalePlanRun has the holder read t in a transaction, the DDL session run
// ddl (which waits for the holder), and the writer run the statements of
// writes, the last one while the DDL waits (planned on the old definition,
// it waits for its metadata lock behind the DDL). Then the holder commits.
// It returns the DDL's error and the last write's.
func stalePlanRun(t *testing.T, d *testDB, cs [3]*Conn, ddl string, writes ...string) (ddlErr, writeErr error) {
	t.Helper()
	ddlErr, writeErr, _ = staleRun(t, d, cs, ddl, true, writes[:len(writes)-1], writes[len(writes)-1])
	return ddlErr, writeErr
}

// staleRun has the writer run the statements of before, then ddl run, then
// the writer run stmt: while ddl waits for the holder's transaction (which
// read t), so that stmt, planned on the old definition, waits for its
// metadata lock behind ddl, when waits; after ddl committed otherwise. It
// returns ddl's error, stmt's, and the rows stmt returned when it is a
// read ("[a b] [c d]").
func staleRun(t *testing.T, d *testDB, cs [3]*Conn, ddl string, waits bool, before []string, stmt string) (ddlErr, err error, got string) {
	t.Helper()
	ctx := context.Background()
	holder, alter, writer := cs[0], cs[1], cs[2]
	for _, w := range before {
		_, err := writer.Exec(ctx, w)
		require.NoError(t, err, w)
	}
	run := func() (string, error) {
		if first, _ := LeadingWords(stmt); !strings.EqualFold(first, "select") && !strings.EqualFold(first, "call") {
			_, err := writer.Exec(ctx, stmt)
			return "", err
		}
		rows, err := writer.Query(ctx, stmt)
		if err != nil {
			return "", err
		}
		defer rows.Close()
		var out []string
		for {
			r, err := rows.Next()
			if err == io.EOF {
				return strings.Join(out, " "), nil
			}
			if err != nil {
				return "", err
			}
			out = append(out, fmt.Sprint(r))
		}
	}
	if !waits {
		_, ddlErr = alter.Exec(ctx, ddl)
		got, err = run()
		return ddlErr, err, got
	}
	_, err = holder.Exec(ctx, "BEGIN")
	require.NoError(t, err)
	queryAll(t, holder, "SELECT * FROM t")
	altered := make(chan error, 1)
	go func() {
		_, err := alter.Exec(ctx, ddl)
		altered <- err
	}()
	awaitMDLWaiters(t, d, 1, altered) // the DDL's PENDING lock
	type result struct {
		got string
		err error
	}
	ran := make(chan result, 1)
	go func() {
		got, err := run()
		ran <- result{got, err}
	}()
	awaitMDLWaiters(t, d, 2, ran) // and the statement's, behind it
	_, err = holder.Exec(ctx, "COMMIT")
	require.NoError(t, err)
	r := <-ran
	return <-altered, r.err, r.got
}

// awaitMDLWaiters returns once n metadata lock requests wait (PENDING in
// performance_schema.metadata_locks), so that a test orders its sessions by
// the lock table's state; it fails the test if done delivers first (the
// statement meant to wait ended without waiting).
func awaitMDLWaiters[T any](t *testing.T, d *testDB, n int, done <-chan T) {
	t.Helper()
	for {
		q := 0
		for _, r := range d.s.mdl.rows() {
			if !r.granted {
				q++
			}
		}
		if q >= n {
			return
		}
		select {
		case v := <-done:
			t.Fatalf("the statement ended without waiting for its metadata lock: %v", v)
		default:
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

// TestStalePlanAfterDDL: a statement planned on a table's definition,
// whose metadata lock then waited for a DDL statement that changed the
// table, runs again planned on the new definition, as MySQL prepares it
// again: an UPDATE or DELETE takes effect on the table as it is now (it
// silently matched nothing after a copying ALTER, or wrote the renamed
// table), an INSERT whose values no longer fit the columns gets 1136 (it
// failed with a codec error), a write to a dropped table 1146. No statement
// writes rows encoded for another definition. The same holds for an
// EXECUTE of a statement PREPAREd in SQL, a write in a procedure's CALL,
// and a transaction's first read, waiting so or following a plain BEGIN
// and a DDL statement (InnoDB's snapshot is taken at the first read); a
// transaction whose snapshot predates the DDL (it read another table
// before, or began WITH CONSISTENT SNAPSHOT) gets MySQL's 1412, and goes
// on.
func TestStalePlanAfterDDL(t *testing.T) {
	const (
		update  = "UPDATE t SET v = 5"
		insert3 = "INSERT INTO t VALUES (9, 9, 9)"
		insertC = "INSERT INTO t (id, v) VALUES (9, 9)"
		del     = "DELETE FROM t WHERE id = 1"
		replace = "REPLACE INTO t VALUES (1, 3, 3)"
		read    = "SELECT * FROM t ORDER BY id"

		addC   = "ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7"
		added  = "[1 1 1 7] [2 2 2 7]"
		begin  = "BEGIN"
		after  = false // the statement runs after the DDL committed
		behind = true  // the statement waits behind the DDL
	)
	var (
		inTxn      = []string{begin}
		readOther  = []string{begin, "SELECT * FROM other"}
		consistent = []string{"START TRANSACTION WITH CONSISTENT SNAPSHOT"}
		prepared   = []string{"PREPARE p FROM 'UPDATE t SET v = 5'"}
		prepared3  = []string{"PREPARE p FROM 'INSERT INTO t VALUES (9, 9, 9)'"}
		procedure  = []string{"CREATE PROCEDURE pu() UPDATE t SET v = 5"}

		insertTrigger = "CREATE TRIGGER tr AFTER INSERT ON other FOR EACH ROW INSERT INTO t (id, v) VALUES (new.id, 0)"
		updateTrigger = "CREATE TRIGGER tr AFTER INSERT ON other FOR EACH ROW UPDATE t SET v = 6"
	)
	for _, tc := range []struct {
		ddl    string
		before []string // the writer's statements before stmt
		waits  bool     // stmt waits behind the DDL (else it follows it)
		stmt   string
		errNum int
		got    string // what stmt read, if it reads
		rows   string // t afterwards
	}{
		{ddl: addC, waits: behind, stmt: update, rows: "[1 5 1 7] [2 5 2 7]"},
		{ddl: addC, waits: behind, stmt: insert3, errNum: 1136, rows: added},
		{ddl: addC, waits: behind, stmt: insertC, rows: "[1 1 1 7] [2 2 2 7] [9 9 <nil> 7]"},
		{ddl: addC, waits: behind, stmt: del, rows: "[2 2 2 7]"},
		{ddl: addC, waits: behind, stmt: replace, errNum: 1136, rows: added},
		{ddl: "ALTER TABLE t DROP COLUMN w", waits: behind, stmt: update, rows: "[1 5] [2 5]"},
		{ddl: "ALTER TABLE t DROP COLUMN w", waits: behind, stmt: insert3, errNum: 1136, rows: "[1 1] [2 2]"},
		{ddl: "ALTER TABLE t DROP COLUMN w", waits: behind, stmt: insertC, rows: "[1 1] [2 2] [9 9]"},
		{ddl: "ALTER TABLE t DROP COLUMN w", waits: behind, stmt: del, rows: "[2 2]"},
		{ddl: "ALTER TABLE t MODIFY COLUMN v VARCHAR(10)", waits: behind, stmt: update, rows: "[1 5 1] [2 5 2]"},
		{ddl: "ALTER TABLE t MODIFY COLUMN v VARCHAR(10)", waits: behind, stmt: insert3, rows: "[1 1 1] [2 2 2] [9 9 9]"},
		{ddl: "ALTER TABLE t MODIFY COLUMN v VARCHAR(10)", waits: behind, stmt: del, rows: "[2 2 2]"},
		{ddl: "ALTER TABLE t ADD INDEX iv (v)", waits: behind, stmt: update, rows: "[1 5 1] [2 5 2]"},
		{ddl: "ALTER TABLE t ADD INDEX iv (v)", waits: behind, stmt: insert3, rows: "[1 1 1] [2 2 2] [9 9 9]"},
		{ddl: "ALTER TABLE t ADD INDEX iv (v)", waits: behind, stmt: replace, rows: "[1 3 3] [2 2 2]"},
		// The plan reads index kv, which is gone.
		{ddl: "ALTER TABLE t DROP INDEX kv", waits: behind, stmt: "UPDATE t SET w = 0 WHERE v = 2", rows: "[1 1 1] [2 2 0]"},
		{ddl: "ALTER TABLE t DROP INDEX kv", waits: behind, stmt: "DELETE FROM t WHERE v = 2", rows: "[1 1 1]"},
		// t is now the former t2: the write goes there, and the former t
		// keeps its rows.
		{ddl: "RENAME TABLE t TO t_old, t2 TO t", waits: behind, stmt: update, rows: ""},
		{ddl: "RENAME TABLE t TO t_old, t2 TO t", waits: behind, stmt: insert3, errNum: 1136, rows: ""},
		{ddl: "RENAME TABLE t TO t_old, t2 TO t", waits: behind, stmt: insertC, rows: "[9 9 <nil> <nil>]"},
		{ddl: "RENAME TABLE t TO t_old, t2 TO t", waits: behind, stmt: del, rows: ""},
		{ddl: "DROP TABLE t", waits: behind, stmt: update, errNum: 1146, rows: "-"},
		{ddl: "DROP TABLE t", waits: behind, stmt: insertC, errNum: 1146, rows: "-"},
		{ddl: "DROP TABLE t", waits: behind, stmt: del, errNum: 1146, rows: "-"},

		// A transaction's first statement: its snapshot is taken after
		// the wait (or at the statement's start after the DDL), as
		// InnoDB takes it at the first read.
		{ddl: addC, before: inTxn, waits: behind, stmt: update, rows: "[1 5 1 7] [2 5 2 7]"},
		{ddl: addC, before: inTxn, waits: behind, stmt: read, got: added, rows: added},
		{ddl: addC, before: inTxn, waits: after, stmt: read, got: added, rows: added},
		{ddl: addC, before: inTxn, waits: after, stmt: update, rows: "[1 5 1 7] [2 5 2 7]"},
		{ddl: "ALTER TABLE t DROP INDEX kv", before: inTxn, waits: behind, stmt: "SELECT * FROM t WHERE v = 2", got: "[2 2 2]", rows: "[1 1 1] [2 2 2]"},
		{ddl: "RENAME TABLE t TO t_old, t2 TO t", before: inTxn, waits: behind, stmt: read, got: "", rows: ""},
		{ddl: "DROP TABLE t", before: inTxn, waits: behind, stmt: read, errNum: 1146, rows: "-"},
		{ddl: "DROP TABLE t", before: inTxn, waits: after, stmt: read, errNum: 1146, rows: "-"},
		// A transaction whose snapshot predates the DDL: MySQL's 1412.
		{ddl: addC, before: readOther, waits: behind, stmt: read, errNum: 1412, rows: added},
		{ddl: addC, before: readOther, waits: after, stmt: read, errNum: 1412, rows: added},
		{ddl: addC, before: readOther, waits: behind, stmt: update, errNum: 1412, rows: added},
		{ddl: addC, before: readOther, waits: after, stmt: update, errNum: 1412, rows: added},
		{ddl: addC, before: []string{begin, "INSERT INTO other VALUES (1)"}, waits: behind, stmt: update, errNum: 1412, rows: added},
		{ddl: addC, before: consistent, waits: behind, stmt: read, errNum: 1412, rows: added},
		{ddl: addC, before: consistent, waits: after, stmt: read, errNum: 1412, rows: added},

		// EXECUTE of a statement PREPAREd in SQL is bound again from its
		// text, as MySQL prepares it again.
		{ddl: addC, before: prepared, waits: behind, stmt: "EXECUTE p", rows: "[1 5 1 7] [2 5 2 7]"},
		{ddl: addC, before: prepared3, waits: behind, stmt: "EXECUTE p", errNum: 1136, rows: added},
		{ddl: addC, before: append(prepared, begin), waits: behind, stmt: "EXECUTE p", rows: "[1 5 1 7] [2 5 2 7]"},
		{ddl: "RENAME TABLE t TO t_old, t2 TO t", before: []string{"PREPARE p FROM 'INSERT INTO t (id, v) VALUES (9, 9)'"}, waits: behind, stmt: "EXECUTE p", rows: "[9 9 <nil> <nil>]"},
		// Writes to two tables: both locked before either is written, or,
		// by a trigger, the fired table written first: an autocommit
		// statement runs again as a new transaction; one in a transaction
		// that wrote gets 1412.
		{ddl: addC, before: []string{"INSERT INTO other VALUES (1), (2)"}, waits: behind, stmt: "UPDATE other o JOIN t ON t.id = o.id SET o.id = o.id + 10, t.v = 5", rows: "[1 5 1 7] [2 5 2 7]"},
		{ddl: addC, before: []string{"INSERT INTO other VALUES (1)"}, waits: behind, stmt: "DELETE o, t FROM other o JOIN t ON t.id = o.id", rows: "[2 2 2 7]"},
		{ddl: addC, before: []string{"INSERT INTO other VALUES (1), (2)"}, waits: behind, stmt: "INSERT INTO t (id, v) SELECT id + 10, 0 FROM other", rows: "[1 1 1 7] [2 2 2 7] [11 0 <nil> 7] [12 0 <nil> 7]"},
		{ddl: addC, before: []string{insertTrigger}, waits: behind, stmt: "INSERT INTO other VALUES (5)", rows: "[1 1 1 7] [2 2 2 7] [5 0 <nil> 7]"},
		{ddl: addC, before: []string{updateTrigger}, waits: behind, stmt: "INSERT INTO other VALUES (5)", rows: "[1 6 1 7] [2 6 2 7]"},
		{ddl: addC, before: []string{insertTrigger, begin}, waits: behind, stmt: "INSERT INTO other VALUES (5)", errNum: 1412, rows: added},
		{ddl: addC, before: []string{insertTrigger, begin}, waits: after, stmt: "INSERT INTO other VALUES (5)", rows: "[1 1 1 7] [2 2 2 7] [5 0 <nil> 7]"},
		// A procedure's statements are planned as the CALL runs them.
		{ddl: addC, before: procedure, waits: behind, stmt: "CALL pu()", rows: "[1 5 1 7] [2 5 2 7]"},
		{ddl: addC, before: procedure, waits: after, stmt: "CALL pu()", rows: "[1 5 1 7] [2 5 2 7]"},
		{ddl: addC, before: []string{"CREATE PROCEDURE ps() SELECT * FROM t ORDER BY id", begin}, waits: behind, stmt: "CALL ps()", got: added, rows: added},
		{ddl: addC, before: []string{"CREATE PROCEDURE ps() SELECT * FROM t ORDER BY id", begin, "SELECT * FROM other"}, waits: behind, stmt: "CALL ps()", errNum: 1412, rows: added},
	} {
		name := tc.ddl + "/" + strings.Join(tc.before, "; ") + "/" + tc.stmt
		if !tc.waits {
			name += "/after"
		}
		t.Run(name, func(t *testing.T) {
			d, cs := staleConns(t)
			ddlErr, err, got := staleRun(t, d, cs, tc.ddl, tc.waits, tc.before, tc.stmt)
			require.NoError(t, ddlErr)
			require.Equal(t, tc.errNum, sqlErrNum(err), "%v", err)
			require.Equal(t, tc.got, got)
			writer := cs[2]
			if slices.ContainsFunc(tc.before, func(s string) bool { return s == begin || strings.HasPrefix(s, "START") }) {
				// The transaction goes on (after 1412 too) and commits.
				_, err := writer.Exec(context.Background(), "COMMIT")
				require.NoError(t, err)
			}
			if tc.rows == "-" {
				require.Error(t, d.execErr("SELECT * FROM t"))
			} else {
				require.Equal(t, tc.rows, tableText(d.exec("SELECT * FROM t ORDER BY id")))
			}
			if tc.ddl[:6] == "RENAME" {
				require.Equal(t, "[1 1 1] [2 2 2]", tableText(d.exec("SELECT * FROM t_old ORDER BY id")))
			}
			require.Empty(t, d.s.mdl.rows())
		})
	}
}

// TestStalePlanInTransaction: in a transaction, a write whose metadata
// lock waited for a DDL statement that changed the table runs again planned
// afresh when it is the transaction's first use of a table (its snapshot
// is then taken after the wait, as MySQL takes it at the first read), and
// fails with MySQL's 1412 when the transaction's snapshot predates the
// DDL (it read or wrote another table before); the transaction goes on
// and, rolled back, runs the write on the new definition.
func TestStalePlanInTransaction(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before []string
		errNum int
		rows   string // t after the writer commits
	}{
		{"first statement", []string{"BEGIN"}, 0, "[1 5 1 7] [2 5 2 7]"},
		{"after a read", []string{"BEGIN", "SELECT * FROM other"}, 1412, "[1 1 1 7] [2 2 2 7]"},
		{"after a write", []string{"BEGIN", "INSERT INTO other VALUES (1)"}, 1412, "[1 1 1 7] [2 2 2 7]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			d, cs := staleConns(t)
			ddlErr, err := stalePlanRun(t, d, cs, "ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7",
				append(tc.before, "UPDATE t SET v = 5")...)
			require.NoError(t, ddlErr)
			require.Equal(t, tc.errNum, sqlErrNum(err), "%v", err)
			writer := cs[2]
			_, err = writer.Exec(ctx, "COMMIT")
			require.NoError(t, err)
			require.Equal(t, tc.rows, tableText(d.exec("SELECT * FROM t ORDER BY id")))
			_, err = writer.Exec(ctx, "UPDATE t SET v = 6 WHERE id = 2")
			require.NoError(t, err)
			require.Equal(t, "[[2 6 2 7]]", fmt.Sprint(d.exec("SELECT * FROM t WHERE id = 2")))
			require.Empty(t, d.s.mdl.rows())
		})
	}
}

// TestStalePreparedAfterDDL: a prepared UPDATE executed while an ALTER
// waits, whose lock then waits behind it, runs again planned afresh, as
// the text statement does (TestStalePlanAfterDDL).
func TestStalePreparedAfterDDL(t *testing.T) {
	ctx := context.Background()
	d, cs := staleConns(t)
	holder, alter, writer := cs[0], cs[1], cs[2]
	st, err := writer.Prepare(ctx, "UPDATE t SET v = ?")
	require.NoError(t, err)
	_, err = st.Exec(ctx, Arg{Ordinal: 1, Value: int64(4)})
	require.NoError(t, err)
	_, err = holder.Exec(ctx, "BEGIN")
	require.NoError(t, err)
	queryAll(t, holder, "SELECT * FROM t")
	altered := make(chan error, 1)
	go func() {
		_, err := alter.Exec(ctx, "ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7")
		altered <- err
	}()
	waitQueued(&d.s.mdl, 1)
	wrote := make(chan error, 1)
	go func() {
		_, err := st.Exec(ctx, Arg{Ordinal: 1, Value: int64(5)})
		wrote <- err
	}()
	waitQueued(&d.s.mdl, 2)
	_, err = holder.Exec(ctx, "COMMIT")
	require.NoError(t, err)
	require.NoError(t, <-altered)
	require.NoError(t, <-wrote)
	require.Equal(t, "[1 5 1 7] [2 5 2 7]", tableText(d.exec("SELECT * FROM t ORDER BY id")))
}

// tableText prints rows as "[a b] [c d]".
func tableText(rows []sql.Row) string {
	s := ""
	for i, r := range rows {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprint(r)
	}
	return s
}

// TestRunWriteReplansStale: Store.RunWrite runs again a statement that
// failed because its plan went stale (errPlanChanged), a read or an
// EXECUTE as a write, up to planReruns times, but not a CALL, whose body
// may have committed or returned rows (its statements run again inside:
// planRunner); other errors end it at once.
func TestRunWriteReplansStale(t *testing.T) {
	d := newTestDB(t)
	no := func() bool { return false }
	for _, tc := range []struct {
		query string
		fails int   // runs that fail with err before one succeeds
		err   error // the failures' error
		runs  int
	}{
		{"SELECT * FROM t", 2, errPlanChanged, 3},
		{"EXECUTE p", 1, errPlanChanged, 2},
		{"UPDATE t SET v = 1", 1, errPlanChanged, 2},
		{"  /* c */ SELECT 1", planReruns + 5, errPlanChanged, planReruns + 1},
		{"CALL p()", 1, errPlanChanged, 1},
		{"call p()", 1, errPlanChanged, 1},
		{"SELECT * FROM t", 1, errTableDefChanged, 1},
	} {
		runs := 0
		err := d.s.RunWrite(context.Background(), tc.query, no, no, func() error {
			runs++
			if runs <= tc.fails {
				return tc.err
			}
			return nil
		})
		require.Equal(t, tc.runs, runs, tc.query)
		require.Equal(t, tc.runs <= tc.fails, err != nil, "%s: %v", tc.query, err)
	}
}
