package main

import (
	"encoding/binary"
	"fmt"
	"log"
	"net"
	"sync"
	"time"

	"github.com/dolthub/vitess/go/mysql"
)

// limitListener accepts at most max connections at once: one more gets
// MySQL's "Too many connections" error (1040) instead of the handshake and
// is closed. It also enforces the maximum packet size on the connections
// it returns, and closes them all on shutdown.
type limitListener struct {
	net.Listener
	max       int
	maxPacket int
	log       *log.Logger
	// connectTimeout bounds the time from accept to a logged-in session:
	// a connection that never completes the handshake would otherwise
	// hold one of the max slots until the idle timeout.
	connectTimeout time.Duration

	mu    sync.Mutex
	conns map[*limitConn]struct{} // open connections
}

func newLimitListener(l net.Listener, maxConns, maxPacket int, logger *log.Logger) *limitListener {
	return &limitListener{Listener: l, max: maxConns, maxPacket: maxPacket, log: logger, conns: make(map[*limitConn]struct{})}
}

// Accept implements net.Listener.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.max > 0 && len(l.conns) >= l.max {
			l.mu.Unlock()
			l.log.Printf("connection from %s refused: too many connections (limit %d)", c.RemoteAddr(), l.max)
			_, _ = c.Write(errPacket(0, mysql.ERConCount, "08004", "Too many connections"))
			_ = c.Close()
			continue
		}
		lc := &limitConn{Conn: c, l: l}
		l.conns[lc] = struct{}{}
		l.mu.Unlock()
		if l.connectTimeout > 0 {
			lc.loginBy = time.Now().Add(l.connectTimeout)
			if err := c.SetReadDeadline(lc.loginBy); err != nil {
				_ = lc.Close()
				continue
			}
		}
		return lc, nil
	}
}

// closeAll closes every open connection.
func (l *limitListener) closeAll() {
	l.mu.Lock()
	conns := make([]*limitConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// errPacket is a MySQL ERR packet with sequence number seq.
func errPacket(seq byte, code uint16, state, msg string) []byte {
	payload := []byte{0xff, 0, 0}
	binary.LittleEndian.PutUint16(payload[1:], code)
	payload = append(payload, '#')
	payload = append(payload, state...)
	payload = append(payload, msg...)
	hdr := []byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), seq}
	return append(hdr, payload...)
}

// maxChunk is the largest payload of one protocol packet; a logical packet
// of that size or more continues in the next one.
const maxChunk = 0xffffff

// limitConn is an accepted connection. While the connection is not
// encrypted it follows the packet framing of what the client sends and
// fails the read that would exceed the maximum packet size, after telling
// the client (error 1153), so an oversized statement is never buffered.
// Once the client asks for TLS the framing is encrypted; the handler then
// checks statement sizes instead.
type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once

	// Framing state, used by Read only (one reader at a time).
	hdr       [4]byte
	hdrN      int
	remaining int  // payload bytes left in the current packet
	last      bool // the current packet ends its logical packet
	logical   int  // size of the logical packet so far
	packets   int  // packets seen
	tls       bool // the client switched to TLS: framing no longer visible

	// Login state, used on the connection's own goroutine only: the
	// protocol handler sets mc when the connection starts, and the
	// handshake sets mc.User once the client is authenticated. Until
	// then every read must end by loginBy (zero once logged in).
	mc      *mysql.Conn
	loginBy time.Time
}

// loggingIn reports whether the connection has a login deadline still to
// meet, and drops the deadline once the client has logged in.
func (c *limitConn) loggingIn() bool {
	if c.loginBy.IsZero() {
		return false
	}
	if c.mc != nil && c.mc.User != "" {
		c.loginBy = time.Time{}
		return false
	}
	return true
}

// SetReadDeadline implements net.Conn: before login, no read may wait
// past the login deadline, whatever the idle timeout asks.
func (c *limitConn) SetReadDeadline(t time.Time) error {
	if c.loggingIn() && (t.IsZero() || t.After(c.loginBy)) {
		t = c.loginBy
	}
	return c.Conn.SetReadDeadline(t)
}

// Read implements net.Conn.
func (c *limitConn) Read(b []byte) (int, error) {
	if !c.loginBy.IsZero() && !c.loggingIn() {
		// Logged in since the last read: the login deadline no longer
		// applies (the idle timeout, when set, sets its own per read).
		if err := c.Conn.SetReadDeadline(time.Time{}); err != nil {
			return 0, err
		}
	}
	n, err := c.Conn.Read(b)
	if c.tls || c.l.maxPacket <= 0 {
		return n, err
	}
	for i := 0; i < n; {
		if c.remaining == 0 && c.hdrN < 4 {
			c.hdr[c.hdrN] = b[i]
			c.hdrN++
			i++
			if c.hdrN < 4 {
				continue
			}
			size := int(c.hdr[0]) | int(c.hdr[1])<<8 | int(c.hdr[2])<<16
			c.hdrN = 0
			c.packets++
			c.logical += size
			c.remaining = size
			c.last = size < maxChunk
			if c.logical > c.l.maxPacket {
				c.l.log.Printf("connection from %s closed: a packet of more than %d bytes exceeds max_allowed_packet", c.RemoteAddr(), c.l.maxPacket)
				_, _ = c.Conn.Write(errPacket(c.hdr[3]+1, mysql.ERNetPacketTooLarge, "08S01", "Got a packet bigger than 'max_allowed_packet' bytes"))
				_ = c.Close()
				return 0, fmt.Errorf("packet larger than max_allowed_packet (%d bytes)", c.l.maxPacket)
			}
			if c.packets == 1 && size == 32 {
				// The first client packet is 32 bytes only when it is an
				// SSLRequest: what follows is TLS.
				c.tls = true
				return n, err
			}
			if size == 0 && c.last {
				c.logical = 0
			}
			continue
		}
		k := min(c.remaining, n-i)
		c.remaining -= k
		i += k
		if c.remaining == 0 && c.last {
			c.logical = 0
		}
	}
	return n, err
}

// Close implements net.Conn.
func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return err
}
