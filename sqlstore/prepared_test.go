package sqlstore

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/stretchr/testify/require"
)

// preparedStmt is a statement prepared in a test session, run either
// through its PreparedSelect or planned in full by GMS.
type preparedStmt struct {
	d      *testDB
	ctx    *sql.Context
	key    string
	parsed sqlparser.Statement
	sel    *PreparedSelect
}

func (d *testDB) prepare(ctx *sql.Context, q string) *preparedStmt {
	d.t.Helper()
	key := sql.RemoveSpaceAndDelimiter(q, ';')
	require.NoError(d.t, Prepare(ctx, d.e, q), q)
	parsed, ok := d.e.PreparedDataCache.GetCachedStmt(ctx.Session.ID(), key)
	require.True(d.t, ok)
	return &preparedStmt{d: d, ctx: ctx, key: key, parsed: parsed, sel: NewPreparedSelect(parsed)}
}

// bindArgs returns the bindings and values of ? arguments.
func bindArgs(args []any) (map[string]sqlparser.Expr, map[string]any) {
	b := make(map[string]sqlparser.Expr, len(args))
	v := make(map[string]any, len(args))
	for i, a := range args {
		name := "v" + strconv.Itoa(i+1)
		v[name] = a
		switch x := a.(type) {
		case nil:
			b[name] = &sqlparser.NullVal{}
		case int64:
			b[name] = sqlparser.NewIntVal([]byte(strconv.FormatInt(x, 10)))
		case uint64:
			b[name] = sqlparser.NewIntVal([]byte(strconv.FormatUint(x, 10)))
		case string:
			b[name] = sqlparser.NewStrVal([]byte(x))
		default:
			panic(fmt.Sprintf("argument of type %T", a))
		}
	}
	return b, v
}

// run executes the statement through its PreparedSelect.
func (p *preparedStmt) run(args ...any) ([]sql.Row, error) {
	b, v := bindArgs(args)
	bind := func() (map[string]sqlparser.Expr, error) { return b, nil }
	_, iter, err := p.sel.Query(p.ctx, p.d.e, p.key, p.parsed, bind, v)
	if err != nil {
		return nil, err
	}
	return sql.RowIterToRows(p.ctx, iter)
}

// planned executes the statement planned in full by GMS.
func (p *preparedStmt) planned(args ...any) ([]sql.Row, error) {
	b, _ := bindArgs(args)
	_, iter, err := Query(p.ctx, p.d.e, p.key, p.parsed, b)
	if err != nil {
		return nil, err
	}
	return sql.RowIterToRows(p.ctx, iter)
}

