package server

import (
	"crypto/tls"
	"net"
	"time"

	"github.com/dolthub/vitess/go/netutil"
)

// peerPollInterval is how often the server looks for the clients of
// running statements that hung up (peerWatcher).
const peerPollInterval = 250 * time.Millisecond

// limitConnOf returns the accepted connection under c, through the
// wrappers the protocol layer adds (timeouts, TLS), or nil.
func limitConnOf(c net.Conn) *limitConn {
	for {
		switch w := c.(type) {
		case *limitConn:
			return w
		case netutil.ConnWithTimeouts:
			c = w.Conn
		case *netutil.ConnWithTimeouts:
			c = w.Conn
		case *tls.Conn:
			c = w.NetConn()
		default:
			return nil
		}
	}
}
