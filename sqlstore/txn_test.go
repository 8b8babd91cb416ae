package sqlstore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"
)

// twoSessions returns a store with table t(id, v) and two sessions.
func twoSessions(t *testing.T) (*testDB, *sql.Context, *sql.Context) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT, KEY kv (v))")
	d.exec("INSERT INTO t VALUES (1, 10), (2, 20)")
	return d, d.newCtx(), d.newCtx()
}

// requireConflict asserts that err is a write conflict, MySQL's 1213.
func requireConflict(t *testing.T, err error) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, mysql.ERLockDeadlock, MySQLError(err).Num, "%v", err)
}

func run(t *testing.T, d *testDB, ctx *sql.Context, q string) []sql.Row {
	t.Helper()
	rows, err := query(d.e, ctx, q)
	require.NoError(t, err, q)
	return rows
}

func TestSnapshotIsolation(t *testing.T) {
	d, a, b := twoSessions(t)
	run(t, d, a, "START TRANSACTION")
	require.Equal(t, []sql.Row{{int64(2)}}, run(t, d, a, "SELECT COUNT(*) FROM t"))
	run(t, d, b, "INSERT INTO t VALUES (3, 30)")
	run(t, d, b, "UPDATE t SET v = 11 WHERE id = 1")
	// A still sees its snapshot, through the table and through the index.
	require.Equal(t, []sql.Row{{int64(2)}}, run(t, d, a, "SELECT COUNT(*) FROM t"))
	require.Equal(t, []sql.Row{{int32(10)}}, run(t, d, a, "SELECT v FROM t WHERE id = 1"))
	require.Empty(t, run(t, d, a, "SELECT id FROM t WHERE v = 11"))
	// And its own writes.
	run(t, d, a, "INSERT INTO t VALUES (4, 40)")
	require.Equal(t, []sql.Row{{int64(3)}}, run(t, d, a, "SELECT COUNT(*) FROM t"))
	run(t, d, a, "COMMIT")
	require.Equal(t, []sql.Row{{int64(4)}}, run(t, d, a, "SELECT COUNT(*) FROM t"))
	require.Equal(t, []sql.Row{{int32(1)}}, run(t, d, a, "SELECT id FROM t WHERE v = 11"))
}

// optimistic makes the sessions of ctxs begin optimistic transactions.
func optimistic(t *testing.T, d *testDB, ctxs ...*sql.Context) {
	t.Helper()
	for _, ctx := range ctxs {
		run(t, d, ctx, "SET strata_txn_mode = 'optimistic'")
	}
}

// TestWriteConflict: of two optimistic transactions writing one row, the
// second to commit fails with 1213 (TestWriteWaits is the pessimistic
// counterpart).
func TestWriteConflict(t *testing.T) {
	d, a, b := twoSessions(t)
	optimistic(t, d, a, b)
	run(t, d, a, "START TRANSACTION")
	run(t, d, a, "INSERT INTO t VALUES (5, 50)")
	run(t, d, a, "UPDATE t SET v = v + 1 WHERE id = 1")
	run(t, d, b, "START TRANSACTION")
	run(t, d, b, "UPDATE t SET v = v + 100 WHERE id = 1")
	run(t, d, b, "COMMIT")
	_, err := query(d.e, a, "COMMIT")
	requireConflict(t, err)
	_, _ = query(d.e, a, "ROLLBACK")
	// Nothing of A was applied; B's update was.
	require.Equal(t, []sql.Row{{int32(1), int32(110)}, {int32(2), int32(20)}}, d.exec("SELECT * FROM t ORDER BY id"))
	// The session goes on normally.
	run(t, d, a, "INSERT INTO t VALUES (5, 50)")
	require.Equal(t, []sql.Row{{int64(3)}}, d.exec("SELECT COUNT(*) FROM t"))
}

