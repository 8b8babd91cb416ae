package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"
)

// TestServerRefusalsSpec runs testdata/refusals: each statement refused
// to an account fails with the number, SQLSTATE and message MySQL 8 gives,
// the same as text and prepared. The files folder holds in.txt, one row
// of two columns. Commands:
//
//	exec [as=user]
//	  statements, one a line, each of which must succeed (as root unless
//	  as names an account whose password is its name followed by "pw")
//	error as=user [text]
//	  one statement, which must fail; prints ERROR num (state): message.
//	  Unless text, it is also prepared and executed on a connection of its
//	  own, which must fail alike (at PREPARE or at EXECUTE).
func TestServerRefusalsSpec(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	s := testServer(t, Config{Data: data, Password: "pw"})
	require.NoError(t, os.WriteFile(filepath.Join(data, filesDir, "in.txt"), []byte("1\t1\n"), 0o600))
	conns := map[string]*sql.Conn{}
	conn := func(user string) *sql.Conn {
		if c, ok := conns[user]; ok {
			return c
		}
		pw := user + "pw"
		if user == "root" {
			pw = "pw"
		}
		c, err := client(t, s.Addr(), user, pw, "").Conn(ctx)
		require.NoError(t, err, user)
		t.Cleanup(func() { _ = c.Close() })
		conns[user] = c
		return c
	}
	// refusal prints err as MySQL's client does, failing on no error.
	refusal := func(t *testing.T, td *datadriven.TestData, q string, err error) string {
		var me *mysql.MySQLError
		if !errors.As(err, &me) {
			td.Fatalf(t, "%s: want a MySQL error, got %v", q, err)
		}
		return fmt.Sprintf("ERROR %d (%s): %s\n", me.Number, me.SQLState, me.Message)
	}
	datadriven.RunTest(t, "testdata/refusals", func(t *testing.T, td *datadriven.TestData) string {
		user := "root"
		if td.HasArg("as") {
			td.ScanArgs(t, "as", &user)
		}
		switch td.Cmd {
		case "exec":
			c := conn(user)
			for _, q := range strings.Split(strings.TrimSpace(td.Input), "\n") {
				if _, err := c.ExecContext(ctx, q); err != nil {
					td.Fatalf(t, "%s: %v", q, err)
				}
			}
			return ""
		case "error":
			q := strings.TrimSpace(td.Input)
			rows, err := conn(user).QueryContext(ctx, q)
			if err == nil {
				_ = rows.Close()
				td.Fatalf(t, "%s: no error", q)
			}
			out := refusal(t, td, q, err)
			if td.HasArg("text") {
				return out
			}
			// A connection of its own: the text's failure left nothing
			// kept, and neither does this one.
			c, err := client(t, s.Addr(), user, user+"pw", "").Conn(ctx)
			require.NoError(t, err)
			defer c.Close()
			stmt, err := c.PrepareContext(ctx, q)
			if err == nil {
				defer stmt.Close()
				var rows *sql.Rows
				if rows, err = stmt.QueryContext(ctx); err == nil {
					_ = rows.Close()
					td.Fatalf(t, "%s: no error when prepared", q)
				}
			}
			if prepared := refusal(t, td, q, err); prepared != out {
				td.Fatalf(t, "%s: prepared, %s", q, prepared)
			}
			return out
		case "query":
			q := strings.TrimSpace(td.Input)
			rows, err := conn(user).QueryContext(ctx, q)
			if err != nil {
				td.Fatalf(t, "%s: %v", q, err)
			}
			defer rows.Close()
			cols, err := rows.Columns()
			require.NoError(t, err)
			var out strings.Builder
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			for rows.Next() { // a row's values with spaces between, "NULL" for NULL
				require.NoError(t, rows.Scan(ptrs...))
				var line strings.Builder
				for i, v := range vals {
					if i > 0 {
						line.WriteByte(' ')
					}
					if !v.Valid {
						line.WriteString("NULL")
						continue
					}
					line.WriteString(v.String)
				}
				out.WriteString(strings.TrimRight(line.String(), " ") + "\n")
			}
			require.NoError(t, rows.Err())
			return out.String()
		default:
			td.Fatalf(t, "unknown command %q", td.Cmd)
			return ""
		}
	})
}
