package sqlstore

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/strata-db/strata/storage"
)

// Pessimistic transactions
//
// A transaction is pessimistic or optimistic, as the session's
// strata_txn_mode says when it begins (TiDB's tidb_txn_mode); pessimistic is
// the default, and needs an engine whose transactions are storage.Locker.
//
// A pessimistic transaction locks rows as InnoDB does and holds the locks
// until it ends (a statement rollback keeps them):
//
//   - UPDATE, DELETE and SELECT ... FOR UPDATE lock exclusively every row
//     their scans reach, by its primary index key (so do INSERT ... SELECT
//     and the statements an INSERT's triggers run); SELECT ... LOCK IN
//     SHARE MODE (or FOR SHARE) locks in shared mode. Having locked a row, the
//     scan reads it again at the latest committed state plus the
//     transaction's writes up to the statement's boundary
//     (storage.Locker.LatestView) and hands that to GMS, whose filters above
//     check it again: locking reads read the latest, plain reads the
//     snapshot. A row deleted meanwhile is skipped; a row reached through a
//     secondary index whose indexed columns moved it out of the lookup's
//     ranges is skipped. FOR UPDATE SKIP LOCKED skips rows it would wait
//     for.
//   - A foreign key check locks the rows it finds (the parent, or the
//     children of a parent being deleted) in shared mode and reads them at
//     the latest; it guards nothing: a writer of the parent row waits for
//     the lock, and a child inserted later checks the parent row under its
//     own lock.
//   - The table editor locks the primary key of every row it writes and
//     every unique secondary key of the rows it inserts or updates before
//     its duplicate checks, which read the latest state plus the
//     transaction's writes (storage.Txn.Current): a concurrent insert of the
//     same key is waited for, then reported as 1062 if it committed.
//   - The commit checks written keys only after the last lock was granted
//     (storage.Locker.SetPessimistic): every row written was locked before
//     it was read. Guards still apply against the snapshot; locking reads
//     guard nothing (they read the latest), so a range read FOR UPDATE does
//     not keep other transactions from inserting into the range (no gap
//     locks).
//
// A lock that is not granted within innodb_lock_wait_timeout fails the
// statement with 1205 (the statement rolls back, the transaction goes on);
// a lock whose wait would close a cycle fails with 1213 and rolls back the
// whole transaction (the requester is the victim); NOWAIT fails with 3572;
// a cancelled statement (KILL QUERY, a client gone) stops waiting.

const (
	// txnModeVar is the session and global variable choosing the mode of
	// the transactions a session begins.
	txnModeVar     = "strata_txn_mode"
	txnPessimistic = "pessimistic"
	txnOptimistic  = "optimistic"
	// lockWaitVar bounds a lock wait, in seconds (MySQL's variable, which
	// GMS defines as a constant 1).
	lockWaitVar = "innodb_lock_wait_timeout"
)

// erLockNowait is MySQL's ER_LOCK_NOWAIT.
const erLockNowait = 3572

func init() {
	sql.SystemVariables.AddSystemVariables([]sql.SystemVariable{&sql.MysqlSystemVariable{
		Name:              txnModeVar,
		Scope:             sql.GetMysqlScope(sql.SystemVariableScope_Both),
		Dynamic:           true,
		SetVarHintApplies: false,
		Type:              types.NewSystemEnumType(txnModeVar, txnPessimistic, txnOptimistic),
		Default:           txnPessimistic,
	}, &sql.MysqlSystemVariable{
		Name:              lockWaitVar,
		Scope:             sql.GetMysqlScope(sql.SystemVariableScope_Both),
		Dynamic:           true,
		SetVarHintApplies: true,
		Type:              types.NewSystemIntType(lockWaitVar, 1, 1073741824, false),
		Default:           int64(50),
	}})
}

// sessionPessimistic reports whether ctx's session begins pessimistic
// transactions.
func sessionPessimistic(ctx *sql.Context) bool {
	if ctx == nil || ctx.Session == nil {
		return true
	}
	if sess, ok := ctx.Session.(*Session); ok {
		return sess.vars(ctx).pessimistic
	}
	v, err := ctx.GetSessionVariable(ctx, txnModeVar)
	if err != nil {
		return true
	}
	s, _ := v.(string)
	return !strings.EqualFold(s, txnOptimistic)
}

// sessionLockWait returns ctx's innodb_lock_wait_timeout.
func sessionLockWait(ctx *sql.Context) time.Duration {
	if ctx == nil || ctx.Session == nil {
		return 50 * time.Second
	}
	if sess, ok := ctx.Session.(*Session); ok {
		return sess.vars(ctx).lockWait
	}
	v, err := ctx.GetSessionVariable(ctx, lockWaitVar)
	if err != nil {
		return 50 * time.Second
	}
	n, ok := v.(int64)
	if !ok || n <= 0 {
		return 50 * time.Second
	}
	return time.Duration(n) * time.Second
}

