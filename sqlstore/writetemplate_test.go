package sqlstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/stretchr/testify/require"
)

func TestNewPreparedWrite(t *testing.T) {
	for _, c := range []struct {
		q    string
		want bool
	}{
		{"UPDATE t SET k = k + 1 WHERE id = ?", true},
		{"UPDATE t SET c = ?, k = ? WHERE ? = id", true},
		{"DELETE FROM t WHERE id = ?", true},
		{"INSERT INTO t (id, k) VALUES (?, ?)", true},
		{"INSERT INTO t VALUES (?, ?, ?)", true},
		{"UPDATE t SET k = ? WHERE id > ?", false},
		{"UPDATE t SET k = k + ? WHERE id = ?", false}, // an argument inside an expression
		{"UPDATE t SET k = 1 WHERE id = ? LIMIT 1", false},
		{"UPDATE IGNORE t SET k = 1 WHERE id = ?", false},
		{"UPDATE t, u SET t.k = 1 WHERE t.id = ?", false},
		{"UPDATE t SET k = (SELECT 1) WHERE id = ?", false},
		{"DELETE FROM t WHERE id = ? ORDER BY id", false},
		{"DELETE t FROM t WHERE id = ?", false},
		{"INSERT INTO t VALUES (?, ?), (?, ?)", false},
		{"INSERT INTO t VALUES (?, 1)", false},
		{"INSERT IGNORE INTO t VALUES (?)", false},
		{"INSERT INTO t VALUES (?) ON DUPLICATE KEY UPDATE k = 1", false},
		{"REPLACE INTO t VALUES (?)", false},
		{"INSERT INTO t SELECT ?", false},
		{"SELECT * FROM t WHERE id = ?", false},
	} {
		stmt, err := sqlparser.Parse(c.q)
		require.NoError(t, err, c.q)
		require.Equal(t, c.want, NewPreparedWrite(stmt) != nil, c.q)
	}
}

// writeSchema is the tables of the differential test: unique and
// secondary indexes, a CHECK constraint, a stored generated column, a
// trigger, a foreign key and an AUTO_INCREMENT key.
var writeSchema = []string{
	"CREATE TABLE p (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(6) NOT NULL DEFAULT '', u SMALLINT, UNIQUE KEY uk (u), KEY k_idx (k))",
	"CREATE TABLE q (id INT PRIMARY KEY, k INT, g INT AS (k * 2) STORED, CHECK (k IS NULL OR k < 250))",
	"CREATE TABLE qlog (n INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(40))",
	"CREATE TRIGGER q_upd AFTER UPDATE ON q FOR EACH ROW INSERT INTO qlog (what) VALUES (CONCAT(OLD.k, '>', NEW.k))",
	"CREATE TABLE ch (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))",
	"CREATE TABLE a (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, v VARCHAR(5))",
	// s has none of those: its updates and deletes by key run without
	// GMS's iterators (writedirect.go). c is case-insensitive, b binary.
	"CREATE TABLE s (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(6) NOT NULL DEFAULT '', " +
		"u SMALLINT, d DECIMAL(5,2), e ENUM('x','y','Z'), b VARBINARY(4), UNIQUE KEY su (u), KEY sk (k))",
	"CREATE TABLE t8 (id TINYINT UNSIGNED PRIMARY KEY, v INT)",
}

