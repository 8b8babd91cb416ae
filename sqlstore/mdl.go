package sqlstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/strata-db/strata/storage"
)

// Metadata locks
//
// A schema change and the transactions using the table it changes are
// ordered by metadata locks, as in MySQL 8: without them a DDL statement
// proceeded under open transactions that had written the table, whose
// commits then failed with 1213 (their writes followed the old definition),
// and CREATE INDEX under writers that never paused failed every attempt
// (its commit conflicted with rows written after its snapshot).
//
// Every writing statement takes a shared-write lock on each table it
// writes (the editor, editor.go), and every statement reading a table
// inside a transaction a shared-read lock (lockForRead); the transaction
// holds them until it ends: commit, rollback, the implicit commit before
// DDL, or the session's end. DDL takes an exclusive lock on the table it
// changes; CREATE INDEX and ALTER TABLE ADD INDEX take an exclusive lock
// and downgrade it to shared-no-write, which lets readers in and makes
// writers wait while the index is built (MySQL's LOCK=SHARED).
// Autocommitting reads take no lock: they read their snapshot, which a
// schema change does not disturb (the catalog is versioned with the rows).
// Locks are kept per store and per process, keyed by table ID.
//
// Waiting is FIFO: a request is granted when it is compatible with every
// lock other sessions hold and every request queued before it, so that a
// waiting DDL keeps new writers out instead of being starved by them. A
// transaction asking for SHARED_NO_WRITE or EXCLUSIVE on a table it holds
// already (an upgrade) waits only for the holders. A transaction that read
// a table and then writes it asks SHARED_WRITE as any writer does, behind
// the requests queued: MySQL gives a pending DDL priority over new
// SHARED_WRITE requests, so that the writer waits for the DDL, which waits
// for the writer's SHARED_READ, and the writer fails with 1213 at once
// (Deadlocks, below). A wait ends at the session's
// lock_wait_timeout (1205), when the statement is killed, or at once with
// 1213 when it closes a cycle of waits (Deadlocks, below).
//
// A statement that waited begins again on a fresh snapshot when nothing of
// it has read or written yet and it is the transaction's only statement
// (an autocommit write, or DDL, which always runs alone after its implicit
// commit) or its transaction's first use of a table: it then sees what the
// holders it waited for committed; such a transaction also begins afresh
// at a statement's start, before the statement is planned, when a DDL
// statement committed since its snapshot (renewStale). A transaction that
// cannot begin afresh keeps its snapshot; a statement on a table whose
// definition changed after it fails with MySQL's 1412 (an autocommit
// statement runs again instead: staleSnapshot), and a commit that wrote
// such a table with 1213.

// mdlMode is a metadata lock's mode, weakest first.
type mdlMode uint8

const (
	mdlSharedRead    mdlMode = iota // SR: reads the rows
	mdlSharedWrite                  // SW: writes the rows
	mdlSharedNoWrite                // SNW: reads, and keeps writers out (index builds)
	mdlExclusive                    // X: changes the definition
)

var mdlModeNames = [...]string{"SHARED_READ", "SHARED_WRITE", "SHARED_NO_WRITE", "EXCLUSIVE"}

func (m mdlMode) String() string {
	if int(m) < len(mdlModeNames) {
		return mdlModeNames[m]
	}
	return fmt.Sprintf("mdlMode(%d)", m)
}

// mdlCompatible is MySQL's compatibility matrix for these modes, indexed
// [held][requested]; it is symmetric.
var mdlCompatible = [4][4]bool{
	mdlSharedRead:    {mdlSharedRead: true, mdlSharedWrite: true, mdlSharedNoWrite: true},
	mdlSharedWrite:   {mdlSharedRead: true, mdlSharedWrite: true},
	mdlSharedNoWrite: {mdlSharedRead: true},
	mdlExclusive:     {},
}

// covers reports whether holding m grants what r asks for.
func (m mdlMode) covers(r mdlMode) bool {
	return m == r || m == mdlExclusive || r == mdlSharedRead
}

// mdlShards spreads tables over locks, so that sessions writing different
// tables do not meet on one mutex.
const mdlShards = 16

// mdlTable is a store's metadata locks. The zero value is ready.
type mdlTable struct {
	shards [mdlShards]mdlShard
	// visit numbers the deadlock searches (mdlWaiter.visited); it is used
	// with every shard held.
	visit uint64
}

type mdlShard struct {
	mu    sync.Mutex
	locks map[uint64]*mdlLock
	free  []*mdlLock // emptied locks, reused so that a lock costs no allocation
}

// mdlLock is one table's lock: the granted requests and the queue.
type mdlLock struct {
	db, name string // the table's, for performance_schema
	granted  []mdlGrant
	waiting  []*mdlWaiter
}

// mdlGrant is a lock held by a transaction. Locks of one session never
// conflict: a DDL statement in a procedure runs while the caller's
// transaction, which may have written the table, is open.
type mdlGrant struct {
	t    *txn
	sess *Session
	mode mdlMode
}

type mdlWaiter struct {
	mdlGrant
	l       *mdlLock
	ready   chan struct{} // closed when granted, or chosen as a deadlock's victim
	granted bool
	victim  bool // taken out of the queue to break a deadlock
	upgrade bool // a DDL mode asked by a transaction holding a weaker lock on the table
	// visited marks the deadlock search that last reached the request;
	// it is used with every shard held.
	visited uint64
}

