package sqlstore

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"
)

// insertArgPool is the arguments the differential test draws from for any
// column: values of every Go type an argument comes as, fitting some
// columns and not others (out of range, too long, no number, no date, no
// member), NULL, and types the kept plans leave to GMS (a float).
var insertArgPool = []any{
	nil, int64(0), int64(1), int64(-1), int64(127), int64(128), int64(300), int64(70000), int64(1) << 40,
	int64(math.MinInt64), uint64(math.MaxUint64), uint64(7), true, false,
	"", " 3 ", "abc", "12abc", "7", "-5", "1.005", "999.999", "1e2", "nan", "2024-01-02", "2024-02-30",
	"2024-01-02 03:04:05", "a", "b", "c", "x", "abcdefghij", "éé", "1999", "99", "3000",
	[]byte("ab"), []byte("abcde"), []byte{0, 1}, 1.5,
}

// goLiteral returns the argument a client would bind for the SQL literal
// s, false for one this test does not translate.
func goLiteral(s string) (any, bool) {
	switch {
	case s == "NULL":
		return nil, true
	case s == "TRUE":
		return true, true
	case s == "FALSE":
		return false, true
	case strings.HasPrefix(s, "'") && strings.HasSuffix(s, "'") && !strings.ContainsAny(s[1:len(s)-1], "\\'"):
		return s[1 : len(s)-1], true
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, true
	}
	if v, err := strconv.ParseUint(s, 10, 64); err == nil {
		return v, true
	}
	return nil, false
}

// insertArg returns a random argument for column c: one that fits it, a
// key mostly new, or one from the pool; clean, one that fits, a new key.
func insertArg(r *rand.Rand, c column, clean bool) any {
	if c.name == "id" {
		if clean {
			return int64(10 + r.IntN(100000))
		}
		switch r.IntN(10) {
		case 0:
			return nil
		case 1:
			return int64(0)
		case 2:
			return insertArgPool[r.IntN(len(insertArgPool))]
		}
		return int64(10 + r.IntN(300))
	}
	if clean || r.IntN(4) > 0 {
		for range 4 {
			if v, ok := goLiteral(c.lits[r.IntN(max(c.good, 1))]); ok {
				return v
			}
		}
	}
	return insertArgPool[r.IntN(len(insertArgPool))]
}

// TestInsertDirectMatchesPlanned runs random single-row INSERTs, prepared
// with arguments and as text whose literals the plan cache makes
// arguments, into random tables of every column kind (with and without
// AUTO_INCREMENT, defaults, a unique key) under strict and non-strict
// sql_modes and NO_AUTO_VALUE_ON_ZERO, on two connections: one running
// kept INSERT plans without GMS's iterators (insertdirect.go), one
// planning every statement (strata_plan_reuse OFF). Results (affected
// rows, insert id, warning count), errors (code and message), warnings,
// ROW_COUNT(), LAST_INSERT_ID() and the rows stored are the same, also in
// explicit transactions committed or rolled back, in pessimistic and in
// optimistic transactions.
func TestInsertDirectMatchesPlanned(t *testing.T) {
	for _, mode := range []string{txnPessimistic, txnOptimistic} {
		t.Run(mode, func(t *testing.T) { testInsertDirectMatchesPlanned(t, mode) })
	}
}

