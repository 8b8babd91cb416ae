package sqlstore

import (
	"context"
	"fmt"
	"testing"

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
	ctx := context.Background()
	holder, alter, writer := cs[0], cs[1], cs[2]
	_, err := holder.Exec(ctx, "BEGIN")
	require.NoError(t, err)
	queryAll(t, holder, "SELECT * FROM t")
	for _, w := range writes[:len(writes)-1] {
		_, err := writer.Exec(ctx, w)
		require.NoError(t, err, w)
	}
	altered := make(chan error, 1)
	go func() {
		_, err := alter.Exec(ctx, ddl)
		altered <- err
	}()
	waitQueued(&d.s.mdl, 1) // the DDL's PENDING lock
	wrote := make(chan error, 1)
	go func() {
		_, err := writer.Exec(ctx, writes[len(writes)-1])
		wrote <- err
	}()
	waitQueued(&d.s.mdl, 2) // and the write's, behind it
	_, err = holder.Exec(ctx, "COMMIT")
	require.NoError(t, err)
	return <-altered, <-wrote
}

// TestStalePlanAfterDDL: an autocommit write planned on a table's
// definition, whose metadata lock then waited for a DDL statement that
// changed the table, runs again planned on the new definition, as MySQL
// prepares it again: an UPDATE or DELETE takes effect on the table as it
// is now (it silently matched nothing after a copying ALTER, or wrote the
// renamed table), an INSERT whose values no longer fit the columns gets
// 1136 (it failed with a codec error), a write to a dropped table 1146.
// No statement writes rows encoded for another definition.
func TestStalePlanAfterDDL(t *testing.T) {
	const (
		update  = "UPDATE t SET v = 5"
		insert3 = "INSERT INTO t VALUES (9, 9, 9)"
		insertC = "INSERT INTO t (id, v) VALUES (9, 9)"
		del     = "DELETE FROM t WHERE id = 1"
		replace = "REPLACE INTO t VALUES (1, 3, 3)"
	)
	for _, tc := range []struct {
		ddl, write string
		errNum     int
		rows       string // t afterwards
	}{
		{"ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7", update, 0, "[1 5 1 7] [2 5 2 7]"},
		{"ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7", insert3, 1136, "[1 1 1 7] [2 2 2 7]"},
		{"ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7", insertC, 0, "[1 1 1 7] [2 2 2 7] [9 9 <nil> 7]"},
		{"ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7", del, 0, "[2 2 2 7]"},
		{"ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7", replace, 1136, "[1 1 1 7] [2 2 2 7]"},
		{"ALTER TABLE t DROP COLUMN w", update, 0, "[1 5] [2 5]"},
		{"ALTER TABLE t DROP COLUMN w", insert3, 1136, "[1 1] [2 2]"},
		{"ALTER TABLE t DROP COLUMN w", insertC, 0, "[1 1] [2 2] [9 9]"},
		{"ALTER TABLE t DROP COLUMN w", del, 0, "[2 2]"},
		{"ALTER TABLE t MODIFY COLUMN v VARCHAR(10)", update, 0, "[1 5 1] [2 5 2]"},
		{"ALTER TABLE t MODIFY COLUMN v VARCHAR(10)", insert3, 0, "[1 1 1] [2 2 2] [9 9 9]"},
		{"ALTER TABLE t MODIFY COLUMN v VARCHAR(10)", del, 0, "[2 2 2]"},
		{"ALTER TABLE t ADD INDEX iv (v)", update, 0, "[1 5 1] [2 5 2]"},
		{"ALTER TABLE t ADD INDEX iv (v)", insert3, 0, "[1 1 1] [2 2 2] [9 9 9]"},
		{"ALTER TABLE t ADD INDEX iv (v)", replace, 0, "[1 3 3] [2 2 2]"},
		// The plan reads index kv, which is gone.
		{"ALTER TABLE t DROP INDEX kv", "UPDATE t SET w = 0 WHERE v = 2", 0, "[1 1 1] [2 2 0]"},
		{"ALTER TABLE t DROP INDEX kv", "DELETE FROM t WHERE v = 2", 0, "[1 1 1]"},
		// t is now the former t2: the write goes there, and the former t
		// keeps its rows.
		{"RENAME TABLE t TO t_old, t2 TO t", update, 0, ""},
		{"RENAME TABLE t TO t_old, t2 TO t", insert3, 1136, ""},
		{"RENAME TABLE t TO t_old, t2 TO t", insertC, 0, "[9 9 <nil> <nil>]"},
		{"RENAME TABLE t TO t_old, t2 TO t", del, 0, ""},
		{"DROP TABLE t", update, 1146, "-"},
		{"DROP TABLE t", insertC, 1146, "-"},
		{"DROP TABLE t", del, 1146, "-"},
	} {
		t.Run(tc.ddl+"/"+tc.write, func(t *testing.T) {
			d, cs := staleConns(t)
			ddlErr, err := stalePlanRun(t, d, cs, tc.ddl, tc.write)
			require.NoError(t, ddlErr)
			require.Equal(t, tc.errNum, sqlErrNum(err), "%v", err)
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

// TestStaleReadInTransaction: a transaction's first read of a table, which
// waited for a copying ALTER of it, fails with 1412 rather than read the
// old definition's place, where no rows are left (it returned none); the
// transaction then reads the table as altered.
func TestStaleReadInTransaction(t *testing.T) {
	ctx := context.Background()
	d, cs := staleConns(t)
	holder, alter, reader := cs[0], cs[1], cs[2]
	_, err := holder.Exec(ctx, "BEGIN")
	require.NoError(t, err)
	queryAll(t, holder, "SELECT * FROM t")
	altered := make(chan error, 1)
	go func() {
		_, err := alter.Exec(ctx, "ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7")
		altered <- err
	}()
	waitQueued(&d.s.mdl, 1)
	_, err = reader.Exec(ctx, "BEGIN")
	require.NoError(t, err)
	read := make(chan error, 1)
	go func() {
		rows, err := reader.Query(ctx, "SELECT * FROM t")
		if err == nil {
			for {
				var r []any
				if r, err = rows.Next(); r == nil || err != nil {
					break
				}
				err = fmt.Errorf("read %v", r)
				break
			}
			_ = rows.Close()
		}
		read <- err
	}()
	waitQueued(&d.s.mdl, 2)
	_, err = holder.Exec(ctx, "COMMIT")
	require.NoError(t, err)
	require.NoError(t, <-altered)
	err = <-read
	require.Equal(t, 1412, sqlErrNum(err), "%v", err)
	require.Equal(t, []string{"[1 1 1 7]", "[2 2 2 7]"}, queryAll(t, reader, "SELECT * FROM t ORDER BY id"))
	_, err = reader.Exec(ctx, "COMMIT")
	require.NoError(t, err)
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
