package reliability

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/kv"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/kvstore"
)

// FuzzSQL runs scripts of SQL statements through an embedded engine: the
// seed corpus (testdata/sql/*.sql: DDL, DML, queries over many column
// types, transactions) and the fuzzer's mutations of it. Each input starts
// from the same database (fuzzImage) on an in-memory filesystem. Every
// statement must return rows or an error, never panic. Afterwards:
//
//   - the guard table, in a database no input names, reads back exactly,
//     by its rows and by its index;
//   - every table of every database reads back without an error, and
//     after closing and reopening the store it holds exactly the rows it
//     held before: what was committed is what is on disk.
//
// Inputs that name the guard's database, change server-wide state or ask
// for unbounded work (sleeping, huge strings, recursion, loops, files) are
// outside the target and skipped.
//
//	go test -run '^$' -fuzz '^FuzzSQL$' -fuzztime 15m -fuzzminimizetime 0 ./sqlstore/reliability
//
// (Without -fuzzminimizetime 0, minimizing the many inputs that find new
// code in GMS takes nearly all the time.)
func FuzzSQL(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "sql", "*.sql"))
	require.NoError(f, err)
	require.NotEmpty(f, seeds)
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, script string) {
		stmts, ok := fuzzStatements(script)
		if !ok {
			t.Skip("outside the target")
		}
		// A backstop against a statement that never ends despite its
		// context: the fuzzer then records the input as a failure.
		watchdog := time.AfterFunc(time.Minute, func() {
			panic(fmt.Sprintf("FuzzSQL: an input ran for a minute: %q", script))
		})
		defer watchdog.Stop()

		base, err := fuzzImage()
		require.NoError(t, err)
		fs := base.CrashClone(vfs.CrashOptions{})
		st, err := fuzzOpen(fs)
		require.NoError(t, err)
		sess := st.s.NewSession(nil)
		sess.SetCurrentDatabase("fz")
		for _, q := range stmts {
			fuzzRun(st, sess, q)
		}
		fuzzRun(st, sess, "ROLLBACK")
		fuzzCheckGuard(t, st, "after the input")
		before := fuzzDump(t, st)
		require.NoError(t, fuzzClose(st), "close")

		st, err = fuzzOpen(fs)
		require.NoError(t, err, "reopen")
		defer func() { _ = fuzzClose(st) }()
		fuzzCheckGuard(t, st, "after a reopen")
		after := fuzzDump(t, st)
		require.Equal(t, before, after, "the tables changed across a close and reopen")
	})
}

// fuzzSkip are the words that put an input outside the target.
var fuzzSkip = []string{
	"sentinel",          // the guard's database
	"global", "persist", // server-wide state
	"sleep", "benchmark", "repeat", "lpad", "rpad", // unbounded time or memory
	"space(", "recursive", "while", "loop", "iterate",
	"load", "infile", "outfile", "dumpfile", // files
	"kill", "shutdown", "event", // other sessions and the scheduler
}

// fuzzStatements splits script into statements, or reports that it is
// outside the target.
func fuzzStatements(script string) ([]string, bool) {
	if len(script) > 4096 {
		return nil, false
	}
	lower := strings.ToLower(script)
	for _, w := range fuzzSkip {
		if strings.Contains(lower, w) {
			return nil, false
		}
	}
	stmts := splitSQL(script)
	return stmts, len(stmts) > 0 && len(stmts) <= 24
}

// splitSQL splits a script at semicolons outside quotes and comments.
func splitSQL(s string) []string {
	var out []string
	start := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote != '`' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '-' && i+1 < len(s) && s[i+1] == '-', c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == ';':
			if q := strings.TrimSpace(s[start:i]); q != "" {
				out = append(out, q)
			}
			start = i + 1
		}
	}
	if q := strings.TrimSpace(s[start:]); q != "" {
		out = append(out, q)
	}
	return out
}

// fuzzRun runs one statement in sess and reads at most 10,000 rows of its
// result; errors are the statement's answer, not the test's.
func fuzzRun(st *store, sess *sqlstore.Session, q string) {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ctx := sql.NewContext(c, sql.WithSession(sess))
	_, iter, err := sqlstore.Query(ctx, st.e, q, nil, nil)
	if err != nil {
		return
	}
	for n := 0; n < 10_000; n++ {
		if _, err := iter.Next(ctx); err != nil {
			break
		}
	}
	_ = iter.Close(ctx)
}

// The starting database of every input.
var fuzzBase struct {
	once sync.Once
	fs   *vfs.MemFS
	err  error
}

const fuzzDir = "/db"