func testInsertDirectMatchesPlanned(t *testing.T, txnMode string) {
	d := newTestDB(t)
	e := d.s.OpenEngine()
	fast, ref := e.NewConn(), e.NewConn()
	t.Cleanup(func() { _ = fast.Close(); _ = ref.Close(); _ = e.Close() })
	ctx := context.Background()
	require.NoError(t, fast.UseDatabase(ctx, "fa"))
	require.NoError(t, ref.UseDatabase(ctx, "rb"))
	_, err := ref.Exec(ctx, "SET strata_plan_reuse = OFF")
	require.NoError(t, err)
	for _, c := range []*Conn{fast, ref} {
		_, err := c.Exec(ctx, "SET strata_txn_mode = '"+txnMode+"'")
		require.NoError(t, err)
	}

	r := rand.New(rand.NewPCG(11, uint64(len(txnMode))))
	rounds := 20
	if testing.Short() {
		rounds = 8
	}
	total, direct, failed, warned := 0, 0, 0, 0
	for round := range rounds {
		cols := randomColumns(r)
		mode := []string{"", "STRICT_TRANS_TABLES", "STRICT_ALL_TABLES,NO_AUTO_VALUE_ON_ZERO", "NO_AUTO_VALUE_ON_ZERO"}[r.IntN(4)]
		ddl := []string{"DROP TABLE IF EXISTS t", createTable(r, cols), fmt.Sprintf("SET sql_mode = '%s'", mode)}
		for _, q := range ddl {
			for _, c := range []*Conn{fast, ref} {
				_, err := c.Exec(ctx, q)
				require.NoError(t, err, q)
			}
		}
		// Three column lists: all (no list), all named, some.
		lists := [][]column{cols, cols, nil}
		for _, c := range cols {
			if c.name == "id" || r.IntN(2) == 0 {
				lists[2] = append(lists[2], c)
			}
		}
		var fs, rs []*Stmt
		var texts []func(args []any) string
		for i, list := range lists {
			names := make([]string, len(list))
			marks := make([]string, len(list))
			for j, c := range list {
				names[j], marks[j] = c.name, "?"
			}
			head := "INSERT INTO t"
			if i > 0 {
				head += " (" + strings.Join(names, ", ") + ")"
			}
			q := head + " VALUES (" + strings.Join(marks, ", ") + ")"
			a, err := fast.Prepare(ctx, q)
			require.NoError(t, err, q)
			require.NotNil(t, a.wr, q)
			b, err := ref.Prepare(ctx, q)
			require.NoError(t, err, q)
			fs, rs = append(fs, a), append(rs, b)
			texts = append(texts, func(args []any) string {
				vals := make([]string, len(args))
				for j, v := range args {
					vals[j] = sqlLiteral(v)
				}
				return head + " VALUES (" + strings.Join(vals, ", ") + ")"
			})
		}
		inTxn := false
		for i := range 120 {
			if !inTxn && r.IntN(15) == 0 || inTxn && r.IntN(6) == 0 {
				q := "BEGIN"
				if inTxn {
					q = []string{"COMMIT", "ROLLBACK"}[r.IntN(2)]
				}
				inTxn = !inTxn
				for _, c := range []*Conn{fast, ref} {
					_, err := c.Exec(ctx, q)
					require.NoError(t, err, q)
				}
			}
			j := r.IntN(len(lists))
			vals := make([]any, len(lists[j]))
			clean := r.IntN(2) == 0
			for k, c := range lists[j] {
				vals[k] = insertArg(r, c, clean)
			}
			var got, want outcome
			var what string
			if r.IntN(3) == 0 {
				q := texts[j](vals)
				what = q
				got, want = execOnly(fast, q, nil), execOnly(ref, q, nil)
			} else {
				args := make([]Arg, len(vals))
				for k, v := range vals {
					args[k] = Arg{Ordinal: k + 1, Value: v}
				}
				what = fs[j].query + " " + argsString(args)
				got, want = stmtOutcome(fs[j], args), stmtOutcome(rs[j], args)
			}
			what = fmt.Sprintf("round %d (sql_mode '%s'), %s, execution %d: %s", round, mode, ddl[1], i, what)
			// ROW_COUNT() is the INSERT's until another statement runs:
			// read it, or the warnings, after each.
			if i%2 == 0 {
				got.Warnings = connRows(t, fast, "SELECT ROW_COUNT(), LAST_INSERT_ID()")
				want.Warnings = connRows(t, ref, "SELECT ROW_COUNT(), LAST_INSERT_ID()")
			} else {
				got.Warnings = append(connRows(t, fast, "SHOW WARNINGS"), connRows(t, fast, "SELECT LAST_INSERT_ID()")...)
				want.Warnings = append(connRows(t, ref, "SHOW WARNINGS"), connRows(t, ref, "SELECT LAST_INSERT_ID()")...)
			}
			require.Equal(t, want, got, what)
			total++
			if got.Err != "" {
				failed++
			} else if got.Result.Warnings > 0 {
				warned++
			}
		}
		if inTxn {
			for _, c := range []*Conn{fast, ref} {
				_, err := c.Exec(ctx, "COMMIT")
				require.NoError(t, err)
			}
		}
		require.Equal(t, tableRows(t, ref), tableRows(t, fast), "round %d: rows of %s", round, ddl[1])
		for k := range fs {
			for _, tm := range fs[k].wr.tmpls {
				if tm.insert == nil {
					t.Logf("not direct: %s: %s", ddl[1], fs[k].query)
				}
			}
			require.NoError(t, fs[k].Close())
			require.NoError(t, rs[k].Close())
		}
	}
	for _, p := range fast.writes {
		direct += p.directRuns
	}
	t.Logf("%d statements: %d run without GMS's iterators, %d failed, %d with warnings", total, direct, failed, warned)
	require.Greater(t, direct, total/5, "too few statements took the direct path")
	require.Greater(t, failed, total/10, "too few statements failed")
	require.Greater(t, warned, total/20, "too few statements warned")
}

