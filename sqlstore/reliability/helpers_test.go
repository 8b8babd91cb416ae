// Package reliability tests the SQL layer end to end against what breaks
// databases in production: faults from the disk (errorfs), power loss
// (vfs.MemFS.CrashClone), processes killed in the middle of commits, damaged
// table files, and statements no one meant to write (a fuzz target). Every
// test states an invariant and checks it after the damage:
//
//   - the bank invariant: transfers between accounts keep the total
//     constant, and each account's balance is its opening balance plus the
//     transfers recorded in the log table, which a transfer writes in the
//     same transaction;
//   - nothing acknowledged is lost: every transaction whose COMMIT returned
//     without an error is there after recovery, and nothing is there that
//     was never attempted;
//   - damage is reported, never skipped: a read that meets a damaged block
//     fails with an error naming the table and the file; it never returns
//     fewer rows.
//
// The package holds tests only; docs/testing.md ("Reliability") lists the
// commands and the figures of the long runs.
package reliability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/sqltest"
	"github.com/strata-db/strata/kv"
	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/kvstore"
)

// store is an open sqlstore.Store with one engine, and the kv database
// under it.
type store struct {
	s  *sqlstore.Store
	e  *sqle.Engine
	db *kv.DB
}

func openStore(dir string, o *kvstore.Options) (*store, error) {
	s, db, err := kvstore.Open(dir, o)
	if err != nil {
		return nil, err
	}
	return &store{s: s, e: s.NewEngine(), db: db}, nil
}

// session returns a new session's context with db as its database.
func (st *store) session(db string) *sql.Context {
	return st.s.NewContext(context.Background(), db)
}

// query runs one statement to the end (autocommit commits when the rows
// are closed) and returns its rows.
func query(e *sqle.Engine, ctx *sql.Context, q string) ([]sql.Row, error) {
	return sqltest.Query(e, ctx, q)
}

// mustQuery runs q and fails the test on an error.
func mustQuery(t testing.TB, st *store, ctx *sql.Context, q string) []sql.Row {
	t.Helper()
	rows, err := query(st.e, ctx, q)
	require.NoError(t, err, q)
	return rows
}

// eventually polls cond until it holds. The deadline is a backstop against
// a hang, far above the time the condition needs; it does not measure
// speed.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "never: %s", what)
		time.Sleep(5 * time.Millisecond)
	}
}

// The bank: accounts whose balances only change by transfers, and a log
// with one row per transfer, written in the same transaction.
const (
	bankAccounts = 8
	bankInitial  = 1000
)

var bankSchema = []string{
	"CREATE DATABASE IF NOT EXISTS bank",
	"CREATE TABLE IF NOT EXISTS bank.acct (id INT PRIMARY KEY, balance BIGINT NOT NULL)",
	"CREATE TABLE IF NOT EXISTS bank.log (id BIGINT PRIMARY KEY, src INT NOT NULL, dst INT NOT NULL, " +
		"amount INT NOT NULL, note VARCHAR(4000), KEY by_src (src, id))",
}