// setMode fixes the mode of a transaction as it begins: pessimistic when
// ctx's session asks for it and the engine can lock.
func (t *txn) setMode(ctx *sql.Context) {
	if !sessionPessimistic(ctx) {
		return
	}
	l, ok := t.tx.(storage.Locker)
	if !ok {
		return
	}
	l.SetPessimistic()
	t.locker = l
	t.lockWait = sessionLockWait(ctx)
}

// The states of txn.registered.
const (
	lockUnregistered = iota
	lockRegistered
	lockReleased
)

// register enters t in the store's lock registry before its first lock,
// so that a wait it takes part in names its connection. The entry is made
// before the state says so: a release in between finds the state
// unregistered, and the entry is taken out again here.
func (t *txn) register() {
	if t.registered.Load() != lockUnregistered {
		return
	}
	id := t.locker.LockID()
	t.store.locks.add(id, t)
	if !t.registered.CompareAndSwap(lockUnregistered, lockRegistered) && t.registered.Load() == lockReleased {
		t.store.locks.remove(id)
	}
}

// Optimistic reports whether a statement run now in ctx runs in an
// optimistic transaction: the open transaction's mode, or the one the
// session's next transaction will have.
func (s *Session) Optimistic(ctx *sql.Context) bool {
	if t := txnOf(ctx); t != nil && !t.isDone() {
		return t.locker == nil
	}
	return !sessionPessimistic(ctx)
}

// pessimistic reports whether ctx's transaction is pessimistic.
func pessimistic(ctx *sql.Context) bool {
	t := txnOf(ctx)
	return t != nil && t.locker != nil
}

// rowLock says how a statement locks the rows it reads.
type rowLock struct {
	opts       storage.LockOptions
	skipLocked bool
}

// stmtLocking is what a statement's text says of the rows it reads (GMS
// drops locking clauses, so they are read from the text): how a
// pessimistic transaction locks them, and whether it is a locking read
// (lockingread.go). It is a function of the text alone, worked out once
// per text and kept in the session, so that the row iterators and the
// editor of every statement ask for it without scanning the text again.
type stmtLocking struct {
	q       string
	lock    rowLock // opts.Wait unset: the transaction's
	locks   bool    // lock is set: the statement locks what it reads
	locking bool    // FOR UPDATE or LOCK IN SHARE MODE
}

// parseStmtLocking reads the locking of statement text q. Words inside a
// string literal may make it lock rows it need not.
func parseStmtLocking(q string) *stmtLocking {
	sl := &stmtLocking{q: q}
	sl.locking = containsFold(q, "for update") || containsFold(q, "lock in share mode")
	lk := &sl.lock
	first, _ := LeadingWords(q)
	sl.locks = true
	switch {
	case strings.EqualFold(first, "update"), strings.EqualFold(first, "delete"),
		strings.EqualFold(first, "insert"), strings.EqualFold(first, "replace"):
		// INSERT and REPLACE scan only in INSERT ... SELECT (whose source
		// rows InnoDB locks too) and in the statements their triggers run,
		// which write what they read.
		lk.opts.Mode = storage.LockExclusive
	case containsFold(q, "for update"):
		lk.opts.Mode = storage.LockExclusive
		lk.skipLocked = containsFold(q, "skip locked")
		lk.opts.NoWait = lk.skipLocked || containsFold(q, "nowait")
	case containsFold(q, "lock in share mode"), containsFold(q, "for share"):
		lk.opts.Mode = storage.LockShared
		lk.skipLocked = containsFold(q, "skip locked")
		lk.opts.NoWait = lk.skipLocked || containsFold(q, "nowait")
	default:
		sl.locks = false
	}
	return sl
}

// stmtLockingOf returns the locking of ctx's statement, from the session's
// cache when its text is the last one asked about.
func stmtLockingOf(ctx *sql.Context) *stmtLocking {
	q := ctx.Query()
	sess, _ := ctx.Session.(*Session)
	if sess != nil {
		if sl := sess.locking; sl != nil && sl.q == q {
			return sl
		}
	}
	sl := parseStmtLocking(q)
	if sess != nil {
		sess.locking = sl
	}
	return sl
}

// statementLock returns how the statement of ctx locks the rows its scans
// reach in t, ok false when it does not (an optimistic transaction, a plain
// read).
func statementLock(ctx *sql.Context, t *txn) (lk rowLock, ok bool) {
	if t == nil || t.locker == nil {
		return lk, false
	}
	sl := stmtLockingOf(ctx)
	if !sl.locks {
		return lk, false
	}
	lk = sl.lock
	lk.opts.Wait = t.lockWait
	return lk, true
}