// sqlLiteral is v written as an SQL literal.
func sqlLiteral(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	case []byte:
		return fmt.Sprintf("X'%x'", x)
	case bool:
		if x {
			return "TRUE"
		}
		return "FALSE"
	}
	return fmt.Sprint(v)
}

// execOnly runs q on c and returns its result or error.
func execOnly(c *Conn, q string, args []Arg) outcome {
	var o outcome
	res, err := c.Exec(context.Background(), q, args...)
	if err != nil {
		o.Err = errorText(err)
	} else {
		o.Result = res
	}
	return o
}

// stmtOutcome runs st with args and returns its result or error.
func stmtOutcome(st *Stmt, args []Arg) outcome {
	var o outcome
	res, err := st.Exec(context.Background(), args...)
	if err != nil {
		o.Err = errorText(err)
	} else {
		o.Result = res
	}
	return o
}

// errorText is an error's MySQL code and message.
func errorText(err error) string {
	se := MySQLError(err)
	return fmt.Sprintf("%d %s: %s", se.Num, se.State, err.Error())
}

// insertCase is a prepared INSERT, whether it runs without GMS's iterators,
// and the arguments of its executions.
type insertCase struct {
	q      string
	direct bool
	args   [][]any
}

// TestInsertDirectTaken: a kept single-row INSERT into a plain table runs
// without GMS's iterators; into a table with a trigger, a CHECK
// constraint, a foreign key or a generated column, or with IGNORE, it keeps
// GMS's path. Either way its results, LAST_INSERT_ID and rows are those of
// planning, also when a kept plan learned with an explicit AUTO_INCREMENT
// value runs with 0 or NULL (the statement then generates the value and
// sets LAST_INSERT_ID, as analysis decides from the literal).
func TestInsertDirectTaken(t *testing.T) {
	schema := []string{
		"CREATE TABLE plain (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(8) NOT NULL DEFAULT 'd', w DOUBLE DEFAULT -0)",
		"CREATE TABLE parent (id INT PRIMARY KEY)",
		"INSERT INTO parent VALUES (1), (2)",
		"CREATE TABLE trg (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(8))",
		"CREATE TABLE trglog (n INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(20))",
		"CREATE TRIGGER trg_ins AFTER INSERT ON trg FOR EACH ROW INSERT INTO trglog (what) VALUES (NEW.v)",
		"CREATE TABLE chk (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(8), CHECK (v <> 'bad'))",
		"CREATE TABLE fk (id INT AUTO_INCREMENT PRIMARY KEY, v INT, FOREIGN KEY (v) REFERENCES parent (id))",
		"CREATE TABLE gen (id INT AUTO_INCREMENT PRIMARY KEY, v INT, g INT AS (v * 2) STORED)",
		"CREATE TABLE expr (id INT AUTO_INCREMENT PRIMARY KEY, v INT, e INT DEFAULT (v + 1))",
		"CREATE TABLE kinds (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, j JSON, s SET('x','y') DEFAULT 'x', " +
			"tm TIME, ts TIMESTAMP NULL, b BLOB, de DECIMAL(6,3) NOT NULL DEFAULT 1.5, f FLOAT, u VARCHAR(3), UNIQUE KEY uu (u), " +
			"l1 VARCHAR(3) CHARACTER SET latin1, ch CHAR(2), tt TINYTEXT)",
	}
	cases := []insertCase{
		{"INSERT INTO plain (id, v) VALUES (?, ?)", true, [][]any{{int64(5), "a"}, {int64(6), "b"}, {int64(0), "c"}, {nil, "d"}, {int64(7), "e"}, {int64(0), "f"}, {int64(5), "dup"}, {int64(20), "toolongvalue"}}},
		{"INSERT INTO plain (v) VALUES (?)", true, [][]any{{"g"}, {"h"}, {"i"}, {nil}}},
		{"INSERT INTO plain VALUES (?, ?, ?)", true, [][]any{{int64(40), "j", "1.5"}, {int64(41), "k", "-0"}, {int64(0), "l", int64(3)}, {nil, "m", nil}}},
		{"INSERT INTO trg (id, v) VALUES (?, ?)", false, [][]any{{int64(5), "a"}, {int64(6), "b"}, {int64(0), "c"}, {nil, "d"}}},
		{"INSERT INTO chk (id, v) VALUES (?, ?)", false, [][]any{{int64(5), "a"}, {int64(6), "b"}, {int64(0), "bad"}, {int64(0), "c"}}},
		{"INSERT INTO fk (id, v) VALUES (?, ?)", false, [][]any{{int64(5), int64(1)}, {int64(6), int64(2)}, {int64(0), int64(3)}, {int64(0), int64(1)}}},
		{"INSERT INTO gen (id, v) VALUES (?, ?)", false, [][]any{{int64(5), int64(1)}, {int64(6), int64(2)}, {int64(0), int64(3)}}},
		{"INSERT INTO expr (id, v) VALUES (?, ?)", false, [][]any{{int64(5), int64(1)}, {int64(6), int64(2)}, {int64(0), int64(3)}}},
		{"INSERT INTO kinds (id, j, s, tm, ts, b, de, f, u) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", true, [][]any{
			{nil, `{"a": 1}`, "x,y", "10:11:12", "2024-01-02 03:04:05", []byte{0, 1, 2}, "12.3456", "1.5", "a"},
			{int64(0), `[1, 2]`, "y", "25:00:00", nil, []byte("b"), int64(7), int64(3), "b"},
			{int64(0), `not json`, "x", "10:11:12", nil, nil, "1", "2", "c"},
			{int64(0), `{}`, "z", "10:11:12", nil, nil, "1", "2", "d"},
			{int64(0), `{}`, "x", "bad", nil, nil, "1", "2", "e"},
			{int64(0), `{}`, "x", "10:11:12", "2024-13-45", nil, "1", "2", "f"},
			{int64(0), `{}`, "x", "10:11:12", nil, nil, "1000", "2", "g"},
			{int64(0), `{}`, "x", "10:11:12", nil, nil, "abc", "2", "h"},
			{int64(0), `{}`, "x", "10:11:12", nil, nil, "1", "1e39", "i"},
			{int64(0), `{}`, "x", "10:11:12", nil, nil, nil, "2", "j"},
			{int64(0), `{}`, "x", "10:11:12", nil, nil, "1", "2", "a"},
			{int64(0), `{}`, "x", "10:11:12", nil, nil, "1", "2", "long"},
			{int64(100), `{}`, "x", "10:11:12", nil, nil, "1", "2", "k"},
			{int64(-1), `{}`, "x", "10:11:12", nil, nil, "1", "2", "l"},
			{int64(0), `{}`, "x", "10:11:12", nil, nil, "1", "2", nil},
		}},
		{"INSERT INTO kinds (l1, ch, tt) VALUES (?, ?, ?)", true, [][]any{
			{"abc", "ab", "t"}, {"éé", "éé", "é"}, {"ééé", "ab ", "x"}, {"abcd", "abc", "y"}, {"a\xff", "\xff", "\xff"},
			{"ab", "a", strings.Repeat("é", 128)}, {"ab", "a", strings.Repeat("é", 127) + "e"}, {"ab", "a", strings.Repeat("t", 256)},
			{[]byte("ab"), []byte("é"), []byte("t")}, {"ab", "a\x00", "z"}, {int64(12), int64(1), int64(123)},
		}},
		{"INSERT IGNORE INTO plain (id, v) VALUES (?, ?)", false, [][]any{{int64(50), "a"}, {int64(51), "b"}, {int64(50), "c"}}},
	}
	ctx := context.Background()
	open := func(reuse bool) *Conn {
		d := newTestDB(t)
		for _, q := range schema {
			d.exec(q)
		}
		e := d.s.OpenEngine()
		c := e.NewConn()
		t.Cleanup(func() { _ = c.Close(); _ = e.Close() })
		require.NoError(t, c.UseDatabase(ctx, "mydb"))
		if !reuse {
			_, err := c.Exec(ctx, "SET strata_plan_reuse = OFF")
			require.NoError(t, err)
		}
		return c
	}
	for _, mode := range []string{"STRICT_TRANS_TABLES", ""} {
		t.Run("sql_mode="+mode, func(t *testing.T) { testInsertDirectTaken(t, open, cases, mode) })
	}
}

