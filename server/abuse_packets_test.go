package server

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAbusePacketSizes sends statements around max_allowed_packet, in one
// protocol packet and in several (a logical packet of 16 MiB or more
// continues in the next): those within the limit run, those over it get
// error 1153 and lose their connection, and the server serves on and holds
// nothing for them.
func TestAbusePacketSizes(t *testing.T) {
	tests := []struct {
		name      string
		maxPacket int
		size      int // bytes of the string literal
		ok        bool
	}{
		{"just under the limit", 1 << 20, 1<<20 - 1024, true},
		{"just over the limit", 1 << 20, 1<<20 + 1024, false},
		{"over 16 MiB in several packets, within the limit", 24 << 20, 17 << 20, true},
		{"over the limit in several packets", 20 << 20, 24 << 20, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testServer(t, Config{Password: "pw", MaxAllowedPacket: tc.maxPacket})
			kept := seedRows(t, s, "pw")
			base := baseline(t, s)
			db := client(t, s.Addr(), "root", "pw", "")
			var n int
			err := db.QueryRow("SELECT LENGTH('" + strings.Repeat("x", tc.size) + "')").Scan(&n)
			if tc.ok {
				require.NoError(t, err)
				require.Equal(t, tc.size, n)
			} else {
				// The server answers 1153 and closes the connection while
				// the client may still be sending: the client then sees
				// the error, or (as with MySQL) only the lost connection.
				require.Error(t, err)
				t.Logf("the client sees: %v", err)
			}
			_ = db.Close() // its connection may be gone: closing it may fail
			waitReleased(t, s, base)
			requireServes(t, s, "pw")
			kept()
		})
	}
}

// TestAbuseHeaderOnly sends only the header of a packet larger than the
// limit, before and after authentication: the server answers with error
// 1153 and closes the connection at once, without waiting for (or
// buffering) the payload.
func TestAbuseHeaderOnly(t *testing.T) {
	s := testServer(t, Config{Password: "pw", MaxAllowedPacket: 1 << 20})
	base := baseline(t, s)
	big := []byte{0xff, 0xff, 0xff, 0} // 16 MiB - 1 follow, sequence 0
	t.Run("before authentication", func(t *testing.T) {
		c := dialRaw(t, s.Addr())
		big[3] = 1 // the handshake response follows the greeting
		_, err := c.Write(append(big, make([]byte, 100)...))
		require.NoError(t, err)
		require.Equal(t, []uint16{1153}, readUntilClosed(t, c))
	})
	t.Run("after authentication", func(t *testing.T) {
		tc := newTapClient(t, s.Addr(), "pw")
		conn, err := tc.db.Conn(context.Background())
		require.NoError(t, err)
		require.NoError(t, conn.PingContext(context.Background()))
		c := tc.raw(t)
		big[3] = 0
		_, err = c.Write(append(big, 0x03, 'S', 'E', 'L'))
		require.NoError(t, err)
		require.Equal(t, []uint16{1153}, readUntilClosed(t, c))
		_ = conn.Close()
		_ = tc.db.Close()
	})
	waitReleased(t, s, base)
	requireServes(t, s, "pw")
}

// malformedPackets are commands no correct client sends, after
// authentication: each is sent as one packet (sequence 0 unless said).
var malformedPackets = []struct {
	name    string
	seq     byte
	payload []byte
}{
	{"empty packet", 0, nil},
	{"unknown command", 0, []byte{0x60, 1, 2, 3}},
	{"COM_QUERY without a statement", 0, []byte{0x03}},
	{"COM_QUERY with invalid UTF-8", 0, []byte("\x03SELECT '\xff\xfe\xfd'")},
	{"COM_QUERY with a NUL", 0, []byte("\x03SELECT 1\x00; DROP TABLE kept")},
	{"COM_QUERY with a wrong sequence number", 7, []byte("\x03SELECT 1")},
	{"COM_INIT_DB of an unknown database", 0, []byte("\x02no_such_db")},
	{"COM_INIT_DB empty", 0, []byte{0x02}},
	{"COM_FIELD_LIST of an unknown table", 0, []byte("\x04nope\x00")},
	{"COM_FIELD_LIST without a terminator", 0, []byte("\x04kept")},
	{"COM_STMT_PREPARE of garbage", 0, []byte("\x16\xff\xfe)(")},
	{"COM_STMT_EXECUTE of an unknown statement", 0, []byte{0x17, 9, 9, 9, 9, 0, 1, 0, 0, 0}},
	{"COM_STMT_EXECUTE truncated", 0, []byte{0x17, 1}},
	{"COM_STMT_SEND_LONG_DATA truncated", 0, []byte{0x18, 1}},
	{"COM_STMT_CLOSE of an unknown statement", 0, []byte{0x19, 9, 9, 9, 9}},
	{"COM_STMT_RESET of an unknown statement", 0, []byte{0x1a, 9, 9, 9, 9}},
	{"COM_STMT_FETCH of an unknown statement", 0, []byte{0x1c, 9, 9, 9, 9, 1, 0, 0, 0}},
	{"COM_SET_OPTION truncated", 0, []byte{0x1b}},
	{"COM_CHANGE_USER of garbage", 0, []byte("\x11\xff\xff\xff")},
	{"COM_PROCESS_KILL of an unknown id", 0, []byte{0x0c, 0xff, 0xff, 0xff, 0x7f}},
	{"COM_BINLOG_DUMP", 0, []byte{0x12, 4, 0, 0, 0, 0, 0, 1, 0, 0, 0}},
	{"COM_STATISTICS", 0, []byte{0x09}},
	{"COM_DEBUG", 0, []byte{0x0d}},
	{"COM_RESET_CONNECTION with a trailing byte", 0, []byte{0x1f, 0}},
	{"COM_PING with trailing bytes", 0, []byte{0x0e, 1, 2, 3}},
}

