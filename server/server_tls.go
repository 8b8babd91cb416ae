package server

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"reflect"
	"sync"

	"github.com/dolthub/vitess/go/mysql"
)

// Packet sizes over TLS. Once a client switches to TLS, the accepted
// connection (limitConn) reads only encrypted bytes and cannot see the
// packet framing. The protocol layer decrypts into a buffered reader of
// its own, set up with the TLS connection in the middle of the handshake,
// with no hook for what reads through it.
//
// Before login, what the client may send over TLS at all is bounded
// (maxLoginTLSBytes): the TLS handshake and a handshake response fit
// well within it, a packet of max_allowed_packet does not.
//
// At login (limitConn.frameTLS) the protocol layer's reader is pointed at
// a framing reader over the TLS connection: from then on a packet over
// the limit is refused from its header, as on a plain connection, rather
// than read in full (and refused by the handler once buffered).

// maxLoginTLSBytes is the most a client may send over TLS before it has
// logged in: its TLS handshake (a few KB with a certificate chain) and
// packets of at most maxLoginPacket.
const maxLoginTLSBytes = 8*maxLoginPacket + 32<<10

// checkTLSLogin counts n bytes read over TLS before login, and fails the
// read, closing the connection, when they exceed maxLoginTLSBytes. The
// client gets no error packet: that would have to be encrypted by the TLS
// connection whose read this is.
func (c *limitConn) checkTLSLogin(n int, err error) error {
	if c.tlsRead < 0 || c.loggedIn() {
		c.tlsRead = -1
		return err
	}
	c.tlsRead += n
	if c.tlsRead <= maxLoginTLSBytes {
		return err
	}
	c.l.log.Printf("connection from %s closed: more than %d bytes over TLS before login", c.RemoteAddr(), maxLoginTLSBytes)
	_ = c.Close()
	return fmt.Errorf("more than %d bytes over TLS before login", maxLoginTLSBytes)
}

// frameTLS makes the packet size of the TLS connection mc checked above the
// encryption, and its commands seen by the reader's refusals
// (atCommand), from the next packet on; called on the connection's
// goroutine when the client has logged in, when the client waits for the
// server's answer and nothing it sent is left unread. It does nothing
// for a connection without TLS (limitConn checks those), and it leaves
// the check to the handler (whole statements), and the commands to the
// protocol layer, if the protocol layer's reader is not where it is
// expected or holds unread bytes.
func (c *limitConn) frameTLS(mc *mysql.Conn) {
	tc, ok := mc.Conn.(*tls.Conn)
	if !ok {
		return
	}
	br := connReader(mc)
	if br == nil || br.Buffered() > 0 {
		c.l.log.Printf("connection from %s: packet sizes over TLS are checked once read", c.RemoteAddr())
		return
	}
	br.Reset(&tlsFramed{tc: tc, lc: c})
	c.answerTo = tc
}

// tlsFramed reads the decrypted bytes of a TLS connection and fails the
// read that would exceed the maximum packet size, after telling the
// client (error 1153), as limitConn does below TLS. It hands the commands
// it reads to limitConn.atCommand first, as limitConn.Read does below
// TLS, its answers written to the TLS connection (limitConn.answerTo).
type tlsFramed struct {
	tc     *tls.Conn
	lc     *limitConn
	framer framer
}

func (r *tlsFramed) Read(b []byte) (int, error) {
	c := r.lc
	if len(c.pending) > 0 {
		n := copy(b, c.pending)
		c.pending = c.pending[n:]
		return c.atCommand(r, b, n)
	}
	f := &r.framer
	atCommand := f.hdrN == 0 && f.remaining == 0 && f.logical == 0
	left := f.commandLeft()
	n, err := r.readMore(b)
	if err != nil {
		return n, err
	}
	if !atCommand {
		return c.cutAtCommand(b, n, left), nil
	}
	return c.atCommand(r, b, n)
}

// readMore reads decrypted bytes into b and follows their framing.
func (r *tlsFramed) readMore(b []byte) (int, error) {
	n, err := r.tc.Read(b)
	if _, ferr := r.framer.scan(b[:n], r.header); ferr != nil {
		return 0, ferr
	}
	return n, err
}

func (r *tlsFramed) header(_, logical int, seq byte) (bool, error) {
	if err := r.lc.checkSize(r.tc, logical, seq); err != nil {
		return true, err
	}
	return false, nil
}

var (
	readerFieldOnce  sync.Once
	readerFieldIndex = -1 // of mysql.Conn's buffered reader; -1: not found
)

// connReader returns the buffered reader that the protocol layer reads
// mc's packets from (an unexported field of mysql.Conn, found by its name
// and type), or nil.
func connReader(mc *mysql.Conn) *bufio.Reader {
	readerFieldOnce.Do(func() {
		f, ok := reflect.TypeOf((*mysql.Conn)(nil)).Elem().FieldByName("bufferedReader")
		if ok && f.Type == reflect.TypeOf((*bufio.Reader)(nil)) && len(f.Index) == 1 {
			readerFieldIndex = f.Index[0]
		}
	})
	if readerFieldIndex < 0 {
		return nil
	}
	v := reflect.ValueOf(mc).Elem().Field(readerFieldIndex)
	if v.IsNil() {
		return nil
	}
	return (*bufio.Reader)(v.UnsafePointer())
}