func testInsertDirectTaken(t *testing.T, open func(bool) *Conn, cases []insertCase, mode string) {
	ctx := context.Background()
	fast, ref := open(true), open(false)
	for _, c := range []*Conn{fast, ref} {
		_, err := c.Exec(ctx, "SET sql_mode = '"+mode+"'")
		require.NoError(t, err)
	}
	for _, tc := range cases {
		a, err := fast.Prepare(ctx, tc.q)
		require.NoError(t, err, tc.q)
		b, err := ref.Prepare(ctx, tc.q)
		require.NoError(t, err, tc.q)
		for i, vals := range tc.args {
			args := make([]Arg, len(vals))
			for k, v := range vals {
				args[k] = Arg{Ordinal: k + 1, Value: v}
			}
			what := fmt.Sprintf("%s %s", tc.q, argsString(args))
			got, want := stmtOutcome(a, args), stmtOutcome(b, args)
			// ROW_COUNT() after one, the warnings after the next (a
			// statement clears them).
			after := "SELECT ROW_COUNT(), LAST_INSERT_ID()"
			if i%2 == 1 {
				after = "SHOW WARNINGS"
			}
			got.Warnings, want.Warnings = connRows(t, fast, after), connRows(t, ref, after)
			require.Equal(t, want, got, what)
		}
		if a.wr != nil {
			if tc.direct {
				require.Positive(t, a.wr.directRuns, tc.q)
			} else {
				require.Zero(t, a.wr.directRuns, tc.q)
			}
		} else {
			require.False(t, tc.direct, tc.q)
		}
	}
	for _, tbl := range []string{"plain", "trg", "trglog", "chk", "fk", "gen", "expr", "kinds"} {
		q := "SELECT * FROM " + tbl + " ORDER BY 1"
		require.Equal(t, queryAll(t, ref, q), queryAll(t, fast, q), tbl)
	}
}

