package sqlstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestInsertPrefetchSameResults runs random multi-row INSERT, INSERT
// IGNORE, REPLACE and INSERT ... ON DUPLICATE KEY UPDATE statements on two
// connections, one reading a statement's duplicate-key checks in one batch
// and one reading each on its own, each in its own database: results,
// errors, warnings and rows are the same. The rows collide with stored
// rows and with each other within a statement, in the primary key and in
// unique keys (NULLs, and strings equal under the column's collation), in
// pessimistic and optimistic transactions, autocommitted and in explicit
// transactions that commit or roll back.
func TestInsertPrefetchSameResults(t *testing.T) {
	d := newTestDB(t)
	e := d.s.OpenEngine()
	batched, ref := e.NewConn(), e.NewConn()
	t.Cleanup(func() { _ = batched.Close(); _ = ref.Close(); _ = e.Close() })
	ctx := context.Background()
	require.NoError(t, batched.UseDatabase(ctx, "fa"))
	require.NoError(t, ref.UseDatabase(ctx, "rb"))
	ref.sess.noPrefetch = true
	both := func(q string) {
		t.Helper()
		for _, c := range []*Conn{batched, ref} {
			_, err := c.Exec(ctx, q)
			require.NoError(t, err, q)
		}
	}

	r := rand.New(rand.NewPCG(32, 2))
	total, failed := 0, 0
	rounds := 40
	if testing.Short() {
		rounds = 8
	}
	for round := range rounds {
		both("DROP TABLE IF EXISTS t")
		ddl := randomPrefetchTable(r)
		both(ddl)
		both([]string{"SET strata_txn_mode = 'pessimistic'", "SET strata_txn_mode = 'optimistic'"}[r.IntN(2)])
		both([]string{"SET sql_mode = ''", "SET sql_mode = 'STRICT_TRANS_TABLES'"}[r.IntN(2)])
		for range 12 {
			explicit := r.IntN(4) == 0
			if explicit {
				both("BEGIN")
			}
			for range 1 + r.IntN(3) {
				q := randomPrefetchInsert(r)
				total++
				got := execOutcome(t, batched, q)
				want := execOutcome(t, ref, q)
				require.Equal(t, want, got, "round %d, %s\n%s", round, ddl, q)
				if got.Err != "" {
					failed++
				}
			}
			if explicit {
				both([]string{"COMMIT", "ROLLBACK"}[r.IntN(2)])
			}
			require.Equal(t, tableRows(t, ref), tableRows(t, batched), "round %d: rows of %s", round, ddl)
		}
	}
	t.Logf("%d statements, %d failed; %d checks answered from a batch", total, failed, batched.sess.prefetched)
	require.Greater(t, failed, total/10, "too few statements failed")
	require.Greater(t, batched.sess.prefetched, int64(total), "the batched reads answered too few checks")
	require.Zero(t, ref.sess.prefetched)
}

// randomPrefetchTable returns a table t with a primary key id (sometimes
// AUTO_INCREMENT), unique keys on u and sometimes on (v, w), and a plain
// index on w.
func randomPrefetchTable(r *rand.Rand) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE t (id INT PRIMARY KEY")
	if r.IntN(3) == 0 {
		b.WriteString(" AUTO_INCREMENT")
	}
	b.WriteString(", u INT, v VARCHAR(8), w INT NOT NULL DEFAULT 0, UNIQUE KEY uu (u), KEY kw (w)")
	if r.IntN(2) == 0 {
		b.WriteString(", UNIQUE KEY uvw (v, w)")
	}
	b.WriteString(")")
	return b.String()
}

// randomPrefetchInsert returns a statement of 2 to 40 rows whose keys are
// drawn from small ranges, so that they meet stored rows and each other.
func randomPrefetchInsert(r *rand.Rand) string {
	var b strings.Builder
	tail := ""
	switch r.IntN(6) {
	case 0:
		b.WriteString("INSERT IGNORE INTO t")
	case 1:
		b.WriteString("REPLACE INTO t")
	case 2:
		b.WriteString("INSERT INTO t")
		tail = " ON DUPLICATE KEY UPDATE w = w + 1"
	default:
		b.WriteString("INSERT INTO t")
	}
	b.WriteString(" (id, u, v, w) VALUES ")
	n := 2 + r.IntN(39)
	base := r.IntN(2000)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		id := fmt.Sprint(base + i)
		switch r.IntN(40) {
		case 0, 1:
			id = fmt.Sprint(base + r.IntN(n)) // out of order, maybe repeated
		case 2:
			id = "NULL"
		case 3:
			id = "0"
		case 4:
			id = fmt.Sprintf("'%d'", base+i)
		}
		u := fmt.Sprint(r.IntN(8000))
		switch r.IntN(6) {
		case 0:
			u = "NULL"
		case 1:
			u = fmt.Sprint(base + r.IntN(n)) // maybe repeated
		}
		v := []string{"'a'", "'A'", "'b'", "'a '", "NULL", "'ab'"}[r.IntN(6)]
		fmt.Fprintf(&b, "(%s,%s,%s,%d)", id, u, v, r.IntN(1000))
	}
	b.WriteString(tail)
	return b.String()
}