// txnMDL is what a transaction holds, so that a statement asks the store
// once per table and transaction; buf keeps the common case free of
// allocations.
type txnMDL struct {
	held []mdlHold
	buf  [2]mdlHold
	// epoch names the transaction's locks from its first lock to its end
	// (0: none), so that an editor kept across statements tells a
	// transaction it locked for from a later one at the same address.
	epoch atomic.Uint64

	// wait belongs to the store's lock table (mdlTable), not to the
	// transaction: the request the transaction waits for (nil: none),
	// written under the shard of its lock.
	wait *mdlWaiter
	// victim is set when the transaction was rolled back as a deadlock's
	// victim (rollbackVictim); t.mu guards it.
	victim bool
	// stale is set when the transaction, an autocommit statement's, was
	// rolled back because a table it came to use changed after its
	// snapshot (staleSnapshot); t.mu guards it.
	stale bool
	// last is the table the transaction locked last (0: none), so that a
	// statement reading the table its transaction read before asks
	// nothing more of the lock table or of held (lockForRead).
	last atomic.Uint64
}

// mdlEpochs numbers txnMDL.epoch.
var mdlEpochs atomic.Uint64

type mdlHold struct {
	table uint64
	mode  mdlMode
}

func (g *mdlGrant) sameOwner(t *txn, sess *Session) bool {
	return g.t == t || (sess != nil && g.sess == sess)
}

// grantable reports whether t may have mode now: compatible with every
// other owner's lock and, unless t upgrades, with the requests in ahead.
func (l *mdlLock) grantable(t *txn, sess *Session, mode mdlMode, ahead []*mdlWaiter, upgrade bool) bool {
	for i := range l.granted {
		g := &l.granted[i]
		if !g.sameOwner(t, sess) && !mdlCompatible[g.mode][mode] {
			return false
		}
	}
	if upgrade {
		return true
	}
	for _, w := range ahead {
		if !w.sameOwner(t, sess) && !mdlCompatible[w.mode][mode] {
			return false
		}
	}
	return true
}

// grant records t's lock, strengthening the one it holds.
func (l *mdlLock) grant(t *txn, sess *Session, mode mdlMode) {
	for i := range l.granted {
		if g := &l.granted[i]; g.t == t {
			g.mode = max(g.mode, mode)
			return
		}
	}
	l.granted = append(l.granted, mdlGrant{t: t, sess: sess, mode: mode})
}

// wake grants the queued requests that can be granted now, in order.
func (l *mdlLock) wake() {
	n := 0
	for _, w := range l.waiting {
		if l.grantable(w.t, w.sess, w.mode, l.waiting[:n], w.upgrade) {
			l.grant(w.t, w.sess, w.mode)
			w.granted = true
			w.t.mdl.wait = nil
			close(w.ready)
			continue
		}
		l.waiting[n] = w
		n++
	}
	clear(l.waiting[n:])
	l.waiting = l.waiting[:n]
}

func (sh *mdlShard) lock(id uint64) *mdlLock {
	if l := sh.locks[id]; l != nil {
		return l
	}
	if sh.locks == nil {
		sh.locks = make(map[uint64]*mdlLock)
	}
	var l *mdlLock
	if n := len(sh.free); n > 0 {
		l, sh.free = sh.free[n-1], sh.free[:n-1]
	} else {
		l = &mdlLock{}
	}
	sh.locks[id] = l
	return l
}

// tidy forgets an unused lock.
func (sh *mdlShard) tidy(id uint64, l *mdlLock) {
	if len(l.granted) == 0 && len(l.waiting) == 0 {
		delete(sh.locks, id)
		l.db, l.name = "", ""
		if len(sh.free) < 64 {
			sh.free = append(sh.free, l)
		}
	}
}

// acquire grants t mode on table id, waiting up to wait; waited reports
// whether it had to wait (granted or not).
func (m *mdlTable) acquire(ctx context.Context, t *txn, id uint64, mode mdlMode, wait time.Duration) (waited bool, err error) {
	return m.acquireNamed(ctx, t, id, "", "", mode, wait)
}

// acquireNamed is acquire naming the table, for performance_schema.
func (m *mdlTable) acquireNamed(ctx context.Context, t *txn, id uint64, db, name string, mode mdlMode, wait time.Duration) (waited bool, err error) {
	sh := &m.shards[id%mdlShards]
	sh.mu.Lock()
	l := sh.lock(id)
	if l.name == "" {
		l.db, l.name = db, name
	}
	upgrade := false
	if mode >= mdlSharedNoWrite {
		for i := range l.granted {
			if l.granted[i].t == t {
				upgrade = true
			}
		}
	}
	if l.grantable(t, t.sess, mode, l.waiting, upgrade) {
		l.grant(t, t.sess, mode)
		sh.mu.Unlock()
		return false, nil
	}
	w := &mdlWaiter{mdlGrant: mdlGrant{t: t, sess: t.sess, mode: mode}, l: l, ready: make(chan struct{}), upgrade: upgrade}
	l.enqueue(w)
	sh.mu.Unlock()
	m.breakDeadlocks(w)

	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-w.ready:
	case <-ctx.Done():
		err = fmt.Errorf("sqlstore: waiting for a metadata lock: %w", ctx.Err())
	case <-timer.C:
		err = lockSQLError(storage.ErrLockWaitTimeout)
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	switch {
	case w.granted:
		return true, nil // granted, perhaps as the wait ended: keep it
	case w.victim:
		// Out of the queue already; the lock may since have been
		// forgotten, even reused for another table.
		if sh.locks[id] == l {
			sh.tidy(id, l)
		}
		return true, lockSQLError(storage.ErrDeadlock)
	}
	l.dequeue(w)
	// Requests queued behind this one may be grantable without it.
	l.wake()
	sh.tidy(id, l)
	return true, err
}

