package server

import (
	"context"
	"log"
	"net"
	"sync"
	"sync/atomic"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/server"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/strata-db/strata/sqlstore"
)

// handler wraps GMS's protocol handler: errors leave with MySQL's error
// number and SQLSTATE (sqlstore.ServerError), statements longer than the
// maximum packet are refused (the listener refuses them from their
// headers; this is the check where it cannot, as on a TLS connection
// whose framing it could not reach), a panic inside GMS fails the command instead of
// closing the connection (see survive), an autocommit write that lost a
// write conflict runs again (sqlstore.Store.RunWrite), and the running
// commands and open connections are counted for a clean shutdown.
type handler struct {
	*server.Handler
	store     *sqlstore.Store
	parser    gsql.Parser // the engine's, to tell syntax errors (queryErr)
	maxPacket int
	prepared  *preparedLimit    // max_prepared_stmt_count; nil: no limit
	users     *mysql_db.MySQLDb // the accounts, for SET PASSWORD (password.go)
	// direct and sm run statements on cached plans on the connection's
	// goroutine (server_direct.go); nil: every statement goes to GMS.
	direct *sqlstore.Engine
	sm     *server.SessionManager

	// watch cancels the statements of clients that hung up; nil: none
	// is watched.
	watch *peerWatcher

	// noFastExec leaves every COM_STMT_EXECUTE and COM_QUERY of the
	// connections made from now on to the protocol layer (server_exec.go,
	// server_text.go), for tests.
	noFastExec atomic.Bool

	running atomic.Int64  // commands being executed
	pids    atomic.Uint64 // process IDs of the statements run on cached plans (statementContext)

	mu     sync.Mutex
	cond   *sync.Cond
	conns  int                   // connections between NewConnection and ConnectionClosed
	states map[uint32]*connState // by connection ID, between NewConnection and ConnectionClosed
	engine *sqle.Engine          // whose process list names the connections (processhost.go)
}