// TestWriteWaits: of two pessimistic transactions writing one row, the
// second waits for the first to commit, then updates the committed row.
func TestWriteWaits(t *testing.T) {
	d, a, b := twoSessions(t)
	run(t, d, a, "START TRANSACTION")
	run(t, d, a, "INSERT INTO t VALUES (5, 50)")
	run(t, d, a, "UPDATE t SET v = v + 1 WHERE id = 1")
	run(t, d, b, "START TRANSACTION")
	done := make(chan error, 1)
	go func() {
		q := "UPDATE t SET v = v + 100 WHERE id = 1"
		_, err := query(d.e, b.WithQuery(q), q)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the second writer did not wait: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	run(t, d, a, "COMMIT")
	require.NoError(t, <-done)
	run(t, d, b, "COMMIT")
	require.Equal(t, []sql.Row{{int32(1), int32(111)}, {int32(2), int32(20)}, {int32(5), int32(50)}}, d.exec("SELECT * FROM t ORDER BY id"))
}

func TestFailedStatementRollsBackAlone(t *testing.T) {
	d, a, _ := twoSessions(t)
	run(t, d, a, "START TRANSACTION")
	run(t, d, a, "INSERT INTO t VALUES (3, 30)")
	_, err := query(d.e, a, "INSERT INTO t VALUES (4, 40), (1, 99)")
	require.Equal(t, mysql.ERDupEntry, MySQLError(err).Num)
	_, err = query(d.e, a, "UPDATE t SET id = 2 WHERE id = 3")
	require.Error(t, err)
	run(t, d, a, "INSERT INTO t VALUES (5, 50)")
	run(t, d, a, "COMMIT")
	require.Equal(t, "[[1 10] [2 20] [3 30] [5 50]]", fmt.Sprint(d.exec("SELECT * FROM t ORDER BY id")))
	require.Equal(t, "[[3] [5]]", fmt.Sprint(d.exec("SELECT id FROM t WHERE v > 20 ORDER BY id")))
}

func TestSavepointsAndReadOnly(t *testing.T) {
	d, a, _ := twoSessions(t)
	run(t, d, a, "START TRANSACTION")
	run(t, d, a, "INSERT INTO t VALUES (3, 30)")
	run(t, d, a, "SAVEPOINT s1")
	run(t, d, a, "INSERT INTO t VALUES (4, 40)")
	run(t, d, a, "DELETE FROM t WHERE id = 1")
	run(t, d, a, "ROLLBACK TO SAVEPOINT s1")
	run(t, d, a, "COMMIT")
	require.Equal(t, "[[1] [2] [3]]", fmt.Sprint(d.exec("SELECT id FROM t ORDER BY id")))
	require.Equal(t, "[[1]]", fmt.Sprint(d.exec("SELECT id FROM t WHERE v = 10")))

	run(t, d, a, "START TRANSACTION READ ONLY")
	_, err := query(d.e, a, "INSERT INTO t VALUES (9, 90)")
	require.Error(t, err)
	run(t, d, a, "COMMIT")
	require.Equal(t, []sql.Row{{int64(3)}}, d.exec("SELECT COUNT(*) FROM t"))
}

// TestUpdateSeesStatementStart: a statement does not see its own writes
// while it scans (the Halloween problem), through scans, index lookups and
// joins that rescan a table.
func TestUpdateSeesStatementStart(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE h (id INT PRIMARY KEY, v INT, KEY kv (v))")
	d.exec("INSERT INTO h VALUES (1, 1), (2, 2), (3, 3)")
	d.exec("UPDATE h SET id = id + 1 ORDER BY id DESC")
	d.exec("UPDATE h SET id = id + 10")
	d.exec("UPDATE h SET v = v + 10 WHERE v < 20")
	d.exec("UPDATE h SET id = id + 1 WHERE id IN (12, 13, 14) ORDER BY id DESC")
	require.Equal(t, "[[13 11] [14 12] [15 13]]", fmt.Sprint(d.exec("SELECT * FROM h ORDER BY id")))
	d.exec("INSERT INTO h SELECT id + 100, v FROM h")
	require.Equal(t, []sql.Row{{int64(6)}}, d.exec("SELECT COUNT(*) FROM h"))
	d.exec("CREATE TABLE g (x INT)")
	d.exec("INSERT INTO g VALUES (1), (2), (3)")
	require.Equal(t, "[[{3 0 Rows matched: 3  Changed: 3  Warnings: 0}]]", fmt.Sprint(d.exec("UPDATE h CROSS JOIN g SET h.v = h.v * 2 WHERE h.id < 100")))
	require.Equal(t, "[[22] [24] [26]]", fmt.Sprint(d.exec("SELECT v FROM h WHERE id < 100 ORDER BY id")))
}

// TestDDLConflicts: a DDL statement on a table an open transaction wrote
// waits for that transaction (metadata locks, mdl.go), which commits; the
// DDL then runs over its rows. MySQL 8 does the same; before metadata locks
// the DDL ran at once and the transaction's commit failed with 1213.
// TestDDLWaitsForWriters has more statements. ADD CHECK checks the rows
// under its lock, the transaction's row among them, and reports the
// violation (3819), as MySQL does.
func TestDDLConflicts(t *testing.T) {
	for _, ddl := range []string{
		"ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 0",
		"TRUNCATE TABLE t",
		"DROP TABLE t",
		"CREATE INDEX iv ON t (v)",
		"CREATE UNIQUE INDEX uv ON t (v)",
		"ALTER TABLE t ADD CONSTRAINT ck CHECK (v < 25)",
	} {
		t.Run(ddl, func(t *testing.T) {
			d, a, b := twoSessions(t)
			run(t, d, a, "START TRANSACTION")
			run(t, d, a, "INSERT INTO t VALUES (3, 30)")
			done := make(chan error, 1)
			go func() {
				_, err := lq(d, b, ddl)
				done <- err
			}()
			waitMDLQueued(d)
			run(t, d, a, "COMMIT")
			err := <-done
			switch {
			case strings.Contains(ddl, "CHECK"):
				require.Equal(t, 3819, sqlErrNum(err), "%v", err) // ER_CHECK_CONSTRAINT_VIOLATED
			default:
				require.NoError(t, err)
			}
			switch {
			case ddl == "DROP TABLE t":
			case ddl == "TRUNCATE TABLE t":
				require.Empty(t, d.exec("SELECT * FROM t"))
			default:
				require.Len(t, d.exec("SELECT * FROM t WHERE id = 3"), 1)
				// Every index agrees with the table.
				require.Equal(t, d.exec("SELECT id FROM t IGNORE INDEX (kv) WHERE v + 0 >= 0 ORDER BY id"),
					d.exec("SELECT id FROM t WHERE v >= 0 ORDER BY id"))
			}
		})
	}
	// Concurrent DDL on different tables both commit.
	d, a, b := twoSessions(t)
	run(t, d, a, "START TRANSACTION")
	run(t, d, a, "CREATE TABLE x1 (id INT PRIMARY KEY)")
	run(t, d, b, "CREATE TABLE x2 (id INT PRIMARY KEY)")
	run(t, d, a, "COMMIT")
	require.Len(t, d.exec("SHOW TABLES"), 3)
}

// TestFailedDDLLeavesNothing: a DDL statement that fails part-way leaves no
// trace, also inside a transaction (autocommit off), where GMS keeps the
// transaction of the failed statement.
func TestFailedDDLLeavesNothing(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")
	d.exec("INSERT INTO t VALUES (1, 1, 5), (2, 2, 5)")
	d.exec("SET autocommit = 0")
	// GMS rejects the second index after CreateTable and the first index ran.
	d.execErr("CREATE TABLE c (id INT PRIMARY KEY, a INT, UNIQUE KEY ua (a), KEY ua (a))")
	// The unique index on b fails on the existing rows, after the index on a.
	d.execErr("ALTER TABLE t ADD INDEX ia (a), ADD UNIQUE INDEX ub (b)")
	d.exec("INSERT INTO t VALUES (3, 3, 6)")
	d.exec("COMMIT")
	require.Equal(t, "[[t]]", fmt.Sprint(d.exec("SHOW TABLES")))
	require.Len(t, d.exec("SHOW INDEXES FROM t"), 1)
	require.Equal(t, []sql.Row{{int64(3)}}, d.exec("SELECT COUNT(*) FROM t"))
}

// TestGuardedReads: writes another transaction commits after this one's
// snapshot fail this one's commit where this one depended on them without
// writing their keys: a DELETE of every row (one range deletion), a DDL
// that read the table to build an index or copy it. Nothing is lost and
// the row count stays exact.
func TestGuardedReads(t *testing.T) {
	for _, tc := range []struct{ name, other string }{
		{"delete all, other inserts", "INSERT INTO t VALUES (3, 30)"},
		{"delete all, other updates", "UPDATE t SET v = 11 WHERE id = 1"},
		{"delete all, other deletes", "DELETE FROM t WHERE id = 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, a, b := twoSessions(t)
			run(t, d, a, "START TRANSACTION")
			run(t, d, a, "DELETE FROM t")
			run(t, d, b, tc.other)
			_, err := query(d.e, a, "COMMIT")
			requireConflict(t, err)
			_, _ = query(d.e, a, "ROLLBACK")
			require.Equal(t, d.exec("SELECT COUNT(*) FROM t IGNORE INDEX (kv) WHERE id + 0 > 0"), d.exec("SELECT COUNT(*) FROM t"))
			require.NotEmpty(t, d.exec("SELECT * FROM t"))
		})
	}
	for _, ddl := range []string{
		"CREATE INDEX iv ON t (v)",
		"ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 0",
		"ALTER TABLE t MODIFY v BIGINT",
	} {
		t.Run(ddl, func(t *testing.T) {
			d, a, b := twoSessions(t)
			// A's snapshot predates B's insert; the DDL reads the table
			// at that snapshot, as a long DDL's own snapshot predates an
			// insert committed while it runs. (The test's contexts carry
			// no statement text, so the DDL does not commit A's
			// transaction first: see TestImplicitCommit.)
			run(t, d, a, "START TRANSACTION")
			run(t, d, a, "SELECT COUNT(*) FROM t")
			run(t, d, b, "INSERT INTO t VALUES (3, 30)")
			_, err := query(d.e, a, ddl)
			if err == nil {
				_, err = query(d.e, a, "COMMIT")
			}
			requireConflict(t, err)
			_, _ = query(d.e, a, "ROLLBACK")
			require.Equal(t, []sql.Row{{int64(3)}}, d.exec("SELECT COUNT(*) FROM t"))
			require.Len(t, d.exec("SELECT id FROM t WHERE v = 30"), 1)
			// Retried on a fresh snapshot, the DDL takes the row along.
			run(t, d, a, ddl)
			require.Len(t, d.exec("SELECT id FROM t WHERE v = 30"), 1)
		})
	}
}