// enqueue queues w: at the end, or for an upgrade ahead of the queue (a
// request queued for a lock the transaction holds already waits for it
// anyway). The caller holds the shard.
func (l *mdlLock) enqueue(w *mdlWaiter) {
	if w.upgrade {
		l.waiting = append(l.waiting, nil)
		copy(l.waiting[1:], l.waiting)
		l.waiting[0] = w
	} else {
		l.waiting = append(l.waiting, w)
	}
	w.t.mdl.wait = w
}

// dequeue takes w out of the queue. The caller holds the shard.
func (l *mdlLock) dequeue(w *mdlWaiter) {
	for i, x := range l.waiting {
		if x == w {
			l.waiting = slices.Delete(l.waiting, i, i+1)
			break
		}
	}
	if w.t.mdl.wait == w {
		w.t.mdl.wait = nil
	}
}

// Deadlocks
//
// A wait closes a cycle when the transaction it waits for waits, through
// others perhaps, for the waiter: two writers each holding a table the
// other wants after a DDL statement queued on both, a transaction writing
// a table it read while a DDL statement waits for it, two DDL statements
// locking their tables in opposite orders. Every edge of such a cycle was made by
// a request that began to wait (a grant makes edges only to a transaction
// that no longer waits), so, as in MySQL's metadata lock subsystem, the
// wait-for graph is searched from each request as it begins to wait, and
// again until no cycle runs through it: the newest edge closes every
// cycle, and is found then. A transaction waits for the other sessions'
// transactions whose granted locks, or requests queued ahead of its own
// (not for an upgrade), conflict with its request.
//
// The victim is MySQL's: the transaction of the cycle whose request
// weighs least, DML (SHARED_READ, SHARED_WRITE) before DDL
// (SHARED_NO_WRITE, EXCLUSIVE), the requester on a tie, then the one
// nearest it along the cycle. Its request leaves the queue and fails with
// 1213, and its transaction is rolled back (lockTable), as MySQL rolls
// back a transaction that holds locks of earlier statements. (MySQL
// retries a victim that holds no lock yet instead; here such a request is
// never on a cycle the search follows: whoever waits for it, queued
// behind it, waits for what it waits for too.) A search deeper than
// mdlMaxSearchDepth counts as a deadlock, as MySQL's.
//
// The search holds every shard, so it sees one state of the graph; waits
// are rare next to grants, which take one shard.
//
// A cycle through row locks (locks.go) as well is not found here: the
// engine's lock table finds cycles of row locks only. Such a cycle ends
// when its row lock wait does, at innodb_lock_wait_timeout (MySQL finds
// these neither).

// mdlMaxSearchDepth bounds the deadlock search, MySQL's MAX_SEARCH_DEPTH.
const mdlMaxSearchDepth = 32

// lockAll takes every shard, in order.
func (m *mdlTable) lockAll() {
	for i := range m.shards {
		m.shards[i].mu.Lock()
	}
}

func (m *mdlTable) unlockAll() {
	for i := range m.shards {
		m.shards[i].mu.Unlock()
	}
}

// mdlWeight is a request's deadlock weight: the lightest request of a
// cycle is its victim.
func mdlWeight(mode mdlMode) int {
	if mode >= mdlSharedNoWrite {
		return 1 // DDL
	}
	return 0 // DML
}

// forEachBlocker calls f with the transaction of each lock and request
// that w waits for, until f returns false; it reports whether f never
// did. Every shard is held.
func (w *mdlWaiter) forEachBlocker(f func(*txn) bool) bool {
	l := w.l
	for i := range l.granted {
		g := &l.granted[i]
		if !g.sameOwner(w.t, w.sess) && !mdlCompatible[g.mode][w.mode] && !f(g.t) {
			return false
		}
	}
	if w.upgrade {
		return true
	}
	for _, q := range l.waiting {
		if q == w {
			break
		}
		if !q.sameOwner(w.t, w.sess) && !mdlCompatible[q.mode][w.mode] && !f(q.t) {
			return false
		}
	}
	return true
}

// breakDeadlocks searches for cycles through w, queued now, and takes
// their victims out of their queues, until no cycle runs through w or w is
// the victim.
func (m *mdlTable) breakDeadlocks(w *mdlWaiter) {
	m.lockAll()
	defer m.unlockAll()
	for !w.granted && !w.victim {
		v := m.findVictim(w)
		if v == nil {
			return
		}
		v.l.dequeue(v)
		v.victim = true
		close(v.ready)
		// Requests queued behind the victim may be grantable now.
		v.l.wake()
	}
}

// findVictim returns the victim of a cycle of waits through w, nil if
// there is none. Every shard is held.
func (m *mdlTable) findVictim(w *mdlWaiter) *mdlWaiter {
	m.visit++
	visit := m.visit
	start := w.t
	w.visited = visit
	path := []*mdlWaiter{w}
	found := false
	var search func(x *mdlWaiter) bool
	search = func(x *mdlWaiter) bool {
		return x.forEachBlocker(func(b *txn) bool {
			if b == start {
				found = true
				return false
			}
			bw := b.mdl.wait
			if bw == nil || bw.visited == visit {
				return true
			}
			if len(path) == mdlMaxSearchDepth {
				found = true
				return false
			}
			bw.visited = visit
			path = append(path, bw)
			if !search(bw) {
				return false
			}
			path = path[:len(path)-1]
			return true
		})
	}
	search(w)
	if !found {
		return nil
	}
	victim := path[0]
	for _, x := range path[1:] {
		if mdlWeight(x.mode) < mdlWeight(victim.mode) {
			victim = x
		}
	}
	return victim
}