func TestNewPreparedSelect(t *testing.T) {
	tests := []struct {
		q     string
		terms int // 0: not a prepared select
	}{
		{"SELECT c FROM t WHERE id = ?", 1},
		{"SELECT c FROM t WHERE ? = id", 1},
		{"SELECT * FROM t WHERE t.id IN (?, ?, ?)", 3},
		{"SELECT c FROM t WHERE id BETWEEN ? AND ? OR (id BETWEEN ? AND ?) OR id = ?", 3},
		{"SELECT SUM(k) FROM t WHERE id BETWEEN ? AND ? ORDER BY 1", 1},
		{"SELECT DISTINCT c FROM t WHERE k = :key ORDER BY c", 1},
		{"SELECT c FROM t WHERE id >= ? AND id < ?", 1},
		{"SELECT c FROM t WHERE ? < id AND (id <= ? AND id <> 5) OR id = ?", 0},
		{"SELECT c FROM t WHERE (? < id AND id <= ?) OR id = ? OR id IN (?, ?)", 4},
		{"SELECT c FROM t WHERE id > ?", 1},
		{"SELECT c FROM t WHERE id IN (?, ?) AND id < ?", 0},
		{"SELECT c FROM t WHERE id <=> ?", 0},
		{"SELECT c FROM t WHERE id != ?", 0},
		{"SELECT c FROM t WHERE id = ? LIMIT 1", 1},
		// Locking reads lock in the table's scan, which a template runs.
		{"SELECT c FROM t WHERE id = ? FOR UPDATE", 1},
		{"SELECT c FROM t WHERE id IN (?, ?) LOCK IN SHARE MODE", 2},
		{"SELECT c FROM t WHERE id = ? FOR UPDATE SKIP LOCKED", 1},
		{"SELECT c FROM t WHERE id = ? LIMIT ?", 0},
		{"SELECT c FROM t WHERE id = ? AND k = ?", 0},
		{"SELECT c FROM t WHERE id = ? OR k = ?", 0},
		{"SELECT c FROM t WHERE id = 5", 0},
		{"SELECT c FROM t WHERE id IN (?, 5)", 0},
		{"SELECT c, ? FROM t WHERE id = ?", 0},
		{"SELECT c FROM t, u WHERE t.id = ?", 0},
		{"SELECT c FROM t WHERE id = ? GROUP BY c HAVING COUNT(*) > 1", 0},
		{"SELECT (SELECT 1) FROM t WHERE id = ?", 0},
		{"SELECT c FROM t WHERE id + 1 = ?", 0},
		{"SELECT c FROM t WHERE id NOT BETWEEN ? AND ?", 0},
		{"SELECT c FROM mydb.t WHERE mydb.t.id = ?", 0},
		{"SELECT SQL_CALC_FOUND_ROWS c FROM t WHERE id = ?", 0},
		{"INSERT INTO t VALUES (?)", 0},
		{"WITH x AS (SELECT 1) SELECT c FROM t WHERE id = ?", 0},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			stmt, err := sqlparser.Parse(tc.q)
			require.NoError(t, err)
			p := NewPreparedSelect(stmt)
			if tc.terms == 0 {
				require.Nil(t, p)
				return
			}
			require.NotNil(t, p)
			require.Len(t, p.terms, tc.terms)
		})
	}
}