// TestInsertDirectReadOnlyAndLocks: a direct INSERT in a READ ONLY
// transaction fails with 1792 before it takes the table's metadata lock or
// a value of its AUTO_INCREMENT counter; one whose metadata lock times out
// fails with 1205 and asks again at its next execution.
func TestInsertDirectReadOnlyAndLocks(t *testing.T) {
	ctx := context.Background()
	d, e, c := directConn(t, txnPessimistic)
	other := directConnOn(t, e, txnPessimistic)
	ins, err := c.Prepare(ctx, "INSERT INTO t (id, k, c) VALUES (?, ?, ?)")
	require.NoError(t, err)
	for i := int64(200); i < 204; i++ {
		_, err := ins.Exec(ctx, Arg{Ordinal: 1, Value: i}, Arg{Ordinal: 2, Value: int64(1)}, Arg{Ordinal: 3, Value: "x"})
		require.NoError(t, err)
	}
	require.Positive(t, ins.wr.directRuns)
	before := ins.wr.directRuns
	_, err = c.Exec(ctx, "START TRANSACTION READ ONLY")
	require.NoError(t, err)
	_, err = ins.Exec(ctx, Arg{Ordinal: 1, Value: int64(300)}, Arg{Ordinal: 2, Value: int64(1)}, Arg{Ordinal: 3, Value: "x"})
	var me *mysql.SQLError
	require.ErrorAs(t, err, &me)
	require.Equal(t, 1792, me.Num, err.Error())
	for _, q := range []string{"SET innodb_lock_wait_timeout = 1", "SET lock_wait_timeout = 1", "ALTER TABLE t ADD COLUMN extra INT"} {
		_, err := other.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	_, err = c.Exec(ctx, "COMMIT")
	require.NoError(t, err)

	// The ALTER dropped the template: learned again, then kept.
	for i := int64(204); i < 208; i++ {
		_, err := ins.Exec(ctx, Arg{Ordinal: 1, Value: i}, Arg{Ordinal: 2, Value: int64(1)}, Arg{Ordinal: 3, Value: "x"})
		require.NoError(t, err)
	}
	require.Greater(t, ins.wr.directRuns, before)
	db, err := d.s.Provider().Database(d.ctx, "mydb")
	require.NoError(t, err)
	tbl, ok, err := db.GetTableInsensitive(d.ctx, "t")
	require.NoError(t, err)
	require.True(t, ok)
	id := tbl.(*Table).def.id
	build := mdlOwner()
	_, err = d.s.mdl.acquire(context.Background(), build, id, mdlSharedNoWrite, time.Hour)
	require.NoError(t, err)
	for _, q := range []string{"SET lock_wait_timeout = 1", "BEGIN"} {
		_, err := c.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	_, err = ins.Exec(ctx, Arg{Ordinal: 1, Value: int64(301)}, Arg{Ordinal: 2, Value: int64(1)}, Arg{Ordinal: 3, Value: "x"})
	require.ErrorAs(t, err, &me)
	require.Equal(t, mysql.ERLockWaitTimeout, me.Num, err.Error())
	d.s.mdl.release(build, id)
	_, err = ins.Exec(ctx, Arg{Ordinal: 1, Value: int64(301)}, Arg{Ordinal: 2, Value: int64(1)}, Arg{Ordinal: 3, Value: "x"})
	require.NoError(t, err)
	_, err = c.Exec(ctx, "ROLLBACK")
	require.NoError(t, err)
	require.Empty(t, queryAll(t, c, "SELECT id FROM t WHERE id >= 300"))
	require.Equal(t, []string{"[8]"}, queryAll(t, c, "SELECT COUNT(*) FROM t WHERE id >= 200"))
}

// TestInsertDirectAllocs: a kept single-row INSERT makes no GMS iterator
// and allocates a bounded number of objects per execution (the statement's
// context and arguments, the engine transaction, its batch and commit),
// where GMS's path made about 170.
func TestInsertDirectAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts do not hold in race builds")
	}
	ctx := context.Background()
	d := newTestDB(t)
	d.exec("CREATE TABLE sb (id INT AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k))")
	e := d.s.OpenEngine()
	t.Cleanup(func() { _ = e.Close() })
	c := directConnOn(t, e, txnPessimistic)
	st, err := c.Prepare(ctx, "INSERT INTO sb (id, k, c, pad) VALUES (?, ?, ?, ?)")
	require.NoError(t, err)
	c120, pad := strings.Repeat("c", 120), strings.Repeat("p", 60)
	args := []Arg{{Ordinal: 1, Value: int64(0)}, {Ordinal: 2, Value: int64(5)}, {Ordinal: 3, Value: c120}, {Ordinal: 4, Value: pad}}
	for range 3 {
		_, err := st.Exec(ctx, args...)
		require.NoError(t, err)
	}
	before := st.wr.directRuns
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := st.Exec(ctx, args...); err != nil {
			t.Fatal(err)
		}
	})
	require.Equal(t, 201, st.wr.directRuns-before)
	t.Logf("%.0f allocations per INSERT", allocs)
	require.LessOrEqual(t, allocs, 40.0)
	require.Equal(t, []string{"[204]"}, queryAll(t, c, "SELECT MAX(id) FROM sb"))
	res, err := st.Exec(ctx, args...)
	require.NoError(t, err)
	require.Equal(t, Result{RowsAffected: 1, LastInsertID: 205}, res)
}