// TestForeignKeyRace: in optimistic transactions, a child inserted while
// another transaction deletes its parent. Each passes its check at its own
// snapshot; whichever commits second fails with 1213, and no child is left
// without its parent. (TestForeignKeyLocks is the pessimistic counterpart:
// the second waits.)
func TestForeignKeyRace(t *testing.T) {
	for _, childFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("child commits first %v", childFirst), func(t *testing.T) {
			d, a, b := twoSessions(t)
			optimistic(t, d, a, b)
			d.exec("CREATE TABLE p (id INT PRIMARY KEY)")
			d.exec("CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))")
			d.exec("INSERT INTO p VALUES (1), (2)")
			run(t, d, a, "START TRANSACTION")
			run(t, d, a, "INSERT INTO c VALUES (10, 1)")
			run(t, d, b, "START TRANSACTION")
			run(t, d, b, "DELETE FROM p WHERE id = 1")
			first, second := b, a
			if childFirst {
				first, second = a, b
			}
			run(t, d, first, "COMMIT")
			_, err := query(d.e, second, "COMMIT")
			requireConflict(t, err)
			_, _ = query(d.e, second, "ROLLBACK")
			require.Empty(t, d.exec("SELECT c.id FROM c LEFT JOIN p ON p.id = c.pid WHERE p.id IS NULL"))
		})
	}
}