func newHandler(h *server.Handler, store *sqlstore.Store, parser gsql.Parser, maxPacket int) *handler {
	w := &handler{Handler: h, store: store, parser: parser, maxPacket: maxPacket, states: map[uint32]*connState{}}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// track records the session of connection c, made by the session
// builder on the connection's goroutine.
func (h *handler) track(c *mysql.Conn, sess *sqlstore.Session) {
	if st := h.stateOf(c); st != nil {
		st.sess = sess
	}
}

// sessionOf returns connection c's session, nil before it has one.
func (h *handler) sessionOf(c *mysql.Conn) *sqlstore.Session {
	if st := h.stateOf(c); st != nil {
		return st.sess
	}
	return nil
}

// autocommitting reports whether a statement of connection c run now
// commits on its own (sqlstore.Session.Autocommitting).
func (h *handler) autocommitting(c *mysql.Conn) bool {
	st := h.stateOf(c)
	if st == nil || st.sess == nil {
		return false
	}
	return st.sess.Autocommitting(st.sessionContext())
}

// optimistic reports whether a statement of connection c run now runs in
// an optimistic transaction (sqlstore.Session.Optimistic).
func (h *handler) optimistic(c *mysql.Conn) bool {
	st := h.stateOf(c)
	if st == nil || st.sess == nil {
		return true
	}
	return st.sess.Optimistic(st.sessionContext())
}

func (h *handler) begin() { h.running.Add(1) }

func (h *handler) end() { h.running.Add(-1) }

// statementBegin starts a statement of connection c: it is counted as a
// running command, and its client is watched for a hang-up. It returns
// the connection's state (nil when there is none), which statementEnd
// takes when the statement returns.
func (h *handler) statementBegin(c *mysql.Conn) *connState {
	h.begin()
	st := h.stateOf(c)
	if st != nil {
		st.commandBegin()
	}
	return st
}

// statementEnd ends what statementBegin started.
func (h *handler) statementEnd(st *connState) {
	if st != nil {
		st.commandEnd()
	}
	h.end()
}

// survive, deferred by every command, turns a panic inside GMS (v0.20.0
// panics on some statements, for example EXECUTE of an INSERT whose
// parameter is a string that is not UTF-8) into MySQL error 1105 for that
// command. Left alone, the protocol layer would recover it by closing the
// client's connection. The session is reset as COM_RESET_CONNECTION
// resets it (its transaction rolled back, its variables and prepared
// statements dropped), because the statement stopped at an unknown point;
// the client keeps its connection and learns what happened.
func (h *handler) survive(c *mysql.Conn, what string, err *error) {
	r := recover()
	if r == nil {
		return
	}
	*err = mysql.NewSQLError(mysql.ERUnknownError, mysql.SSUnknownSQLState,
		"internal error in the SQL engine during %s; the session was reset: %v", what, r)
	defer func() {
		if r2 := recover(); r2 != nil {
			*err = mysql.NewSQLError(mysql.ERUnknownError, mysql.SSUnknownSQLState,
				"internal error in the SQL engine during %s, and again resetting the session: %v", what, r2)
		}
	}()
	_ = h.Handler.ComResetConnection(c)
	h.prepared.reset(c, true)
	*err = h.sessionOf(c).StatementFailed(*err)
}

// waitConnsClosed blocks until every connection has been closed.
func (h *handler) waitConnsClosed() {
	h.mu.Lock()
	for h.conns > 0 {
		h.cond.Wait()
	}
	h.mu.Unlock()
}

// waitConnsClosedFor is waitConnsClosed for at most d, polling; it reports
// whether every connection closed.
func (h *handler) waitConnsClosedFor(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		h.mu.Lock()
		n := h.conns
		h.mu.Unlock()
		if n == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// idle reports whether no command is running.
func (h *handler) idle() bool { return h.running.Load() == 0 }

func (h *handler) tooLarge(n int) error {
	if h.maxPacket > 0 && n > h.maxPacket {
		return mysql.NewSQLError(mysql.ERNetPacketTooLarge, "08S01", "Got a packet bigger than 'max_allowed_packet' bytes")
	}
	return nil
}

// NewConnection implements mysql.Handler.
func (h *handler) NewConnection(c *mysql.Conn) {
	st := &connState{id: c.ConnectionID}
	lc := limitConnOf(c.Conn)
	if lc != nil {
		lc.mc = c // lets the listener see when the client has logged in
		lc.state = st
		st.raw = rawConnOf(lc)
		if h.direct != nil && h.sm != nil && !h.noFastExec.Load() {
			lc.exec = newFastExec(h, c)
		}
	}
	h.mu.Lock()
	h.conns++
	h.states[c.ConnectionID] = st
	h.mu.Unlock()
	h.watch.add(st)
	h.Handler.NewConnection(c)
}

// ConnectionClosed implements mysql.Handler: GMS ends the session, which
// rolls back its open transaction.
func (h *handler) ConnectionClosed(c *mysql.Conn) {
	h.Handler.ConnectionClosed(c)
	h.prepared.reset(c, false)
	h.mu.Lock()
	st := h.states[c.ConnectionID]
	delete(h.states, c.ConnectionID)
	h.conns--
	h.cond.Broadcast()
	h.mu.Unlock()
	if st != nil {
		h.watch.remove(st)
		if st.stmtCancel != nil {
			st.stmtCancel() // the kept statement context (connState.cancellable)
		}
	}
}

// WarningCount implements mysql.Handler, as GMS's does, without the
// session manager's lock that every connection shares.
func (h *handler) WarningCount(c *mysql.Conn) uint16 {
	if sess := h.sessionOf(c); sess != nil {
		return sess.WarningCount()
	}
	return h.Handler.WarningCount(c)
}

// ComInitDB implements mysql.Handler.
func (h *handler) ComInitDB(c *mysql.Conn, schemaName string) (err error) {
	h.begin()
	defer h.end()
	defer h.survive(c, "COM_INIT_DB", &err)
	if err := h.Handler.ComInitDB(c, schemaName); err != nil {
		return wireErr(err)
	}
	h.relistProcess(c)
	return nil
}

// ComQuery implements mysql.Handler.
func (h *handler) ComQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) (err error) {
	if err := h.tooLarge(len(query)); err != nil {
		return err
	}
	defer h.statementEnd(h.statementBegin(c))
	defer h.survive(c, "a query", &err)
	if alter, ok := h.setPassword(c, query); ok {
		query = alter
	}
	callback = h.prepared.limitSQLPrepare(c, query, h.shortInfoDropped(c, callback))
	// A text command's results are written before it returns.
	if handled, derr := h.runDirect(ctx, c, query, nil, callback); handled {
		err = h.sessionOf(c).StatementFailed(h.queryErr(c, query, false, derr))
		releaseMemory(err)
		return err
	}
	err = h.store.RunWrite(ctx, query, func() bool { return h.autocommitting(c) }, func() bool { return h.optimistic(c) }, func() error {
		return h.Handler.ComQuery(ctx, c, query, callback)
	})
	h.prepared.after(c)
	err = h.sessionOf(c).StatementFailed(h.queryErr(c, query, false, err))
	releaseMemory(err)
	return err
}

// shortInfoDropped drops the info text of an OK result when it is shorter
// than 35 bytes. The protocol layer writes the text after a '#' byte, which
// a client that tracks session state (the mariadb client) reads as the
// text's length, 35: a shorter text made the packet malformed (error 2027
// after PREPARE, whose text is "Statement prepared"). Longer texts, as
// UPDATE's "Rows matched: ...", read as their first 35 bytes.
func shortInfoDropped(cb mysql.ResultSpoolFn) mysql.ResultSpoolFn {
	return func(r *sqltypes.Result, more bool) error {
		return dropShortInfo(cb, r, more)
	}
}

func dropShortInfo(cb mysql.ResultSpoolFn, r *sqltypes.Result, more bool) error {
	if len(r.Fields) == 0 && len(r.Info) < '#' {
		r.Info = ""
	}
	return cb(r, more)
}

// shortInfoDropped is the function shortInfoDropped(cb) returns, made
// once per connection (a closure per text statement otherwise): the
// connection's commands run one at a time, and a text command's results
// are written before it returns.
func (h *handler) shortInfoDropped(c *mysql.Conn, cb mysql.ResultSpoolFn) mysql.ResultSpoolFn {
	st := h.stateOf(c)
	if st == nil {
		return shortInfoDropped(cb)
	}
	if st.short.fn == nil {
		st.short.fn = st.short.call
	}
	st.short.cb = cb
	return st.short.fn
}

// ComMultiQuery implements mysql.Handler.
func (h *handler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) (rest string, err error) {
	if err := h.tooLarge(len(query)); err != nil {
		return "", err
	}
	defer h.statementEnd(h.statementBegin(c))
	defer h.survive(c, "a query", &err)
	if alter, ok := h.setPassword(c, query); ok {
		query = alter
	}
	// A text the plan cache runs holds one statement (no semicolon
	// outside strings and comments): nothing remains after it.
	if handled, derr := h.runDirect(ctx, c, query, nil, h.shortInfoDropped(c, callback)); handled {
		err = h.sessionOf(c).StatementFailed(h.queryErr(c, query, true, derr))
		releaseMemory(err)
		return "", err
	}
	rest, err = h.Handler.ComMultiQuery(ctx, c, query, h.prepared.limitSQLPrepare(c, query, h.shortInfoDropped(c, callback)))
	h.prepared.after(c)
	if err != nil {
		// MySQL ends a multi-statement query at its first failing
		// statement. The protocol layer runs whatever remainder is
		// returned, after the error packet, so none may be.
		err = h.sessionOf(c).StatementFailed(h.queryErr(c, query, true, err))
		releaseMemory(err)
		return "", err
	}
	return rest, nil
}

// ComPrepare implements mysql.Handler.
func (h *handler) ComPrepare(ctx context.Context, c *mysql.Conn, query string, prepare *mysql.PrepareData) (f []*querypb.Field, err error) {
	if err := h.tooLarge(len(query)); err != nil {
		return nil, err
	}
	h.begin()
	defer h.end()
	defer h.survive(c, "COM_STMT_PREPARE", &err)
	if err := h.prepared.prepare(c, prepare.StatementID); err != nil {
		return nil, err
	}
	h.countExplainParams(ctx, c, query, prepare)
	f, err = h.Handler.ComPrepare(ctx, c, query, prepare)
	h.prepared.prepared(c, prepare.StatementID, query, err != nil)
	return f, h.sessionOf(c).StatementPrepared(query, wireErr(err))
}

// ComStmtExecute implements mysql.Handler.
func (h *handler) ComStmtExecute(ctx context.Context, c *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) (err error) {
	n := 0
	for _, bv := range prepare.BindVars {
		n += len(bv.Value)
	}
	if err := h.tooLarge(n); err != nil {
		return err
	}
	st := h.statementBegin(c)
	defer h.statementEnd(st)
	defer h.survive(c, "COM_STMT_EXECUTE", &err)
	var args []sqlstore.Arg
	if st != nil {
		// The connection's buffer: an array here would escape with it.
		args = bindArgs(prepare.BindVars, st.args[:0])
		if args != nil {
			st.args = args
			defer clear(args) // no value kept past the statement
		}
	} else {
		args = bindArgs(prepare.BindVars, nil)
	}
	kept := resultsKept(c)
	if kept {
		callback = rowsCopied(callback)
	}
	// A statement that may run under a cursor goes to GMS's handler: the
	// cursor's rows are read on a goroutine of the protocol layer's while
	// the connection's serves COM_STMT_FETCH, and the direct path sets
	// the connection's status flags after its last rows.
	if !kept && (len(prepare.BindVars) == 0 || args != nil) {
		handled, derr := h.runDirect(ctx, c, prepare.PrepareStmt, args, func(r *sqltypes.Result, _ bool) error { return callback(r) })
		if handled {
			err = h.sessionOf(c).StatementFailed(wireErr(h.worded(c, derr)))
			releaseMemory(err)
			return err
		}
	}
	err = h.store.RunWrite(ctx, prepare.PrepareStmt, func() bool { return h.autocommitting(c) }, func() bool { return h.optimistic(c) }, func() error {
		return h.Handler.ComStmtExecute(ctx, c, prepare, callback)
	})
	h.prepared.after(c)
	err = h.sessionOf(c).StatementFailed(wireErr(h.worded(c, err)))
	releaseMemory(err)
	return err
}

// resultsKept reports whether the protocol layer may keep the rows of
// connection c's results past the command that made them: a client that
// asked for a server-side cursor fetches them later (COM_STMT_FETCH), and
// one whose commands the listener cannot see (TLS) may have.
func resultsKept(c *mysql.Conn) bool {
	lc := limitConnOf(c.Conn)
	return lc == nil || lc.resultsKept.Load()
}

// rowsCopied gives callback results whose values own their bytes. The
// values of a result point into a buffer that GMS's handler, and
// sendResult, return to a pool shared by every connection when the
// statement ends; the protocol layer keeps a cursor's rows until the
// client fetches them, by which time other statements wrote over them.
func rowsCopied(callback func(*sqltypes.Result) error) func(*sqltypes.Result) error {
	return func(r *sqltypes.Result) error {
		n := 0
		for _, row := range r.Rows {
			for _, v := range row {
				n += v.Len()
			}
		}
		mem := make([]byte, 0, n)
		for _, row := range r.Rows {
			for i, v := range row {
				if v.IsNull() {
					continue
				}
				at := len(mem)
				mem = append(mem, v.Raw()...)
				row[i] = sqltypes.MakeTrusted(v.Type(), mem[at:len(mem):len(mem)])
			}
		}
		return callback(r)
	}
}

// ComResetConnection implements mysql.Handler.
func (h *handler) ComResetConnection(c *mysql.Conn) error {
	defer h.prepared.reset(c, false)
	if err := h.Handler.ComResetConnection(c); err != nil {
		return wireErr(err)
	}
	h.relistProcess(c)
	return nil
}

// authServer wraps the account store's authentication methods:
//   - An unknown user goes through the password exchange like a known one
//     and is refused with the same error (1045), so clients cannot tell
//     which accounts exist (the account store otherwise ends the handshake
//     early with a different error).
//   - When TLS is required, a client that did not switch to TLS fails
//     authentication: it never gets a session. (The protocol layer only
//     sends an error packet in that case and carries on.)
type authServer struct {
	mysql.AuthServer
	requireTLS bool
	db         *mysql_db.MySQLDb // the accounts, for the privileges of the reserved slot (login)
	log        *log.Logger       // failed logins
}

// AuthMethods implements mysql.AuthServer.
func (a authServer) AuthMethods() []mysql.AuthMethod {
	ms := a.AuthServer.AuthMethods()
	out := make([]mysql.AuthMethod, len(ms))
	for i, m := range ms {
		out[i] = authMethod{AuthMethod: m, requireTLS: a.requireTLS, db: a.db, log: a.log}
	}
	return out
}

type authMethod struct {
	mysql.AuthMethod
	requireTLS bool
	db         *mysql_db.MySQLDb
	log        *log.Logger
}

// HandleUser implements mysql.AuthMethod: every user name is handled, and
// unknown ones fail in HandleAuthPluginData.
func (m authMethod) HandleUser(*mysql.Conn, string) bool { return true }

// HandleAuthPluginData implements mysql.AuthMethod: see login.
func (m authMethod) HandleAuthPluginData(c *mysql.Conn, user string, serverData, clientData []byte, addr net.Addr) (mysql.Getter, error) {
	return m.login(c, user, serverData, clientData, addr)
}

// authenticate checks the client's credentials.
func (m authMethod) authenticate(c *mysql.Conn, user string, serverData, clientData []byte, addr net.Addr) (mysql.Getter, error) {
	if m.requireTLS && !c.TLSEnabled() {
		return nil, mysql.NewSQLError(erSecureTransportRequired, "HY000",
			"Connections using insecure transport are prohibited while --require-secure-transport=ON.")
	}
	return m.AuthMethod.HandleAuthPluginData(c, user, serverData, clientData, addr)
}

// erSecureTransportRequired is MySQL's ER_SECURE_TRANSPORT_REQUIRED.
const erSecureTransportRequired = 3159