// TestAbuseMalformedPackets sends each of malformedPackets on an
// authenticated connection, then a statement that marks the connection as
// alive: the server answers (an error or a result) or closes the
// connection, never anything else; then it serves other clients, keeps the
// committed rows, and holds nothing once the client is gone.
func TestAbuseMalformedPackets(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	kept := seedRows(t, s, "pw")
	for _, tc := range malformedPackets {
		t.Run(tc.name, func(t *testing.T) {
			base := baseline(t, s)
			cl := newTapClient(t, s.Addr(), "pw")
			conn, err := cl.db.Conn(context.Background())
			require.NoError(t, err)
			require.NoError(t, conn.PingContext(context.Background()))
			c := cl.raw(t)
			writePacket(t, c, tc.seq, tc.payload)
			writePacket(t, c, 0, comQuery("SELECT 'still-alive'"))
			// A backstop against a hang: the server answers long before.
			require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Minute)))
			outcome := "closed the connection"
			var codes []uint16
			for {
				p, err := readPacket(c)
				if err != nil {
					require.NotContains(t, err.Error(), "timeout", "the server neither answered nor closed")
					break
				}
				if code := errCode(p); code != 0 {
					codes = append(codes, code)
				}
				if bytes.Contains(p, []byte("still-alive")) {
					outcome = "answered, the connection lives on"
					break
				}
			}
			t.Logf("%s; errors %v", outcome, codes)
			_ = conn.Close()
			cl.cut()
			_ = cl.db.Close()
			waitReleased(t, s, base)
			requireServes(t, s, "pw")
		})
	}
	kept()
}

// TestAbuseDeepNesting sends deeply nested expressions, which a recursive
// parser or planner turns into deep recursion, to a server in a child
// process: each gets a result or an error, and the server stays up (a
// stack overflow is fatal to a Go process, so it cannot be caught).
func TestAbuseDeepNesting(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	srv := startChild(t, "--data", data, "--password", "pw")
	db := client(t, srv.Addr, "root", "pw", "")
	db.SetMaxOpenConns(1)
	nest := func(open, mid, close string, n int) string {
		return strings.Repeat(open, n) + mid + strings.Repeat(close, n)
	}
	tests := []struct {
		name, query string
	}{
		{"parentheses x1000", "SELECT " + nest("(", "1", ")", 1000)},
		{"parentheses x100000", "SELECT " + nest("(", "1", ")", 100_000)},
		{"unary minus x100000", "SELECT " + nest("-", "1", "", 100_000)},
		{"function calls x20000", "SELECT " + nest("ABS(", "1", ")", 20_000)},
		{"subqueries x2000", nest("SELECT (", "SELECT 1", ")", 2000)},
		{"JSON arrays x100000", "SELECT JSON_VALID('" + nest("[", "1", "]", 100_000) + "')"},
		{"CASE x5000", "SELECT " + nest("CASE WHEN 1 THEN ", "1", " END", 5000)},
		{"OR chain x100000", "SELECT 1 WHERE 1 = 0" + strings.Repeat(" OR 1 = 0", 100_000)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got any
			err := db.QueryRow(tc.query).Scan(&got)
			t.Logf("result %v, error %.200v", got, err)
			select {
			case <-srv.Done:
				t.Fatalf("the server died:\n%.3000s", srv.Log.String())
			default:
			}
			var n int
			require.NoError(t, client(t, srv.Addr, "root", "pw", "").QueryRow("SELECT 1").Scan(&n), "the server serves on")
		})
	}
	srv.Kill(t)
}