// TestPreparedSelectMatchesPlanned runs every shape with random arguments,
// odd ones included, both ways and compares the rows (in order: GMS returns
// lookups in index order, and so must the reused plan).
func TestPreparedSelectMatchesPlanned(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY k_idx (k))")
	d.exec("CREATE TABLE s (id TINYINT PRIMARY KEY, v INT)")
	d.exec("CREATE TABLE u (id BIGINT UNSIGNED PRIMARY KEY, v INT)")
	for i := 0; i < 200; i++ {
		k := "NULL"
		if i%7 != 0 {
			k = strconv.Itoa(i % 23)
		}
		d.exec(fmt.Sprintf("INSERT INTO t VALUES (%d, %s, 'c%d')", i*3-100, k, i))
	}
	for i := -128; i < 128; i += 5 {
		d.exec(fmt.Sprintf("INSERT INTO s VALUES (%d, %d)", i, i*i))
	}
	for _, id := range []string{"0", "1", "7", "1000", "9223372036854775807", "9223372036854775808", "18446744073709551615"} {
		d.exec("INSERT INTO u VALUES (" + id + ", 1)")
	}

	r := rand.New(rand.NewPCG(1, 2))
	intArg := func() any {
		switch r.IntN(20) {
		case 0:
			return nil
		case 1:
			return int64(5000000000)
		case 2:
			return int64(math.MinInt64)
		case 3:
			return uint64(math.MaxUint64)
		case 4:
			return strconv.Itoa(r.IntN(600) - 100)
		}
		return int64(r.IntN(700) - 150)
	}
	tests := []struct {
		q     string
		nargs int
		reuse bool // whether a template must result
	}{
		{"SELECT c FROM t WHERE id = ?", 1, true},
		{"SELECT id, c FROM t WHERE id IN (?, ?, ?, ?, ?)", 5, true},
		{"SELECT c FROM t WHERE id BETWEEN ? AND ?", 2, true},
		{"SELECT * FROM t WHERE id BETWEEN ? AND ? OR id BETWEEN ? AND ? OR id = ?", 5, true},
		{"SELECT id FROM t WHERE id BETWEEN ? AND ? ORDER BY id DESC", 2, true},
		{"SELECT SUM(k), COUNT(*) FROM t WHERE id BETWEEN ? AND ?", 2, true},
		{"SELECT DISTINCT k FROM t WHERE id BETWEEN ? AND ? ORDER BY k", 2, true},
		{"SELECT k, COUNT(*) FROM t WHERE id BETWEEN ? AND ? GROUP BY k ORDER BY k", 2, true},
		{"SELECT id, c FROM t WHERE k = ?", 1, true},
		{"SELECT id, c FROM t WHERE k IN (?, ?) OR k BETWEEN ? AND ?", 4, true},
		{"SELECT x.c FROM t AS x WHERE x.id IN (?, ?)", 2, false},
		{"SELECT c FROM t WHERE id >= ? AND id < ?", 2, true},
		{"SELECT id FROM t WHERE (? < id AND id <= ?) OR id = ? OR id BETWEEN ? AND ?", 5, true},
		{"SELECT id, c FROM t WHERE k >= ? AND k < ? ORDER BY k DESC", 2, true},
		{"SELECT c FROM t WHERE id > ?", 1, false},
		{"SELECT id, c FROM t WHERE id BETWEEN ? AND ? ORDER BY id DESC LIMIT 3", 2, true},
		{"SELECT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c LIMIT 2", 2, true},
		{"SELECT c FROM t WHERE k IN (?, ?) LIMIT 1", 2, true},
		{"SELECT id FROM s WHERE id > ? AND id < ?", 2, true},
		{"SELECT * FROM s WHERE id IN (?, ?, ?)", 3, true},
		{"SELECT * FROM u WHERE id BETWEEN ? AND ?", 2, true},
		{"SELECT * FROM u WHERE id = ?", 1, true},
		{"SELECT c FROM t WHERE c = ?", 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			p := d.prepare(d.ctx, tc.q)
			require.NotNil(t, p.sel)
			for i := 0; i < 300; i++ {
				args := make([]any, tc.nargs)
				for j := range args {
					args[j] = intArg()
				}
				got, err1 := p.run(args...)
				want, err2 := p.planned(args...)
				require.Equal(t, err2 == nil, err1 == nil, "args %v: %v / %v", args, err1, err2)
				require.Equal(t, want, got, "args %v", args)
			}
			require.Equal(t, tc.reuse, p.sel.tmpl != nil)
			// The result columns are the same, whatever the template
			// dropped (a Project, see trimProject).
			args := make([]any, tc.nargs)
			for j := range args {
				args[j] = int64(j)
			}
			b, v := bindArgs(args)
			s1, it1, err := p.sel.Query(p.ctx, p.d.e, p.key, p.parsed, func() (map[string]sqlparser.Expr, error) { return b, nil }, v)
			require.NoError(t, err)
			_, err = sql.RowIterToRows(p.ctx, it1)
			require.NoError(t, err)
			s2, it2, err := Query(p.ctx, p.d.e, p.key, p.parsed, b)
			require.NoError(t, err)
			_, err = sql.RowIterToRows(p.ctx, it2)
			require.NoError(t, err)
			require.True(t, sameColumns(s2, s1), "columns %v, planned %v", s1, s2)
		})
	}
}

// TestTemplateDropsProject: a select of some columns by a range of the
// key reads the table projected to those columns, with no Project above
// it, once the plan is a template.
func TestTemplateDropsProject(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20))")
	d.exec("INSERT INTO t VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c')")
	for _, tc := range []struct {
		q       string
		trimmed bool
	}{
		{"SELECT c FROM t WHERE id BETWEEN ? AND ?", true},
		{"SELECT c, k FROM t WHERE id BETWEEN ? AND ?", true},
		{"SELECT id, c FROM t WHERE id BETWEEN ? AND ?", true},
		{"SELECT c AS x FROM t WHERE id BETWEEN ? AND ?", false}, // an alias names the column
		{"SELECT c, c FROM t WHERE id BETWEEN ? AND ?", false},
		{"SELECT k + 1 FROM t WHERE id BETWEEN ? AND ?", false},
	} {
		p := d.prepare(d.ctx, tc.q)
		for range 3 {
			got, err := p.run(int64(1), int64(2))
			require.NoError(t, err)
			want, err := p.planned(int64(1), int64(2))
			require.NoError(t, err)
			require.Equal(t, want, got, tc.q)
		}
		if p.sel.tmpl == nil {
			require.False(t, tc.trimmed, "%s: no template", tc.q)
			continue
		}
		_, isITA := p.sel.tmpl.root.(*plan.IndexedTableAccess)
		require.Equal(t, tc.trimmed, isITA, tc.q)
	}
}

