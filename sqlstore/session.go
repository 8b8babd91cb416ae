package sqlstore

import (
	"github.com/dolthub/vitess/go/mysql"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/strata-db/strata/mysqlcompat"
)

var (
	_ sql.Session               = (*Session)(nil)
	_ sql.TransactionSession    = (*Session)(nil)
	_ sql.LifecycleAwareSession = (*Session)(nil)
)

// Session is a client session: GMS's base session plus the transaction
// GMS runs statements in. GMS starts a transaction for every statement that
// finds none (StartTransaction) and commits it at the end of an autocommit
// statement, at COMMIT, or implicitly after DDL.
//
// GMS may drop a transaction without rolling it back (an error during
// planning, a failed statement over the wire, a closed connection); the
// session therefore remembers the transaction it handed out and releases it
// when it starts the next one, when ValidateSession finds an autocommit
// leftover, and at SessionEnd.
//
// A Session is used by one statement at a time; its methods are safe to call
// from the different goroutines GMS's server uses for one statement.
type Session struct {
	*sql.BaseSession
	store *Store

	mu sync.Mutex
	// open holds the transactions started and not yet finished: one or
	// two, GMS's dropped ones being rolled back at the next statement, so
	// a slice costs less than a map at every start and finish.
	open []*txn

	// stmt counts what the running statement reads and keeps the last
	// statement's figures (stmtstats.go).
	stmt stmtStats
	// plansReused counts executions of prepared statements that ran on a
	// reused plan (prepared.go): Strata_plans_reused.
	plansReused atomic.Int64
	// counted holds the session's values of the status variables every
	// statement counts (countStatus), found at the first.
	counted atomic.Pointer[[numCounted]sql.StatusVarValue]
	// thresholds caches the session's strata_planner value parsed
	// (access.go).
	thresholds atomic.Pointer[parsedThresholds]
	// mem is the running statement's memory account, under the
	// strata_mem_quota_query quota (memquota.go).
	mem memAccount
	// nested holds the transactions GMS takes out of the context around
	// procedure bodies and PREPARE (nestedtxn.go); guarded by mu.
	nested nestedTxns
	// nestedHeld is set, under mu, whenever nested gets a transaction, and
	// cleared when takeUp finds it empty: while it is clear, takeUp has
	// nothing to do and takes no lock. nOpen mirrors len(open), so that
	// a statement start with no other transaction open takes no lock to
	// look for idle ones (startLocks).
	nestedHeld atomic.Bool
	nOpen      atomic.Int32
	// rowCount and foundRows mirror the session's ROW_COUNT and
	// FOUND_ROWS, which GMS keeps in a map by name: every statement sets
	// them (setQueryInfo), and a lookup by name each was a noticeable part
	// of a point read. Every writer goes through SetLastQueryInfoInt of
	// sql.Session, which Session overrides to keep the mirror.
	rowCount  atomic.Int64
	foundRows atomic.Int64
	// locking caches what the last statement text says of the rows it
	// locks (locks.go, stmtLockingOf).
	locking *stmtLocking
	// insertHint is the INSERT ... VALUES the running statement built, for
	// its editor's batched duplicate-key reads (insertprefetch.go);
	// noPrefetch turns those reads off (the tests' reference), prefetched
	// counts the checks they answered.
	insertHint insertHint
	noPrefetch bool
	prefetched int64
	// dupIndexes names the indexes CreateIndex found repeating another of
	// their table, whose 1831 warning is kept (dupindex.go).
	dupIndexes map[string]struct{}
	// varsGen counts the changes of the session's system variables: a
	// kept plan (plancache.go) was bound under the values of one count.
	varsGen atomic.Uint64
	// cachedVars holds the variables statements read at their start, as
	// of a varsGen (sessionvars.go).
	cachedVars atomic.Pointer[sessionVars]
	// spare is an autocommit read's finished transaction that nothing
	// holds any more, which the session's next transaction begins in
	// (keepForReuse): an autocommit read then allocates no transaction.
	spare atomic.Pointer[txn]
	// fkWords keeps the foreign keys the statement's IGNORE warnings were
	// worded from (foreignkey.go).
	fkWords fkWords
	// diag is the diagnostics area's bookkeeping (diagnostics.go).
	diag diagArea
	// strictFirst and strictOther are the first warnings of the running
	// statement that strict mode makes errors, the first of them and the
	// first that is not division by zero (mysqlcompat.StrictWarner);
	// cleared with the warnings.
	strictFirst, strictOther *sql.Warning
	// txnStatement is set while a BEGIN, START TRANSACTION, COMMIT or
	// ROLLBACK runs (ValidateSession), whose ROW_COUNT is 0 as in MySQL:
	// GMS, and the kept plans that do as it does, set the -1 of a SELECT.
	txnStatement bool
}