// release drops t's lock on table id.
func (m *mdlTable) release(t *txn, id uint64) {
	sh := &m.shards[id%mdlShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	l := sh.locks[id]
	if l == nil {
		return
	}
	for i := range l.granted {
		if l.granted[i].t == t {
			last := len(l.granted) - 1
			l.granted[i] = l.granted[last]
			l.granted[last] = mdlGrant{}
			l.granted = l.granted[:last]
			break
		}
	}
	if len(l.waiting) > 0 {
		l.wake()
	}
	sh.tidy(id, l)
}

// mdlRow is one lock or request, for performance_schema.metadata_locks.
type mdlRow struct {
	table    uint64
	db, name string
	mode     mdlMode
	granted  bool
	sess     *Session
}

// rows lists every lock and request.
func (m *mdlTable) rows() []mdlRow {
	var out []mdlRow
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		for id, l := range sh.locks {
			for _, g := range l.granted {
				out = append(out, mdlRow{table: id, db: l.db, name: l.name, mode: g.mode, granted: true, sess: g.sess})
			}
			for _, w := range l.waiting {
				out = append(out, mdlRow{table: id, db: l.db, name: l.name, mode: w.mode, sess: w.sess})
			}
		}
		sh.mu.Unlock()
	}
	return out
}

// lockTable takes a metadata lock on table id for the transaction, once
// per transaction: a table it holds in mode or a stronger one costs a look
// at its own list. After a wait, the statement's transaction begins again
// on a fresh snapshot when it may (fresh, see above): the holders it
// waited for have committed since its snapshot was taken. waited also
// reports a catalog changed since the snapshot: the caller reads the
// table's definition again.
func (t *txn) lockTable(ctx *sql.Context, def *tableDef, mode mdlMode, fresh bool) (waited bool, err error) {
	id := def.id
	if t.sess == nil {
		return false, nil // internal views take no locks
	}
	t.mu.Lock()
	for _, h := range t.mdl.held {
		if h.table == id && h.mode.covers(mode) {
			t.mu.Unlock()
			t.mdl.last.Store(id)
			return false, nil
		}
	}
	done := t.done
	// A transaction that holds no lock yet has used no table (reads in a
	// transaction take one): a statement of it that waited may begin it
	// afresh, as MySQL takes the snapshot at the first read, unless it
	// began WITH CONSISTENT SNAPSHOT.
	fresh = fresh || (len(t.mdl.held) == 0 && mode <= mdlSharedWrite && !t.fixedSnapshot)
	t.mu.Unlock()
	if done {
		return false, nil // the writes report the finished transaction
	}
	s := t.store
	waited, err = s.mdl.acquireNamed(ctx, t, id, def.db, def.name, mode, t.sess.vars(ctx).mdlWait)
	if err != nil {
		if IsConflict(err) {
			// The victim of a deadlock: its transaction is rolled back,
			// as MySQL rolls back one that holds locks of earlier
			// statements (and InnoDB its row lock victims, lockKeys).
			t.rollbackVictim()
		}
		return waited, err
	}
	// A DDL statement may also have committed between the snapshot and
	// the grant without this statement waiting for it.
	waited = waited || t.tx.StartVersion() < s.catalog.version.Load()
	t.mu.Lock()
	if t.done {
		// Ended (the session closed) while this statement waited.
		t.mu.Unlock()
		s.mdl.release(t, id)
		return waited, nil
	}
	if t.mdl.held == nil {
		t.mdl.held = t.mdl.buf[:0]
	}
	found := false
	for i := range t.mdl.held {
		if h := &t.mdl.held[i]; h.table == id {
			h.mode, found = max(h.mode, mode), true
		}
	}
	if !found {
		t.mdl.held = append(t.mdl.held, mdlHold{table: id, mode: mode})
	}
	if t.mdl.epoch.Load() == 0 {
		t.mdl.epoch.Store(mdlEpochs.Add(1))
	}
	t.mdl.last.Store(id)
	if waited && fresh {
		err = t.renewLocked()
	}
	stale := waited && err == nil && mode <= mdlSharedWrite && t.tx.StartVersion() < s.catalog.version.Load()
	t.mu.Unlock()
	if stale && t.defChanged(def) {
		// The transaction cannot see the table as it is now (a DDL
		// statement on it committed after the snapshot): MySQL's 1412,
		// where the statement read or wrote the old table. A lock the
		// transaction did not hold before is let go, so that the next
		// statement on the table (its scan, if this was its editor)
		// finds the same.
		if !found {
			t.mu.Lock()
			t.mdl.held = slices.DeleteFunc(t.mdl.held, func(h mdlHold) bool { return h.table == id })
			t.mu.Unlock()
			t.mdl.last.CompareAndSwap(id, 0)
			s.mdl.release(t, id)
		}
		return waited, t.staleSnapshot(ctx)
	}
	return waited, err
}

// staleSnapshot is the error of a statement of t that uses a table whose
// definition changed after t's snapshot, which could not begin afresh (it
// had written, as a statement whose trigger writes this table after the
// table that fired it): MySQL's 1412; errPlanChanged when the statement
// is its transaction (autocommitting, not in a procedure body), so that
// the front ends run it again in a new transaction, planned afresh (its
// failed transaction, with what it wrote, is rolled back), as MySQL opens
// a statement's tables, the trigger's with them, before it runs.
//
// The failed transaction is rolled back here, and the statement's later
// writes find it ended (Store.writer): GMS commits an autocommit
// statement's transaction as its iterator closes, even after an error,
// and what the statement wrote before this table (the row that fired the
// trigger) must not be committed by the run that failed.
func (t *txn) staleSnapshot(ctx *sql.Context) error {
	sess, ok := ctx.Session.(*Session)
	if !ok || sess != t.sess || !sess.Autocommitting(ctx) {
		return errTableDefChanged
	}
	sess.mu.Lock()
	inCall := len(sess.nested.calls) > 0
	sess.mu.Unlock()
	if inCall {
		return errTableDefChanged
	}
	t.mu.Lock()
	t.mdl.stale = true
	t.mu.Unlock()
	t.rollback()
	return errPlanChanged
}

