package server

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// privOutcome is what one execution of a statement gave: the number of
// its error, or the first value of the first row of the check query
// run after it (the statement's own first value when it has none).
type privOutcome struct {
	code  uint16
	value string
}

// privRun runs q with args on c (prepared when stmt is not nil) and, when
// after is not empty, reads after's first value as root.
func privRun(ctx context.Context, t *testing.T, c *sql.Conn, stmt *sql.Stmt, q string, args []any, root *sql.DB, after string) privOutcome {
	t.Helper()
	var rows *sql.Rows
	var err error
	if stmt != nil {
		rows, err = stmt.QueryContext(ctx, args...)
	} else {
		rows, err = c.QueryContext(ctx, q)
	}
	var out privOutcome
	if err == nil {
		cols, _ := rows.Columns()
		if rows.Next() && len(cols) > 0 {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, rows.Scan(ptrs...))
			out.value = "NULL"
			if vals[0].Valid {
				out.value = vals[0].String
			}
		}
		for rows.Next() {
		}
		err = rows.Err()
		_ = rows.Close()
	}
	if err != nil {
		out.code = mysqlNumber(err)
		require.NotZero(t, out.code, "%s: %v", q, err)
		return out
	}
	if after != "" {
		var v sql.NullString
		require.NoError(t, root.QueryRowContext(ctx, after).Scan(&v), after)
		out.value = "NULL"
		if v.Valid {
			out.value = v.String
		}
	}
	return out
}