// SetSessionVariable implements sql.Session, counting changes in varsGen.
func (s *Session) SetSessionVariable(ctx *sql.Context, name string, value any) error {
	old, oldErr := s.BaseSession.GetSessionVariable(ctx, name)
	err := s.BaseSession.SetSessionVariable(ctx, name, value)
	if err == nil {
		if now, nowErr := s.BaseSession.GetSessionVariable(ctx, name); oldErr != nil || nowErr != nil || !sameValue(old, now) {
			s.varsGen.Add(1)
		}
	}
	return err
}

// InitSessionVariable implements sql.Session, counting changes in
// varsGen.
func (s *Session) InitSessionVariable(ctx *sql.Context, name string, value any) error {
	s.varsGen.Add(1)
	return s.BaseSession.InitSessionVariable(ctx, name, value)
}

// sameValue reports whether two values of a system variable are equal;
// false when unsure.
func sameValue(a, b any) bool {
	switch a.(type) {
	case nil, bool, string, int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint, float32, float64:
		return a == b
	}
	return false
}

func newSession(base *sql.BaseSession, s *Store) *Session {
	sess := &Session{BaseSession: base, store: s}
	sess.rowCount.Store(base.GetLastQueryInfoInt(sql.RowCount))
	sess.foundRows.Store(base.GetLastQueryInfoInt(sql.FoundRows))
	return sess
}

// SetLastQueryInfoInt implements sql.Session, keeping the mirrors of
// ROW_COUNT and FOUND_ROWS.
func (s *Session) SetLastQueryInfoInt(key string, v int64) {
	switch key {
	case sql.RowCount:
		if v == -1 && s.txnStatement {
			v = 0
		}
		s.rowCount.Store(v)
	case sql.FoundRows:
		s.foundRows.Store(v)
	}
	s.BaseSession.SetLastQueryInfoInt(key, v)
}

// GetLastQueryInfoInt implements sql.Session, reading ROW_COUNT and
// FOUND_ROWS from their mirrors.
func (s *Session) GetLastQueryInfoInt(key string) int64 {
	switch key {
	case sql.RowCount:
		return s.rowCount.Load()
	case sql.FoundRows:
		return s.foundRows.Load()
	}
	return s.BaseSession.GetLastQueryInfoInt(key)
}

// Warn records a warning of the running statement. GMS turns the errors
// that INSERT IGNORE and UPDATE IGNORE skip into notes with its own
// wording; MySQL makes them warnings with the error's message (Warning
// 1062 Duplicate entry '1' for key 't.PRIMARY').
func (s *Session) Warn(w *sql.Warning) {
	if w != nil && w.Code == mysql.ERDupIndex && !s.keepDuplicateIndexWarning(w) {
		return
	}
	if w != nil && w.Level == "Note" && ignoredErrors[w.Code] {
		c := *w
		if se, ok := s.foreignKeyWarning(c.Code, c.Message); ok {
			c.Message = se.Message // as the error would say it (foreignkey.go)
		} else if se, ok := numberMessage(c.Code, c.Message); ok {
			c.Message = se.Message
		}
		c.Level = "Warning"
		w = &c
	}
	if w != nil {
		s.diag.counted(w)
		if s.strictOther == nil {
			s.keepStrict(w)
		}
	}
	s.BaseSession.Warn(w)
}

// keepStrict keeps w if it is one of the first warnings of the running
// statement that strict mode makes errors (mysqlcompat.StrictWarner).
func (s *Session) keepStrict(w *sql.Warning) {
	if w.Level != "Warning" || !mysqlcompat.StrictErrorCode(w.Code) {
		return
	}
	if s.strictFirst == nil {
		s.strictFirst = w
	}
	if s.strictOther == nil && w.Code != 1365 { // not ER_DIVISION_BY_ZERO
		s.strictOther = w
	}
}

