package server

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAbuseStalledClients stalls at each step of a conversation with the
// server: silent after the greeting, part of a packet header, a header and
// part of its payload (during the handshake), and part of a statement
// after authenticating. The server closes each connection once it has
// been idle for --idle-timeout, and holds nothing for it afterwards.
func TestAbuseStalledClients(t *testing.T) {
	s := testServer(t, Config{Password: "pw", IdleTimeout: 300 * time.Millisecond})
	kept := seedRows(t, s, "pw")
	tests := []struct {
		name  string
		stall func(t *testing.T) net.Conn // the connection to wait on, or nil
	}{
		{"silent after the greeting", func(t *testing.T) net.Conn {
			return dialRaw(t, s.Addr())
		}},
		{"part of a header", func(t *testing.T) net.Conn {
			c := dialRaw(t, s.Addr())
			_, err := c.Write([]byte{40, 0})
			require.NoError(t, err)
			return c
		}},
		{"a header and part of its payload", func(t *testing.T) net.Conn {
			c := dialRaw(t, s.Addr())
			_, err := c.Write([]byte{100, 0, 0, 1, 0x85, 0xa6, 0xff})
			require.NoError(t, err)
			return c
		}},
		{"part of a statement after authenticating", func(t *testing.T) net.Conn {
			tc := newTapClient(t, s.Addr(), "pw")
			conn, err := tc.db.Conn(context.Background())
			require.NoError(t, err)
			require.NoError(t, conn.PingContext(context.Background()))
			c := tc.raw(t)
			_, err = c.Write([]byte{100, 0, 0, 0, 0x03, 'S', 'E', 'L'})
			require.NoError(t, err)
			readUntilClosed(t, c) // the server closes it
			_ = conn.Close()
			_ = tc.db.Close()
			return nil
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := baseline(t, s)
			if c := tc.stall(t); c != nil {
				readUntilClosed(t, c) // the server closes it
				_ = c.Close()
			}
			waitReleased(t, s, base)
			requireServes(t, s, "pw")
		})
	}
	kept()
}

// TestAbuseStalledHandshakesHoldSlots opens as many connections as the
// limit and never finishes their handshakes, as a slow-loris attack does:
// a legitimate client must still get in (MySQL closes connections that do
// not authenticate within connect_timeout, 10 seconds).
func TestAbuseStalledHandshakesHoldSlots(t *testing.T) {
	const limit = 3
	s := testServer(t, Config{Password: "pw", MaxConnections: limit, IdleTimeout: time.Hour, ConnectTimeout: 300 * time.Millisecond})
	for range limit {
		dialRaw(t, s.Addr())
	}
	db := client(t, s.Addr(), "root", "pw", "")
	waitFor(t, "a client gets in past connections that never authenticate", func() bool { return db.Ping() == nil })
}

// TestAbuseNeverReads sends a statement with a large result and never
// reads it: the server blocks writing to that client only. Meanwhile other
// clients read and commit writes to the same table, the committed rows are
// there, and once the client goes the server holds nothing for it.
func TestAbuseNeverReads(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	kept := seedRows(t, s, "pw")
	db := client(t, s.Addr(), "root", "pw", "")
	_, err := db.Exec("CREATE TABLE big (id INT PRIMARY KEY, n INT NOT NULL)")
	require.NoError(t, err)
	var vals []string
	for i := range 64 {
		vals = append(vals, fmt.Sprintf("(%d, 0)", i))
	}
	_, err = db.Exec("INSERT INTO big VALUES " + strings.Join(vals, ", "))
	require.NoError(t, err)
	require.NoError(t, db.Close())
	base := baseline(t, s)

	tc := newTapClient(t, s.Addr(), "pw")
	conn, err := tc.db.Conn(context.Background())
	require.NoError(t, err)
	require.NoError(t, conn.PingContext(context.Background()))
	raw := tc.raw(t)
	// About 64 MiB of result, far more than the sockets buffer.
	writePacket(t, raw, 0, comQuery("SELECT id, REPEAT('x', 1048576) FROM big"))
	waitFor(t, "the statement runs", func() bool {
		return s.h.running.Load() > 0
	})

	other := client(t, s.Addr(), "root", "pw", "")
	for i := range 20 {
		tx, err := other.Begin()
		require.NoError(t, err)
		_, err = tx.Exec("UPDATE big SET n = n + 1 WHERE id = ?", i)
		require.NoError(t, err)
		require.NoError(t, tx.Commit(), "a write to the table the stalled client reads")
	}
	var sum int
	require.NoError(t, other.QueryRow("SELECT SUM(n) FROM big").Scan(&sum))
	require.Equal(t, 20, sum)
	require.NoError(t, other.Close())

	tc.cut()
	_ = conn.Close()
	_ = tc.db.Close()
	waitReleased(t, s, base)
	kept()
}

// TestAbuseNeverReadsIsDropped leaves a client that never reads its large
// result connected: the server must give up on it (MySQL closes the
// connection after net_write_timeout, 60 seconds), freeing its slot and
// ending its transaction, whose snapshot otherwise pins old versions.
func TestAbuseNeverReadsIsDropped(t *testing.T) {
	s := testServer(t, Config{Password: "pw", IdleTimeout: time.Hour, WriteTimeout: 300 * time.Millisecond})
	tc := newTapClient(t, s.Addr(), "pw")
	conn, err := tc.db.Conn(context.Background())
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.PingContext(context.Background()))
	raw := tc.raw(t)
	writePacket(t, raw, 0, comQuery("SELECT REPEAT('x', 1048576) FROM information_schema.columns"))
	// While the client stays connected, never reading.
	waitFor(t, "the server drops a client that never reads", func() bool {
		s.ln.mu.Lock()
		defer s.ln.mu.Unlock()
		return len(s.ln.conns) == 0 && s.db.Metrics().NumSnapshots == 0
	})
}