var writeStatements = []string{
	"UPDATE p SET k = k + 1 WHERE id = ?",
	"UPDATE p SET c = ? WHERE id = ?",
	"UPDATE p SET u = ?, k = ? WHERE id = ?",
	"DELETE FROM p WHERE id = ?",
	"INSERT INTO p (id, k, c, u) VALUES (?, ?, ?, ?)",
	"INSERT INTO p VALUES (?, ?, ?, ?)",
	"UPDATE q SET k = ? WHERE id = ?",
	"INSERT INTO q (id, k) VALUES (?, ?)",
	"DELETE FROM q WHERE id = ?",
	"INSERT INTO ch VALUES (?, ?)",
	"UPDATE ch SET pid = ? WHERE id = ?",
	"INSERT INTO a (id, v) VALUES (?, ?)",
	"INSERT INTO a (v) VALUES (?)",
	"UPDATE a SET v = ? WHERE id = ?",
	"INSERT INTO s (id, k, c, u) VALUES (?, ?, ?, ?)",
	"UPDATE s SET k = k + 1 WHERE id = ?",
	"UPDATE s SET c = ? WHERE id = ?",
	"UPDATE s SET u = ?, k = ? WHERE id = ?",
	"UPDATE s SET d = ?, e = ?, b = ? WHERE id = ?",
	"UPDATE s SET c = UPPER(c), k = k * 2 WHERE id = ?",
	"UPDATE s SET id = ? WHERE id = ?",
	"UPDATE s SET k = ?, c = CONCAT(c, k) WHERE ? = id",
	"DELETE FROM s WHERE id = ?",
	"INSERT INTO t8 VALUES (?, ?)",
	"UPDATE t8 SET v = ? WHERE id = ?",
	"DELETE FROM t8 WHERE id = ?",
}

// randomArg returns an argument of the kinds writes meet: small keys that
// collide, values out of a column's range, NULL, strings too long for a
// column or not numbers, and integers as other Go types.
func randomArg(r *rand.Rand) any {
	switch r.IntN(12) {
	case 0:
		return nil
	case 1:
		return strings.Repeat("x", r.IntN(9))
	case 2:
		return []string{"12", "abc", "7.5", "-3", ""}[r.IntN(5)]
	case 3:
		return []int64{300, 40000, 70000, -40000, 1 << 40, -1}[r.IntN(6)]
	case 4:
		return uint64(r.IntN(20))
	case 5:
		return r.IntN(2) == 0
	case 6:
		return []byte("b" + fmt.Sprint(r.IntN(5)))
	}
	return int64(r.IntN(20))
}

// TestPreparedWriteMatchesPlanned runs the same random prepared writes on
// two stores, one on templates and one planned by GMS at every execution
// (strata_plan_reuse OFF), and requires the same results, errors,
// warnings and final tables, in pessimistic and in optimistic
// transactions.
func TestPreparedWriteMatchesPlanned(t *testing.T) {
	for _, mode := range []string{txnPessimistic, txnOptimistic} {
		t.Run(mode, func(t *testing.T) { testPreparedWriteMatchesPlanned(t, mode) })
	}
}