// StrictWarnings implements mysqlcompat.StrictWarner.
func (s *Session) StrictWarnings() (first, other *sql.Warning) {
	return s.strictFirst, s.strictOther
}

// ignoredErrors are the numbers of the errors IGNORE turns into warnings
// that GMS numbers as MySQL does. The others of GMS's plan.IgnorableErrors
// (a violated CHECK, a value out of range or too long) come numbered 1105,
// and GMS's engine tests expect that; MySQL's 3819, 1264 and 1265 would
// need those tests skipped.
var ignoredErrors = map[int]bool{
	mysql.ERBadNullError:     true, // NULL into NOT NULL
	mysql.ERDupEntry:         true,
	mysql.ErNoReferencedRow2: true, // foreign key
}

// StartTransaction implements sql.TransactionSession.
func (s *Session) StartTransaction(ctx *sql.Context, tc sql.TransactionCharacteristic) (sql.Transaction, error) {
	if s.store.closed.Load() {
		return nil, ErrClosed
	}
	t := s.store.beginTxnIn(s.spare.Swap(nil), tc == sql.ReadOnly)
	t.sess = s
	t.setMode(ctx)
	t.fixedSnapshot = consistentSnapshot(ctx.Query())
	s.mu.Lock()
	s.open = append(s.open, t)
	s.nOpen.Store(int32(len(s.open)))
	s.startedLocked(t)
	s.mu.Unlock()
	return t, nil
}

// consistentSnapshot reports whether query is START TRANSACTION ... WITH
// CONSISTENT SNAPSHOT, whose snapshot MySQL takes at once (a plain BEGIN's
// is taken at its first read). GMS does not pass the option on. This runs
// at every transaction's start: only a text whose first word (comments
// skipped, LeadingWords allocates nothing) is START is read further.
func consistentSnapshot(query string) bool {
	if first, _ := LeadingWords(query); !strings.EqualFold(first, "start") {
		return false
	}
	_, snapshot := startOptions(query)
	return snapshot
}

// CommitTransaction implements sql.TransactionSession. A commit that
// fails (a conflict, 1213) has rolled the transaction back, and MySQL then
// has the session outside any transaction; GMS, returning early on the
// error, would keep it in the explicit one, and the statements after it
// would not autocommit (their writes lost at disconnect).
func (s *Session) CommitTransaction(ctx *sql.Context, tx sql.Transaction) error {
	t, ok := tx.(*txn)
	if !ok || t == nil {
		return nil
	}
	err := t.commit()
	if err != nil && ctx != nil {
		ctx.SetIgnoreAutoCommit(false)
		ctx.SetTransaction(nil)
	}
	return err
}

// Rollback implements sql.TransactionSession.
func (s *Session) Rollback(ctx *sql.Context, tx sql.Transaction) error {
	if t, ok := tx.(*txn); ok && t != nil {
		t.rollback()
	}
	return nil
}

// keepForReuse keeps t, a transaction its statement found reusable
// (txn.reusable) before committing it, for the session's next one.
func (s *Session) keepForReuse(t *txn) {
	s.spare.Store(t)
}

// finished is called by a transaction when it commits or rolls back.
func (s *Session) finished(t *txn) {
	s.mu.Lock()
	for i, o := range s.open {
		if o == t {
			last := len(s.open) - 1
			s.open[i] = s.open[last]
			s.open[last] = nil
			s.open = s.open[:last]
			break
		}
	}
	s.nOpen.Store(int32(len(s.open)))
	s.mu.Unlock()
}

// idleLocked returns the transactions GMS dropped without ending them,
// for the caller to roll back: every open one other than keep that no
// statement is using (no open iterator, no editor between StatementBegin
// and its end). Statements nested in a running one (procedure bodies,
// triggers calling procedures) call ValidateSession too, so a transaction
// in use must survive. s.mu is held.
func (s *Session) idleLocked(keep *txn) []*txn {
	var idle []*txn
	for _, t := range s.open {
		if t != keep && t.idle() {
			idle = append(idle, t)
		}
	}
	return idle
}

