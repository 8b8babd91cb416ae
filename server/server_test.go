package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"errors"
	"fmt"
	"log"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/clienttest"
	"github.com/strata-db/strata/server/servertest"
	"github.com/strata-db/strata/sqlstore"
)

// testServer starts a server on a free loopback port over a fresh folder
// (or cfg.Data) and stops it at the end of the test.
func testServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	if cfg.Data == "" {
		cfg.Data = t.TempDir()
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.User == "" {
		cfg.User = "root"
	}
	if cfg.MaxConnections == 0 {
		cfg.MaxConnections = 50
	}
	if cfg.MaxAllowedPacket == 0 {
		cfg.MaxAllowedPacket = 16 << 20
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = time.Hour
	}
	// Long enough never to fire in a test that does not set them.
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = time.Hour
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = time.Hour
	}
	cfg.NoSync = true
	cfg.Logger = log.New(testLog{t}, "", 0)
	s, err := Start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// client opens a go-sql-driver/mysql pool to the server
// (servertest.Client).
func client(t *testing.T, addr, user, password, params string) *sql.DB {
	t.Helper()
	return servertest.Client(t, addr, user, password, params)
}

func mysqlNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// waitFor polls cond until it holds, failing after 30 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "never: %s", what)
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServerTransfers runs many clients at once, each moving money between
// accounts in transactions and retrying on write conflicts; the total
// stays the same.
func TestServerTransfers(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	db.SetMaxOpenConns(16)
	_, err := db.Exec("CREATE TABLE acct (id INT PRIMARY KEY, balance INT NOT NULL)")
	require.NoError(t, err)
	for i := range 10 {
		_, err := db.Exec("INSERT INTO acct VALUES (?, 100)", i)
		require.NoError(t, err)
	}
	const clients, transfers = 8, 15
	clienttest.Concurrently(t, clients, func(c int) error {
		for i := range transfers {
			from, to := (c+i)%10, (c+2*i+1)%10
			if from == to {
				continue
			}
			if err := transfer(db, from, to, 1); err != nil {
				return err
			}
		}
		return nil
	})
	var total int
	require.NoError(t, db.QueryRow("SELECT SUM(balance) FROM acct").Scan(&total))
	require.Equal(t, 1000, total)

	// Prepared statements over the wire.
	stmt, err := db.Prepare("SELECT balance FROM acct WHERE id = ?")
	require.NoError(t, err)
	defer stmt.Close()
	var b int
	require.NoError(t, stmt.QueryRow(3).Scan(&b))

	// Errors carry MySQL's number and SQLSTATE.
	_, err = db.Exec("SELECT * FROM nope")
	var me *mysql.MySQLError
	require.True(t, errors.As(err, &me), "%v", err)
	require.Equal(t, uint16(1146), me.Number)
	require.Equal(t, "42S02", string(me.SQLState[:]))
}