// endedErr is the error of a write in t, which ended while its statement
// ran: the deadlock victim's 1213, errPlanChanged for a statement whose
// table changed after its snapshot (staleSnapshot), nil otherwise (a
// procedure called by a trigger committed, and the write begins anew).
func (t *txn) endedErr() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.mdl.victim:
		return lockSQLError(storage.ErrDeadlock)
	case t.mdl.stale:
		return errPlanChanged
	}
	return nil
}

// errTableDefChanged is MySQL's ER_TABLE_DEF_CHANGED.
var errTableDefChanged = mysql.NewSQLError(1412, mysql.SSUnknownSQLState, "Table definition has changed, please retry transaction")

// defChanged reports whether the definition of table def, as t sees it,
// is no longer the committed one: a DDL statement on it committed after
// t's snapshot (a statement of t that changed it itself does not count).
// It reads the catalog at the latest state, which only a transaction
// whose snapshot predates a catalog change asks for, once per table.
func (t *txn) defChanged(def *tableDef) bool {
	t.mu.Lock()
	ddl := t.ddl
	t.mu.Unlock()
	if ddl {
		return false
	}
	d := &Database{store: t.store, name: def.db}
	key := d.tableKey(def.name)
	old, okOld, err := t.get(key)
	if err != nil {
		return false
	}
	latest := t.store.beginTxn(true)
	defer latest.rollback()
	cur, okCur, err := latest.get(key)
	return err == nil && (okOld != okCur || !bytes.Equal(old, cur))
}

// rollbackVictim rolls t back as a deadlock's victim (of metadata locks
// or of row locks, lockKeys). The statement fails: it writes in no new
// transaction (Store.writer), and the session stays in t, finished, until
// its next statement, which begins outside any transaction
// (Session.ValidateSession), as MySQL leaves a session whose transaction
// it rolled back for a deadlock. Until then the session keeps its explicit
// transaction's mark (Session.Autocommitting), so that the failed statement
// of an explicit transaction is not run again as an autocommit write
// (Store.RunWrite).
func (t *txn) rollbackVictim() {
	t.mu.Lock()
	t.mdl.victim = true
	t.mu.Unlock()
	t.rollback()
}

// mdlVictim reports whether t was rolled back as a deadlock's victim
// (rollbackVictim).
func (t *txn) mdlVictim() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mdl.victim
}

// lockForRead takes a shared-read lock on the table for a statement that
// reads it inside a transaction, held to the transaction's end, as MySQL
// takes SHARED_READ (SHARED_WRITE for FOR UPDATE): a DDL statement on a table a transaction has read
// waits for the transaction. Without it the DDL ran under the
// transaction, whose later UPDATE of the table then matched nothing (the
// rows it had read were rewritten under another table ID) or whose commit
// failed with 1213. The transaction keeps its snapshot after a wait.
//
// An autocommitting statement is its own transaction, and a schema change
// does not disturb the snapshot it reads (the catalog is versioned with
// the rows): it takes no lock, and so does not wait behind a queued DDL
// statement as MySQL's would. A statement reading the table its
// transaction locked last costs one atomic load; others in a transaction
// a look at the transaction's locks.
func (t *Table) lockForRead(ctx *sql.Context, tx *txn) error {
	if tx.sess == nil {
		return nil
	}
	if sess, ok := ctx.Session.(*Session); !ok || sess.Autocommitting(ctx) {
		return nil
	}
	// SELECT ... FOR UPDATE takes SHARED_WRITE, as MySQL's does: it is to
	// write what it read, so an index build (SHARED_NO_WRITE) waits for it
	// as for a writer. The last table's shortcut holds only for a plain
	// read, whose SHARED_READ every lock covers.
	mode := mdlSharedRead
	if sl := stmtLockingOf(ctx); sl.locking && sl.lock.opts.Mode == storage.LockExclusive {
		mode = mdlSharedWrite
	} else if tx.mdl.last.Load() == t.def.id {
		return nil
	}
	waited, err := tx.lockTable(ctx, t.def, mode, false)
	if err != nil || !waited {
		return err
	}
	// The transaction's first statement began afresh after its wait
	// (lockTable): a DDL statement waited for may have changed the table
	// the plan reads, whose rows then are not where the plan looks (a
	// copying ALTER moved them). The read fails before it reads a row,
	// rather than read nothing: with errPlanChanged, which the front ends
	// run again planned afresh as MySQL prepares the statement again, when
	// this is the transaction's first table (the read's iterator is made
	// as the statement's first row is asked for, so no row of the
	// statement has reached the client); with 1412 otherwise.
	tx.mu.Lock()
	ddl, first := tx.ddl, len(tx.mdl.held) == 1 && tx.tx.Count() == 0
	tx.mu.Unlock()
	if ddl {
		return nil
	}
	def, ok, err := t.db.readTable(tx, t.def.name)
	if err != nil {
		return err
	}
	if !ok || !planServes(t.def, def) {
		if first {
			return errPlanChanged
		}
		return errTableDefChanged
	}
	return nil
}

// releaseMDL drops the transaction's metadata locks, as it ends.
func (t *txn) releaseMDL() {
	t.mu.Lock()
	held := t.mdl.held
	t.mdl.held = t.mdl.buf[:0]
	t.mdl.epoch.Store(0)
	t.mdl.last.Store(0)
	t.mu.Unlock()
	for _, h := range held {
		t.store.mdl.release(t, h.table)
	}
}