// startLocks does takeUp and rolls back the idle transactions for a statement's start under one
// hold of s.mu, or none: an autocommit statement finds no transaction open
// and nothing parked, an explicit transaction's statement finds its own
// transaction the only one open. It returns the transaction ctx then holds.
func (s *Session) startLocks(ctx *sql.Context) (t *txn, inCall bool) {
	t, _ = ctx.GetTransaction().(*txn)
	if !s.nestedHeld.Load() {
		switch n := s.nOpen.Load(); {
		case n == 0:
			return t, false
		case n == 1 && t != nil && t.sess == s && !t.isDone():
			// t is open (it leaves open only when done), so it is the
			// one transaction open.
			return t, false
		}
	}
	s.mu.Lock()
	inCall = s.takeUpLocked(ctx)
	t, _ = ctx.GetTransaction().(*txn)
	idle := s.idleLocked(t)
	s.mu.Unlock()
	for _, o := range idle {
		o.rollback()
	}
	return t, inCall
}

// CreateSavepoint implements sql.TransactionSession.
func (s *Session) CreateSavepoint(ctx *sql.Context, tx sql.Transaction, name string) error {
	if t, ok := tx.(*txn); ok && t != nil {
		t.createSavepoint(name)
	}
	return nil
}

// RollbackToSavepoint implements sql.TransactionSession.
func (s *Session) RollbackToSavepoint(ctx *sql.Context, tx sql.Transaction, name string) error {
	if t, ok := tx.(*txn); ok && t != nil {
		return t.rollbackToSavepoint(name)
	}
	return nil
}

// ReleaseSavepoint implements sql.TransactionSession.
func (s *Session) ReleaseSavepoint(ctx *sql.Context, tx sql.Transaction, name string) error {
	if t, ok := tx.(*txn); ok && t != nil {
		return t.releaseSavepoint(name)
	}
	return nil
}

// ValidateSession runs before every statement, nested ones included. It
// rolls back transactions GMS dropped and a transaction an earlier
// autocommit statement left behind (its commit never ran: an error over the
// wire), unless a running statement still uses them, and marks the start of
// the statement in the current transaction.
func (s *Session) ValidateSession(ctx *sql.Context) error {
	if err := s.BaseSession.ValidateSession(ctx); err != nil {
		return err
	}
	s.txnStatement = countTxnStatement(ctx, ctx.Query())
	t, inCall := s.startLocks(ctx)
	if t == nil || t.idle() {
		s.stmt.begin()
		s.mem.begin()
		s.fkWords.reset()
	}
	if t == nil {
		return nil
	}
	if t.isDone() {
		// Finished (a failed commit) but still installed: start afresh.
		// A deadlock's victim was rolled back (rollbackVictim): the
		// session is outside any transaction, as in MySQL, where GMS
		// kept it in the explicit one until ROLLBACK.
		if t.mdlVictim() {
			ctx.SetIgnoreAutoCommit(false)
		}
		ctx.SetTransaction(nil)
		return nil
	}
	if !inCall && s.Autocommitting(ctx) && t.idle() {
		t.rollback()
		ctx.SetTransaction(nil)
		return nil
	}
	if implicitCommit(ctx.Query()) && t.idle() {
		// MySQL commits the open transaction before a DDL statement runs,
		// and leaves the session in autocommit mode: the writes before it
		// stay even when the DDL fails, the statements after it commit
		// one by one. GMS commits only after a DDL that succeeds, inside
		// the transaction, which then goes on.
		ctx.SetIgnoreAutoCommit(false)
		ctx.SetTransaction(nil)
		return toSQLError(t.commit())
	}
	// A transaction that has used nothing yet takes its snapshot now
	// if a DDL statement committed since (mdl.go).
	if err := t.renewStale(); err != nil {
		return err
	}
	t.beginStatement()
	if t.locker != nil {
		t.lockWait = sessionLockWait(ctx)
	}
	return nil
}

