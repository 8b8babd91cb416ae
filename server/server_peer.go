package server

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/dolthub/vitess/go/netutil"
)

// peerPollInterval is how often a running statement checks that its
// client is still connected.
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

// watchPeer returns a context for a statement of connection c that is
// cancelled when the client hangs up, and a stop function that ends the
// watch and must be called when the statement returns. A client that
// disconnects mid-statement has nobody to answer: its statement is
// cancelled rather than left holding its session and snapshot to the end.
//
// GMS has a checker of its own, which finds nothing to check under the
// listener's connection wrapper; this one looks through it and polls the
// socket for a hang-up without reading, so pipelined requests stay
// unread.
func watchPeer(ctx context.Context, c net.Conn) (context.Context, func()) {
	lc := limitConnOf(c)
	if lc == nil {
		return ctx, func() {}
	}
	sc, ok := lc.Conn.(syscall.Conn)
	if !ok {
		return ctx, func() {}
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return ctx, func() {}
	}
	// No goroutine until the statement has run for a poll interval: most
	// finish sooner, and then cost only a timer.
	ctx, cancel := context.WithCancel(ctx)
	w := &peerWatch{raw: raw, cancel: cancel}
	w.mu.Lock()
	w.timer = time.AfterFunc(peerPollInterval, w.poll)
	w.mu.Unlock()
	return ctx, w.stop
}

// peerWatch polls a statement's client from a timer.
type peerWatch struct {
	raw    syscall.RawConn
	cancel context.CancelFunc

	mu      sync.Mutex // held by a poll in progress
	timer   *time.Timer
	stopped bool
}

// poll runs on the timer's goroutine: it cancels the statement if the
// client hung up, else sets the timer again.
func (w *peerWatch) poll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	if hungUp(w.raw) {
		w.cancel()
		return
	}
	w.timer.Reset(peerPollInterval)
}

// stop ends the watch; after it returns no poll runs.
func (w *peerWatch) stop() {
	w.mu.Lock()
	w.stopped = true
	w.timer.Stop()
	w.mu.Unlock()
	w.cancel()
}