var fuzzSetup = []string{
	"CREATE DATABASE fz",
	"USE fz",
	"CREATE TABLE t (id INT PRIMARY KEY, i BIGINT, u INT UNSIGNED, d DECIMAL(10,2), f DOUBLE, s VARCHAR(64), c CHAR(8), " +
		"b VARBINARY(32), tx TEXT, dt DATETIME, da DATE, j JSON, e ENUM('a','b','c'), st SET('x','y'), bo BOOL, " +
		"UNIQUE KEY ui (i), KEY ks (s), KEY kdt (dt, id))",
	"CREATE TABLE k (a INT, b VARCHAR(20), KEY kb (b))",
	"CREATE TABLE p (id INT PRIMARY KEY AUTO_INCREMENT, tid INT, note VARCHAR(100) COLLATE utf8mb4_0900_ai_ci, " +
		"FOREIGN KEY (tid) REFERENCES t (id) ON DELETE CASCADE, CHECK (tid >= 0))",
	"CREATE VIEW vt AS SELECT id, s FROM t WHERE id < 10",
	"INSERT INTO t VALUES " +
		"(1, 1, 1, 1.10, 0.5, 'one', 'c1', 0x01, 'text one', '2001-01-01 01:01:01', '2001-01-01', '{\"a\": 1}', 'a', 'x', TRUE), " +
		"(2, 2, 2, 2.20, -1.5, 'two', 'c2', 0x0202, NULL, '2002-02-02 02:02:02', '2002-02-02', '[1, 2]', 'b', 'y', FALSE), " +
		"(3, 3, 3, -3.30, 1e10, 'three', 'c3', '', 'text three', NULL, NULL, NULL, 'c', 'x,y', NULL), " +
		"(4, NULL, 4, 0, 0, 'four', NULL, NULL, '', '1999-12-31 23:59:59', '1999-12-31', '{\"a\": [1, {\"b\": null}]}', NULL, '', TRUE), " +
		"(5, 5, 4294967295, 99999999.99, -0.0, 'Five', 'c5', 0xffff, 'text five', '2038-01-19 03:14:07', '9999-12-31', 'null', 'a', 'y', FALSE), " +
		"(6, -6, 0, -0.01, 3.14159, '', 'c6', 0x00, 'six', '1970-01-01 00:00:01', '1970-01-01', '\"str\"', 'b', NULL, TRUE)",
	"INSERT INTO k VALUES (1, 'a'), (2, 'b'), (2, 'b'), (NULL, 'n'), (3, NULL)",
	"INSERT INTO p (tid, note) VALUES (1, 'alpha'), (2, 'beta'), (2, 'Beta'), (3, 'gamma')",
	"CREATE DATABASE sentinel",
	"CREATE TABLE sentinel.guard (id INT PRIMARY KEY, v VARCHAR(40) NOT NULL, KEY kv (v))",
}

const fuzzGuardRows = 50

func fuzzGuardValue(i int) string { return fmt.Sprintf("guard-%03d-%08x", i, uint32(i)*2654435761) }

// fuzzImage returns the starting database: built once, closed, synced.
func fuzzImage() (*vfs.MemFS, error) {
	fuzzBase.once.Do(func() {
		fs := vfs.NewMem()
		fuzzBase.fs, fuzzBase.err = fs, func() error {
			st, err := openStore(fuzzDir, &kvstore.Options{KV: &kv.Options{FS: fs}})
			if err != nil {
				return err
			}
			ctx := st.session("")
			setup := fuzzSetup
			var vals []string
			for i := range fuzzGuardRows {
				vals = append(vals, fmt.Sprintf("(%d, '%s')", i, fuzzGuardValue(i)))
			}
			setup = append(setup, "INSERT INTO sentinel.guard VALUES "+strings.Join(vals, ", "))
			for _, q := range setup {
				if _, err := query(st.e, ctx, q); err != nil {
					_ = fuzzClose(st)
					return fmt.Errorf("%s: %w", q, err)
				}
			}
			return fuzzClose(st)
		}()
	})
	return fuzzBase.fs, fuzzBase.err
}

func fuzzOpen(fs vfs.FS) (*store, error) {
	return openStore(fuzzDir, &kvstore.Options{NoSync: true, KV: &kv.Options{FS: fs, MemtableSize: 256 << 10, CacheSize: 256 << 10}})
}

// fuzzClose closes the engine (its background threads) and the store.
func fuzzClose(st *store) error {
	_ = st.e.Close()
	return st.s.Close()
}

// fuzzCheckGuard checks the guard table by its rows and by its index.
func fuzzCheckGuard(t *testing.T, st *store, when string) {
	t.Helper()
	ctx := st.session("sentinel")
	rows, err := query(st.e, ctx, "SELECT id, v FROM guard ORDER BY id")
	require.NoError(t, err, "%s: the guard table", when)
	require.Len(t, rows, fuzzGuardRows, "%s: the guard table", when)
	for i, r := range rows {
		require.Equal(t, fmt.Sprint(i, " ", fuzzGuardValue(i)), fmt.Sprint(r[0], " ", r[1]), "%s: guard row %d", when, i)
	}
	n, err := query(st.e, ctx, fmt.Sprintf("SELECT COUNT(*) FROM guard WHERE v >= '%s'", fuzzGuardValue(0)))
	require.NoError(t, err, "%s: the guard table's index", when)
	require.Equal(t, fmt.Sprint(fuzzGuardRows), fmt.Sprint(n[0][0]), "%s: the guard table's index", when)
}

// fuzzDump reads every row of every base table of every database (but the
// system ones), as sorted text per table.
func fuzzDump(t *testing.T, st *store) map[string][]string {
	t.Helper()
	ctx := st.session("")
	dump := map[string][]string{}
	dbs, err := query(st.e, ctx, "SHOW DATABASES")
	require.NoError(t, err)
	for _, d := range dbs {
		db := fmt.Sprint(d[0])
		switch strings.ToLower(db) {
		case "information_schema", "mysql", "performance_schema", "sys":
			continue
		}
		tables, err := query(st.e, ctx, "SHOW FULL TABLES FROM "+sqlstore.QuoteIdent(db))
		require.NoError(t, err, "tables of %s", db)
		for _, tr := range tables {
			if fmt.Sprint(tr[1]) != "BASE TABLE" {
				continue
			}
			name := db + "." + fmt.Sprint(tr[0])
			rows, err := query(st.e, ctx, "SELECT * FROM "+sqlstore.QuoteIdent(db)+"."+sqlstore.QuoteIdent(fmt.Sprint(tr[0])))
			require.NoError(t, err, "reading table %s", name)
			text := make([]string, len(rows))
			for i, r := range rows {
				var b strings.Builder
				for _, v := range r {
					fmt.Fprintf(&b, "%T(%v) ", v, v)
				}
				text[i] = b.String()
			}
			sort.Strings(text)
			dump[name] = text
		}
	}
	return dump
}