// implicitCommit reports whether query is a statement before which MySQL
// commits the open transaction: a CREATE, ALTER, DROP, RENAME or TRUNCATE
// (but not of a temporary table), a GRANT or REVOKE, LOCK TABLES, FLUSH,
// or an ANALYZE, CHECK, OPTIMIZE or REPAIR of tables. Statements run by a
// procedure are not seen here (ctx.Query is the CALL): a DDL statement in
// a procedure commits only itself.
func implicitCommit(query string) bool {
	first, second := LeadingWords(query)
	for _, w := range [...]string{"alter", "rename", "truncate", "grant", "revoke", "lock", "flush", "analyze", "check", "optimize", "repair"} {
		if strings.EqualFold(first, w) {
			return true
		}
	}
	return (strings.EqualFold(first, "create") || strings.EqualFold(first, "drop")) && !strings.EqualFold(second, "temporary")
}

// LeadingWords returns the first two words of query, after blanks, an
// opening parenthesis and comments ("" for a word that is not there), as
// written: what kind of statement it is. It allocates nothing.
func LeadingWords(query string) (first, second string) {
	q := query
	var words [2]string
	for n := 0; n < len(words); {
		// A loop, not strings.TrimLeft: its cutset's table, built per
		// call, was most of this function's cost, paid several times
		// per statement.
		for len(q) > 0 && (q[0] == ' ' || q[0] == '\t' || q[0] == '\r' || q[0] == '\n' || q[0] == '(') {
			q = q[1:]
		}
		switch {
		case strings.HasPrefix(q, "/*"):
			end := strings.Index(q, "*/")
			if end < 0 {
				return words[0], words[1]
			}
			q = q[end+2:]
			continue
		case strings.HasPrefix(q, "#"), len(q) > 2 && q[0] == '-' && q[1] == '-' && q[2] <= ' ': // MySQL's "--" then a space or control character
			end := strings.IndexByte(q, '\n')
			if end < 0 {
				return words[0], words[1]
			}
			q = q[end+1:]
			continue
		}
		i := 0
		for i < len(q) && (q[i] >= 'a' && q[i] <= 'z' || q[i] >= 'A' && q[i] <= 'Z' || q[i] == '_') {
			i++
		}
		if i == 0 {
			break
		}
		words[n], q = q[:i], q[i:]
		n++
	}
	return words[0], words[1]
}

// Autocommitting reports whether a statement run now in ctx commits on
// its own: the session's autocommit is on and no transaction was begun
// with BEGIN or START TRANSACTION. Conn (for the driver and the shell) and
// the server ask it (RunWrite's reruns, AbortStatement), so that
// "autocommit" means one thing for all of them.
func (s *Session) Autocommitting(ctx *sql.Context) bool {
	return !ctx.GetIgnoreAutoCommit() && s.autocommit(ctx)
}

// AbortStatement rolls back ctx's transaction when the statement that
// failed in it was autocommitting, before the statement's iterator is
// closed (closing commits an autocommit statement), so that nothing of it
// is applied. Inside a transaction the failed statement is undone alone and
// the transaction goes on, as in MySQL.
func (s *Session) AbortStatement(ctx *sql.Context) {
	tx := ctx.GetTransaction()
	if tx == nil || !s.Autocommitting(ctx) {
		return
	}
	_ = s.Rollback(ctx, tx)
	ctx.SetTransaction(nil)
}

// autocommit reports whether the session's autocommit variable is on; a
// value that cannot be read counts as MySQL's default, ON.
func (s *Session) autocommit(ctx *sql.Context) bool {
	if ctx != nil {
		return s.vars(ctx).autocommit
	}
	v, err := s.GetSessionVariable(ctx, sql.AutoCommitSessionVar)
	if err != nil {
		return true
	}
	b, err := sql.ConvertToBool(ctx, v)
	return err != nil || b
}

// CommandBegin implements sql.LifecycleAwareSession.
func (s *Session) CommandBegin() error { return nil }

// CommandEnd implements sql.LifecycleAwareSession.
func (s *Session) CommandEnd() {}

// SessionEnd implements sql.LifecycleAwareSession: the connection closed,
// so open transactions are rolled back.
func (s *Session) SessionEnd() {
	s.mu.Lock()
	open := append([]*txn(nil), s.open...)
	s.mu.Unlock()
	for _, t := range open {
		t.rollback()
	}
}

// txnOf returns the transaction of ctx's session, or nil when the context
// holds none of this package's.
func txnOf(ctx *sql.Context) *txn {
	if ctx == nil || ctx.Session == nil {
		return nil
	}
	t, _ := ctx.GetTransaction().(*txn)
	return t
}