// TestInsertDirectConcurrent: connections inserting into one table with an
// AUTO_INCREMENT key at once, on kept plans without GMS's iterators, get
// distinct values and lose no row, in both transaction modes; colliding
// explicit keys fail with 1062 for all but one.
func TestInsertDirectConcurrent(t *testing.T) {
	for _, mode := range []string{txnPessimistic, txnOptimistic} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			_, e, c0 := directConn(t, mode)
			_, err := c0.Exec(ctx, "CREATE TABLE ai (id INT AUTO_INCREMENT PRIMARY KEY, who INT NOT NULL, n INT NOT NULL)")
			require.NoError(t, err)
			const conns, each = 4, 100
			var wg sync.WaitGroup
			errs := make(chan error, conns)
			direct := make([]int, conns)
			dups := make([]int, conns)
			for w := range conns {
				c := directConnOn(t, e, mode)
				wg.Add(1)
				go func() {
					defer wg.Done()
					ai, err := c.Prepare(ctx, "INSERT INTO ai (who, n) VALUES (?, ?)")
					if err != nil {
						errs <- err
						return
					}
					defer ai.Close()
					key, err := c.Prepare(ctx, "INSERT INTO t (id, k, c) VALUES (?, ?, ?)")
					if err != nil {
						errs <- err
						return
					}
					defer key.Close()
					for i := range each {
						if _, err := ai.Exec(ctx, Arg{Ordinal: 1, Value: int64(w)}, Arg{Ordinal: 2, Value: int64(i)}); err != nil {
							errs <- err
							return
						}
						_, err := key.Exec(ctx, Arg{Ordinal: 1, Value: int64(1000 + i)}, Arg{Ordinal: 2, Value: int64(w)}, Arg{Ordinal: 3, Value: "x"})
						if err != nil {
							if MySQLError(err).Num != mysql.ERDupEntry {
								errs <- err
								return
							}
							dups[w]++
						}
					}
					direct[w] = ai.wr.directRuns + key.wr.directRuns
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			for _, n := range direct {
				require.Greater(t, n, each)
			}
			total := 0
			for _, n := range dups {
				total += n
			}
			require.Equal(t, (conns-1)*each, total)
			require.Equal(t, []string{fmt.Sprintf("[%d %d %d]", conns*each, conns*each, conns*each)},
				queryAll(t, c0, "SELECT COUNT(*), COUNT(DISTINCT id), MAX(id) FROM ai"))
			require.Equal(t, []string{fmt.Sprint("[", each, "]")}, queryAll(t, c0, "SELECT COUNT(*) FROM t WHERE id >= 1000"))
		})
	}
}