// TestImplicitCommit: as in MySQL, a DDL statement first commits the open
// transaction, whose writes then stay even when the DDL fails, and leaves
// the session in autocommit mode; CREATE TEMPORARY TABLE does not.
func TestImplicitCommit(t *testing.T) {
	d, a, _ := twoSessions(t)
	q := func(stmt string) error {
		_, err := query(d.e, a.WithQuery(stmt), stmt)
		return err
	}
	ids := func() string { return fmt.Sprint(d.exec("SELECT id FROM t ORDER BY id")) }
	d.exec("INSERT INTO t VALUES (9, 10)") // v = 10 twice: no unique index on v
	require.NoError(t, q("START TRANSACTION"))
	require.NoError(t, q("INSERT INTO t VALUES (3, 30)"))
	require.Error(t, q("ALTER TABLE t ADD UNIQUE INDEX uv (v)"))
	require.NoError(t, q("ROLLBACK"))
	require.Equal(t, "[[1] [2] [3] [9]]", ids(), "the insert before the failed DDL was committed")

	require.NoError(t, q("BEGIN"))
	require.NoError(t, q("INSERT INTO t VALUES (5, 50)"))
	require.NoError(t, q("/* comment */ CREATE TABLE t2 (x INT)"))
	require.NoError(t, q("INSERT INTO t VALUES (6, 60)"))
	require.NoError(t, q("ROLLBACK"))
	require.Equal(t, "[[1] [2] [3] [5] [6] [9]]", ids(), "after the DDL the session autocommits")

	require.NoError(t, q("BEGIN"))
	require.NoError(t, q("INSERT INTO t VALUES (7, 70)"))
	require.Error(t, q("CREATE TEMPORARY TABLE tmp (x INT)")) // not supported, but not DDL to MySQL either
	require.NoError(t, q("ROLLBACK"))
	require.Equal(t, "[[1] [2] [3] [5] [6] [9]]", ids(), "a temporary table commits nothing")

	require.NoError(t, q("BEGIN"))
	require.NoError(t, q("INSERT INTO t VALUES (8, 80)"))
	require.NoError(t, q("ANALYZE TABLE t"))
	require.NoError(t, q("ROLLBACK"))
	require.Equal(t, "[[1] [2] [3] [5] [6] [8] [9]]", ids(), "ANALYZE TABLE commits")
}