// TestServerAutocommitCounter: autocommit increments of one row from many
// clients all succeed, as InnoDB makes them wait for the row, through text
// queries and prepared statements (interpolateParams=false sends
// COM_STMT_EXECUTE); inside a transaction a lost conflict still fails with
// 1213 for the client to handle.
func TestServerAutocommitCounter(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	db.SetMaxOpenConns(8)
	_, err := db.Exec("CREATE TABLE c (id INT PRIMARY KEY, n INT)")
	require.NoError(t, err)
	_, err = db.Exec("INSERT INTO c VALUES (1, 0)")
	require.NoError(t, err)
	inc, err := db.Prepare("UPDATE c SET n = n + ? WHERE id = 1")
	require.NoError(t, err)
	defer inc.Close()
	const workers, each = 8, 25
	clienttest.Concurrently(t, workers, func(g int) error {
		for i := range each {
			var err error
			if (g+i)%2 == 0 {
				_, err = db.Exec("UPDATE c SET n = n + 1 WHERE id = 1")
			} else {
				_, err = inc.Exec(1)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	require.Equal(t, []int{workers * each}, queryInts(t, db, "SELECT n FROM c"))

	// In an optimistic transaction the conflict is the client's.
	ctx := context.Background()
	c1, err := db.Conn(ctx)
	require.NoError(t, err)
	defer c1.Close()
	_, err = c1.ExecContext(ctx, "SET strata_txn_mode = 'optimistic'")
	require.NoError(t, err)
	_, err = c1.ExecContext(ctx, "BEGIN")
	require.NoError(t, err)
	_, err = c1.ExecContext(ctx, "UPDATE c SET n = n + 1 WHERE id = 1")
	require.NoError(t, err)
	_, err = db.Exec("UPDATE c SET n = n + 1 WHERE id = 1")
	require.NoError(t, err)
	_, err = c1.ExecContext(ctx, "COMMIT")
	require.Equal(t, uint16(1213), mysqlNumber(err), "%v", err)
	require.Equal(t, []int{workers*each + 1}, queryInts(t, db, "SELECT n FROM c"))

	// In a pessimistic one (the default) the autocommit write waits for
	// the transaction, then adds to its commit.
	c2, err := db.Conn(ctx)
	require.NoError(t, err)
	defer c2.Close()
	_, err = c2.ExecContext(ctx, "BEGIN")
	require.NoError(t, err)
	_, err = c2.ExecContext(ctx, "UPDATE c SET n = n + 1 WHERE id = 1")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := db.Exec("UPDATE c SET n = n + 1 WHERE id = 1")
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	_, err = c2.ExecContext(ctx, "COMMIT")
	require.NoError(t, err)
	require.NoError(t, <-done)
	require.Equal(t, []int{workers*each + 3}, queryInts(t, db, "SELECT n FROM c"))
}

func transfer(db *sql.DB, from, to, amount int) error {
	for {
		tx, err := db.Begin()
		if err != nil {
			return err
		}
		_, err = tx.Exec("UPDATE acct SET balance = balance - ? WHERE id = ?", amount, from)
		if err == nil {
			_, err = tx.Exec("UPDATE acct SET balance = balance + ? WHERE id = ?", amount, to)
		}
		if err == nil {
			err = tx.Commit()
		} else {
			_ = tx.Rollback()
		}
		if mysqlNumber(err) == 1213 {
			continue
		}
		return err
	}
}

func TestServerAuthentication(t *testing.T) {
	s := testServer(t, Config{Password: "right"})
	tests := []struct {
		user, password string
		ok             bool
	}{
		{"root", "right", true},
		{"root", "wrong", false},
		{"root", "", false},
		{"nobody", "right", false},
	}
	for _, tc := range tests {
		err := client(t, s.Addr(), tc.user, tc.password, "").Ping()
		if tc.ok {
			require.NoError(t, err)
		} else {
			require.Equal(t, uint16(1045), mysqlNumber(err), "%s/%s: %v", tc.user, tc.password, err)
		}
	}
}

func TestServerRefusesOpenAddressWithoutPassword(t *testing.T) {
	_, err := Start(Config{Data: t.TempDir(), Listen: "0.0.0.0:0", User: "root", MaxConnections: 1, MaxAllowedPacket: 1 << 20, IdleTimeout: time.Hour})
	require.ErrorContains(t, err, "has no password")
}

func TestServerConnectionLimit(t *testing.T) {
	s := testServer(t, Config{Password: "pw", MaxConnections: 2})
	db := client(t, s.Addr(), "root", "pw", "")
	db.SetMaxIdleConns(0) // closing a *sql.Conn closes its connection
	ctx := context.Background()
	var held []*sql.Conn
	for range 3 { // the third in the slot kept for an account with SUPER, as root is
		c, err := db.Conn(ctx)
		require.NoError(t, err)
		require.NoError(t, c.PingContext(ctx))
		held = append(held, c)
	}
	other := client(t, s.Addr(), "root", "pw", "")
	err := other.Ping()
	require.Equal(t, uint16(1040), mysqlNumber(err), "%v", err)
	require.ErrorContains(t, err, "Too many connections")
	require.NoError(t, held[0].Close())
	// The slot is free once the server has seen the connection close.
	waitFor(t, "the freed slot is reused", func() bool { return other.Ping() == nil })
	require.NoError(t, held[1].Close())
	require.NoError(t, held[2].Close())
}

func TestServerIdleTimeout(t *testing.T) {
	s := testServer(t, Config{Password: "pw", IdleTimeout: 200 * time.Millisecond})
	db := client(t, s.Addr(), "root", "pw", "")
	c, err := db.Conn(context.Background())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.PingContext(context.Background()))
	waitFor(t, "the idle connection is closed", func() bool {
		s.ln.mu.Lock()
		defer s.ln.mu.Unlock()
		return len(s.ln.conns) == 0
	})
}

func TestServerMaxAllowedPacket(t *testing.T) {
	s := testServer(t, Config{Password: "pw", MaxAllowedPacket: 4096})
	db := client(t, s.Addr(), "root", "pw", "")
	_, err := db.Exec("SELECT '" + strings.Repeat("x", 10000) + "'")
	require.Error(t, err)
	var n int
	other := client(t, s.Addr(), "root", "pw", "")
	require.NoError(t, other.QueryRow("SELECT 1").Scan(&n), "other connections keep working")
	var v int64
	require.NoError(t, other.QueryRow("SELECT @@max_allowed_packet").Scan(&v))
	require.Equal(t, int64(4096), v)
}

func TestServerFilesConfined(t *testing.T) {
	data := t.TempDir()
	s := testServer(t, Config{Data: data, Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	files, err := filepath.Abs(filepath.Join(data, filesDir))
	require.NoError(t, err)
	outside := filepath.Join(t.TempDir(), "out.txt")
	secret := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("secret"), 0o600))

	_, err = db.Exec("CREATE TABLE t (id INT PRIMARY KEY)")
	require.NoError(t, err)
	_, err = db.Exec("INSERT INTO t VALUES (1), (2)")
	require.NoError(t, err)
	_, err = db.Exec(fmt.Sprintf("SELECT * FROM t INTO OUTFILE '%s'", outside))
	require.Error(t, err)
	require.NoFileExists(t, outside)

	inside := filepath.Join(files, "out.txt")
	_, err = db.Exec(fmt.Sprintf("SELECT * FROM t INTO OUTFILE '%s'", inside))
	require.NoError(t, err)
	require.FileExists(t, inside)

	var got sql.NullString
	require.NoError(t, db.QueryRow("SELECT LOAD_FILE(?)", secret).Scan(&got))
	require.False(t, got.Valid, "files outside the folder read as NULL")
	require.NoError(t, db.QueryRow("SELECT LOAD_FILE(?)", inside).Scan(&got))
	require.Equal(t, "1\n2\n", got.String)

	_, err = db.Exec(fmt.Sprintf("LOAD DATA INFILE '%s' INTO TABLE t", secret))
	require.Error(t, err)
}

func TestServerRequireSecureTransport(t *testing.T) {
	cert, key := selfSigned(t)
	s := testServer(t, Config{Password: "pw", TLSCert: cert, TLSKey: key, RequireSecureTransport: true})
	err := client(t, s.Addr(), "root", "pw", "tls=false").Ping()
	require.Error(t, err, "a client without TLS gets no session")
	db := client(t, s.Addr(), "root", "pw", "tls=skip-verify")
	var cipher string
	var name string
	require.NoError(t, db.QueryRow("SHOW STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher))
	var n int
	require.NoError(t, db.QueryRow("SELECT 1").Scan(&n))
}

// selfSigned writes a self-signed certificate and key for 127.0.0.1.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		DNSNames:     []string{"localhost"},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
	return certFile, keyFile
}

// TestServerUsersPersist creates an account with limited rights, restarts
// the server, and checks the account and its rights are still there.
func TestServerUsersPersist(t *testing.T) {
	data := t.TempDir()
	s := testServer(t, Config{Data: data, Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	for _, q := range []string{
		"CREATE TABLE t (id INT PRIMARY KEY)",
		"INSERT INTO t VALUES (1)",
		"CREATE USER 'reader'@'%' IDENTIFIED BY 'rpw'",
		"GRANT SELECT ON main.* TO 'reader'@'%'",
	} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, db.Close())
	require.NoError(t, s.Shutdown(context.Background()))

	// Restarted without a password: the saved one still applies.
	s = testServer(t, Config{Data: data})
	require.Equal(t, uint16(1045), mysqlNumber(client(t, s.Addr(), "root", "", "").Ping()))
	require.NoError(t, client(t, s.Addr(), "root", "pw", "").Ping())
	reader := client(t, s.Addr(), "reader", "rpw", "")
	var n int
	require.NoError(t, reader.QueryRow("SELECT COUNT(*) FROM t").Scan(&n))
	require.Equal(t, 1, n)
	_, err := reader.Exec("INSERT INTO t VALUES (2)")
	require.Equal(t, uint16(1142), mysqlNumber(err), "%v", err)
	require.NoError(t, s.Shutdown(context.Background()))

	// A new password on the command line replaces the saved one.
	s = testServer(t, Config{Data: data, Password: "new"})
	require.Equal(t, uint16(1045), mysqlNumber(client(t, s.Addr(), "root", "pw", "").Ping()))
	require.NoError(t, client(t, s.Addr(), "root", "new", "").Ping())
}

// TestServerShutdownRollsBack stops the server while a client holds an
// open transaction: after a restart its writes are gone and committed
// ones are there.
func TestServerShutdownRollsBack(t *testing.T) {
	data := t.TempDir()
	s := testServer(t, Config{Data: data, Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	_, err := db.Exec("CREATE TABLE t (id INT PRIMARY KEY)")
	require.NoError(t, err)
	_, err = db.Exec("INSERT INTO t VALUES (1)")
	require.NoError(t, err)
	tx, err := db.Begin()
	require.NoError(t, err)
	_, err = tx.Exec("INSERT INTO t VALUES (2)")
	require.NoError(t, err)
	require.NoError(t, s.Shutdown(context.Background()))
	_ = tx.Rollback()

	s = testServer(t, Config{Data: data, Password: "pw"})
	require.Equal(t, []int{1}, queryInts(t, client(t, s.Addr(), "root", "pw", ""), "SELECT id FROM t ORDER BY id"))
}

// TestServerShutdownAbandonsStuckStatement: a statement that never looks
// at its context (here a Go procedure blocked on a channel) kept Shutdown
// waiting for ever, and with it the process, past --shutdown-timeout.
// Shutdown now cancels it, closes its connection, waits abandonAfter more
// and returns ErrStatementsRunning, leaving the store open; acknowledged
// commits are there at the next open.
func TestServerShutdownAbandonsStuckStatement(t *testing.T) {
	data := t.TempDir()
	s := testServer(t, Config{Data: data, Password: "pw"})
	release := make(chan struct{})
	var releaseOnce sync.Once
	defer releaseOnce.Do(func() { close(release) })
	s.store.Provider().RegisterProcedures(gsql.ExternalStoredProcedureDetails{
		Name: "stuck",
		Function: func(*gsql.Context) (gsql.RowIter, error) {
			<-release // ignores its context
			return gsql.RowsToRowIter(), nil
		},
	})
	db := client(t, s.Addr(), "root", "pw", "")
	execAll(t, db, "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)")
	go func() { _, _ = db.Exec("CALL stuck()") }()
	waitFor(t, "the procedure to run", func() bool { return !s.h.idle() })

	s.abandonAfter = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, s.Shutdown(ctx), ErrStatementsRunning)

	releaseOnce.Do(func() { close(release) })
	waitFor(t, "the procedure to return", func() bool { return s.h.idle() })
	require.NoError(t, s.store.CloseEngine(s.engine))
	s = testServer(t, Config{Data: data, Password: "pw"})
	require.Equal(t, []int{1}, queryInts(t, client(t, s.Addr(), "root", "pw", ""), "SELECT id FROM t ORDER BY id"))
}

// queryInts returns the integers of the one-column result of q.
func queryInts(t *testing.T, db *sql.DB, q string) []int {
	t.Helper()
	rows, err := db.Query(q)
	require.NoError(t, err)
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		require.NoError(t, rows.Scan(&v))
		out = append(out, v)
	}
	require.NoError(t, rows.Err())
	return out
}

// TestServerSurvivesEnginePanic runs a statement on which GMS v0.20.0
// panics (EXECUTE of an INSERT whose parameter is a string that is not
// UTF-8): the client gets error 1105 and keeps its connection, whose
// session was reset, so the transaction open before it was rolled back.
func TestServerSurvivesEnginePanic(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	ctx := context.Background()
	_, err := db.ExecContext(ctx, "CREATE TABLE k (id INT PRIMARY KEY, s VARCHAR(20))")
	require.NoError(t, err)
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	var connID int64
	require.NoError(t, conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&connID))
	for _, q := range []string{
		"BEGIN",
		"INSERT INTO k VALUES (1, 'uncommitted')",
		"PREPARE s2 FROM 'INSERT INTO k VALUES (?, ?)'",
		"SET @x = 3",
		"SET @y = 'pr;\tr\xb4\x05ep'",
	} {
		_, err := conn.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	_, err = conn.ExecContext(ctx, "EXECUTE s2 USING @x, @y")
	if err == nil {
		t.Skip("this GMS no longer panics on EXECUTE with a non-UTF-8 string")
	}
	require.EqualValues(t, 1105, mysqlNumber(err), "%v", err)
	require.Contains(t, err.Error(), "session was reset")

	// The same connection answers, with a new session: the transaction
	// was rolled back and the prepared statement is gone.
	var again int64
	require.NoError(t, conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&again))
	require.Equal(t, connID, again, "the same connection")
	var n int
	require.NoError(t, conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM k").Scan(&n))
	require.Zero(t, n, "the open transaction was rolled back")
	_, err = conn.ExecContext(ctx, "EXECUTE s2 USING @x, @x")
	require.Error(t, err, "the session's prepared statements were dropped")
	_, err = conn.ExecContext(ctx, "INSERT INTO k VALUES (2, 'after')")
	require.NoError(t, err)
	require.NoError(t, db.QueryRowContext(ctx, "SELECT COUNT(*) FROM k").Scan(&n))
	require.Equal(t, 1, n)
}

// TestServerMultiStatementStopsAtError sends statements in one query with
// CLIENT_MULTI_STATEMENTS: as in MySQL, the first failing statement ends
// the query, nothing after it runs, and the error is the last packet.
func TestServerMultiStatementStopsAtError(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "multiStatements=true")
	db.SetMaxOpenConns(1)
	_, err := db.Exec("CREATE TABLE ms (id INT PRIMARY KEY)")
	require.NoError(t, err)
	_, err = db.Exec("INSERT INTO ms VALUES (1)")
	require.NoError(t, err)

	_, err = db.Exec("INSERT INTO ms VALUES (3); INSERT INTO ms VALUES (1); INSERT INTO ms VALUES (4)")
	require.Equal(t, uint16(1062), mysqlNumber(err), "%v", err)

	// The connection is in step: its next query gets its own answer.
	require.Equal(t, []int{1, 3}, queryInts(t, db, "SELECT id FROM ms ORDER BY id"),
		"the statement after the failing one did not run")
}

// TestServerIdleTimeoutSparesRunningQueries: the idle timeout closes a
// connection that waits for its client's next command, never one whose
// statement runs longer than the timeout.
func TestServerIdleTimeoutSparesRunningQueries(t *testing.T) {
	s := testServer(t, Config{Password: "pw", IdleTimeout: 300 * time.Millisecond})
	db := client(t, s.Addr(), "root", "pw", "")
	ctx := context.Background()
	c, err := db.Conn(ctx)
	require.NoError(t, err)
	defer c.Close()
	var v int
	require.NoError(t, c.QueryRowContext(ctx, "SELECT SLEEP(1)").Scan(&v))
	// Rows that come late, one after the other, do not count as idle
	// either.
	var n int
	require.NoError(t, c.QueryRowContext(ctx, "SELECT COUNT(*) FROM (SELECT SLEEP(0.4) FROM (SELECT 1 UNION ALL SELECT 2) x) y").Scan(&n))
	require.Equal(t, 2, n)

	// Idle now: the server closes the connection.
	waitFor(t, "the idle connection is closed", func() bool {
		s.ln.mu.Lock()
		defer s.ln.mu.Unlock()
		return len(s.ln.conns) == 0
	})
}

// TestServerErrorNumbers: errors reach clients with MySQL's number and
// SQLSTATE, also those the protocol handler of the engine numbers 1105.
func TestServerErrorNumbers(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	for _, params := range []string{"", "multiStatements=true", "interpolateParams=true"} {
		t.Run(params, func(t *testing.T) {
			db := client(t, s.Addr(), "root", "pw", params)
			_, _ = db.Exec("DROP TABLE IF EXISTS en")
			_, err := db.Exec("CREATE TABLE en (id INT PRIMARY KEY, n INT NOT NULL)")
			require.NoError(t, err)
			_, _ = db.Exec("DROP TABLE IF EXISTS enull")
			_, err = db.Exec("CREATE TABLE enull (id INT PRIMARY KEY, v INT)")
			require.NoError(t, err)
			_, err = db.Exec("INSERT INTO enull VALUES (1, NULL)")
			require.NoError(t, err)
			tests := []struct {
				q     string
				num   uint16
				state string
			}{
				{"selec 1", 1064, "42000"},
				{"SELECT 1 FROM", 1064, "42000"},
				{"CREATE TABLE en (id INT PRIMARY KEY)", 1050, "42S01"},
				{"INSERT INTO en (id) VALUES (1)", 1364, "HY000"},
				{"INSERT INTO en VALUES (1, NULL)", 1048, "23000"},
				{"ALTER TABLE enull MODIFY v INT NOT NULL", 1138, "22004"},
				{"SELECT * FROM nope", 1146, "42S02"},
				{"DROP TABLE nope", 1051, "42S02"},
				{"DROP TABLE en, nope", 1051, "42S02"},
				{"SELECT SUM(n), n, ROW_NUMBER() OVER () FROM en", 1140, "42000"},
			}
			for _, tc := range tests {
				_, err := db.Exec(tc.q)
				var me *mysql.MySQLError
				require.True(t, errors.As(err, &me), "%s: %v", tc.q, err)
				require.Equal(t, tc.num, me.Number, "%s: %v", tc.q, err)
				require.Equal(t, tc.state, string(me.SQLState[:]), "%s: %v", tc.q, err)
				require.NotContains(t, me.Message, "%!", tc.q)
			}
			_, err = db.Exec("INSERT INTO enull VALUES (1, 2)")
			var me *mysql.MySQLError
			require.True(t, errors.As(err, &me), "%v", err)
			require.Equal(t, uint16(1062), me.Number)
			require.Equal(t, "Duplicate entry '1' for key 'enull.PRIMARY'", me.Message)
			if params == "interpolateParams=true" {
				// Sent as COM_QUERY. (Without interpolation it is
				// COM_STMT_PREPARE, which the protocol layer parses
				// and fails with 1105 before the handler sees it.)
				_, err = db.Exec("selec ?", 1)
				require.Equal(t, uint16(1064), mysqlNumber(err), "%v", err)
			}
		})
	}
}

// TestServerWindowsOverGroups: a window over grouped rows runs through the
// protocol, as a query and as a prepared statement, whose parameter the
// rewrite keeps.
func TestServerWindowsOverGroups(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	for _, params := range []string{"", "interpolateParams=true"} {
		t.Run(params, func(t *testing.T) {
			db := client(t, s.Addr(), "root", "pw", params)
			_, _ = db.Exec("DROP TABLE IF EXISTS wg")
			_, err := db.Exec("CREATE TABLE wg (id INT PRIMARY KEY, k INT, c INT)")
			require.NoError(t, err)
			_, err = db.Exec("INSERT INTO wg VALUES (1,1,10),(2,1,20),(3,2,5),(4,3,7),(5,3,8)")
			require.NoError(t, err)
			require.Equal(t, []int{3, 1, 2}, queryInts(t, db,
				"SELECT RANK() OVER (ORDER BY SUM(c)) FROM wg GROUP BY k ORDER BY k"))
			rows, err := db.Query("SELECT k, RANK() OVER (ORDER BY SUM(c) DESC) FROM wg WHERE c > ? GROUP BY k ORDER BY k", 6)
			require.NoError(t, err)
			defer rows.Close()
			var got [][2]int
			for rows.Next() {
				var r [2]int
				require.NoError(t, rows.Scan(&r[0], &r[1]))
				got = append(got, r)
			}
			require.NoError(t, rows.Err())
			require.Equal(t, [][2]int{{1, 1}, {3, 2}}, got)
		})
	}
}

// TestServerKillQuery: a statement stopped by KILL QUERY fails with
// MySQL's 1317, and its connection carries on.
func TestServerKillQuery(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	ctx := context.Background()
	c, err := db.Conn(ctx)
	require.NoError(t, err)
	defer c.Close()
	var id int64
	require.NoError(t, c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id))
	errc := make(chan error, 1)
	go func() {
		var v int
		errc <- c.QueryRowContext(ctx, "SELECT SLEEP(30)").Scan(&v)
	}()
	waitFor(t, "the statement runs", func() bool {
		var n int
		err := db.QueryRow("SELECT COUNT(*) FROM information_schema.processlist WHERE id = ? AND info LIKE 'SELECT SLEEP%'", id).Scan(&n)
		return err == nil && n == 1
	})
	_, err = db.Exec(fmt.Sprintf("KILL QUERY %d", id))
	require.NoError(t, err)
	select {
	case err = <-errc:
	case <-time.After(10 * time.Second):
		t.Fatal("the killed statement still runs")
	}
	var me *mysql.MySQLError
	require.True(t, errors.As(err, &me), "%v", err)
	require.Equal(t, uint16(1317), me.Number, "%v", err)
	require.Equal(t, "70100", string(me.SQLState[:]))
	var v int
	require.NoError(t, c.QueryRowContext(ctx, "SELECT 1").Scan(&v))
}

// TestServerCounterForUpdate: the read-modify-write counter of issue 31
// over the protocol, with server-side prepared statements, in pessimistic
// transactions: every transaction waits for the row and commits.
func TestServerCounterForUpdate(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	db.SetMaxOpenConns(8)
	_, err := db.Exec("CREATE TABLE c (id INT PRIMARY KEY, n INT)")
	require.NoError(t, err)
	_, err = db.Exec("INSERT INTO c VALUES (1, 0)")
	require.NoError(t, err)
	const workers, each = 8, 25
	clienttest.Concurrently(t, workers, func(int) error {
		for range each {
			if err := clienttest.IncrementForUpdate(db); err != nil {
				return err
			}
		}
		return nil
	})
	require.Equal(t, []int{workers * each}, queryInts(t, db, "SELECT n FROM c"))
}

// TestServerKillQueryEndsLockWait: KILL QUERY of a statement waiting for a
// row lock ends the wait with 1317; the waiting connection's transaction
// goes on, and CALL strata_lock_waits() showed the wait by connection.
func TestServerKillQueryEndsLockWait(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	ctx := context.Background()
	_, err := db.ExecContext(ctx, "CREATE TABLE c (id INT PRIMARY KEY, n INT)")
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, "INSERT INTO c VALUES (1, 0)")
	require.NoError(t, err)
	holder, err := db.Conn(ctx)
	require.NoError(t, err)
	defer holder.Close()
	waiter, err := db.Conn(ctx)
	require.NoError(t, err)
	defer waiter.Close()
	var holderID, waiterID int64
	require.NoError(t, holder.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&holderID))
	require.NoError(t, waiter.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&waiterID))
	for _, q := range []string{"BEGIN", "UPDATE c SET n = 1 WHERE id = 1"} {
		_, err := holder.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	_, err = waiter.ExecContext(ctx, "BEGIN")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := waiter.ExecContext(ctx, "UPDATE c SET n = 2 WHERE id = 1")
		done <- err
	}()
	var waiting, blocking int64
	require.Eventually(t, func() bool {
		rows, err := db.QueryContext(ctx, "CALL strata_lock_waits()")
		if err != nil {
			return false
		}
		defer rows.Close()
		if !rows.Next() {
			return false
		}
		var wm, bm, table, index, key string
		var bw bool
		var secs float64
		return rows.Scan(&waiting, &wm, &blocking, &bm, &bw, &secs, &table, &index, &key) == nil
	}, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, waiterID, waiting)
	require.Equal(t, holderID, blocking)
	_, err = db.ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", waiterID))
	require.NoError(t, err)
	select {
	case err := <-done:
		require.EqualValues(t, 1317, mysqlNumber(err), "%v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("KILL QUERY did not end the lock wait")
	}
	_, err = holder.ExecContext(ctx, "COMMIT")
	require.NoError(t, err)
	_, err = waiter.ExecContext(ctx, "UPDATE c SET n = n + 10 WHERE id = 1")
	require.NoError(t, err)
	_, err = waiter.ExecContext(ctx, "COMMIT")
	require.NoError(t, err)
	require.Equal(t, []int{11}, queryInts(t, db, "SELECT n FROM c"))
}

// TestServerGlobalTxnMode: SET GLOBAL of the transaction mode and the lock
// wait bound applies to the sessions started afterwards, as MySQL's
// globals do.
func TestServerGlobalTxnMode(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	admin := client(t, s.Addr(), "root", "pw", "")
	admin.SetMaxOpenConns(1)
	_, err := admin.Exec("SET GLOBAL strata_txn_mode = 'optimistic'")
	require.NoError(t, err)
	_, err = admin.Exec("SET GLOBAL innodb_lock_wait_timeout = 7")
	require.NoError(t, err)
	later := client(t, s.Addr(), "root", "pw", "")
	var mode string
	var wait int
	require.NoError(t, later.QueryRow("SELECT @@strata_txn_mode, @@innodb_lock_wait_timeout").Scan(&mode, &wait))
	require.Equal(t, "optimistic", mode)
	require.Equal(t, 7, wait)
	_, err = admin.Exec("SET GLOBAL strata_txn_mode = 'pessimistic', GLOBAL innodb_lock_wait_timeout = 50")
	require.NoError(t, err)
}

// TestServerIdentity: over the wire, VERSION(), @@version (session and
// global) and @@version_comment give Strata's identity, the version the
// handshake announces.
func TestServerIdentity(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	var version, atVersion, globalVersion, comment string
	require.NoError(t, db.QueryRow("SELECT VERSION(), @@version, @@global.version, @@version_comment").Scan(&version, &atVersion, &globalVersion, &comment))
	require.Equal(t, sqlstore.ServerVersion, version)
	require.Equal(t, sqlstore.ServerVersion, atVersion)
	require.Equal(t, sqlstore.ServerVersion, globalVersion)
	require.Equal(t, sqlstore.VersionComment, comment)
}

// TestServerForeignKeyMessages: a foreign key violation names the
// constraint as MySQL 8 does, its database and columns, over the text
// protocol and prepared statements alike, repeated (kept plans).
func TestServerForeignKeyMessages(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	const child = "Cannot add or update a child row: a foreign key constraint fails (`main`.`fkc`, CONSTRAINT `fkc_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `fkp` (`id`))"
	const parent = "Cannot delete or update a parent row: a foreign key constraint fails (`main`.`fkc`, CONSTRAINT `fkc_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `fkp` (`id`))"
	for _, params := range []string{"", "interpolateParams=true"} {
		t.Run(params, func(t *testing.T) {
			db := client(t, s.Addr(), "root", "pw", params)
			_, _ = db.Exec("DROP TABLE IF EXISTS fkc")
			_, _ = db.Exec("DROP TABLE IF EXISTS fkp")
			for _, q := range []string{
				"CREATE TABLE fkp (id INT PRIMARY KEY)",
				"CREATE TABLE fkc (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES fkp (id))",
				"INSERT INTO fkp VALUES (1)",
				"INSERT INTO fkc VALUES (1, 1)",
			} {
				_, err := db.Exec(q)
				require.NoError(t, err, q)
			}
			for i := 0; i < 3; i++ {
				for _, tc := range []struct {
					q    string
					args []any
					num  uint16
					msg  string
				}{
					{"INSERT INTO fkc VALUES (2, 5)", nil, 1452, child},
					{"INSERT INTO fkc VALUES (?, ?)", []any{2, 5}, 1452, child},
					{"DELETE FROM fkp WHERE id = 1", nil, 1451, parent},
					{"DELETE FROM fkp WHERE id = ?", []any{1}, 1451, parent},
					{"UPDATE fkc SET pid = 9 WHERE id = 1", nil, 1452, child},
				} {
					_, err := db.Exec(tc.q, tc.args...)
					var me *mysql.MySQLError
					require.True(t, errors.As(err, &me), "%s: %v", tc.q, err)
					require.Equal(t, tc.num, me.Number, "%s: %v", tc.q, err)
					require.Equal(t, "23000", string(me.SQLState[:]), tc.q)
					require.Equal(t, tc.msg, me.Message, tc.q)
				}
			}
		})
	}
}
