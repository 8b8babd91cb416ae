package server

import (
	"context"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/strata-db/strata/sqlstore"
)

// connState is what the server keeps of one client connection. It hangs
// on the accepted connection (limitConn), where a command finds it without
// a lookup in a map that every connection shares: with eight clients on
// two CPUs, a lock taken by every statement of every connection is held,
// now and then, by a thread the operating system has just descheduled,
// and the others wait for it.
type connState struct {
	id uint32 // the connection's ID

	// Used on the connection's goroutine only.
	sess   *sqlstore.Session // from the session builder (handler.track)
	sctx   *gsql.Context     // a context of sess, for the questions RunWrite asks
	direct *directConn       // the plan-cache connection of sess (directConnOf)

	// The options of the contexts of sess's statements run on cached
	// plans (statementContext), and the session they were made for.
	ctxOpts []gsql.ContextOption
	ctxSess *sqlstore.Session
	// The process ID and text of the statement whose context is being
	// made, which the last of ctxOpts, made once, sets.
	pid   uint64
	query string

	// The cancellable context under the statements run on cached plans,
	// kept from statement to statement until one is cancelled (KILL
	// QUERY, a hang-up), and the context it was made from.
	stmtCtx    context.Context
	stmtCancel context.CancelFunc
	stmtParent context.Context

	// The prepared statements' arguments for the plan cache (bindArgs).
	args []sqlstore.Arg

	// The OK result of the statements run on cached plans, which the
	// protocol layer writes before the next command is read, even for a
	// prepared statement executed with a cursor.
	ok sqltypes.Result

	// The text commands' result callback (handler.shortInfoDropped).
	short shortInfo

	// The result, its row list's room and its rows' values of the
	// statements whose results are written before the next command
	// (sendResult, on runDirect's path).
	res    sqltypes.Result
	rows   [][]sqltypes.Value
	vals   rowValues
	fields fieldsCache

	// The hang-up watch (peerWatcher): stmt is odd while a command runs;
	// raw is the socket, nil when it cannot be polled.
	stmt atomic.Uint64
	raw  syscall.RawConn
	seen uint64 // stmt at the watcher's last look, the watcher's own
}

// stateOf returns the state of connection c: the one on its accepted
// connection, or, for a connection that did not come through the
// listener, the one NewConnection keeps by ID.
func (h *handler) stateOf(c *mysql.Conn) *connState {
	if lc := limitConnOf(c.Conn); lc != nil && lc.state != nil {
		return lc.state
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.states[c.ConnectionID]
}

// sessionContext returns a context of the connection's current session,
// made once per session, for questions about the session (whether a
// statement autocommits, whether its transaction is optimistic) asked
// outside any statement's context; nil before the session exists.
func (st *connState) sessionContext() *gsql.Context {
	if st.sess == nil {
		return nil
	}
	if st.sctx == nil || st.sctx.Session != st.sess {
		st.sctx = gsql.NewContext(context.Background(), gsql.WithSession(st.sess))
	}
	return st.sctx
}

// cancellable returns the cancellable context, made from parent, of the
// connection's next statement on a cached plan, and its cancel function:
// the one of the previous statement unless that was cancelled or had
// another parent. A context made per statement, as GMS's process list
// makes it, costs two allocations, and a third for the statement
// context's copy that carries it.
func (st *connState) cancellable(parent context.Context) (context.Context, context.CancelFunc) {
	if parent.Done() == nil {
		// Never cancelled: only its values would reach the statement,
		// and the protocol layer gives each text command a context of
		// its own whose one value is a runtime/trace task. The kept
		// context is made from no parent instead of anew per command.
		parent = context.Background()
	}
	if st.stmtCtx == nil || st.stmtParent != parent || st.stmtCtx.Err() != nil {
		st.stmtCtx, st.stmtCancel = context.WithCancel(parent)
		st.stmtParent = parent
	}
	return st.stmtCtx, st.stmtCancel
}

// shortInfo calls cb through dropShortInfo; fn is its call method, made
// once.
type shortInfo struct {
	cb mysql.ResultSpoolFn
	fn mysql.ResultSpoolFn
}

func (s *shortInfo) call(r *sqltypes.Result, more bool) error {
	return dropShortInfo(s.cb, r, more)
}

// commandBegin and commandEnd bracket a command for the hang-up watch.
func (st *connState) commandBegin() { st.stmt.Add(1) }
func (st *connState) commandEnd()   { st.stmt.Add(1) }

// peerWatcher cancels the statements whose clients hung up. A client that
// disconnects mid-statement has nobody to answer: its statement is
// cancelled rather than left holding its session and snapshot to the end.
//
// One goroutine watches every connection: each peerPollInterval it looks
// at the connections whose command was already running at its previous
// look, polls their sockets for a hang-up without reading (pipelined
// requests stay unread) and kills the running statement of those whose
// client is gone, through the process list, as KILL QUERY does. A
// statement therefore costs the watch two atomic additions, where a
// timer and a cancellable context per statement cost more than a point
// select's read; one that runs past the interval is found within two
// intervals.
//
// GMS has a checker of its own, which finds nothing to check under the
// listener's connection wrapper.
type peerWatcher struct {
	kill     func(connID uint32) // cancels the connection's running statement
	interval time.Duration

	mu    sync.Mutex
	conns map[*connState]struct{}

	stop chan struct{}
	done chan struct{}
}

func newPeerWatcher(kill func(uint32), interval time.Duration) *peerWatcher {
	w := &peerWatcher{kill: kill, interval: interval, conns: map[*connState]struct{}{}, stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

// add watches st's socket from now on, if it has one that can be polled.
func (w *peerWatcher) add(st *connState) {
	if w == nil || st.raw == nil {
		return
	}
	w.mu.Lock()
	w.conns[st] = struct{}{}
	w.mu.Unlock()
}

// remove stops watching st.
func (w *peerWatcher) remove(st *connState) {
	if w == nil {
		return
	}
	w.mu.Lock()
	delete(w.conns, st)
	w.mu.Unlock()
}

// close stops the watcher's goroutine and waits for it.
func (w *peerWatcher) close() {
	if w == nil {
		return
	}
	close(w.stop)
	<-w.done
}

func (w *peerWatcher) run() {
	defer close(w.done)
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.look()
		}
	}
}

// look polls the connections whose command has run since the previous
// look, and kills the statements of those that hung up.
func (w *peerWatcher) look() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for st := range w.conns {
		n := st.stmt.Load()
		running := n&1 == 1 && n == st.seen
		st.seen = n
		if running && hungUp(st.raw) {
			w.kill(st.id)
		}
	}
}

// rawConnOf returns the socket under c for polling, or nil.
func rawConnOf(lc *limitConn) syscall.RawConn {
	if lc == nil {
		return nil
	}
	sc, ok := lc.Conn.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return raw
}
