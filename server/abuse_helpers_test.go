package server

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"
)

// The abuse tests drive the server in-process the way hostile or broken
// clients do: too many connections, connections cut in the middle of a
// query or transaction, huge and malformed packets, clients that stall or
// never read. After each, the server must still serve, must hold nothing
// for the clients that are gone (released), and must have kept every
// committed row.

// tapClient is a client pool whose network connections the test can cut.
type tapClient struct {
	db    *sql.DB
	mu    sync.Mutex
	conns []net.Conn
}

// newTapClient opens a pool of at most one connection to addr.
func newTapClient(t *testing.T, addr, password string) *tapClient {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "root", password, "tcp", addr, "main"
	tc := &tapClient{}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			tc.mu.Lock()
			tc.conns = append(tc.conns, c)
			tc.mu.Unlock()
		}
		return c, err
	}
	conn, err := mysql.NewConnector(cfg)
	require.NoError(t, err)
	tc.db = sql.OpenDB(conn)
	tc.db.SetMaxOpenConns(1)
	// Before the server's shutdown (cleanups run last first), which waits
	// for running statements: one blocked on this client ends when cut.
	t.Cleanup(func() {
		tc.cut()
		_ = tc.db.Close()
	})
	return tc
}

// raw returns the pool's network connection, once the pool holds one.
func (tc *tapClient) raw(t *testing.T) net.Conn {
	t.Helper()
	tc.mu.Lock()
	defer tc.mu.Unlock()
	require.NotEmpty(t, tc.conns, "the client has not connected")
	return tc.conns[len(tc.conns)-1]
}

// cut resets every connection of the pool, as a client that crashed or
// lost its network does (RST, no COM_QUIT).
func (tc *tapClient) cut() {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	for _, c := range tc.conns {
		if tcp, ok := c.(*net.TCPConn); ok {
			_ = tcp.SetLinger(0)
		}
		_ = c.Close()
	}
}

// writePacket writes one protocol packet.
func writePacket(t *testing.T, c net.Conn, seq byte, payload []byte) {
	t.Helper()
	hdr := []byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), seq}
	_, err := c.Write(append(hdr, payload...))
	require.NoError(t, err)
}

// readPacket reads one protocol packet; the error is io.EOF (or a reset)
// when the server closed the connection.
func readPacket(c net.Conn) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return nil, err
	}
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	p := make([]byte, n)
	_, err := io.ReadFull(c, p)
	return p, err
}

// errCode returns the error number of an ERR packet, or 0.
func errCode(p []byte) uint16 {
	if len(p) < 3 || p[0] != 0xff {
		return 0
	}
	return binary.LittleEndian.Uint16(p[1:3])
}

// readUntilClosed reads packets until the server closes the connection,
// and returns the error numbers of the ERR packets it sent.
func readUntilClosed(t *testing.T, c net.Conn) []uint16 {
	t.Helper()
	var codes []uint16
	// A backstop against a hang: the server closes long before.
	require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Minute)))
	for {
		p, err := readPacket(c)
		if err != nil {
			var ne net.Error
			require.False(t, errors.As(err, &ne) && ne.Timeout(), "the server never closed the connection")
			return codes
		}
		if code := errCode(p); code != 0 {
			codes = append(codes, code)
		}
	}
}

// comQuery is a COM_QUERY payload.
func comQuery(q string) []byte { return append([]byte{0x03}, q...) }

// dialRaw opens a TCP connection to the server and reads its greeting.
func dialRaw(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	p, err := readPacket(c)
	require.NoError(t, err, "the greeting")
	require.Equal(t, byte(10), p[0], "protocol version 10")
	return c
}

// held describes what the server still holds for clients; "" when it
// holds nothing: no connections (listener, handler, sessions, process
// list), no running commands, no open transactions (engine snapshots),
// and no more goroutines than at baseline.
func held(s *Server, baseline int) string {
	var out []string
	s.ln.mu.Lock()
	if n := len(s.ln.conns); n > 0 {
		out = append(out, fmt.Sprintf("%d accepted connections", n))
	}
	s.ln.mu.Unlock()
	s.h.mu.Lock()
	if running := s.h.running.Load(); s.h.conns > 0 || running > 0 {
		out = append(out, fmt.Sprintf("%d handler connections, %d running commands", s.h.conns, running))
	}
	s.h.mu.Unlock()
	sessions := 0
	_ = s.gms.SessionManager().Iter(func(gsql.Session) (bool, error) { sessions++; return false, nil })
	if sessions > 0 {
		out = append(out, fmt.Sprintf("%d sessions", sessions))
	}
	if n := len(s.engine.ProcessList.Processes()); n > 0 {
		out = append(out, fmt.Sprintf("%d processes", n))
	}
	if n := s.db.Metrics().NumSnapshots; n > 0 {
		out = append(out, fmt.Sprintf("%d open transactions (snapshots)", n))
	}
	if g := runtime.NumGoroutine(); g > baseline {
		out = append(out, fmt.Sprintf("%d goroutines (baseline %d)", g, baseline))
	}
	return strings.Join(out, ", ")
}

// baseline waits until the server holds no connection and returns the
// number of goroutines then.
func baseline(t *testing.T, s *Server) int {
	t.Helper()
	// Cut connections make the driver log; the tests check what matters.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
	waitReleased(t, s, 1<<30)
	return runtime.NumGoroutine()
}

// waitReleased waits until the server holds nothing for clients (held),
// and fails with what it still holds and every goroutine's stack if that
// never happens.
func waitReleased(t *testing.T, s *Server, baseline int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // a backstop against a hang
	for {
		h := held(s, baseline)
		if h == "" {
			return
		}
		if time.Now().After(deadline) {
			var b bytes.Buffer
			_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
			t.Fatalf("the server still holds %s\n%s", h, b.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// requireServes checks that a new client can connect and query.
func requireServes(t *testing.T, s *Server, password string) {
	t.Helper()
	db := client(t, s.Addr(), "root", password, "")
	var n int
	require.NoError(t, db.QueryRow("SELECT 1").Scan(&n), "the server serves a new client")
	require.NoError(t, db.Close())
}

// seedRows creates table kept with rows committed before the abuse, and
// returns a check that they are all there, unchanged.
func seedRows(t *testing.T, s *Server, password string) func() {
	t.Helper()
	db := client(t, s.Addr(), "root", password, "")
	_, err := db.Exec("CREATE TABLE kept (id INT PRIMARY KEY, v VARCHAR(40) NOT NULL)")
	require.NoError(t, err)
	var vals []string
	for i := range 100 {
		vals = append(vals, fmt.Sprintf("(%d, 'kept-%d')", i, i))
	}
	_, err = db.Exec("INSERT INTO kept VALUES " + strings.Join(vals, ", "))
	require.NoError(t, err)
	require.NoError(t, db.Close())
	return func() {
		t.Helper()
		db := client(t, s.Addr(), "root", password, "")
		defer db.Close()
		var n, sum int
		require.NoError(t, db.QueryRow("SELECT COUNT(*), SUM(id) FROM kept WHERE v = CONCAT('kept-', id)").Scan(&n, &sum))
		require.Equal(t, 100, n, "committed rows are missing or changed")
		require.Equal(t, 4950, sum)
	}
}