// renewLocked replaces the engine transaction by a new one, whose snapshot
// is now, if nothing read or wrote through the old one yet: no writes, no
// open iterators or readers, no row locks. t.mu is held.
func (t *txn) renewLocked() error {
	if t.done || t.tx.Count() != 0 || len(t.iters) != 0 || t.readers > 0 ||
		t.registered.Load() != lockUnregistered || len(t.guards) != 0 || len(t.loaded) != 0 {
		return nil
	}
	tx, err := t.store.engine.Begin()
	if err != nil {
		return wrapf(err, "sqlstore: beginning a transaction")
	}
	if err := t.store.syncCatalog(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if t.locker != nil {
		l, ok := tx.(storage.Locker)
		if !ok {
			_ = tx.Rollback()
			return nil
		}
		l.SetPessimistic()
		t.locker = l
	}
	old := t.tx
	t.tx = tx
	t.boundary = 0
	t.stmt = t.markLocked()
	_ = old.Rollback()
	return nil
}

// renewStale begins t again on a fresh snapshot at a statement's start,
// before GMS plans the statement, when a DDL statement committed after
// t's snapshot and nothing of t depends on the snapshot yet: no table used
// (a transaction's reads and writes hold metadata locks), nothing read or
// written (renewLocked), not WITH CONSISTENT SNAPSHOT. InnoDB takes a
// plain BEGIN's read view at its first read, so the statement sees the
// table as the DDL left it; planned on the snapshot's catalog, it would
// read the old definition's place and fail with 1412. In the common case,
// no DDL since the snapshot, it costs the catalog version's atomic load.
func (t *txn) renewStale() error {
	if t.fixedSnapshot || t.sess == nil || t.tx.StartVersion() >= t.store.catalog.version.Load() {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.mdl.held) != 0 || t.ddl {
		return nil
	}
	return t.renewLocked()
}

// lockForWrite takes the shared-write lock of the table the editor writes,
// and writes with the definition as the transaction sees it then
// (lockDef): an ALTER the statement waited for may have changed it, even
// its ID, or dropped the table. An unreadable table after the wait is left
// to the writes to report.
//
// The statement's plan was built before the lock was granted: when it no
// longer serves the definition under the lock (planServes: a DDL statement
// on the table committed in between, and the plan's rows, table ID or
// indexes may be another definition's), the statement fails before it
// writes, with errPlanChanged when it may run again planned afresh, and
// 1412 when not (planChanged).
func (e *editor) lockForWrite(ctx *sql.Context) error {
	fresh := false
	if sess, ok := ctx.Session.(*Session); ok {
		fresh = sess.Autocommitting(ctx)
	}
	planned := e.def
	def, err := e.t.db.lockDef(ctx, e.tx, planned, mdlSharedWrite, fresh)
	if err == nil && def != planned && e.rewrite == nil && !planServes(planned, def) {
		if err := e.tx.planChanged(); err != nil {
			return err
		}
	}
	if def == nil {
		return err
	}
	e.def = def
	return err
}

// errPlanChanged fails a statement planned for a definition of a table
// that a DDL statement it waited for (or that committed after the plan was
// built) changed, before anything of the statement was written, in a
// transaction whose snapshot shows the new definition: the front ends run
// the statement again, planned afresh (Store.RunWrite), as MySQL prepares
// a statement again when its tables changed while it opened them. A
// client that gets it (a front end that runs the statement only once) sees
// MySQL's 1412.
var errPlanChanged = mysql.NewSQLError(1412, mysql.SSUnknownSQLState, "Table definition has changed, please retry transaction")

// IsPlanChanged reports whether err is errPlanChanged: the statement
// failed before it wrote anything, and runs again planned afresh.
func IsPlanChanged(err error) bool { return errors.Is(err, errPlanChanged) }

// planChanged is the error of a statement of t whose plan holds a table
// definition that is no longer current: none for a DDL statement's own
// writes, which follow the definitions it made; errPlanChanged when t has
// written nothing (its snapshot shows the table as it is now: lockTable
// fails with 1412 a transaction that cannot see it), so that the statement
// may run again in it; 1412 otherwise, as MySQL fails a transaction that
// can no longer use the table as it saw it.
func (t *txn) planChanged() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.ddl:
		return nil // a DDL statement writes the definitions it made
	case t.done || t.tx.Count() != 0:
		return errTableDefChanged
	}
	return errPlanChanged
}

// planServes reports whether a plan built with the table definition
// planned still serves under now, the definition under the lock: the same
// definition, or the same table (ID, columns, constraints) with indexes
// added. The editor keeps every index of now, so a plan built before ADD
// INDEX (MySQL's online, in-place change) writes right; a plan that may
// read an index dropped since, or rows of another table ID or column
// layout, or that checks constraints of another definition, does not. The
// catalog caches a definition by its stored record, so the same record is
// the same pointer; the records are compared only when the pointers differ.
// A table gone (nil) serves no plan.
func planServes(planned, now *tableDef) bool {
	if planned == now {
		return true
	}
	if planned == nil || now == nil || planned.id != now.id || planned.db != now.db {
		return false
	}
	a, b := *planned.rec, *now.rec
	a.Indexes, a.NextIndexID, b.Indexes, b.NextIndexID = nil, 0, nil, 0
	ra, err := encodeRecord(&a)
	if err != nil {
		return false
	}
	rb, err := encodeRecord(&b)
	if err != nil || !bytes.Equal(ra, rb) {
		return false
	}
	for _, ix := range planned.rec.Indexes {
		if !slices.ContainsFunc(now.rec.Indexes, func(o indexRecord) bool { return reflect.DeepEqual(ix, o) }) {
			return false
		}
	}
	return true
}

