package server

import (
	"encoding/binary"
	"fmt"
	"io"
	"log"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/vitess/go/mysql"
)

// limitListener accepts at most max connections at once, plus one kept for
// an administrator as MySQL keeps it: the connection past max gets its
// handshake, and is admitted only if its account has CONNECTION_ADMIN or
// SUPER (admit); one more still gets MySQL's "Too many connections" error
// (1040) instead of the handshake and is closed. It also enforces the
// maximum packet size on the connections it returns, and closes them all
// on shutdown.
type limitListener struct {
	net.Listener
	max       int
	maxPacket int
	log       *log.Logger
	// connectTimeout bounds the time from accept to a logged-in session:
	// a connection that never completes the handshake would otherwise
	// hold one of the max slots until the idle timeout.
	connectTimeout time.Duration

	mu       sync.Mutex
	conns    map[*limitConn]struct{} // open connections
	admitted int                     // of conns, those logged in (admit)
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
		if l.max > 0 && len(l.conns) >= l.max+1 {
			l.mu.Unlock()
			l.log.Printf("connection from %s refused: too many connections (limit %d)", c.RemoteAddr(), l.max)
			_, _ = c.Write(errTooManyConns(0))
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

// errTooManyConnections is MySQL's refusal of a connection past
// max_connections.
var errTooManyConnections = mysql.NewSQLError(mysql.ERConCount, "08004", "Too many connections")

// errTooManyConns is the ERR packet of errTooManyConnections.
func errTooManyConns(seq byte) []byte {
	return errPacket(seq, mysql.ERConCount, "08004", "Too many connections")
}

// admit gives a connection whose client has just authenticated its slot:
// an ordinary account one of the max, an account with CONNECTION_ADMIN or
// SUPER (admin) the one beyond them too, so that an administrator can
// still log in to a server that ordinary clients have filled. It returns
// errTooManyConnections when no slot is left for the account.
func (l *limitListener) admit(c *limitConn, admin bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.max > 0 {
		limit := l.max
		if admin {
			limit++
		}
		if l.admitted >= limit {
			return errTooManyConnections
		}
		if _, open := l.conns[c]; open && !c.admitted {
			c.admitted = true
			l.admitted++
		}
	}
	c.authed = true
	return nil
}

// limit returns the connection limit, which SET GLOBAL max_connections
// changes while connections arrive.
func (l *limitListener) limit() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.max
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

// maxLoginPacket is the largest packet a client may send before it has
// authenticated. A handshake response is a few hundred bytes (user name,
// password hash, connection attributes); without this bound each
// unauthenticated connection could make the server buffer a packet of
// max_allowed_packet.
const maxLoginPacket = 8 << 10

// limitConn is an accepted connection. While the connection is not
// encrypted it follows the packet framing of what the client sends and
// fails the read that would exceed the maximum packet size (maxLoginPacket
// until the client has authenticated), after telling the client (error
// 1153), so an oversized packet is never buffered. Once the client asks
// for TLS the framing is encrypted here; the TLS connection is then
// checked above the encryption (see frameTLS).
type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once

	// state is the server's state of the connection, set when the
	// protocol handler starts it (handler.NewConnection).
	state *connState

	// admitted is set, under l.mu, when the connection took one of the
	// listener's slots for logged-in clients (limitListener.admit).
	admitted bool

	// The deadlines set on Conn (zero: none); see setDeadline. Set by
	// the connection's reads and writes, which the protocol layer's
	// timeout wrapper serializes.
	readBy, writeBy time.Time

	// resultsKept is set for good once the protocol layer may keep a
	// result's rows after the command that made them: the client asked
	// for a cursor (the rows wait for COM_STMT_FETCH), or it switched to
	// TLS and its commands can no longer be seen here.
	resultsKept atomic.Bool

	// Used by Read only (one reader at a time).
	framer framer
	// pending holds the bytes read after the command Read handed to the
	// protocol layer, for its next reads: each command is then seen at
	// the start of a read (atCommand), also when the client sent several
	// at once. Already followed by framer. Its array is kept for the
	// connection (allocated the first time a client sends ahead).
	pending, pendBuf []byte
	tls              bool // the client switched to TLS: framing no longer visible
	tlsRead          int  // bytes read since, until the client logged in

	// Login state, used on the connection's own goroutine only: the
	// protocol handler sets mc when the connection starts, and the
	// handshake sets mc.User once the client is authenticated. Until
	// then every read must end by loginBy (zero once logged in).
	mc      *mysql.Conn
	loginBy time.Time
	authed  bool // the client has authenticated (admit)

	// fieldList follows the packets written while a COM_FIELD_LIST may
	// be answered (fieldlist.go); set by Read, used by Write, both on
	// the connection's goroutine.
	fieldList fieldListWrites

	// answerTo is where the reader's answers go (answerErr): the TLS
	// connection once the client has logged in over TLS (frameTLS), the
	// connection itself when nil.
	answerTo io.Writer

	// longDataRefused holds the prepared statements a
	// COM_STMT_SEND_LONG_DATA named a parameter of that they do not have:
	// their executions fail (1210) until they are reset or closed, as
	// MySQL's do (answerStmt). nil until the first such chunk; used on
	// the connection's goroutine only.
	longDataRefused map[uint32]struct{}

	// exec answers the prepared statements and the texts the plan cache
	// runs as they are read (server_exec.go, server_text.go); nil: the
	// protocol layer answers all.
	exec *fastExec
}

// loggedIn reports whether the client has authenticated.
func (c *limitConn) loggedIn() bool {
	return c.authed || (c.mc != nil && c.mc.User != "")
}

// loggingIn reports whether the connection has a login deadline still to
// meet, and drops the deadline once the client has logged in.
func (c *limitConn) loggingIn() bool {
	if c.loginBy.IsZero() {
		return false
	}
	if c.loggedIn() {
		c.loginBy = time.Time{}
		return false
	}
	return true
}

// SetReadDeadline implements net.Conn: before login, no read may wait
// past the login deadline, whatever the idle timeout asks.
func (c *limitConn) SetReadDeadline(t time.Time) error {
	if c.loggingIn() {
		if t.IsZero() || t.After(c.loginBy) {
			t = c.loginBy
		}
		c.readBy = t
		return c.Conn.SetReadDeadline(t)
	}
	return setDeadline(c.Conn.SetReadDeadline, &c.readBy, t)
}

// SetWriteDeadline implements net.Conn.
func (c *limitConn) SetWriteDeadline(t time.Time) error {
	return setDeadline(c.Conn.SetWriteDeadline, &c.writeBy, t)
}

// deadlineSlack is how much later than asked a deadline may fall.
const deadlineSlack = 50 * time.Millisecond

// setDeadline sets the deadline t, now *cur, with set, unless the
// deadline already set is at most deadlineSlack later than t. The
// protocol layer moves the read deadline forward before every read, by
// the idle timeout, and the write deadline before every write, by the
// write timeout: two timer updates in the runtime per statement, under
// its timer locks. A deadline moved forward is set deadlineSlack further
// than asked, and the reads and writes that follow within deadlineSlack
// leave it: a connection times out at most that much later than it would.
// An earlier deadline is set as asked unless it lies within deadlineSlack
// of the one set; a zero deadline is set as asked.
func setDeadline(set func(time.Time) error, cur *time.Time, t time.Time) error {
	switch {
	case t.IsZero() || cur.IsZero():
	case t.After(*cur):
		t = t.Add(deadlineSlack)
	case cur.Sub(t) <= deadlineSlack:
		return nil
	}
	*cur = t
	return set(t)
}

// Read implements net.Conn.
func (c *limitConn) Read(b []byte) (int, error) {
	if !c.loginBy.IsZero() && !c.loggingIn() {
		// Logged in since the last read: the login deadline no longer
		// applies (the idle timeout, when set, sets its own per read).
		c.readBy = time.Time{}
		if err := c.Conn.SetReadDeadline(time.Time{}); err != nil {
			return 0, err
		}
	}
	if len(c.pending) > 0 && !c.tls {
		// What was read after the command handed over last begins the
		// next command. (Over TLS, pending holds decrypted bytes, for
		// tlsFramed.)
		n := copy(b, c.pending)
		c.pending = c.pending[n:]
		return c.atCommand(c, b, n)
	}
	// The bytes read begin a command when those before ended a packet
	// (the protocol layer reads from here only when it has nothing
	// buffered).
	f := &c.framer
	atCommand := f.hdrN == 0 && f.remaining == 0 && f.logical == 0
	if atCommand && !c.tls {
		// Every command read before is answered.
		c.fieldList.on = false
	}
	left := f.commandLeft()
	n, err := c.readMore(b)
	if c.tls || err != nil {
		return n, err
	}
	if !atCommand {
		return c.cutAtCommand(b, n, left), nil
	}
	return c.atCommand(c, b, n)
}

// commandLeft returns how many bytes the command being read has left,
// when its last packet is being read, or -1.
func (f *framer) commandLeft() int {
	if f.hdrN == 0 && f.last && f.remaining > 0 {
		return f.remaining
	}
	return -1
}

// cutAtCommand returns how much of b[:n], which continues a command that
// had left bytes to come (-1: unknown), the protocol layer gets: up to the
// command's end, the bytes after it kept in pending, so that the next
// command begins a read (a command larger than the protocol layer's
// buffer is read in parts).
func (c *limitConn) cutAtCommand(b []byte, n, left int) int {
	if left < 0 || n <= left || !c.loggedIn() {
		return n
	}
	c.keep(b[left:n])
	return left
}

// commandSource is what atCommand reads a command's further bytes from:
// the connection (limitConn), or the decrypted bytes of its TLS
// connection once the client has logged in (tlsFramed).
type commandSource interface {
	readMore(b []byte) (int, error)
}

// readMore reads from the connection into b and follows what it read
// (framer): packet sizes, COM_FIELD_LIST, cursors.
func (c *limitConn) readMore(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if c.tls {
		return n, c.checkTLSLogin(n, err)
	}
	_, ferr := c.framer.scan(b[:n], c.header)
	if c.framer.fieldList {
		c.framer.fieldList = false
		c.fieldList = fieldListWrites{on: true}
	}
	if (c.framer.cursor || c.tls) && !c.resultsKept.Load() {
		c.resultsKept.Store(true)
	}
	if ferr != nil {
		return 0, ferr
	}
	return n, err
}

// atCommand takes b[:n], which begins a command, before the protocol
// layer does: the command is completed first (read on into b, when it
// fits), then answered if answer or serve takes it; the protocol layer
// gets the first command it is left, and the bytes after it wait in
// pending for its next read, so that every command is seen here whole,
// however the client's writes were cut into reads, without an
// allocation. A command larger than b is handed over in parts
// (cutAtCommand stops at its end).
func (c *limitConn) atCommand(src commandSource, b []byte, n int) (int, error) {
	for {
		size, whole := c.whole(b, n)
		for !whole && size > 0 && size <= len(b) {
			if len(c.pending) > 0 {
				k := copy(b[n:], c.pending)
				c.pending = c.pending[k:]
				n += k
			} else {
				k, err := src.readMore(b[n:])
				n += k
				if err != nil {
					return n, err
				}
			}
			size, whole = c.whole(b, n)
		}
		if !whole {
			return n, nil // not one to answer, or larger than b
		}
		m, handled, err := c.answer(b, n)
		if !handled && c.exec != nil {
			m, handled, err = c.serve(b, n)
		}
		if err != nil {
			return 0, err
		}
		if !handled {
			if n > size {
				c.keep(b[size:n])
				n = size
			}
			return n, nil
		}
		if m == 0 && len(c.pending) > 0 {
			// Answered, and the client sent more ahead: go on with it
			// rather than return empty reads, which the protocol layer's
			// reader takes for a stuck connection after a hundred.
			m = copy(b, c.pending)
			c.pending = c.pending[m:]
		}
		if m == 0 {
			return 0, nil // answered: the protocol layer reads again
		}
		n = m // the next command, at the front of b
	}
}

// keep puts rest, read before what pending holds, in front of it. When
// pending holds bytes, those of rest came from it (a read takes from
// pending while it holds any), so they fit in its array before it.
func (c *limitConn) keep(rest []byte) {
	if len(c.pending) == 0 {
		c.pendBuf = append(c.pendBuf[:0], rest...)
		c.pending = c.pendBuf
		return
	}
	off := cap(c.pendBuf) - cap(c.pending) - len(rest)
	copy(c.pendBuf[off:], rest)
	c.pending = c.pendBuf[off : off+len(rest)+len(c.pending)]
}

// whole returns the bytes of the command b[:n] begins with (header and
// payload; 4 while its header is still to come), and whether it is whole
// in b[:n]; 0 for what is not a logged-in client's command of one packet
// (a handshake, a file's packets for LOAD DATA LOCAL).
func (c *limitConn) whole(b []byte, n int) (int, bool) {
	if !c.loggedIn() {
		return 0, false
	}
	if n < 4 {
		return 4, false
	}
	size := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
	if b[3] != 0 || size >= maxChunk {
		return 0, false
	}
	return 4 + size, 4+size <= n
}

// serve answers the command b[:n] begins with when it is a
// COM_STMT_EXECUTE or a COM_QUERY the connection's fastExec answers, whole
// in b[:n], and
// returns what the protocol layer reads instead: the bytes after it,
// moved to the front of b, none when there are none (the protocol layer
// then reads again, its read deadline set afresh). served is false when
// the command is left to the protocol layer.
func (c *limitConn) serve(b []byte, n int) (m int, served bool, err error) {
	if n < 5 || b[3] != 0 || b[4] != comStmtExecute && b[4] != comQueryByte || c.resultsKept.Load() || !c.loggedIn() {
		return n, false, nil
	}
	if st := c.state; st == nil || st.stmt.Load()&1 == 1 {
		// A command is running: what it reads is its own (LOAD DATA
		// LOCAL's file), never a command to answer beside it on the same
		// session; the protocol layer refuses what does not belong.
		return n, false, nil
	}
	size := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
	if size >= maxChunk || 4+size > n {
		return n, false, nil
	}
	if b[4] == comQueryByte {
		served, err = c.exec.query(b[4 : 4+size])
	} else {
		served, err = c.exec.exec(b[4 : 4+size])
	}
	if err != nil {
		return 0, true, err
	}
	if !served {
		return n, false, nil
	}
	return copy(b, b[4+size:n]), true, nil
}

// header checks a packet header that Read found.
func (c *limitConn) header(size, logical int, seq byte) (bool, error) {
	if err := c.checkSize(c.Conn, logical, seq); err != nil {
		return true, err
	}
	if c.framer.packets == 1 && size == 32 {
		// The first client packet is 32 bytes only when it is an
		// SSLRequest: what follows is TLS.
		c.tls = true
		return true, nil
	}
	return false, nil
}

// checkSize fails a logical packet of size bytes so far, whose latest
// header had sequence number seq, if it exceeds the packet size limit:
// it tells the client (error 1153) through w, closes the connection and
// returns the error for the read.
func (c *limitConn) checkSize(w io.Writer, size int, seq byte) error {
	limit, what := c.l.maxPacket, "max_allowed_packet"
	if !c.loggedIn() {
		if limit <= 0 || limit > maxLoginPacket {
			limit = maxLoginPacket
		}
		what = "the limit before login"
	}
	if limit <= 0 || size <= limit {
		return nil
	}
	c.l.log.Printf("connection from %s closed: a packet of more than %d bytes exceeds %s", c.RemoteAddr(), limit, what)
	_, _ = w.Write(errPacket(seq+1, mysql.ERNetPacketTooLarge, "08S01", "Got a packet bigger than 'max_allowed_packet' bytes"))
	_ = c.Close()
	return fmt.Errorf("packet larger than %s (%d bytes)", what, limit)
}

// Close implements net.Conn.
func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		if c.admitted {
			c.l.admitted--
		}
		c.l.mu.Unlock()
	})
	return err
}
