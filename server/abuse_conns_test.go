package server

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAbuseConnectionStorm opens four times as many connections as the
// limit at once, each holding its connection while it increments counters
// in transactions: the clients past the limit get error 1040 and retry,
// nothing else fails, every acknowledged increment is there, and once the
// clients are gone the server holds nothing for them.
func TestAbuseConnectionStorm(t *testing.T) {
	const limit, clients, increments = 8, 32, 4
	s := testServer(t, Config{Password: "pw", MaxConnections: limit})
	kept := seedRows(t, s, "pw")
	db := client(t, s.Addr(), "root", "pw", "")
	_, err := db.Exec("CREATE TABLE ctr (id INT PRIMARY KEY, n INT NOT NULL)")
	require.NoError(t, err)
	_, err = db.Exec("INSERT INTO ctr VALUES (0, 0), (1, 0), (2, 0), (3, 0)")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	base := baseline(t, s)

	var refused, conflicts atomic.Int64
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := sql.Open("mysql", fmt.Sprintf("root:pw@tcp(%s)/main", s.Addr()))
			if err != nil {
				errs <- err
				return
			}
			defer db.Close()
			db.SetMaxOpenConns(1)
			db.SetMaxIdleConns(1) // the connection stays open between transactions
			<-start
			for done := 0; done < increments; {
				err := increment(db, c%4)
				switch mysqlNumber(err) {
				case 0:
					if err != nil {
						errs <- fmt.Errorf("client %d: %w", c, err)
						return
					}
					done++
				case 1040:
					refused.Add(1)
					time.Sleep(2 * time.Millisecond)
				case 1213:
					conflicts.Add(1)
				default:
					errs <- fmt.Errorf("client %d: %w", c, err)
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Positive(t, refused.Load(), "no connection was refused: the limit was never reached")
	t.Logf("%d connection attempts refused with 1040, %d write conflicts retried", refused.Load(), conflicts.Load())

	waitReleased(t, s, base)
	db = client(t, s.Addr(), "root", "pw", "")
	var total int
	require.NoError(t, db.QueryRow("SELECT SUM(n) FROM ctr").Scan(&total))
	require.Equal(t, clients*increments, total, "acknowledged increments are missing or doubled")
	require.NoError(t, db.Close())
	kept()
}

// increment adds one to counter id in a transaction.
func increment(db *sql.DB, id int) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	if _, err := tx.Exec("UPDATE ctr SET n = n + 1 WHERE id = ?", id); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// TestAbuseDisconnects cuts a client's connection (a reset, no goodbye) at
// bad moments: inside a transaction with writes, half-way through reading
// a large result, half-way through sending a statement, and after a clean
// COM_QUIT inside a transaction. Each time the server releases everything
// it held for the client, the uncommitted writes are gone, committed rows
// are all there, and a new transaction that writes the same rows commits
// without a conflict.
func TestAbuseDisconnects(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	kept := seedRows(t, s, "pw")
	db := client(t, s.Addr(), "root", "pw", "")
	_, err := db.Exec("CREATE TABLE acct (id INT PRIMARY KEY, balance INT NOT NULL, pad VARCHAR(500))")
	require.NoError(t, err)
	var vals []string
	for i := range 2000 {
		vals = append(vals, fmt.Sprintf("(%d, 100, '%s')", i, strings.Repeat("p", 400)))
	}
	_, err = db.Exec("INSERT INTO acct VALUES " + strings.Join(vals, ", "))
	require.NoError(t, err)
	require.NoError(t, db.Close())

	tests := []struct {
		name  string
		abuse func(t *testing.T, tc *tapClient)
	}{
		{"in a transaction with writes", func(t *testing.T, tc *tapClient) {
			tx, err := tc.db.Begin()
			require.NoError(t, err)
			_, err = tx.Exec("UPDATE acct SET balance = balance - 50 WHERE id < 10")
			require.NoError(t, err)
			_, err = tx.Exec("INSERT INTO acct VALUES (5000, 1, 'uncommitted')")
			require.NoError(t, err)
			tc.cut()
			_ = tx.Rollback()
		}},
		{"half-way through a large result", func(t *testing.T, tc *tapClient) {
			rows, err := tc.db.Query("SELECT a.id, a.pad, b.pad FROM acct a JOIN acct b ON b.id = a.id")
			require.NoError(t, err)
			require.True(t, rows.Next())
			tc.cut()
			_ = rows.Close()
		}},
		{"half-way through sending a statement", func(t *testing.T, tc *tapClient) {
			c, err := tc.db.Conn(context.Background())
			require.NoError(t, err)
			require.NoError(t, c.PingContext(context.Background()))
			raw := tc.raw(t)
			q := comQuery("UPDATE acct SET balance = 0 WHERE id < 1000")
			hdr := []byte{byte(len(q)), byte(len(q) >> 8), byte(len(q) >> 16), 0}
			_, err = raw.Write(append(hdr, q[:len(q)/2]...))
			require.NoError(t, err)
			tc.cut()
			_ = c.Close()
		}},
		{"COM_QUIT inside a transaction", func(t *testing.T, tc *tapClient) {
			c, err := tc.db.Conn(context.Background())
			require.NoError(t, err)
			require.NoError(t, c.PingContext(context.Background()))
			raw := tc.raw(t)
			for _, q := range []string{"BEGIN", "UPDATE acct SET balance = 0 WHERE id < 1000"} {
				writePacket(t, raw, 0, comQuery(q))
				p, err := readPacket(raw)
				require.NoError(t, err)
				require.Equal(t, byte(0), p[0], "%s: an OK packet", q)
			}
			writePacket(t, raw, 0, []byte{0x01}) // COM_QUIT
			require.Empty(t, readUntilClosed(t, raw))
			_ = c.Close()
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := baseline(t, s)
			cl := newTapClient(t, s.Addr(), "pw")
			tc.abuse(t, cl)
			_ = cl.db.Close() // its connection may be cut: closing it may fail
			waitReleased(t, s, base)

			db := client(t, s.Addr(), "root", "pw", "")
			var n, sum, extra int
			require.NoError(t, db.QueryRow("SELECT COUNT(*), SUM(balance), SUM(id >= 2000) FROM acct").Scan(&n, &sum, &extra))
			require.Equal(t, 2000, n, "rows")
			require.Equal(t, 200000, sum, "the uncommitted writes are gone")
			require.Equal(t, 0, extra, "the uncommitted insert is gone")
			// The same rows, written again: no conflict with what was cut.
			tx, err := db.Begin()
			require.NoError(t, err)
			_, err = tx.Exec("UPDATE acct SET balance = balance + 1 WHERE id < 1000")
			require.NoError(t, err)
			_, err = tx.Exec("UPDATE acct SET balance = balance - 1 WHERE id < 1000")
			require.NoError(t, err)
			require.NoError(t, tx.Commit(), "a transaction on the rows the cut client wrote")
			require.NoError(t, db.Close())
			waitReleased(t, s, base)
		})
	}
	kept()
}

// TestAbuseDisconnectMidQuery cuts a client while its statement runs: the
// server must cancel the statement (it has no one to answer) and release
// what it held, rather than run it to its end.
func TestAbuseDisconnectMidQuery(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	// Should the statement outlive the test, end it, so that the server's
	// shutdown does not wait for it.
	t.Cleanup(func() {
		for _, p := range s.engine.ProcessList.Processes() {
			s.engine.ProcessList.Kill(p.Connection)
		}
	})
	base := baseline(t, s)
	tc := newTapClient(t, s.Addr(), "pw")
	require.NoError(t, tc.db.Ping())
	done := make(chan error, 1)
	go func() {
		_, err := tc.db.Exec("SELECT SLEEP(600)")
		done <- err
	}()
	waitFor(t, "the statement runs", func() bool {
		for _, p := range s.engine.ProcessList.Processes() {
			if strings.Contains(p.Query, "SLEEP") {
				return true
			}
		}
		return false
	})
	tc.cut()
	<-done
	require.NoError(t, tc.db.Close())
	waitReleased(t, s, base)
	requireServes(t, s, "pw")
}