// ddlWriter returns the transaction a DDL statement on the table writes
// in, holding a metadata lock in mode on the table as that transaction
// sees it.
//
// Shared-no-write (an index build) is had as MySQL's in-place ALTER has
// it: exclusive first, then downgraded, so that the build waits for the
// transactions that read the table (their shared-read locks) as well as
// for those that wrote it, and begins on a snapshot after theirs; readers
// that come during the build go on.
func (t *Table) ddlWriter(ctx *sql.Context, mode mdlMode) (*txn, error) {
	tx, err := t.store.writer(ctx)
	if err != nil {
		return nil, err
	}
	if mode != mdlSharedNoWrite {
		_, err := t.db.lockByName(ctx, tx, t.def.name, mode, ddlAlone(ctx))
		return tx, err
	}
	tx.mu.Lock()
	held := false
	for _, h := range tx.mdl.held {
		held = held || h.table == t.def.id
	}
	tx.mu.Unlock()
	if held {
		// Locked already by the statement (or the transaction): keep it.
		_, err := t.db.lockByName(ctx, tx, t.def.name, mode, ddlAlone(ctx))
		return tx, err
	}
	def, err := t.db.lockByName(ctx, tx, t.def.name, mdlExclusive, ddlAlone(ctx))
	if err != nil {
		return nil, err
	}
	if def != nil {
		tx.downgradeTable(def.id, mdlSharedNoWrite)
	}
	return tx, nil
}

// downgradeTable weakens t's lock on table id to mode, letting in the
// requests that mode admits.
func (t *txn) downgradeTable(id uint64, mode mdlMode) {
	t.mu.Lock()
	for i := range t.mdl.held {
		if h := &t.mdl.held[i]; h.table == id && h.mode > mode {
			h.mode = mode
		}
	}
	t.mu.Unlock()
	t.store.mdl.downgrade(t, id, mode)
}