// TestServerPrivilegedStatementsEveryPath: each statement the server's
// policy checks or rewrites (privileges.go), run by an account without
// what it needs, gives the same outcome (the refusal's number, or the
// value the policy makes it give) on every path a statement takes: as
// text planned afresh, as text again (the plan cache), prepared and
// executed several times (kept plans, writes by key), and prepared while
// the account may, then executed again after the permission is taken
// away. A check found on the planned path and missing on a kept or direct
// one fails here.
func TestServerPrivilegedStatementsEveryPath(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	s := testServer(t, Config{Data: data, Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	files := filepath.Join(data, filesDir)
	require.NoError(t, os.WriteFile(filepath.Join(files, "in.txt"), []byte("7\n"), 0o600))
	execAll(t, root,
		"CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(64))",
		"CREATE TABLE loaded (id INT PRIMARY KEY)",
		"CREATE USER 'u'@'%' IDENTIFIED BY 'upw'",
		"GRANT SELECT, INSERT, UPDATE, DELETE ON main.* TO 'u'@'%'",
		"CREATE USER 'v'@'%'",
	)
	for i := 1; i <= 9; i++ {
		execAll(t, root, fmt.Sprintf("INSERT INTO t VALUES (%d, 0, 'c')", i))
	}
	rootConn, err := root.Conn(ctx)
	require.NoError(t, err)
	defer rootConn.Close()
	var rootID int
	require.NoError(t, rootConn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&rootID))

	nextID := 100 // fresh keys for INSERTs
	cases := []struct {
		name string
		q    string
		// textOnly: the statement cannot be prepared (LOAD DATA).
		textOnly bool
		args     func() []any
		// denied is the outcome for the account without the permission,
		// allowed (when allow is set) with it.
		denied, allowed privOutcome
		// allow gives the permission and deny takes it away, as root.
		allow, deny string
		// setup and reset run as root before and after the case.
		setup, reset string
		// before runs ahead of every execution; after is read after it.
		before func()
		after  string
	}{
		{name: "SET GLOBAL", q: "SET GLOBAL sql_select_limit = 1000",
			denied: privOutcome{code: 1227},
			allow:  "GRANT SUPER ON *.* TO 'u'@'%'", deny: "REVOKE SUPER ON *.* FROM 'u'@'%'"},
		{name: "SET @@global", q: "SET @@global.sql_select_limit = 1000",
			denied: privOutcome{code: 1227},
			allow:  "GRANT SUPER ON *.* TO 'u'@'%'", deny: "REVOKE SUPER ON *.* FROM 'u'@'%'"},
		{name: "SHOW GRANTS of another account", q: "SHOW GRANTS FOR 'v'@'%'",
			denied: privOutcome{code: 1142}, allowed: privOutcome{value: "GRANT USAGE ON *.* TO `v`@`%`"},
			allow: "GRANT SELECT ON mysql.* TO 'u'@'%'", deny: "REVOKE SELECT ON mysql.* FROM 'u'@'%'"},
		{name: "KILL of another account's connection", q: fmt.Sprintf("KILL QUERY %d", rootID),
			denied: privOutcome{code: 1095}},
		{name: "KILL of an unknown connection", q: "KILL 999999",
			denied: privOutcome{code: 1094}},
		{name: "INTO OUTFILE", q: "SELECT id FROM t WHERE id = 1 INTO OUTFILE 'o.txt'",
			denied: privOutcome{code: 1045},
			allow:  "GRANT FILE ON *.* TO 'u'@'%'", deny: "REVOKE FILE ON *.* FROM 'u'@'%'",
			before: func() { _ = os.Remove(filepath.Join(files, "o.txt")) }},
		{name: "INTO DUMPFILE", q: "SELECT c FROM t WHERE id = 1 INTO DUMPFILE 'd.txt'",
			denied: privOutcome{code: 1045},
			allow:  "GRANT FILE ON *.* TO 'u'@'%'", deny: "REVOKE FILE ON *.* FROM 'u'@'%'",
			before: func() { _ = os.Remove(filepath.Join(files, "d.txt")) }},
		{name: "INTO OUTFILE outside the files folder", q: "SELECT id FROM t INTO OUTFILE '../o.txt'",
			denied: privOutcome{code: 1045}},
		{name: "LOAD DATA INFILE", textOnly: true, q: "LOAD DATA INFILE 'in.txt' REPLACE INTO TABLE loaded",
			denied: privOutcome{code: 1045},
			allow:  "GRANT FILE ON *.* TO 'u'@'%'", deny: "REVOKE FILE ON *.* FROM 'u'@'%'"},
		{name: "LOAD DATA INFILE without DELETE", textOnly: true, q: "LOAD DATA INFILE 'in.txt' REPLACE INTO TABLE loaded",
			denied: privOutcome{code: 1142},
			allow:  "GRANT DELETE ON main.* TO 'u'@'%'", deny: "REVOKE DELETE ON main.* FROM 'u'@'%'",
			setup: "GRANT FILE ON *.* TO 'u'@'%'", reset: "REVOKE FILE ON *.* FROM 'u'@'%'"},
		{name: "LOAD_FILE", q: "SELECT LOAD_FILE('in.txt')",
			denied: privOutcome{value: "NULL"}, allowed: privOutcome{value: "7\n"},
			allow: "GRANT FILE ON *.* TO 'u'@'%'", deny: "REVOKE FILE ON *.* FROM 'u'@'%'"},
		{name: "LOAD_FILE in an UPDATE by key", q: "UPDATE t SET c = LOAD_FILE('in.txt') WHERE id = ?",
			args:   func() []any { return []any{2} },
			denied: privOutcome{value: "NULL"}, allowed: privOutcome{value: "7\n"},
			allow: "GRANT FILE ON *.* TO 'u'@'%'", deny: "REVOKE FILE ON *.* FROM 'u'@'%'",
			before: func() { execAll(t, root, "UPDATE t SET c = 'c' WHERE id = 2") },
			after:  "SELECT c FROM t WHERE id = 2"},
		{name: "LOAD_FILE in an INSERT", q: "INSERT INTO t VALUES (?, 0, LOAD_FILE('in.txt'))",
			args:   func() []any { nextID++; return []any{nextID} },
			denied: privOutcome{value: "NULL"}, allowed: privOutcome{value: "7\n"},
			allow: "GRANT FILE ON *.* TO 'u'@'%'", deny: "REVOKE FILE ON *.* FROM 'u'@'%'",
			after: "SELECT c FROM t ORDER BY id DESC LIMIT 1"},
		{name: "LOAD_FILE in a subquery of an UPDATE", q: "UPDATE t SET c = (SELECT LOAD_FILE('in.txt')) WHERE id = ?",
			args:   func() []any { return []any{3} },
			denied: privOutcome{value: "NULL"}, allowed: privOutcome{value: "7\n"},
			allow: "GRANT FILE ON *.* TO 'u'@'%'", deny: "REVOKE FILE ON *.* FROM 'u'@'%'",
			before: func() { execAll(t, root, "UPDATE t SET c = 'c' WHERE id = 3") },
			after:  "SELECT c FROM t WHERE id = 3"},
		{name: "UPDATE by key", q: "UPDATE t SET k = k + 1 WHERE id = ?",
			args:   func() []any { return []any{4} },
			denied: privOutcome{code: 1142},
			allow:  "GRANT UPDATE ON main.* TO 'u'@'%'", deny: "REVOKE UPDATE ON main.* FROM 'u'@'%'"},
		{name: "DELETE by key", q: "DELETE FROM t WHERE id = ?",
			args:   func() []any { return []any{99} },
			denied: privOutcome{code: 1142},
			allow:  "GRANT DELETE ON main.* TO 'u'@'%'", deny: "REVOKE DELETE ON main.* FROM 'u'@'%'"},
		{name: "INSERT of one row", q: "INSERT INTO t VALUES (?, 0, 'i')",
			args:   func() []any { nextID++; return []any{nextID} },
			denied: privOutcome{code: 1142},
			allow:  "GRANT INSERT ON main.* TO 'u'@'%'", deny: "REVOKE INSERT ON main.* FROM 'u'@'%'"},
		{name: "UPDATE by key under read_only", q: "UPDATE t SET k = k + 1 WHERE id = ?",
			args:   func() []any { return []any{5} },
			denied: privOutcome{code: 1290},
			allow:  "SET GLOBAL read_only = OFF", deny: "SET GLOBAL read_only = ON"},
		{name: "INSERT under read_only", q: "INSERT INTO t VALUES (?, 0, 'r')",
			args:   func() []any { nextID++; return []any{nextID} },
			denied: privOutcome{code: 1290},
			allow:  "SET GLOBAL read_only = OFF", deny: "SET GLOBAL read_only = ON"},
		{name: "DELETE by key under super_read_only", q: "DELETE FROM t WHERE id = ?",
			args:   func() []any { return []any{98} },
			denied: privOutcome{code: 1290},
			allow:  "SET GLOBAL read_only = OFF", deny: "SET GLOBAL super_read_only = ON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := func() []any {
				if tc.args == nil {
					return nil
				}
				return tc.args()
			}
			// text is q with its arguments in place of the placeholders.
			text := func(a []any) string {
				q := tc.q
				for _, v := range a {
					q = strings.Replace(q, "?", fmt.Sprint(v), 1)
				}
				return q
			}
			c := byKeyConn(t, client(t, s.Addr(), "u", "upw", ""))
			run := func(stmt *sql.Stmt) privOutcome {
				if tc.before != nil {
					tc.before()
				}
				a := args()
				return privRun(ctx, t, c, stmt, text(a), a, root, tc.after)
			}
			// prepare prepares the statement; a refusal is its outcome, as
			// MySQL checks privileges at PREPARE too.
			prepare := func() (*sql.Stmt, privOutcome) {
				stmt, err := c.PrepareContext(ctx, tc.q)
				if err != nil {
					code := mysqlNumber(err)
					require.NotZero(t, code, "%s: %v", tc.q, err)
					return nil, privOutcome{code: code}
				}
				t.Cleanup(func() { _ = stmt.Close() })
				return stmt, privOutcome{}
			}
			// expect runs the statement as text (twice: planned, then
			// again as the plan cache has it) and prepared (four times:
			// learned, then kept) and wants want from each.
			expect := func(want privOutcome, stmt *sql.Stmt, what string) {
				t.Helper()
				for i := range 2 {
					require.Equal(t, want, run(nil), "%s: text, execution %d", what, i)
				}
				if tc.textOnly {
					return
				}
				if stmt == nil {
					var refused privOutcome
					if stmt, refused = prepare(); stmt == nil {
						require.Equal(t, want, refused, "%s: prepared", what)
						return
					}
				}
				for i := range 4 {
					require.Equal(t, want, run(stmt), "%s: prepared, execution %d", what, i)
				}
			}
			if tc.setup != "" {
				execAll(t, root, tc.setup)
			}
			if tc.allow == "" {
				expect(tc.denied, nil, "denied")
				return
			}
			allow := func() {
				execAll(t, root, tc.allow)
				if strings.Contains(tc.deny, "super_read_only") {
					execAll(t, root, "SET GLOBAL super_read_only = OFF")
				}
			}
			execAll(t, root, tc.deny)
			expect(tc.denied, nil, "denied")
			allow()
			var kept *sql.Stmt
			if !tc.textOnly {
				kept, _ = prepare()
				require.NotNil(t, kept, "prepared while allowed")
			}
			expect(tc.allowed, kept, "allowed")
			// The statement prepared and run while allowed, its plan kept,
			// is refused as soon as the permission goes.
			execAll(t, root, tc.deny)
			expect(tc.denied, kept, "denied after running")
			allow()
			if strings.Contains(tc.allow, "ON *.*") || strings.Contains(tc.allow, "ON mysql.*") {
				execAll(t, root, tc.deny) // u holds none of those outside its case
			}
			if tc.reset != "" {
				execAll(t, root, tc.reset)
			}
		})
	}
}
