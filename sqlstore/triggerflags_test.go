package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/stretchr/testify/require"
)

// TestKeptPlanTriggerCreatedLater: a write template reads its plan's query
// flags once, when it is learned (triggerFlags). A trigger created after
// the template was kept is DDL, which makes the template stale: the
// statement is planned again with the trigger, and the new template has
// the trigger flag (GMS's statement savepoint) for the executions run on
// it, whose failure in the trigger leaves nothing of the statement's row
// and the trigger's writes, and the transaction's earlier writes. After
// DROP TRIGGER the same statement succeeds. As text (the plan cache) and
// prepared, INSERT and UPDATE.
func TestKeptPlanTriggerCreatedLater(t *testing.T) {
	const signal = " FOR EACH ROW BEGIN INSERT INTO log VALUES (NEW.k); IF NEW.k > 500 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused'; END IF; END"
	for _, c := range []struct {
		name    string
		trigger string
		ok      string // a statement the trigger lets through; %d the run
		fail    string // one it refuses
		prep    string // the statement prepared: id, k
		okArgs  func(run int) []any
		badArgs func(run int) []any
	}{
		{
			name:    "insert",
			trigger: "CREATE TRIGGER tr BEFORE INSERT ON t" + signal,
			ok:      "INSERT INTO t VALUES (%d, 300)", fail: "INSERT INTO t VALUES (%d, 501)",
			prep:    "INSERT INTO t VALUES (?, ?)",
			okArgs:  func(run int) []any { return []any{int64(run), int64(300)} },
			badArgs: func(run int) []any { return []any{int64(run), int64(501)} },
		},
		{
			name:    "update",
			trigger: "CREATE TRIGGER tr BEFORE UPDATE ON t" + signal,
			ok:      "UPDATE t SET k = 3%02d WHERE id = 1", fail: "UPDATE t SET k = 50%d WHERE id = 1",
			prep:    "UPDATE t SET k = ? WHERE id = ?",
			okArgs:  func(run int) []any { return []any{int64(300 + run), int64(1)} },
			badArgs: func(run int) []any { return []any{int64(501 + run), int64(1)} },
		},
	} {
		for _, prepared := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/prepared=%v", c.name, prepared), func(t *testing.T) {
				ctx := context.Background()
				d := newTestDB(t)
				d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT)")
				d.exec("CREATE TABLE log (id INT PRIMARY KEY)")
				d.exec("INSERT INTO t VALUES (1, 0)")
				e := d.s.OpenEngine()
				defer e.Close()
				conn := e.NewConn()
				defer conn.Close()
				require.NoError(t, conn.UseDatabase(ctx, "mydb"))
				exec := func(q string) {
					t.Helper()
					_, err := conn.Exec(ctx, q)
					require.NoError(t, err, q)
				}
				var st *Stmt
				if prepared {
					var err error
					st, err = conn.Prepare(ctx, c.prep)
					require.NoError(t, err)
					defer st.Close()
				}
				run := func(text string, args []any) error {
					if !prepared {
						_, err := conn.Exec(ctx, text)
						return err
					}
					a := make([]Arg, len(args))
					for i, v := range args {
						a[i] = Arg{Ordinal: i + 1, Value: v}
					}
					_, err := st.Exec(ctx, a...)
					return err
				}
				state := func() string {
					t.Helper()
					var b strings.Builder
					for _, tbl := range []string{"t", "log"} {
						r, err := conn.Query(ctx, "SELECT * FROM "+tbl+" ORDER BY id")
						require.NoError(t, err)
						fmt.Fprintf(&b, "%s: %v\n", tbl, readAll(t, r))
					}
					return b.String()
				}
				// The write's templates: the prepared statement's, or those
				// the plan cache runs the text on (its parameterized form).
				templates := func() []*writeTemplate {
					t.Helper()
					w := st
					if !prepared {
						var err error
						w, err = conn.parseOne(ctx, c.prep)
						require.NoError(t, err)
					}
					require.NotNil(t, w.wr)
					return w.wr.tmpls
				}
				// The plan is kept before the trigger exists.
				for i := 10; i < 14; i++ {
					require.NoError(t, run(fmt.Sprintf(c.ok, i), c.okArgs(i)))
				}
				require.Len(t, templates(), 1)
				require.Nil(t, templates()[0].flags)
				exec(c.trigger)
				for i := range 4 {
					exec("BEGIN")
					exec(fmt.Sprintf("INSERT INTO log VALUES (%d)", 100+i))
					before := state()
					err := run(fmt.Sprintf(c.fail, 20+i), c.badArgs(20+i))
					require.Error(t, err, "run %d", i)
					require.EqualValues(t, 1644, MySQLError(err).Num, "run %d: %v", i, err)
					require.Equal(t, before, state(), "run %d: the failed statement left writes", i)
					exec("COMMIT")
				}
				// Learned again with the trigger, and run on since.
				require.Len(t, templates(), 1)
				require.NotNil(t, templates()[0].flags)
				require.True(t, templates()[0].flags.IsSet(sql.QFlagTrigger))
				exec("DROP TRIGGER tr")
				require.NoError(t, run(fmt.Sprintf(c.fail, 30), c.badArgs(30)), "after DROP TRIGGER")
			})
		}
	}
}