// TestPreparedSelectReplans checks that a reused plan never outlives what
// it was made from: the table's definition, the current database, the
// session's settings, the transaction's own writes.
func TestPreparedSelectReplans(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY k_idx (k))")
	d.exec("INSERT INTO t VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c')")
	d.exec("CREATE DATABASE other")
	d.exec("CREATE TABLE other.t (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY k_idx (k))")
	d.exec("INSERT INTO other.t VALUES (1, 11, 'other')")

	p := d.prepare(d.ctx, "SELECT * FROM t WHERE id BETWEEN ? AND ?")
	rows := func(args ...any) []sql.Row {
		t.Helper()
		got, err := p.run(args...)
		require.NoError(t, err)
		return got
	}
	require.Equal(t, []sql.Row{{int32(1), int32(10), "a"}, {int32(2), int32(20), "b"}}, rows(int64(1), int64(2)))
	require.NotNil(t, p.sel.tmpl)

	// A column added: the old plan's projection would be short.
	d.exec("ALTER TABLE t ADD COLUMN z INT DEFAULT 7")
	require.Equal(t, []sql.Row{{int32(3), int32(30), "c", int32(7)}}, rows(int64(3), int64(9)))
	require.NotNil(t, p.sel.tmpl, "made again")

	// Dropped and made again with another key.
	d.exec("DROP TABLE t")
	d.exec("CREATE TABLE t (id BIGINT PRIMARY KEY, c TEXT)")
	d.exec("INSERT INTO t VALUES (2, 'new')")
	require.Equal(t, []sql.Row{{int64(2), "new"}}, rows(int64(1), int64(2)))

	// Another current database.
	d.exec("USE other")
	require.Equal(t, []sql.Row{{int32(1), int32(11), "other"}}, rows(int64(1), int64(2)))
	d.exec("USE mydb")
	require.Equal(t, []sql.Row{{int64(2), "new"}}, rows(int64(1), int64(2)))

	// sql_select_limit.
	d.exec("INSERT INTO t VALUES (3, 'x'), (4, 'y')")
	d.exec("SET sql_select_limit = 1")
	require.Len(t, rows(int64(1), int64(4)), 1)
	d.exec("SET sql_select_limit = DEFAULT")
	require.Len(t, rows(int64(1), int64(4)), 3)

	// A transaction sees its own writes, and not after a rollback.
	d.exec("START TRANSACTION")
	d.exec("INSERT INTO t VALUES (5, 'mine')")
	require.Len(t, rows(int64(1), int64(9)), 4)
	d.exec("ROLLBACK")
	require.Len(t, rows(int64(1), int64(9)), 3)

	// DDL by another session while this one's transaction reads the
	// table: the DDL waits for the transaction (its shared-read metadata
	// lock), which reads with its plan meanwhile; the plan is made again
	// for the newer catalog after.
	d.exec("START TRANSACTION")
	require.Len(t, rows(int64(1), int64(9)), 3)
	other := d.newCtx()
	done := make(chan error, 1)
	go func() {
		_, err := lq(d, other, "ALTER TABLE t ADD COLUMN w INT DEFAULT 1")
		done <- err
	}()
	waitMDLQueued(d)
	got := rows(int64(2), int64(2))
	require.Equal(t, []sql.Row{{int64(2), "new"}}, got, "the transaction's snapshot has no column w")
	d.exec("COMMIT")
	err := <-done
	require.NoError(t, err)
	require.Equal(t, []sql.Row{{int64(2), "new", int32(1)}}, rows(int64(2), int64(2)))

	// A plan with grouping and sorting above the lookup, after DDL.
	g := d.prepare(d.ctx, "SELECT c, COUNT(*) FROM t WHERE id BETWEEN ? AND ? GROUP BY c ORDER BY c")
	for i := 0; i < 2; i++ {
		got, err := g.run(int64(2), int64(3))
		require.NoError(t, err)
		require.Equal(t, []sql.Row{{"new", int64(1)}, {"x", int64(1)}}, got)
	}
	require.NotNil(t, g.sel.tmpl)
	d.exec("ALTER TABLE t MODIFY c VARCHAR(5)")
	got, err = g.run(int64(2), int64(3))
	require.NoError(t, err)
	require.Equal(t, []sql.Row{{"new", int64(1)}, {"x", int64(1)}}, got)

	// Each execution starts with no warnings, as every statement does.
	d.exec("SELECT 1/0")
	require.NotEmpty(t, d.ctx.Session.Warnings())
	rows(int64(2), int64(2))
	require.Empty(t, d.ctx.Session.Warnings())

	// Turned off for the session: never made.
	d.exec("SET strata_plan_reuse = OFF")
	q := d.prepare(d.ctx, "SELECT c FROM t WHERE id = ?")
	_, err = q.run(int64(2))
	require.NoError(t, err)
	require.Nil(t, q.sel.tmpl)
	d.exec("SET strata_plan_reuse = ON")
}