// TestInsertDirectAfterAlter: a direct INSERT whose metadata lock waited
// for an ALTER that changed the table is planned afresh, and writes the
// row in the table's new definition (the new column's default).
func TestInsertDirectAfterAlter(t *testing.T) {
	ctx := context.Background()
	d, e, c := directConn(t, txnPessimistic)
	holder := directConnOn(t, e, txnPessimistic)
	alter := directConnOn(t, e, txnPessimistic)
	ins, err := c.Prepare(ctx, "INSERT INTO t (id, k, c) VALUES (?, ?, ?)")
	require.NoError(t, err)
	for i := int64(200); i < 204; i++ {
		_, err := ins.Exec(ctx, Arg{Ordinal: 1, Value: i}, Arg{Ordinal: 2, Value: int64(1)}, Arg{Ordinal: 3, Value: "x"})
		require.NoError(t, err)
	}
	require.Positive(t, ins.wr.directRuns)
	for _, q := range []string{"BEGIN", "UPDATE t SET k = 5 WHERE id = 50"} {
		_, err := holder.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	altered := make(chan error, 1)
	go func() {
		_, err := alter.Exec(ctx, "ALTER TABLE t ADD COLUMN extra INT NOT NULL DEFAULT 9")
		altered <- err
	}()
	waitQueued(&d.s.mdl, 1)
	inserted := make(chan error, 1)
	go func() {
		_, err := ins.Exec(ctx, Arg{Ordinal: 1, Value: int64(300)}, Arg{Ordinal: 2, Value: int64(2)}, Arg{Ordinal: 3, Value: "y"})
		inserted <- err
	}()
	waitQueued(&d.s.mdl, 2)
	_, err = holder.Exec(ctx, "COMMIT")
	require.NoError(t, err)
	require.NoError(t, <-altered)
	require.NoError(t, <-inserted)
	require.Equal(t, []string{"[300 2 y 9]"}, queryAll(t, c, "SELECT id, k, c, extra FROM t WHERE id = 300"))
	before := ins.wr.directRuns
	for i := int64(301); i < 305; i++ {
		_, err := ins.Exec(ctx, Arg{Ordinal: 1, Value: i}, Arg{Ordinal: 2, Value: int64(3)}, Arg{Ordinal: 3, Value: "z"})
		require.NoError(t, err)
	}
	require.Greater(t, ins.wr.directRuns, before)
	require.Equal(t, []string{"[4 9]"}, queryAll(t, c, "SELECT COUNT(*), MIN(extra) FROM t WHERE id > 300"))
}