// downgrade weakens t's lock on table id to mode.
func (m *mdlTable) downgrade(t *txn, id uint64, mode mdlMode) {
	sh := &m.shards[id%mdlShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	l := sh.locks[id]
	if l == nil {
		return
	}
	for i := range l.granted {
		if g := &l.granted[i]; g.t == t && g.mode > mode {
			g.mode = mode
		}
	}
	l.wake()
}

// ddlAlone reports whether a DDL statement runs in a transaction of its
// own: after its implicit commit, or autocommitting. (A statement without
// text, as a test may run, inside a transaction keeps the snapshot.)
func ddlAlone(ctx *sql.Context) bool {
	if implicitCommit(ctx.Query()) {
		return true
	}
	sess, ok := ctx.Session.(*Session)
	return ok && sess.Autocommitting(ctx)
}

// lockForTruncate locks the table for Truncate: exclusively for TRUNCATE,
// shared-write for the DELETE without WHERE GMS also runs through it.
func (t *Table) lockForTruncate(ctx *sql.Context, tx *txn) error {
	if isTruncateStatement(ctx.Query()) {
		_, err := t.db.lockByName(ctx, tx, t.def.name, mdlExclusive, ddlAlone(ctx))
		return err
	}
	fresh := false
	if sess, ok := ctx.Session.(*Session); ok {
		fresh = sess.Autocommitting(ctx)
	}
	_, err := t.db.lockByName(ctx, tx, t.def.name, mdlSharedWrite, fresh)
	return err
}

// lockByName takes a metadata lock in mode on the table named name as tx
// sees it (lockDef), and returns its definition then: nil when there is no
// such table.
func (d *Database) lockByName(ctx *sql.Context, tx *txn, name string, mode mdlMode, fresh bool) (*tableDef, error) {
	def, ok, err := d.readTable(tx, name)
	if err != nil || !ok {
		return nil, err
	}
	return d.lockDef(ctx, tx, def, mode, fresh)
}

// lockDef takes a metadata lock in mode on the table of def, as tx read
// it, and returns the table's definition under the lock. Only after a wait
// (or a catalog change since tx's snapshot, which lockTable reports alike)
// is the definition read again: a DDL statement waited for may have
// changed it, even given the table a new ID (a copying ALTER), which is
// then locked in turn, up to three times. Without one, def is current: no
// DDL statement on the table committed after the snapshot, and none can
// while the lock is held. When fresh, tx begins afresh after a wait, and
// for DDL after any grant (DDL runs alone in its transaction). A table gone
// after the wait gives nil, as does a failed read, with its error; a failed
// lock gives def with the error.
func (d *Database) lockDef(ctx *sql.Context, tx *txn, def *tableDef, mode mdlMode, fresh bool) (*tableDef, error) {
	for range 3 {
		waited, err := tx.lockTable(ctx, def, mode, fresh)
		if err != nil {
			return def, err
		}
		if fresh && mode >= mdlSharedNoWrite {
			// Writers may have committed after the snapshot without this
			// statement waiting for them; no writer holds the table now.
			tx.mu.Lock()
			err := tx.renewLocked()
			tx.mu.Unlock()
			if err != nil {
				return def, err
			}
		}
		if !waited {
			return def, nil
		}
		next, ok, err := d.readTable(tx, def.name)
		if err != nil || !ok {
			return nil, err
		}
		if next.id == def.id {
			return next, nil
		}
		def = next
	}
	// The name changed tables three times while this statement waited:
	// the last one is not locked.
	return nil, errTableDefChanged
}

// mdlDefaultWait is MySQL's default lock_wait_timeout, a year.
const mdlDefaultWait = 31536000 * time.Second

// lockBeforeValidation takes the exclusive lock of the tables an ALTER
// TABLE that adds a constraint changes, before GMS checks their rows
// against it (node n: ADD CHECK, ADD FOREIGN KEY, child table first, then
// the parent, whose definition MySQL 8 locks too). The statement then
// begins afresh, as DDL does after a grant (lockDef), and GMS reads the
// rows as they are under the lock: a violating row that a transaction it
// waited for committed fails the statement with 3819 or 1452, as in MySQL
// (GMS checked the rows at the statement's snapshot when the table locked
// them later, and the commit failed with 1213). The table's CreateCheck
// and AddForeignKey, which GMS calls after the check, find the lock held.
// Other nodes lock nothing.
func lockBeforeValidation(ctx *sql.Context, n sql.Node) error {
	switch n := n.(type) {
	case *plan.CreateCheck:
		if t := tableOfNode(n.Table); t != nil {
			return t.db.lockNamed(ctx, t.def.name)
		}
	case *plan.CreateForeignKey:
		fk := n.FkDef
		if fk == nil || n.DbProvider == nil {
			return nil
		}
		for _, dt := range [...][2]string{{fk.Database, fk.Table}, {fk.ParentDatabase, fk.ParentTable}} {
			db, err := n.DbProvider.Database(ctx, dt[0])
			if err != nil {
				return nil // GMS reports it
			}
			if d, ok := db.(*Database); ok {
				if err := d.lockNamed(ctx, dt[1]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// buildValidated builds n, an ALTER TABLE that adds a constraint, with
// base, once its tables are locked (lockBeforeValidation). GMS checks the
// rows as it builds; when they fail the check the statement fails, and
// releases its locks at once (buildDDL).
func buildValidated(ctx *sql.Context, n sql.Node, row sql.Row, base sql.NodeExecBuilder) (sql.RowIter, error) {
	if err := lockBeforeValidation(ctx, n); err != nil {
		return nil, err
	}
	return base.Build(ctx, n, row)
}

// buildDDL builds n, the top of the plan of a DDL statement, with full,
// the engine's exec builder, and when that fails rolls back the
// statement's transaction, releasing its metadata locks, as MySQL ends a
// failed DDL statement. GMS does most DDL as it builds the plan, and on an
// error leaves the transaction to the session's next statement (or, with
// autocommit off, to its COMMIT): the tables stayed locked until then. The
// transaction holds nothing else: the session's open one was committed
// before the statement (Session.ValidateSession). It returns no iterator,
// for the builder to build n itself, for a node inside the plan built and
// for a statement that is not DDL.
func buildDDL(ctx *sql.Context, n sql.Node, row sql.Row, full sql.NodeExecBuilder) (sql.RowIter, error) {
	s, ok := ctx.Session.(*Session)
	if !ok || !implicitCommit(ctx.Query()) {
		return nil, nil
	}
	s.mu.Lock()
	inside := s.nested.ddl
	s.nested.ddl = true
	s.mu.Unlock()
	if inside {
		return nil, nil
	}
	defer func() {
		s.mu.Lock()
		s.nested.ddl = false
		s.mu.Unlock()
	}()
	iter, err := full.Build(ctx, n, row)
	if err != nil {
		if t := txnOf(ctx); t != nil {
			t.rollback()
		}
	}
	return iter, err
}

// lockNamed takes an exclusive lock on the table named name for the
// statement's transaction. A statement that does not run alone (a test's,
// without text, in a transaction) keeps its snapshot, which may predate
// rows written before the grant: the table is guarded, so that the commit
// fails with 1213 rather than add a constraint those rows were not checked
// against.
func (d *Database) lockNamed(ctx *sql.Context, name string) error {
	tx, err := d.store.writer(ctx)
	if err != nil {
		return err
	}
	fresh := ddlAlone(ctx)
	def, err := d.lockByName(ctx, tx, name, mdlExclusive, fresh)
	if err == nil && def != nil && !fresh {
		tx.guard(tableSpan(def.id))
	}
	return err
}

// metadataLocksTable is performance_schema.metadata_locks: the metadata
// locks held and requested, as MySQL 8 lists them (tables only).
type metadataLocksTable struct{ perfTable }

var metadataLocksSchema = perfColumns("metadata_locks",
	"OBJECT_TYPE", varchar64,
	"OBJECT_SCHEMA", varchar64,
	"OBJECT_NAME", varchar64,
	"COLUMN_NAME", varchar64,
	"OBJECT_INSTANCE_BEGIN", types.Uint64,
	"LOCK_TYPE", varchar64,
	"LOCK_DURATION", varchar64,
	"LOCK_STATUS", varchar64,
	"SOURCE", varchar64,
	"OWNER_THREAD_ID", types.Uint64,
	"OWNER_EVENT_ID", types.Uint64,
)

func (t *metadataLocksTable) PartitionRows(ctx *sql.Context, _ sql.Partition) (sql.RowIter, error) {
	locks := t.store.mdl.rows()
	rows := make([]sql.Row, 0, len(locks))
	for _, l := range locks {
		status := "PENDING"
		if l.granted {
			status = "GRANTED"
		}
		var owner any
		if l.sess != nil {
			owner = threadID(l.sess.ID())
		}
		rows = append(rows, sql.Row{"TABLE", l.db, l.name, nil, l.table, l.mode.String(), "TRANSACTION", status, nil, owner, nil})
	}
	return sql.RowsToRowIter(rows...), nil
}

// lockAll locks every table of the database exclusively (DROP DATABASE).
func (d *Database) lockAll(ctx *sql.Context, tx *txn) error {
	names, err := d.tableNames(tx)
	if err != nil {
		return err
	}
	for _, name := range names {
		if _, err := d.lockByName(ctx, tx, name, mdlExclusive, ddlAlone(ctx)); err != nil {
			return err
		}
	}
	return nil
}