func testPreparedWriteMatchesPlanned(t *testing.T, mode string) {
	ctx := context.Background()
	open := func(reuse bool) (*Conn, *Session) {
		d := newTestDB(t)
		for _, q := range writeSchema {
			d.exec(q)
		}
		e := d.s.OpenEngine()
		c := e.NewConn()
		t.Cleanup(func() { _ = c.Close(); _ = e.Close() })
		require.NoError(t, c.UseDatabase(ctx, "mydb"))
		_, err := c.Exec(ctx, "SET strata_txn_mode = '"+mode+"'")
		require.NoError(t, err)
		if !reuse {
			_, err = c.Exec(ctx, "SET strata_plan_reuse = OFF")
			require.NoError(t, err)
		}
		return c, c.sess
	}
	fast, fastSess := open(true)
	slow, _ := open(false)
	var fs, ss []*Stmt
	for _, q := range writeStatements {
		a, err := fast.Prepare(ctx, q)
		require.NoError(t, err, q)
		require.NotNil(t, a.wr, q)
		b, err := slow.Prepare(ctx, q)
		require.NoError(t, err, q)
		fs, ss = append(fs, a), append(ss, b)
	}
	r := rand.New(rand.NewPCG(7, 32))
	for i := 0; i < 4000; i++ {
		if i == 2000 {
			// A schema change drops every template.
			for _, c := range []*Conn{fast, slow} {
				_, err := c.Exec(ctx, "ALTER TABLE p ADD COLUMN extra INT DEFAULT 5")
				require.NoError(t, err)
			}
		}
		// Some runs of statements in explicit transactions.
		switch i % 97 {
		case 0, 10:
			q := map[int]string{0: "BEGIN", 10: "COMMIT"}[i%97]
			for _, c := range []*Conn{fast, slow} {
				_, err := c.Exec(ctx, q)
				require.NoError(t, err)
			}
		}
		j := r.IntN(len(fs))
		args := make([]Arg, fs[j].NumInput())
		for k := range args {
			args[k] = Arg{Ordinal: k + 1, Value: randomArg(r)}
		}
		// Mostly plain small integers, so that templates are learned and
		// used.
		if r.IntN(3) > 0 {
			for k := range args {
				args[k].Value = int64(r.IntN(20))
			}
		}
		ra, ea := fs[j].Exec(ctx, args...)
		rb, eb := ss[j].Exec(ctx, args...)
		what := fmt.Sprintf("execution %d: %s %v", i, writeStatements[j], argsString(args))
		if eb != nil {
			require.Error(t, ea, what)
			require.Equal(t, eb.Error(), ea.Error(), what)
			continue
		}
		require.NoError(t, ea, what)
		require.Equal(t, rb, ra, what)
	}
	require.Greater(t, fastSess.plansReused.Load(), int64(1000))
	var direct int
	for _, st := range fs {
		direct += st.wr.directRuns
	}
	require.Greater(t, direct, 500, "executions by key without GMS's iterators")
	for _, tbl := range []string{"p", "q", "qlog", "ch", "a", "s", "t8"} {
		q := "SELECT * FROM " + tbl + " ORDER BY 1"
		require.Equal(t, queryAll(t, slow, q), queryAll(t, fast, q), tbl)
	}
	fa, err := fast.Exec(ctx, "SELECT LAST_INSERT_ID()")
	require.NoError(t, err)
	sa, err := slow.Exec(ctx, "SELECT LAST_INSERT_ID()")
	require.NoError(t, err)
	require.Equal(t, sa, fa)
}

func argsString(args []Arg) string {
	var b strings.Builder
	for _, a := range args {
		fmt.Fprintf(&b, "%T(%v) ", a.Value, a.Value)
	}
	return b.String()
}

// queryAll returns the rows of q as text.
func queryAll(t *testing.T, c *Conn, q string) []string {
	t.Helper()
	rows, err := c.Query(context.Background(), q)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for {
		vals, err := rows.Next()
		if err != nil {
			break
		}
		out = append(out, fmt.Sprint(vals))
	}
	return out
}

// TestPreparedWriteKeptPerConn: a write prepared again on the same
// connection (as database/sql does in every transaction that uses a
// statement) runs on the template its text learned, and another sql_mode
// has its own. The argument equals a literal of the statement, which the
// sentinel arguments of learning tell apart.
func TestPreparedWriteKeptPerConn(t *testing.T) {
	ctx := context.Background()
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT)")
	d.exec("INSERT INTO t VALUES (1, 0)")
	e := d.s.OpenEngine()
	c := e.NewConn()
	t.Cleanup(func() { _ = c.Close(); _ = e.Close() })
	require.NoError(t, c.UseDatabase(ctx, "mydb"))
	const q = "UPDATE t SET k = k + 1 WHERE id = ?"
	var first *PreparedWrite
	var reused int64
	for i := 0; i < 6; i++ {
		_, err := c.Exec(ctx, "BEGIN")
		require.NoError(t, err)
		st, err := c.Prepare(ctx, q)
		require.NoError(t, err)
		if first == nil {
			first = st.wr
		}
		require.Same(t, first, st.wr)
		before := c.sess.plansReused.Load()
		res, err := st.Exec(ctx, Arg{Ordinal: 1, Value: int64(1)}) // equal to the 1 of k + 1
		require.NoError(t, err)
		reused += c.sess.plansReused.Load() - before
		require.Equal(t, int64(1), res.RowsAffected)
		require.NoError(t, st.Close())
		_, err = c.Exec(ctx, "COMMIT")
		require.NoError(t, err)
	}
	require.Equal(t, int64(5), reused) // BEGIN and COMMIT reuse plans of their own
	require.Equal(t, []string{"[1 6]"}, queryAll(t, c, "SELECT * FROM t"))
	_, err := c.Exec(ctx, "SET sql_mode = 'ANSI_QUOTES'")
	require.NoError(t, err)
	st, err := c.Prepare(ctx, q)
	require.NoError(t, err)
	require.NotSame(t, first, st.wr)
}