// lockKeys locks keys for t as o says. A deadlock rolls the transaction
// back, as InnoDB does to its victim. The error is MySQL's.
func (t *txn) lockKeys(ctx *sql.Context, o storage.LockOptions, keys ...[]byte) error {
	t.register()
	err := t.locker.LockKeys(ctx, o, keys...)
	if err == nil {
		return nil
	}
	if errors.Is(err, storage.ErrDeadlock) {
		t.rollbackVictim() // mdl.go
	}
	return toSQLError(err)
}

// lockKey is lockKeys of one key, without a slice made per call.
func (t *txn) lockKey(ctx *sql.Context, o storage.LockOptions, key []byte) error {
	t.oneKey[0] = key
	err := t.lockKeys(ctx, o, t.oneKey[:]...)
	t.oneKey[0] = nil
	if err == nil && o.Mode == storage.LockExclusive {
		t.lastLocked = append(t.lastLocked[:0], key...)
		t.lastRead = nil
	}
	return err
}

// lockRowKey locks a key the editor writes or checks: exclusively, waiting
// innodb_lock_wait_timeout. Optimistic transactions lock nothing. A key
// the transaction locked exclusively last (the row its statement's scan
// has just handed over) is not locked again: locks are held until the
// transaction ends.
func (t *txn) lockRowKey(ctx *sql.Context, key []byte) error {
	if t.locker == nil {
		return nil
	}
	if t.lastLocked != nil && bytes.Equal(key, t.lastLocked) {
		return nil
	}
	return t.lockKey(ctx, storage.LockOptions{Mode: storage.LockExclusive, Wait: t.lockWait}, key)
}

// noteLockedRead records the value a locking scan read under the key it
// has just locked exclusively (nil: none), while the transaction's writes
// stood at position at and its view held all of them: until the
// transaction writes again, that is what getRowValue would read. The
// editor updating or deleting the row then does not read it again. value
// is kept as it is: a read's value is the caller's (storage.Reader.Get),
// and nothing writes into it. Called with t.mu held.
func (t *txn) noteLockedRead(value []byte, at int) {
	if value == nil || at != t.boundary {
		t.lastRead = nil
		return
	}
	t.lastRead, t.lastReadAt = value, at
}

// getRowValue reads a row or unique index entry for the editor: in a
// pessimistic transaction at the latest committed state plus every write
// of the transaction (the caller has locked it), else as the transaction
// sees it.
func (t *txn) getRowValue(key []byte) ([]byte, bool, error) {
	if t.locker == nil {
		return t.get(key)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return nil, false, errors.New("sqlstore: transaction already finished")
	}
	if t.lastRead != nil && t.lastReadAt == t.tx.Count() && bytes.Equal(key, t.lastLocked) {
		return t.lastRead, true, nil
	}
	return getFound(t.tx.Current(), key)
}