func TestLeadingWords(t *testing.T) {
	for q, want := range map[string][2]string{
		"create table t (x int)":             {"create", "table"},
		"  /* a */ /* b */\n Drop temporary": {"Drop", "temporary"},
		"-- note\nALTER TABLE t":             {"ALTER", "TABLE"},
		"(SELECT 1)":                         {"SELECT", ""},
		"":                                   {"", ""},
		"/* unterminated":                    {"", ""},
	} {
		first, second := LeadingWords(q)
		require.Equal(t, want, [2]string{first, second}, q)
	}
	require.Zero(t, testing.AllocsPerRun(100, func() { implicitCommit("/* c */ SELECT * FROM t WHERE id = 1") }))
}

// TestLockingReads: in optimistic transactions, rows read FOR UPDATE (or
// LOCK IN SHARE MODE) that another transaction changes before this one
// commits fail its commit with 1213, which prevents write skew; rows it did
// not read do not. TestLockingReadsPessimistic is the pessimistic
// counterpart.
func TestLockingReads(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE doctors (id INT PRIMARY KEY, oncall INT)")
	on := func() string { return fmt.Sprint(d.exec("SELECT COUNT(*) FROM doctors WHERE oncall = 1")) }
	sess := func() func(string) error {
		ctx := d.newCtx()
		optimistic(t, d, ctx)
		return func(stmt string) error {
			_, err := query(d.e, ctx.WithQuery(stmt), stmt)
			return err
		}
	}
	for _, tc := range []struct {
		read string
		skew bool // both commit, and nobody is left on call
	}{
		{"SELECT COUNT(*) FROM doctors WHERE oncall = 1", true},
		{"SELECT COUNT(*) FROM doctors WHERE oncall = 1 FOR UPDATE", false},
		{"select count(*) from doctors where oncall = 1 lock in share mode", false},
	} {
		t.Run(tc.read, func(t *testing.T) {
			d.exec("DELETE FROM doctors")
			d.exec("INSERT INTO doctors VALUES (1, 1), (2, 1)")
			a, b := sess(), sess()
			require.NoError(t, a("BEGIN"))
			require.NoError(t, a(tc.read))
			require.NoError(t, b("BEGIN"))
			require.NoError(t, b(tc.read))
			require.NoError(t, a("UPDATE doctors SET oncall = 0 WHERE id = 1"))
			require.NoError(t, b("UPDATE doctors SET oncall = 0 WHERE id = 2"))
			require.NoError(t, a("COMMIT"))
			err := b("COMMIT")
			if tc.skew {
				require.NoError(t, err)
				require.Equal(t, "[[0]]", on())
				return
			}
			requireConflict(t, err)
			require.NoError(t, b("ROLLBACK"))
			require.Equal(t, "[[1]]", on())
		})
	}

	// Through the primary key only the rows read are guarded.
	d.exec("DELETE FROM doctors")
	d.exec("INSERT INTO doctors VALUES (1, 1), (2, 1), (3, 1)")
	a, b := sess(), sess()
	require.NoError(t, a("BEGIN"))
	require.NoError(t, a("SELECT oncall FROM doctors WHERE id = 1 FOR UPDATE"))
	require.NoError(t, b("UPDATE doctors SET oncall = 5 WHERE id = 2"))
	require.NoError(t, a("UPDATE doctors SET oncall = 0 WHERE id = 3"))
	require.NoError(t, a("COMMIT"))
	require.NoError(t, a("BEGIN"))
	require.NoError(t, a("SELECT oncall FROM doctors WHERE id = 1 FOR UPDATE"))
	require.NoError(t, b("UPDATE doctors SET oncall = 5 WHERE id = 1"))
	require.NoError(t, a("UPDATE doctors SET oncall = 7 WHERE id = 3"))
	err := a("COMMIT")
	requireConflict(t, err)
}

