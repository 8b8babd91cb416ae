package server

import (
	"bytes"
	"context"
	"database/sql"
	"log"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a server log the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// testServerLogged is testServer with the server's log kept for the test.
func testServerLogged(t *testing.T, cfg Config) (*Server, *syncBuffer) {
	t.Helper()
	var buf syncBuffer
	cfg.Data, cfg.Listen, cfg.User = t.TempDir(), "127.0.0.1:0", "root"
	if cfg.MaxConnections == 0 {
		cfg.MaxConnections = 50
	}
	if cfg.MaxAllowedPacket == 0 {
		cfg.MaxAllowedPacket = 16 << 20
	}
	cfg.IdleTimeout, cfg.ConnectTimeout, cfg.WriteTimeout, cfg.NoSync = 3600e9, 3600e9, 3600e9, true
	cfg.Logger = log.New(&buf, "", 0)
	s, err := Start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s, &buf
}

// connectAs opens one connection as user, whatever bytes its name holds.
func connectAs(addr, user, password string) error {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = user, password, "tcp", addr
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	return db.Ping()
}

// TestAbuseLoginLogForged logs in with user names that hold line breaks
// and other control characters: the failed-login line has the name quoted
// and the client's address, and no client text starts a line of its own.
func TestAbuseLoginLogForged(t *testing.T) {
	s, logs := testServerLogged(t, Config{Password: "pw"})
	for _, user := range []string{
		"bob\n2026/01/01 00:00:00 login of user \"root\" succeeded",
		"eve\r\x1b[2Kforged",
		"root", // known, with a wrong password
	} {
		err := connectAs(s.Addr(), user, "wrong")
		require.Equal(t, uint16(1045), mysqlNumber(err), "%v", err)
		out := logs.String()
		require.Contains(t, out, `login failed for user `+strconv.Quote(user)+` from 127.0.0.1:`, out)
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		require.NotContains(t, line, "\r")
		require.False(t, strings.HasPrefix(line, "2026/01/01"), "a forged line: %q", line)
		require.NotContains(t, line, "Error authenticating user", "the protocol layer's unquoted line")
	}
}

// TestAbuseLoginPacketSize sends a handshake response far larger than any
// client's: the server refuses it from its header (1153) instead of
// buffering up to max_allowed_packet for a client that has not logged in.
// Clients with connection attributes still log in.
func TestAbuseLoginPacketSize(t *testing.T) {
	s := testServer(t, Config{Password: "pw", MaxAllowedPacket: 64 << 20})
	base := baseline(t, s)
	for _, size := range []int{maxLoginPacket + 1, 1 << 20, 16<<20 - 1} {
		c := dialRaw(t, s.Addr())
		hdr := []byte{byte(size), byte(size >> 8), byte(size >> 16), 1}
		_, err := c.Write(append(hdr, make([]byte, 1024)...))
		require.NoError(t, err)
		require.Equal(t, []uint16{1153}, readUntilClosed(t, c), "a handshake response of %d bytes", size)
	}
	waitReleased(t, s, base)
	db := client(t, s.Addr(), "root", "pw", "connectionAttributes="+"app:"+strings.Repeat("a", 1000))
	require.NoError(t, db.Ping())
	require.NoError(t, db.Close())
}

// TestServerReservedAdminSlot fills max_connections with an ordinary
// account: one more ordinary connection gets 1040, but one account with
// SUPER or CONNECTION_ADMIN (root) still gets in, as in MySQL; past that
// slot, root gets 1040 too.
func TestServerReservedAdminSlot(t *testing.T) {
	const limit = 2
	s := testServer(t, Config{Password: "pw", MaxConnections: limit})
	root := client(t, s.Addr(), "root", "pw", "")
	for _, q := range []string{
		"CREATE USER 'app'@'%' IDENTIFIED BY 'apw'",
		"GRANT SELECT ON *.* TO 'app'@'%'",
		"CREATE USER 'ops'@'%' IDENTIFIED BY 'opw'",
		"GRANT SUPER ON *.* TO 'ops'@'%'",
	} {
		_, err := root.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, root.Close())
	waitFor(t, "the setup connection is closed", func() bool {
		s.ln.mu.Lock()
		defer s.ln.mu.Unlock()
		return len(s.ln.conns) == 0
	})

	ctx := context.Background()
	hold := func(user, password string) (*sql.Conn, error) {
		db := client(t, s.Addr(), user, password, "")
		db.SetMaxIdleConns(0) // closing a *sql.Conn closes its connection
		c, err := db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		if err := c.PingContext(ctx); err != nil {
			_ = c.Close()
			return nil, err
		}
		t.Cleanup(func() { _ = c.Close() })
		return c, nil
	}
	for range limit {
		_, err := hold("app", "apw")
		require.NoError(t, err)
	}
	_, err := hold("app", "apw")
	require.Equal(t, uint16(1040), mysqlNumber(err), "an ordinary connection past the limit: %v", err)
	require.ErrorContains(t, err, "Too many connections")
	waitFor(t, "the refused connection is closed", func() bool {
		s.ln.mu.Lock()
		defer s.ln.mu.Unlock()
		return len(s.ln.conns) == limit
	})

	for _, admin := range []struct{ user, password string }{{"root", "pw"}, {"ops", "opw"}} {
		c, err := hold(admin.user, admin.password)
		require.NoError(t, err, "%s takes the reserved slot", admin.user)
		var n int
		require.NoError(t, c.QueryRowContext(ctx, "SELECT 1").Scan(&n))
		_, err = hold(admin.user, admin.password)
		require.Equal(t, uint16(1040), mysqlNumber(err), "%s past the reserved slot: %v", admin.user, err)
		require.NoError(t, c.Close())
		waitFor(t, "the reserved slot is free", func() bool {
			s.ln.mu.Lock()
			defer s.ln.mu.Unlock()
			return s.ln.admitted == limit
		})
	}
}