// BenchmarkPreparedWrite runs prepared point UPDATEs, DELETEs with their
// INSERTs, and INSERTs through a Conn, on kept plans (reuse) and planned
// at every execution (planned).
func BenchmarkPreparedWrite(b *testing.B) {
	for _, mode := range []string{"reuse", "planned"} {
		for _, w := range []struct{ name, q string }{
			{"update", "UPDATE t SET k = k + 1 WHERE id = ?"},
			{"update_str", "UPDATE t SET c = ? WHERE id = ?"},
			{"insert", "INSERT INTO t (id, k, c) VALUES (?, ?, ?)"},
		} {
			b.Run(w.name+"/"+mode, func(b *testing.B) {
				ctx := context.Background()
				d := newTestDB(b)
				d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(20) NOT NULL, KEY k_idx (k))")
				for i := 0; i < 1000; i += 100 {
					var vals []string
					for j := i; j < i+100; j++ {
						vals = append(vals, fmt.Sprintf("(%d, %d, 'c%d')", j, j, j))
					}
					d.exec("INSERT INTO t VALUES " + strings.Join(vals, ","))
				}
				e := d.s.OpenEngine()
				c := e.NewConn()
				defer func() { _ = c.Close(); _ = e.Close() }()
				require.NoError(b, c.UseDatabase(ctx, "mydb"))
				if mode == "planned" {
					_, err := c.Exec(ctx, "SET strata_plan_reuse = OFF")
					require.NoError(b, err)
				}
				st, err := c.Prepare(ctx, w.q)
				require.NoError(b, err)
				args := make([]Arg, st.NumInput())
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					id := int64(i%1000) + 1000
					switch w.name {
					case "update":
						args[0] = Arg{Ordinal: 1, Value: id - 1000}
					case "update_str":
						args[0] = Arg{Ordinal: 1, Value: "s" + strconv.Itoa(i%7)}
						args[1] = Arg{Ordinal: 2, Value: id - 1000}
					case "insert":
						args[0] = Arg{Ordinal: 1, Value: int64(i) + 100000}
						args[1] = Arg{Ordinal: 2, Value: int64(i % 5000)}
						args[2] = Arg{Ordinal: 3, Value: "x"}
					}
					if _, err := st.Exec(ctx, args...); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestPreparedWriteForeignKeyChecks: the analysis leaves foreign keys out
// of a write's plan when foreign_key_checks is off, so a template learned
// then does not serve once it is on again: the write that would break the
// key fails with 1452.
func TestPreparedWriteForeignKeyChecks(t *testing.T) {
	ctx := context.Background()
	d := newTestDB(t)
	d.exec("CREATE TABLE p (id INT PRIMARY KEY)")
	d.exec("CREATE TABLE ch (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))")
	d.exec("INSERT INTO p VALUES (1)")
	e := d.s.OpenEngine()
	c := e.NewConn()
	t.Cleanup(func() { _ = c.Close(); _ = e.Close() })
	require.NoError(t, c.UseDatabase(ctx, "mydb"))
	_, err := c.Exec(ctx, "SET foreign_key_checks = 0")
	require.NoError(t, err)
	st, err := c.Prepare(ctx, "INSERT INTO ch VALUES (?, ?)")
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	for i := int64(1); i <= 4; i++ {
		_, err = st.Exec(ctx, Arg{Ordinal: 1, Value: i}, Arg{Ordinal: 2, Value: int64(100 + i)})
		require.NoError(t, err)
	}
	require.NotZero(t, c.sess.plansReused.Load(), "the template serves while the checks stay off")
	_, err = c.Exec(ctx, "SET foreign_key_checks = 1")
	require.NoError(t, err)
	// Arguments of the literal types the template was learned with.
	_, err = st.Exec(ctx, Arg{Ordinal: 1, Value: int64(10)}, Arg{Ordinal: 2, Value: int64(105)})
	require.Error(t, err)
	require.Equal(t, 1452, int(MySQLError(err).Num), "%v", err)
	_, err = st.Exec(ctx, Arg{Ordinal: 1, Value: int64(11)}, Arg{Ordinal: 2, Value: int64(1)})
	require.NoError(t, err)
	// So for an UPDATE.
	_, err = c.Exec(ctx, "SET foreign_key_checks = 0")
	require.NoError(t, err)
	up, err := c.Prepare(ctx, "UPDATE ch SET pid = ? WHERE id = ?")
	require.NoError(t, err)
	t.Cleanup(func() { _ = up.Close() })
	for i := int64(1); i <= 4; i++ {
		_, err = up.Exec(ctx, Arg{Ordinal: 1, Value: int64(110 + i)}, Arg{Ordinal: 2, Value: i})
		require.NoError(t, err)
	}
	_, err = c.Exec(ctx, "SET foreign_key_checks = 1")
	require.NoError(t, err)
	_, err = up.Exec(ctx, Arg{Ordinal: 1, Value: int64(120)}, Arg{Ordinal: 2, Value: int64(1)})
	require.Error(t, err)
	require.Equal(t, 1452, int(MySQLError(err).Num), "%v", err)
}

// TestPreparedWriteAfterTrigger: a trigger created after a write's
// template was learned fires on the template's next execution, and stops
// once dropped.
func TestPreparedWriteAfterTrigger(t *testing.T) {
	ctx := context.Background()
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT)")
	d.exec("CREATE TABLE tlog (n INT AUTO_INCREMENT PRIMARY KEY, what INT)")
	d.exec("INSERT INTO t VALUES (1, 0)")
	e := d.s.OpenEngine()
	c := e.NewConn()
	t.Cleanup(func() { _ = c.Close(); _ = e.Close() })
	require.NoError(t, c.UseDatabase(ctx, "mydb"))
	st, err := c.Prepare(ctx, "UPDATE t SET k = ? WHERE id = ?")
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	exec := func(k int64) {
		t.Helper()
		_, err := st.Exec(ctx, Arg{Ordinal: 1, Value: k}, Arg{Ordinal: 2, Value: int64(1)})
		require.NoError(t, err)
	}
	for k := int64(1); k <= 4; k++ {
		exec(k)
	}
	require.NotZero(t, c.sess.plansReused.Load())
	_, err = c.Exec(ctx, "CREATE TRIGGER t_upd AFTER UPDATE ON t FOR EACH ROW INSERT INTO tlog (what) VALUES (NEW.k)")
	require.NoError(t, err)
	exec(10)
	exec(11)
	require.Equal(t, []string{"[10]", "[11]"}, queryAll(t, c, "SELECT what FROM tlog ORDER BY n"))
	_, err = c.Exec(ctx, "DROP TRIGGER t_upd")
	require.NoError(t, err)
	exec(12)
	require.Equal(t, []string{"[10]", "[11]"}, queryAll(t, c, "SELECT what FROM tlog ORDER BY n"))
}