// TestPreparedSelectErrors checks that the reused plan reports the errors
// GMS reports.
func TestPreparedSelectErrors(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(20))")
	d.exec("INSERT INTO t VALUES (1, 'a')")
	p := d.prepare(d.ctx, "SELECT c FROM t WHERE id = ?")
	_, err := p.run(int64(1))
	require.NoError(t, err)
	require.NotNil(t, p.sel.tmpl)
	d.exec("DROP TABLE t")
	_, err1 := p.run(int64(1))
	_, err2 := p.planned(int64(1))
	require.Error(t, err1)
	require.Error(t, err2)
	require.Equal(t, err2.Error(), err1.Error())
}

// TestPreparedSelectLearnsAgain checks that executions which could not
// make a template (a setting that changes the plan, an older snapshot's
// catalog) do not stop the statement from making one later, and that a
// replanned execution counts once in Questions.
func TestPreparedSelectLearnsAgain(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(20))")
	d.exec("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
	p := d.prepare(d.ctx, "SELECT c FROM t WHERE id IN (?, ?)")
	run := func() {
		t.Helper()
		_, err := p.run(int64(1), int64(2))
		require.NoError(t, err)
	}

	// sql_select_limit puts a Limit in GMS's plan: no template, however
	// many executions; once it is gone, one is made within relearnEvery.
	d.exec("SET sql_select_limit = 1")
	for i := 0; i < 2*maxLearn; i++ {
		run()
	}
	require.Nil(t, p.sel.tmpl)
	d.exec("SET sql_select_limit = DEFAULT")
	for i := 0; i < relearnEvery && p.sel.tmpl == nil; i++ {
		run()
	}
	require.NotNil(t, p.sel.tmpl)

	// A transaction reading the catalog before another session's DDL
	// plans in full; after it, a template is made again at once.
	d.exec("START TRANSACTION")
	run()
	_, err := query(d.e, d.newCtx(), "CREATE TABLE u (id INT PRIMARY KEY)")
	require.NoError(t, err)
	for i := 0; i < 2*maxLearn; i++ {
		run()
		require.Nil(t, p.sel.tmpl)
	}
	d.exec("COMMIT")
	run()
	require.NotNil(t, p.sel.tmpl)

	// A stale template replanned: one question.
	questions := func() int64 {
		v, err := d.ctx.Session.GetStatusVariable(d.ctx, "Questions")
		require.NoError(t, err)
		return int64(v.(uint64))
	}
	_, err = query(d.e, d.newCtx(), "ALTER TABLE t ADD COLUMN z INT")
	require.NoError(t, err)
	before := questions()
	run()
	require.Equal(t, before+1, questions())
}