func TestContainsFold(t *testing.T) {
	require.True(t, containsFold("SELECT 1 FOR UPDATE", "for update"))
	require.True(t, containsFold("select 1 for update", "for update"))
	require.True(t, containsFold("x LOCK IN SHARE MODE", "lock in share mode"))
	require.False(t, containsFold("UPDATE t SET a = 1", "for update"))
	require.False(t, containsFold("for upd", "for update"))
	require.False(t, containsFold("", "for update"))
}

// TestLockingReadsPessimistic: in pessimistic transactions a locking read
// waits for rows another transaction locked and then reads their latest
// versions, so write skew is prevented by waiting (FOR UPDATE) or by a
// deadlock (LOCK IN SHARE MODE, where both read and then both write).
func TestLockingReadsPessimistic(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE doctors (id INT PRIMARY KEY, oncall INT)")
	d.exec("INSERT INTO doctors VALUES (1, 1), (2, 1)")
	sess := func() func(string) ([]sql.Row, error) {
		ctx := d.newCtx()
		return func(stmt string) ([]sql.Row, error) {
			return query(d.e, ctx.WithQuery(stmt), stmt)
		}
	}
	a, b := sess(), sess()
	mustRun := func(f func(string) ([]sql.Row, error), q string) []sql.Row {
		rows, err := f(q)
		require.NoError(t, err, q)
		return rows
	}
	const read = "SELECT COUNT(*) FROM doctors WHERE oncall = 1 FOR UPDATE"
	mustRun(a, "BEGIN")
	require.Equal(t, "[[2]]", fmt.Sprint(mustRun(a, read)))
	mustRun(b, "BEGIN")
	got := make(chan string, 1)
	go func() { got <- fmt.Sprint(mustRun(b, read)) }()
	awaitLockWaiters(t, d, 1, got)
	mustRun(a, "UPDATE doctors SET oncall = 0 WHERE id = 1")
	mustRun(a, "COMMIT")
	// B waited, and counts the latest rows: only one doctor is left.
	require.Equal(t, "[[1]]", <-got)
	mustRun(b, "COMMIT")

	// Shared locks: both read, both try to write, one is the victim.
	d.exec("UPDATE doctors SET oncall = 1")
	const share = "SELECT COUNT(*) FROM doctors WHERE oncall = 1 LOCK IN SHARE MODE"
	mustRun(a, "BEGIN")
	mustRun(b, "BEGIN")
	mustRun(a, share)
	mustRun(b, share)
	errA := make(chan error, 1)
	go func() {
		_, err := a("UPDATE doctors SET oncall = 0 WHERE id = 1")
		errA <- err
	}()
	awaitLockWaiters(t, d, 1, errA)
	_, errB := b("UPDATE doctors SET oncall = 0 WHERE id = 2")
	requireConflict(t, errB) // b closed the cycle: the victim
	require.NoError(t, <-errA)
	mustRun(a, "COMMIT")
	mustRun(b, "ROLLBACK")
	require.Equal(t, "[[1]]", fmt.Sprint(d.exec("SELECT COUNT(*) FROM doctors WHERE oncall = 1")))
}
