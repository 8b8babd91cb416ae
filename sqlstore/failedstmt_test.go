package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFailedStatementUndone holds statement atomicity inside an explicit
// transaction: a statement that fails, in a trigger it fired or in its own
// rows, leaves nothing of its writes (its own rows, its triggers'), and
// every write of the transaction made before it. Each case runs four times
// on one connection, as text and, where it has arguments, as one prepared
// statement, so that the plan cache and the write templates learn it and
// the later runs take the kept paths; in pessimistic and optimistic
// transactions; committed after the failure (the committed state must be
// the one before the statement) or rolled back to a savepoint taken
// before the transaction's first write (GMS's own statement savepoint
// must leave the session's alone).
func TestFailedStatementUndone(t *testing.T) {
	// In earlier, # is the run's number: its writes differ from run to
	// run, since each committed run keeps them.
	type failCase struct {
		name    string
		setup   []string
		earlier string // a write of the transaction before the statement
		stmt    string // the failing statement
		prep    string // the same with placeholders, run prepared with args
		args    []any
		errNum  int // the statement's MySQL error
	}
	const (
		tables   = "CREATE TABLE t (id INT PRIMARY KEY, k INT)\nCREATE TABLE log (id INT PRIMARY KEY)\nINSERT INTO log VALUES (1)"
		dupEntry = 1062
	)
	updateRows := "INSERT INTO t VALUES (1, 0), (2, 0)"
	deleteRows := "INSERT INTO t VALUES (1, 1), (100, 100), (101, 101), (102, 102), (103, 103)"
	cases := []failCase{
		{
			name:    "insert one row, after trigger",
			setup:   []string{tables, "CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW INSERT INTO log VALUES (NEW.k)"},
			earlier: "INSERT INTO t VALUES (1#, 1#)",
			stmt:    "INSERT INTO t VALUES (5, 1)", prep: "INSERT INTO t VALUES (?, ?)", args: []any{int64(5), int64(1)},
			errNum: dupEntry,
		},
		{
			name:    "insert one row, before trigger",
			setup:   []string{tables, "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW INSERT INTO log VALUES (NEW.k)"},
			earlier: "INSERT INTO t VALUES (1#, 1#)",
			stmt:    "INSERT INTO t VALUES (5, 1)", prep: "INSERT INTO t VALUES (?, ?)", args: []any{int64(5), int64(1)},
			errNum: dupEntry,
		},
		{
			name:    "insert rows, after trigger of the second",
			setup:   []string{tables, "CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW INSERT INTO log VALUES (NEW.k)"},
			earlier: "INSERT INTO t VALUES (1#, 1#)",
			stmt:    "INSERT INTO t VALUES (5, 2), (6, 1)", prep: "INSERT INTO t VALUES (?, ?), (?, ?)", args: []any{int64(5), int64(2), int64(6), int64(1)},
			errNum: dupEntry,
		},
		{
			name:    "insert rows, own duplicate after triggers ran",
			setup:   []string{tables, "CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW INSERT INTO log VALUES (NEW.k)"},
			earlier: "INSERT INTO t VALUES (1#, 1#)",
			stmt:    "INSERT INTO t VALUES (5, 2), (5, 3)", prep: "INSERT INTO t VALUES (?, ?), (?, ?)", args: []any{int64(5), int64(2), int64(5), int64(3)},
			errNum: dupEntry,
		},
		{
			name:    "insert select, after trigger",
			setup:   []string{tables, "CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW INSERT INTO log VALUES (NEW.k)"},
			earlier: "INSERT INTO t VALUES (1#, 1#)",
			stmt:    "INSERT INTO t SELECT 5, 1",
			errNum:  dupEntry,
		},
		{
			name:    "update, after trigger",
			setup:   []string{tables, updateRows, "CREATE TRIGGER tr AFTER UPDATE ON t FOR EACH ROW INSERT INTO log VALUES (NEW.k)"},
			earlier: "UPDATE t SET k = 1# WHERE id = 2",
			stmt:    "UPDATE t SET k = 1 WHERE id = 1", prep: "UPDATE t SET k = ? WHERE id = ?", args: []any{int64(1), int64(1)},
			errNum: dupEntry,
		},
		{
			name:    "update, before trigger",
			setup:   []string{tables, updateRows, "CREATE TRIGGER tr BEFORE UPDATE ON t FOR EACH ROW INSERT INTO log VALUES (NEW.k)"},
			earlier: "UPDATE t SET k = 1# WHERE id = 2",
			stmt:    "UPDATE t SET k = 1 WHERE id = 1", prep: "UPDATE t SET k = ? WHERE id = ?", args: []any{int64(1), int64(1)},
			errNum: dupEntry,
		},
		{
			name:    "delete, after trigger",
			setup:   []string{tables, deleteRows, "CREATE TRIGGER tr AFTER DELETE ON t FOR EACH ROW INSERT INTO log VALUES (OLD.k)"},
			earlier: "DELETE FROM t WHERE id = 10#",
			stmt:    "DELETE FROM t WHERE id = 1", prep: "DELETE FROM t WHERE id = ?", args: []any{int64(1)},
			errNum: dupEntry,
		},
		{
			name:    "delete, before trigger",
			setup:   []string{tables, deleteRows, "CREATE TRIGGER tr BEFORE DELETE ON t FOR EACH ROW INSERT INTO log VALUES (OLD.k)"},
			earlier: "DELETE FROM t WHERE id = 10#",
			stmt:    "DELETE FROM t WHERE id = 1", prep: "DELETE FROM t WHERE id = ?", args: []any{int64(1)},
			errNum: dupEntry,
		},
		{
			name: "insert, check in the trigger",
			setup: []string{tables, "CREATE TABLE log2 (id INT PRIMARY KEY, v INT CHECK (v > 0))",
				"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW BEGIN INSERT INTO log VALUES (NEW.id); INSERT INTO log2 VALUES (NEW.id, NEW.k); END"},
			earlier: "INSERT INTO t VALUES (1#, 1#)",
			stmt:    "INSERT INTO t VALUES (5, -1)", prep: "INSERT INTO t VALUES (?, ?)", args: []any{int64(5), int64(-1)},
			errNum: 3819,
		},
		{
			name: "insert, foreign key in the trigger",
			setup: []string{tables, "CREATE TABLE parent (id INT PRIMARY KEY)", "INSERT INTO parent VALUES (1)",
				"CREATE TABLE child (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES parent (id))",
				"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW INSERT INTO child VALUES (NEW.id, NEW.k)"},
			earlier: "INSERT INTO t VALUES (1#, 1)",
			stmt:    "INSERT INTO t VALUES (5, 99)", prep: "INSERT INTO t VALUES (?, ?)", args: []any{int64(5), int64(99)},
			errNum: 1452,
		},
		{
			name: "insert, foreign key in a trigger block",
			setup: []string{tables, "CREATE TABLE parent (id INT PRIMARY KEY)", "INSERT INTO parent VALUES (1)",
				"CREATE TABLE child (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES parent (id))",
				"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW BEGIN INSERT INTO log VALUES (NEW.id); IF NEW.k > 0 THEN INSERT INTO child VALUES (NEW.id, NEW.k); END IF; END"},
			earlier: "INSERT INTO t VALUES (1#, 1)",
			stmt:    "INSERT INTO t VALUES (5, 99)", prep: "INSERT INTO t VALUES (?, ?)", args: []any{int64(5), int64(99)},
			errNum: 1452,
		},
		{
			name: "delete, foreign key action in a trigger block",
			setup: []string{tables, "CREATE TABLE parent (id INT PRIMARY KEY)", "INSERT INTO parent VALUES (1), (2), (3), (4), (5)",
				"CREATE TABLE child (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE CASCADE)",
				"INSERT INTO child VALUES (1, 1), (2, 2), (3, 3), (4, 4), (5, 5)", deleteRows,
				"CREATE TRIGGER tr AFTER DELETE ON t FOR EACH ROW BEGIN DELETE FROM parent WHERE id = OLD.id - 99; INSERT INTO log VALUES (OLD.k); END"},
			earlier: "DELETE FROM t WHERE id = 10#",
			stmt:    "DELETE FROM t WHERE id = 1", prep: "DELETE FROM t WHERE id = ?", args: []any{int64(1)},
			errNum: dupEntry,
		},
		{
			name: "insert, signal in the trigger",
			setup: []string{tables,
				"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW BEGIN INSERT INTO log VALUES (NEW.id); IF NEW.k < 0 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused'; END IF; END"},
			earlier: "INSERT INTO t VALUES (1#, 1#)",
			stmt:    "INSERT INTO t VALUES (5, -1)", prep: "INSERT INTO t VALUES (?, ?)", args: []any{int64(5), int64(-1)},
			errNum: 1644,
		},
		{
			name: "update, signal in the trigger",
			setup: []string{tables, updateRows,
				"CREATE TRIGGER tr AFTER UPDATE ON t FOR EACH ROW BEGIN INSERT INTO log VALUES (NEW.k); IF NEW.k > 500 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused'; END IF; END"},
			earlier: "UPDATE t SET k = 1# WHERE id = 2",
			stmt:    "UPDATE t SET k = 501 WHERE id = 1", prep: "UPDATE t SET k = ? WHERE id = ?", args: []any{int64(501), int64(1)},
			errNum: 1644,
		},
	}
	for _, c := range cases {
		for _, mode := range []string{"pessimistic", "optimistic"} {
			for _, prepared := range []bool{false, true} {
				if prepared && c.args == nil {
					continue
				}
				for _, savepoint := range []bool{false, true} {
					name := fmt.Sprintf("%s/%s/prepared=%v/savepoint=%v", c.name, mode, prepared, savepoint)
					t.Run(name, func(t *testing.T) {
						ctx := context.Background()
						d := newTestDB(t)
						for _, s := range c.setup {
							for _, q := range strings.Split(s, "\n") {
								d.exec(q)
							}
						}
						e := d.s.OpenEngine()
						defer e.Close()
						conn := e.NewConn()
						defer conn.Close()
						other := e.NewConn()
						defer other.Close()
						for _, cn := range []*Conn{conn, other} {
							require.NoError(t, cn.UseDatabase(ctx, "mydb"))
						}
						exec := func(q string) {
							t.Helper()
							_, err := conn.Exec(ctx, q)
							require.NoError(t, err, q)
						}
						exec("SET strata_txn_mode = '" + mode + "'")
						state := func(cn *Conn) string {
							t.Helper()
							var b strings.Builder
							for _, tbl := range []string{"t", "log", "log2", "parent", "child"} {
								r, err := cn.Query(ctx, "SELECT * FROM "+tbl+" ORDER BY id")
								if err != nil {
									continue // the case has no such table
								}
								fmt.Fprintf(&b, "%s: %v\n", tbl, readAll(t, r))
							}
							return b.String()
						}
						var st *Stmt
						if prepared {
							var err error
							st, err = conn.Prepare(ctx, c.prep)
							require.NoError(t, err)
							defer st.Close()
						}
						fail := func() {
							t.Helper()
							var err error
							if prepared {
								args := make([]Arg, len(c.args))
								for i, v := range c.args {
									args[i] = Arg{Ordinal: i + 1, Value: v}
								}
								_, err = st.Exec(ctx, args...)
							} else {
								_, err = conn.Exec(ctx, c.stmt)
							}
							require.Error(t, err)
							require.EqualValues(t, c.errNum, MySQLError(err).Num, "%v", err)
						}
						for run := range 4 {
							initial := state(other)
							exec("BEGIN")
							if savepoint {
								exec("SAVEPOINT sp")
							}
							exec(strings.ReplaceAll(c.earlier, "#", strconv.Itoa(run)))
							before := state(conn)
							require.NotEqual(t, initial, before, "run %d: the earlier write changed nothing", run)
							fail()
							require.Equal(t, before, state(conn), "run %d: in the transaction after the failed statement", run)
							if savepoint {
								exec("ROLLBACK TO SAVEPOINT sp")
								require.Equal(t, initial, state(conn), "run %d: after ROLLBACK TO SAVEPOINT", run)
								exec("ROLLBACK")
								continue
							}
							exec("COMMIT")
							require.Equal(t, before, state(other), "run %d: committed", run)
						}
					})
				}
			}
		}
	}
}