// TestInsertPrefetchConcurrent has connections insert overlapping
// multi-row statements at once, in pessimistic transactions: a row
// committed by another connection between a statement's batched read and
// its row's check must still be found (1062), never overwritten. Each key
// is inserted by exactly one statement, and every row holds what that
// statement wrote.
func TestInsertPrefetchConcurrent(t *testing.T) {
	d := newTestDB(t)
	e := d.s.OpenEngine()
	t.Cleanup(func() { _ = e.Close() })
	ctx := context.Background()
	setup := e.NewConn()
	for _, q := range []string{"USE mydb", "CREATE TABLE t (id INT PRIMARY KEY, u INT, who INT, UNIQUE KEY uu (u))"} {
		_, err := setup.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	require.NoError(t, setup.Close())

	const workers, stmts, rows = 4, 30, 20
	var mu sync.Mutex
	wrote := map[int]int{} // id -> worker whose statement inserted it
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := e.NewConn()
			defer c.Close()
			if _, err := c.Exec(ctx, "USE mydb"); err != nil {
				errs <- err
				return
			}
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range stmts {
				base := r.IntN(200)
				var b strings.Builder
				b.WriteString("INSERT INTO t (id, u, who) VALUES ")
				for i := range rows {
					if i > 0 {
						b.WriteString(", ")
					}
					fmt.Fprintf(&b, "(%d,%d,%d)", base+i, 1000+base+i, w)
				}
				_, err := c.Exec(ctx, b.String())
				if err != nil {
					if strings.Contains(err.Error(), "Duplicate entry") || strings.Contains(err.Error(), "1213") ||
						strings.Contains(err.Error(), "deadlock") || strings.Contains(err.Error(), "Lock wait") {
						continue
					}
					errs <- err
					return
				}
				mu.Lock()
				for i := range rows {
					if prev, ok := wrote[base+i]; ok {
						mu.Unlock()
						errs <- fmt.Errorf("id %d inserted by workers %d and %d", base+i, prev, w)
						return
					}
					wrote[base+i] = w
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	c := e.NewConn()
	defer c.Close()
	_, err := c.Exec(ctx, "USE mydb")
	require.NoError(t, err)
	got := connRows(t, c, "SELECT id, who FROM t ORDER BY id")
	require.Len(t, got, len(wrote))
	for _, row := range got {
		var id, who int
		_, err := fmt.Sscan(fmt.Sprint(row[0], " ", row[1]), &id, &who)
		require.NoError(t, err)
		require.Equal(t, wrote[id], who, "id %d", id)
	}
}

// TestInsertPrefetchCases runs statements whose rows change, between their
// batched read and their checks, what the read found: by their own
// updates, replacements, earlier statements of the transaction, rows
// skipped or repeated. Each runs on a batched and a reference connection,
// which must agree on every outcome and on the rows.
func TestInsertPrefetchCases(t *testing.T) {
	cases := [][]string{
		{ // an update moves a unique key onto a later row's
			"CREATE TABLE t (id INT PRIMARY KEY, u INT, UNIQUE KEY uu (u))",
			"INSERT INTO t VALUES (1, 10)",
			"INSERT INTO t (id, u) VALUES (1, 5), (2, 11), (3, 12) ON DUPLICATE KEY UPDATE u = u + 1",
			"INSERT INTO t (id, u) VALUES (7, 20), (1, 5), (8, 21), (9, 6) ON DUPLICATE KEY UPDATE u = 21",
		},
		{ // a replacement deletes the row a later one collides with
			"CREATE TABLE t (id INT PRIMARY KEY, u INT, UNIQUE KEY uu (u))",
			"INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)",
			"REPLACE INTO t (id, u) VALUES (4, 10), (2, 40), (5, 20), (6, 11), (1, 50)",
		},
		{ // rows repeat a key, in the primary and in a unique index
			"CREATE TABLE t (id INT PRIMARY KEY, u INT, UNIQUE KEY uu (u))",
			"INSERT INTO t (id, u) VALUES (1, 1), (2, 2), (1, 3)",
			"INSERT INTO t (id, u) VALUES (1, 1), (2, 2), (3, 1)",
			"INSERT IGNORE INTO t (id, u) VALUES (1, 1), (2, 2), (1, 3), (4, 2), (5, 5), (5, 6)",
			"INSERT INTO t (id, u) VALUES (10, 10), (11, 11), (10, 12) ON DUPLICATE KEY UPDATE u = VALUES(u) + 100",
		},
		{ // rows the editor never sees, or sees with other keys than written
			"CREATE TABLE t (id INT PRIMARY KEY, u INT NOT NULL, UNIQUE KEY uu (u))",
			"SET sql_mode = ''",
			"INSERT IGNORE INTO t (id, u) VALUES (1, 1), (2, NULL), (3, 0), (4, 'x'), (5, 5)",
			"INSERT INTO t (id, u) VALUES (6, 6), (7, 'abc'), (8, 1.6), (9, 2)",
			"INSERT IGNORE INTO t (id, u) VALUES (20, 20), (21, 99999999999), (22, 2147483647), (23, 23)",
		},
		{ // auto-increment values generated among given ones
			"CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, u INT, UNIQUE KEY uu (u))",
			"INSERT INTO t (id, u) VALUES (5, 1), (NULL, 2), (6, 3), (0, 4), (8, 5)",
			"INSERT INTO t (id, u) VALUES (9, 6), (10, 7), (NULL, 8), (11, 9)",
			"INSERT IGNORE INTO t (id, u) VALUES (12, 10), (9, 11), (NULL, 12), (13, 13)",
		},
		{ // earlier statements of the transaction, kept and rolled back
			"CREATE TABLE t (id INT PRIMARY KEY, u INT, s VARCHAR(4), UNIQUE KEY (u), UNIQUE KEY (s))",
			"BEGIN",
			"INSERT INTO t VALUES (1, 1, 'a'), (2, 2, 'b')",
			"INSERT INTO t VALUES (3, 3, 'c'), (4, 4, 'A')",
			"INSERT INTO t VALUES (3, 30, 'x'), (5, 5, 'e')",
			"SAVEPOINT s",
			"INSERT INTO t VALUES (6, 6, 'f'), (7, 7, 'g')",
			"ROLLBACK TO SAVEPOINT s",
			"INSERT INTO t VALUES (6, 60, 'ff'), (7, 70, 'a '), (8, 80, 'h')",
			"INSERT INTO t VALUES (6, 61, 'fff'), (9, 9, 'i')",
			"COMMIT",
			"INSERT INTO t VALUES (10, 10, 'j'), (6, 62, 'k')",
		},
	}
	for _, mode := range []string{"pessimistic", "optimistic"} {
		for i, stmts := range cases {
			t.Run(fmt.Sprintf("%s/%d", mode, i), func(t *testing.T) {
				d := newTestDB(t)
				e := d.s.OpenEngine()
				batched, ref := e.NewConn(), e.NewConn()
				t.Cleanup(func() { _ = batched.Close(); _ = ref.Close(); _ = e.Close() })
				ctx := context.Background()
				require.NoError(t, batched.UseDatabase(ctx, "fa"))
				require.NoError(t, ref.UseDatabase(ctx, "rb"))
				ref.sess.noPrefetch = true
				for _, c := range []*Conn{batched, ref} {
					_, err := c.Exec(ctx, "SET strata_txn_mode = '"+mode+"'")
					require.NoError(t, err)
				}
				for _, q := range stmts {
					if strings.HasPrefix(q, "CREATE") {
						// Not compared: its warnings name the database.
						for _, c := range []*Conn{batched, ref} {
							_, err := c.Exec(ctx, q)
							require.NoError(t, err, q)
						}
						continue
					}
					got := execOutcome(t, batched, q)
					want := execOutcome(t, ref, q)
					require.Equal(t, want, got, q)
				}
				require.Equal(t, tableRows(t, ref), tableRows(t, batched))
				require.Positive(t, batched.sess.prefetched, "no check answered from a batch")
			})
		}
	}
}

// TestInsertPrefetchCommitAfterRead: a statement reads its keys in one
// batch, then waits for another transaction's lock on one of them; that
// transaction commits the key. The statement must find it (1062), as a
// read made after the lock would.
func TestInsertPrefetchCommitAfterRead(t *testing.T) {
	d := newTestDB(t)
	e := d.s.OpenEngine()
	a, b := e.NewConn(), e.NewConn()
	t.Cleanup(func() { _ = a.Close(); _ = b.Close(); _ = e.Close() })
	ctx := context.Background()
	for _, c := range []*Conn{a, b} {
		require.NoError(t, c.UseDatabase(ctx, "mydb"))
	}
	exec := func(c *Conn, q string) {
		t.Helper()
		_, err := c.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	exec(a, "CREATE TABLE t (id INT PRIMARY KEY, who INT)")
	exec(a, "BEGIN")
	exec(a, "INSERT INTO t VALUES (5, 1)")
	errc := make(chan error, 1)
	go func() {
		_, err := b.Exec(ctx, "INSERT INTO t VALUES (1, 2), (2, 2), (3, 2), (4, 2), (5, 2), (6, 2)")
		errc <- err
	}()
	require.Eventually(t, func() bool {
		return len(d.exec("CALL strata_lock_waits()")) == 1
	}, 10*time.Second, 5*time.Millisecond)
	exec(a, "COMMIT")
	err := <-errc
	require.Error(t, err)
	require.Contains(t, err.Error(), "Duplicate entry '5'")
	require.Positive(t, b.sess.prefetched, "no check answered from a batch")
	require.Equal(t, [][]any{{int64(5), int64(1)}}, connRows(t, a, "SELECT id, who FROM t ORDER BY id"))
}
