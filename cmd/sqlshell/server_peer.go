package main

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
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(peerPollInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if hungUp(raw) {
				cancel()
				return
			}
		}
	}()
	return ctx, func() {
		close(done)
		wg.Wait()
		cancel()
	}
}