// TestFiresTriggers: triggerFlags finds the trigger executors of a plan,
// above the statement (AFTER) and in its source (BEFORE), and looks at a
// kept write's or read's plan without allocating: it runs for every
// execution of a prepared select's kept plan.
func TestFiresTriggers(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT)")
	d.exec("CREATE TABLE u (id INT PRIMARY KEY, k INT)")
	d.exec("CREATE TABLE log (id INT PRIMARY KEY)")
	d.exec("CREATE TRIGGER ua AFTER INSERT ON u FOR EACH ROW INSERT INTO log VALUES (NEW.k)")
	d.exec("CREATE TRIGGER ub BEFORE UPDATE ON u FOR EACH ROW INSERT INTO log VALUES (NEW.k)")
	d.exec("CREATE TRIGGER uc BEFORE DELETE ON u FOR EACH ROW INSERT INTO log VALUES (OLD.k)")
	d.exec("CREATE TABLE v (id INT PRIMARY KEY, k INT)")
	d.exec("CREATE TRIGGER vb BEFORE INSERT ON v FOR EACH ROW SET NEW.k = NEW.k + 1")
	for _, c := range []struct {
		q        string
		triggers bool
	}{
		{"INSERT INTO t VALUES (1, 2)", false},
		{"UPDATE t SET k = 1 WHERE id = 1", false},
		{"DELETE FROM t WHERE id = 1", false},
		{"SELECT t.k FROM t JOIN log ON t.id = log.id WHERE t.k > 1 ORDER BY t.k LIMIT 3", false},
		{"INSERT INTO u VALUES (1, 2)", true},
		{"UPDATE u SET k = 1 WHERE id = 1", true},
		{"DELETE FROM u WHERE id = 1", true},
		{"INSERT INTO v VALUES (1, 2)", true},
	} {
		n, err := d.e.AnalyzeQuery(d.ctx, c.q)
		require.NoError(t, err, c.q)
		require.Equal(t, c.triggers, triggerFlags(n) != nil, c.q)
		if !c.triggers {
			require.Zero(t, testing.AllocsPerRun(10, func() { triggerFlags(n) }), c.q)
		}
	}
}
