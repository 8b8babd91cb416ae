package sqlstore

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/stretchr/testify/require"
)

// inTxn runs stmts in one transaction in ctx, retrying on conflicts.
func inTxn(t testing.TB, d *testDB, ctx *sql.Context, stmts ...string) (retries int) {
	for {
		_, err := query(d.e, ctx, "START TRANSACTION")
		require.NoError(t, err)
		for _, q := range stmts {
			if _, err = query(d.e, ctx, q); err != nil {
				break
			}
		}
		if err == nil {
			_, err = query(d.e, ctx, "COMMIT")
		}
		if err == nil {
			return retries
		}
		_, _ = query(d.e, ctx, "ROLLBACK")
		if !IsConflict(err) {
			require.NoError(t, err)
		}
		retries++
	}
}

func TestConcurrentInserts(t *testing.T) {
	const clients, rows = 8, 50
	for _, tc := range []struct{ name, ddl string }{
		{"primary key", "CREATE TABLE t (id INT PRIMARY KEY, c INT, v VARCHAR(20), KEY kc (c))"},
		{"auto-increment", "CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, c INT, v VARCHAR(20), KEY kc (c))"},
		{"keyless", "CREATE TABLE t (id INT, c INT, v VARCHAR(20), KEY kc (c))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newTestDB(t)
			d.exec(tc.ddl)
			var wg sync.WaitGroup
			for c := 0; c < clients; c++ {
				wg.Add(1)
				go func(c int) {
					defer wg.Done()
					ctx := d.newCtx()
					for i := 0; i < rows; i++ {
						id := c*rows + i
						var q string
						if tc.name == "auto-increment" {
							q = fmt.Sprintf("INSERT INTO t (c, v) VALUES (%d, 'r%d')", c, id)
						} else {
							q = fmt.Sprintf("INSERT INTO t VALUES (%d, %d, 'r%d')", id, c, id)
						}
						// Inserts of distinct keys never conflict.
						_, err := query(d.e, ctx, q)
						require.NoError(t, err)
					}
				}(c)
			}
			wg.Wait()
			require.Equal(t, []sql.Row{{int64(clients * rows)}}, d.exec("SELECT COUNT(*) FROM t"))
			require.Equal(t, []sql.Row{{int64(clients * rows)}}, d.exec("SELECT COUNT(DISTINCT id) FROM t"))
			for c := 0; c < clients; c++ {
				require.Equal(t, []sql.Row{{int64(rows)}}, d.exec(fmt.Sprintf("SELECT COUNT(*) FROM t WHERE c = %d", c)))
			}
			d.reopen()
			require.Equal(t, []sql.Row{{int64(clients * rows)}}, d.exec("SELECT COUNT(*) FROM t"))
		})
	}
}

// TestTransfers moves money between accounts from many sessions at once;
// conflicting transactions fail and retry, and the total never changes, not
// even for readers in the middle of it all.
func TestTransfers(t *testing.T) {
	const accounts, clients, transfers, initial = 10, 6, 40, 1000
	d := newTestDB(t)
	d.exec("CREATE TABLE acct (id INT PRIMARY KEY, balance BIGINT NOT NULL)")
	for i := 0; i < accounts; i++ {
		d.exec(fmt.Sprintf("INSERT INTO acct VALUES (%d, %d)", i, initial))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	totalRetries := 0
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			ctx := d.newCtx()
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			for i := 0; i < transfers; i++ {
				from, to := rng.IntN(accounts), rng.IntN(accounts)
				if from == to {
					continue
				}
				amt := rng.IntN(50) + 1
				r := inTxn(t, d, ctx,
					fmt.Sprintf("UPDATE acct SET balance = balance - %d WHERE id = %d", amt, from),
					fmt.Sprintf("UPDATE acct SET balance = balance + %d WHERE id = %d", amt, to))
				mu.Lock()
				totalRetries += r
				mu.Unlock()
			}
		}(c)
	}
	// Readers: every snapshot sums to the same total.
	done := make(chan struct{})
	var rg sync.WaitGroup
	for r := 0; r < 2; r++ {
		rg.Add(1)
		go func() {
			defer rg.Done()
			ctx := d.newCtx()
			for {
				select {
				case <-done:
					return
				default:
				}
				rows, err := query(d.e, ctx, "SELECT SUM(balance) FROM acct")
				require.NoError(t, err)
				require.Equal(t, fmt.Sprint(accounts*initial), fmt.Sprint(rows[0][0]))
			}
		}()
	}
	wg.Wait()
	close(done)
	rg.Wait()
	require.Equal(t, "10000", fmt.Sprint(d.exec("SELECT SUM(balance) FROM acct")[0][0]))
	t.Logf("transfers retried %d times after conflicts", totalRetries)
}

// TestConcurrentMixed runs inserts, updates, deletes and indexed reads from
// many sessions and checks the indexes agree with the rows at the end.
func TestConcurrentMixed(t *testing.T) {
	const clients, ops = 6, 60
	d := newTestDB(t)
	d.exec("CREATE TABLE m (id INT PRIMARY KEY, k INT, u INT, UNIQUE KEY ku (u), KEY kk (k))")
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			ctx := d.newCtx()
			rng := rand.New(rand.NewPCG(uint64(c), 11))
			for i := 0; i < ops; i++ {
				id := c*1000 + rng.IntN(20)
				var q string
				switch rng.IntN(4) {
				case 0:
					q = fmt.Sprintf("INSERT INTO m VALUES (%d, %d, %d) ON DUPLICATE KEY UPDATE k = k + 1", id, rng.IntN(5), id)
				case 1:
					q = fmt.Sprintf("UPDATE m SET k = k + 1 WHERE id = %d", id)
				case 2:
					q = fmt.Sprintf("DELETE FROM m WHERE id = %d", id)
				default:
					q = fmt.Sprintf("SELECT * FROM m WHERE k = %d", rng.IntN(5))
				}
				if _, err := query(d.e, ctx, q); err != nil && !IsConflict(err) {
					require.NoError(t, err, q)
				}
			}
		}(c)
	}
	wg.Wait()
	all := d.exec("SELECT id, k, u FROM m ORDER BY id")
	for k := 0; k < 8; k++ {
		viaIndex := d.exec(fmt.Sprintf("SELECT id, k, u FROM m WHERE k = %d ORDER BY id", k))
		var want []sql.Row
		for _, r := range all {
			if fmt.Sprint(r[1]) == fmt.Sprint(k) {
				want = append(want, r)
			}
		}
		require.Equal(t, fmt.Sprint(want), fmt.Sprint(viaIndex), "k = %d", k)
	}
	for _, r := range all {
		require.Len(t, d.exec(fmt.Sprintf("SELECT id FROM m WHERE u = %v", r[2])), 1)
	}
}