// bankSetup creates the schema and opens the accounts, all in one
// statement, so that a crash leaves either no accounts or all of them.
func bankSetup(st *store) error {
	ctx := st.session("")
	for _, q := range bankSchema {
		if _, err := query(st.e, ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	ctx.SetCurrentDatabase("bank")
	rows, err := query(st.e, ctx, "SELECT COUNT(*) FROM acct")
	if err != nil {
		return err
	}
	if fmt.Sprint(rows[0][0]) != "0" {
		return nil
	}
	vals := make([]string, bankAccounts)
	for i := range vals {
		vals[i] = fmt.Sprintf("(%d, %d)", i, bankInitial)
	}
	_, err = query(st.e, ctx, "INSERT INTO acct VALUES "+strings.Join(vals, ", "))
	return err
}

// transfer is one attempted transaction: move amount from src to dst and
// log it under id.
type transfer struct {
	id       int64
	src, dst int
	amount   int
	note     int // length of the note
}

func randomTransfer(rng *rand.Rand, id int64, maxNote int) transfer {
	src := rng.IntN(bankAccounts)
	dst := (src + 1 + rng.IntN(bankAccounts-1)) % bankAccounts
	return transfer{id: id, src: src, dst: dst, amount: 1 + rng.IntN(100), note: rng.IntN(maxNote + 1)}
}

func (tr transfer) String() string {
	return fmt.Sprintf("%d %d %d %d %d", tr.id, tr.src, tr.dst, tr.amount, tr.note)
}

func parseTransfer(s string) (transfer, error) {
	var tr transfer
	_, err := fmt.Sscanf(s, "%d %d %d %d %d", &tr.id, &tr.src, &tr.dst, &tr.amount, &tr.note)
	return tr, err
}

// noteText is the note of transfer id: its length says how much the log
// row weighs, its content names the transfer.
func noteText(id int64, n int) string {
	s := fmt.Sprintf("t%d:", id)
	for len(s) < n {
		s += "abcdefghijklmnopqrstuvwxyz"
	}
	return s[:max(n, 0)]
}

// runTransfer runs tr as one transaction in ctx. The error is that of the
// first statement that failed; the transaction is rolled back then.
func runTransfer(e *sqle.Engine, ctx *sql.Context, tr transfer) error {
	stmts := []string{
		"START TRANSACTION",
		fmt.Sprintf("UPDATE acct SET balance = balance - %d WHERE id = %d", tr.amount, tr.src),
		fmt.Sprintf("UPDATE acct SET balance = balance + %d WHERE id = %d", tr.amount, tr.dst),
		fmt.Sprintf("INSERT INTO log VALUES (%d, %d, %d, %d, '%s')", tr.id, tr.src, tr.dst, tr.amount, noteText(tr.id, tr.note)),
		"COMMIT",
	}
	for _, q := range stmts {
		if _, err := query(e, ctx, q); err != nil {
			_, _ = query(e, ctx, "ROLLBACK")
			return err
		}
	}
	return nil
}

// ledger is what the test knows about the transfers it attempted.
type ledger struct {
	tried  map[int64]transfer // every attempt, by id
	acked  map[int64]bool     // COMMIT returned nil: must be present
	denied map[int64]bool     // failed with a write conflict: must be absent
}

func newLedger() *ledger {
	return &ledger{tried: map[int64]transfer{}, acked: map[int64]bool{}, denied: map[int64]bool{}}
}

// checkBank checks the bank invariants on st: either the bank was never
// set up (allowed only when nothing was acknowledged), or the accounts are
// all there, every log row is a transfer that was attempted (with the
// content attempted), every acknowledged transfer is logged, no transfer
// that failed with a conflict is, each balance is the opening balance plus
// the logged transfers, the total is unchanged, and the log's secondary
// index agrees with its rows. It returns the number of log rows.
func checkBank(t testing.TB, st *store, l *ledger) int {
	t.Helper()
	ctx := st.session("")
	dbs := mustQuery(t, st, ctx, "SHOW DATABASES LIKE 'bank'")
	if len(dbs) == 0 {
		require.Empty(t, l.acked, "the bank is gone but transfers were acknowledged")
		return 0
	}
	ctx.SetCurrentDatabase("bank")
	tables := mustQuery(t, st, ctx, "SHOW TABLES")
	if len(tables) < 2 {
		require.Empty(t, l.acked, "the bank's tables are missing but transfers were acknowledged: %v", tables)
		return 0
	}
	accts := mustQuery(t, st, ctx, "SELECT id, balance FROM acct ORDER BY id")
	if len(accts) == 0 {
		require.Empty(t, l.acked, "no accounts but transfers were acknowledged")
		require.Empty(t, mustQuery(t, st, ctx, "SELECT id FROM log"), "transfers logged without accounts")
		return 0
	}
	require.Len(t, accts, bankAccounts, "the accounts were opened in one statement: all or none")
	want := make([]int64, bankAccounts)
	for i := range want {
		want[i] = bankInitial
	}
	logRows := mustQuery(t, st, ctx, "SELECT id, src, dst, amount, note FROM log ORDER BY id")
	present := make(map[int64]bool, len(logRows))
	perSrc := make([]int, bankAccounts)
	for _, r := range logRows {
		id := r[0].(int64)
		tr, ok := l.tried[id]
		require.True(t, ok, "log row %d was never attempted: %v", id, r)
		got := fmt.Sprint(r[1:])
		require.Equal(t, fmt.Sprint([]any{int32(tr.src), int32(tr.dst), int32(tr.amount), noteText(id, tr.note)}), got,
			"log row %d holds other values than the transfer attempted", id)
		require.False(t, l.denied[id], "transfer %d failed with a write conflict but is logged", id)
		present[id] = true
		want[tr.src] -= int64(tr.amount)
		want[tr.dst] += int64(tr.amount)
		perSrc[tr.src]++
	}
	var missing []int64
	for id := range l.acked {
		if !present[id] {
			missing = append(missing, id)
		}
	}
	sort.Slice(missing, func(i, j int) bool { return missing[i] < missing[j] })
	require.Empty(t, missing, "acknowledged transfers are missing (of %d acknowledged, %d logged)", len(l.acked), len(logRows))
	var total int64
	for i, r := range accts {
		require.Equal(t, int32(i), r[0])
		require.Equal(t, want[i], r[1], "account %d: its balance disagrees with the logged transfers", i)
		total += r[1].(int64)
	}
	require.Equal(t, int64(bankAccounts*bankInitial), total, "the total changed")
	// The secondary index: one entry per row, found through the index.
	for src := range bankAccounts {
		n := mustQuery(t, st, ctx, fmt.Sprintf("SELECT COUNT(*) FROM log WHERE src = %d", src))
		require.Equal(t, fmt.Sprint(perSrc[src]), fmt.Sprint(n[0][0]), "index by_src disagrees with the rows for src = %d", src)
	}
	return len(logRows)
}