// getFound reads key from r; found is false when it is absent.
func getFound(r storage.Reader, key []byte) ([]byte, bool, error) {
	v, err := r.Get(key, nil)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// keyIter is what a delete by value reads a hash index through.
type keyIter interface {
	First() bool
	Next() bool
	Key() []byte
	Error() error
	Close() error
}

// newHashIter returns an iterator over [lower, upper) of a keyless table's
// hash index for a delete by value: in a pessimistic transaction over the
// latest state plus every write (the row to delete was read at the latest,
// and its entry may be newer than the snapshot), else as the transaction
// sees it.
func (t *txn) newHashIter(lower, upper []byte) (keyIter, error) {
	if t.locker == nil {
		it, err := t.newIter(lower, upper)
		if err != nil {
			return nil, err
		}
		return it, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tx.Current().NewIter(&storage.IterOptions{LowerBound: lower, UpperBound: upper})
}

// rowLocker locks the rows a row iterator reaches and reads them again at
// the latest state (see above).
type rowLocker struct {
	tx   *txn
	lock rowLock
	r    storage.Reader
	view storage.Reader // r when it is the latest view (not every write)

	key   []byte  // scratch: a primary index key
	ixKey []byte  // scratch: an index entry's key
	full  sql.Row // scratch: a decoded row
}

// newRowLocker returns the row locker of a statement that locks the rows
// it reads in tx, nil for one that does not. onView tells the reader the
// scan reads (the statement view, or the transaction with every write).
func newRowLocker(ctx *sql.Context, tx *txn, onView bool) *rowLocker {
	var lk rowLock
	if !onView && tx != nil && tx.locker != nil {
		// A foreign key check (the only scan of the transaction's every
		// write): shared locks on the rows it finds, as InnoDB takes.
		lk = rowLock{opts: storage.LockOptions{Mode: storage.LockShared, Wait: tx.lockWait}}
	} else if l, ok := statementLock(ctx, tx); ok {
		lk = l
	} else {
		return nil
	}
	rl := &rowLocker{tx: tx, lock: lk}
	if onView {
		rl.r = tx.locker.LatestView()
		rl.view = rl.r
	} else {
		rl.r = tx.tx.Current()
	}
	return rl
}

// nextLocked is rowIter.Next for a statement that locks the rows it reads.
func (ri *rowIter) nextLocked(ctx *sql.Context) (sql.Row, error) {
	lk := ri.lk
	for {
		ok, err := ri.src.next(ctx)
		if err != nil {
			return nil, wrapf(err, "sqlstore: reading %s", ri.d.name)
		}
		if !ok {
			return nil, io.EOF
		}
		key, _, sp := ri.src.entry()
		if ri.fetch != nil {
			if lk.key, err = ri.fetch.pkKey(lk.key[:0]); err != nil {
				return nil, err
			}
			key = lk.key
		}
		if err := ri.tx.lockKey(ctx, lk.lock.opts, key); err != nil {
			if lk.lock.skipLocked && isLockNotAvailable(err) {
				continue
			}
			return nil, err
		}
		ri.tx.mu.Lock()
		value, found, err := getFound(lk.r, key)
		if err == nil && lk.lock.opts.Mode == storage.LockExclusive && lk.r == lk.view {
			ri.tx.noteLockedRead(value, ri.tx.tx.Count())
		}
		ri.tx.mu.Unlock()
		if err != nil {
			return nil, wrapf(err, "sqlstore: reading %s", ri.d.name)
		}
		if !found {
			continue // deleted before the lock was granted
		}
		span := &ri.spans[sp]
		if ri.fetch != nil {
			in, err := lk.inSpan(ri, key, value, span)
			if err != nil {
				return nil, err
			}
			if !in {
				continue
			}
		}
		row, found, err := ri.t.decodeRow(ctx, value, span, ri.ix, &ri.full, ri.rowArena())
		if err != nil {
			return nil, err
		}
		if found {
			return row, nil
		}
	}
}

// inSpan reports whether the row stored as value under primary index key
// key still has its entry of the iterator's secondary index within span.
func (lk *rowLocker) inSpan(ri *rowIter, key, value []byte, span *span) (bool, error) {
	full, err := ri.d.decodeRow(value, lk.full[:0], nil)
	if err != nil {
		return false, err
	}
	lk.full = full
	pk := key[indexPrefixLen(ri.d.id, primaryIndexID):]
	k, _, err := ri.d.indexEntry(lk.ixKey[:0], ri.ix, full, pk)
	lk.ixKey = k
	if err != nil {
		return false, err
	}
	return bytes.Compare(k, span.start) >= 0 && (span.end == nil || bytes.Compare(k, span.end) < 0), nil
}

// isLockNotAvailable reports whether err is NOWAIT's 3572.
func isLockNotAvailable(err error) bool {
	var se *mysql.SQLError
	return errors.As(err, &se) && se.Num == erLockNowait
}

// lockSQLError returns MySQL's error for a lock that was not granted, nil
// for another error.
func lockSQLError(err error) *mysql.SQLError {
	switch {
	case errors.Is(err, storage.ErrLockWaitTimeout):
		return mysql.NewSQLError(mysql.ERLockWaitTimeout, mysql.SSUnknownSQLState,
			"Lock wait timeout exceeded; try restarting transaction")
	case errors.Is(err, storage.ErrDeadlock):
		return mysql.NewSQLError(mysql.ERLockDeadlock, mysql.SSLockDeadlock,
			"Deadlock found when trying to get lock; try restarting transaction")
	case errors.Is(err, storage.ErrLockNotAvailable):
		return mysql.NewSQLError(erLockNowait, mysql.SSUnknownSQLState,
			"Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set.")
	}
	return nil
}

// keySource yields the keys of exact point spans without reading them,
// for a locking read of primary keys (scan.go), which reads each key
// itself once it holds the lock: as InnoDB's locking reads, it reads the
// latest committed row, also one committed after the statement's
// snapshot.
type keySource struct {
	spans []span
	cur   int
}

func (s *keySource) next(*sql.Context) (bool, error) {
	s.cur++
	return s.cur < len(s.spans), nil
}

func (s *keySource) entry() ([]byte, []byte, int) { return s.spans[s.cur].start, nil, s.cur }

func (s *keySource) close() error { return nil }
