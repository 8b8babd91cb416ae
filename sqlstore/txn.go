package sqlstore

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	goerrors "gopkg.in/src-d/go-errors.v1"

	"github.com/strata-db/strata/storage"
)

var _ sql.Transaction = (*txn)(nil)

// txn is a transaction: an engine transaction (storage.Txn), a snapshot of
// the store with a buffer of the transaction's own writes over it. Reads see
// the snapshot plus the writes; commit applies them atomically if no other
// transaction committed a write to one of its keys after the snapshot.
//
// A txn belongs to one session and is used by one statement at a time, but
// GMS may pull rows, write and close iterators from different goroutines (in
// sequence), so the little shared state it has is guarded by mu.
//
// Statement atomicity: the session marks the writes at the start of every
// statement (beginStatement) and every table editor marks them again at
// StatementBegin; a failed statement, or a failed row of INSERT IGNORE, rolls
// the writes back to the mark (storage.Txn.RollbackTo). A statement that
// fires triggers also runs under GMS's savepoint (triggerFlags), since a
// trigger's failure reaches no editor of the statement's own table.
// Row-count deltas, table creations and drops and post-commit work are
// logged in slices that roll back with the writes.
type txn struct {
	store    *Store
	sess     *Session // nil for internal read-only views
	readOnly bool
	// tx holds every write of the transaction: point reads (uniqueness
	// checks, the catalog) read through it, and commit applies it. Scans
	// read its views (stmtview.go).
	tx storage.Txn
	// boundary is the position (write count) of the last statement
	// boundary.
	boundary int

	mu   sync.Mutex
	done bool
	// fixedSnapshot is set for START TRANSACTION WITH CONSISTENT
	// SNAPSHOT: its snapshot is the one it began with, never renewed at a
	// first statement that waited for a lock or follows a DDL (mdl.go).
	fixedSnapshot bool

	// stmt is the mark taken at the start of the current statement;
	// stmtDDL is set when the statement wrote the catalog, or began to
	// copy a table's rows for a schema change (alter.go).
	stmt    txnMark
	stmtDDL bool
	// alterConv is the column type change of the ALTER TABLE copying a
	// table now (alterconvert.go).
	alterConv *alterConversion

	// deltas logs row-count changes, applied to the store's counters at
	// commit (stats.go).
	deltas []countDelta
	// written holds the IDs of the tables this transaction wrote rows to
	// (each once); the commit fails if one of them was dropped or
	// rewritten meanwhile.
	written []uint64
	// guards are key ranges the commit checks like the keys it writes
	// (storage.Txn.Guard): it fails if another transaction wrote in one
	// after the snapshot. guarded holds the tables whose catalog record
	// is among them.
	guards  []keyRange
	guarded []uint64
	// loaded are the ranges of indexes this transaction built by bulk
	// loads (indexbuild.go): written after the snapshot, but not by
	// another transaction, so the commit does not check them.
	loaded []keyRange
	// ddl is set once the transaction writes the catalog: its commit then
	// runs alone (Store.ddlMu) and updates the set of live tables.
	ddl     bool
	created []uint64 // table IDs made live by this transaction
	dropped []uint64 // table IDs made dead by this transaction
	// checks run at commit, with other commits excluded, against the latest
	// committed state plus this transaction's writes.
	checks []func(r storage.Reader) error
	// after runs after a successful commit.
	after []func()

	savepoints []savepoint
	iters      map[*txnIter]struct{} // open iterators, for rollback (iter.go)
	// readers counts open row iterators (scan.go), which may read without
	// an iterator (point reads, prepared scans).
	readers int
	// editing counts editors between StatementBegin and its end: with open
	// iterators, what tells a transaction in use from an abandoned one.
	editing int

	// locker is tx as a storage.Locker when the transaction is pessimistic,
	// nil when it is optimistic (locks.go); lockWait is the session's
	// innodb_lock_wait_timeout, read as each statement begins.
	locker   storage.Locker
	lockWait time.Duration
	// registered is where the transaction stands in the store's lock
	// registry (lockview.go): unregistered until its first lock (a read
	// that locks nothing never enters it), registered, or released.
	registered atomic.Uint32

	// Room for the first entries of written, deltas, guards and guarded:
	// a transaction that writes a row or two of one table allocates none
	// of them.
	writtenBuf [1]uint64
	deltasBuf  [2]countDelta
	guardsBuf  [2]keyRange
	guardedBuf [1]uint64
	// oneKey is lockKey's argument list; lastLocked the key last locked
	// exclusively, and lastRead the value a locking scan read under it at
	// write position lastReadAt (nil: none), which the editor need not
	// lock or read again (locks.go).
	oneKey     [1][]byte
	lastLocked []byte
	lastRead   []byte
	lastReadAt int
	// mdl is the metadata locks the transaction holds (mdl.go).
	mdl txnMDL
}

type countDelta struct {
	table uint64
	rows  int64
	bytes int64
}

type savepoint struct {
	name string
	mark txnMark
}

// txnMark is a position in the transaction to roll back to.
type txnMark struct {
	count   int // tx.Count() at the mark
	deltas  int
	created int
	dropped int
	checks  int
	after   int
	valid   bool
}

func (s *Store) beginTxn(readOnly bool) *txn {
	return s.beginTxnIn(nil, readOnly)
}

// beginTxnIn begins a transaction in t, a finished transaction nothing
// holds any more (Session.keepForReuse), or in a new one when t is nil.
// The engine transaction is begun in t's old one's memory too, when the
// engine can (storage.TxnReuser).
func (s *Store) beginTxnIn(t *txn, readOnly bool) *txn {
	var tx storage.Txn
	var err error
	if r, ok := s.engine.(storage.TxnReuser); ok && t != nil {
		tx, err = r.BeginReusing(t.tx)
	} else {
		tx, err = s.engine.Begin()
	}
	if err != nil {
		// Every use of the transaction reports err (a closed engine).
		tx = brokenTxn{err: wrapf(err, "sqlstore: beginning a transaction")}
	} else if err := s.syncCatalog(tx); err != nil {
		_ = tx.Rollback()
		tx = brokenTxn{err: err}
	}
	if t == nil {
		t = &txn{}
	}
	*t = txn{store: s, readOnly: readOnly, tx: tx}
	t.written, t.deltas = t.writtenBuf[:0], t.deltasBuf[:0]
	t.guards, t.guarded = t.guardsBuf[:0], t.guardedBuf[:0]
	// No one else has t yet, and its logs are empty: its mark needs no
	// lock, nor a look at each log.
	t.stmt = txnMark{count: tx.Count(), valid: true}
	return t
}

// String implements sql.Transaction.
func (t *txn) String() string {
	return fmt.Sprintf("sqlstore txn at version %d (%d writes)", t.tx.StartVersion(), t.tx.Count())
}

// IsReadOnly implements sql.Transaction.
func (t *txn) IsReadOnly() bool { return t.readOnly }

// mark returns the current position.
func (t *txn) mark() txnMark {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.markLocked()
}

func (t *txn) markLocked() txnMark {
	return txnMark{
		count:  t.tx.Count(),
		deltas: len(t.deltas), created: len(t.created), dropped: len(t.dropped),
		checks: len(t.checks), after: len(t.after), valid: true,
	}
}

// rollbackTo undoes everything done since m. A mark that lies beyond the
// current position (its writes were rolled back already) is ignored.
func (t *txn) rollbackTo(m txnMark) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done || !m.valid || m.count > t.tx.Count() || m.deltas > len(t.deltas) {
		return nil
	}
	if m.count == t.tx.Count() && m.deltas == len(t.deltas) && m.checks == len(t.checks) &&
		m.after == len(t.after) && m.created == len(t.created) && m.dropped == len(t.dropped) {
		return nil
	}
	// Iterators that see writes past the mark must not be used again (the
	// contract of storage.Txn.RollbackTo); they reopen on their next move.
	for it := range t.iters {
		if it.fixed == nil && it.writes > m.count {
			it.invalidate()
		}
	}
	if err := t.tx.RollbackTo(m.count); err != nil {
		return fmt.Errorf("sqlstore: statement rollback: %w", err)
	}
	t.boundary = min(t.boundary, m.count)
	// The row a locking read kept may have been read over writes undone
	// now: writes made after the rollback could bring the count back to
	// where it was read without it being the row (locks.go).
	t.lastRead = nil
	t.deltas = t.deltas[:m.deltas]
	t.created = t.created[:min(m.created, len(t.created))]
	t.dropped = t.dropped[:min(m.dropped, len(t.dropped))]
	t.checks = t.checks[:min(m.checks, len(t.checks))]
	t.after = t.after[:min(m.after, len(t.after))]
	return nil
}

// beginStatement marks the start of a statement: a statement boundary.
//
// DDL commits as soon as it succeeds (GMS's implicit commit), so catalog
// writes still pending when the next statement begins are those of a DDL
// statement that failed part-way (GMS drops the transaction of a failed
// statement without rolling it back, and with autocommit off it lives on):
// they are rolled back, so that a failed DDL statement leaves nothing.
func (t *txn) beginStatement() {
	if t.stmtDDL {
		_ = t.rollbackStatement()
	}
	t.stmtDDL = false
	t.endStatement()
	t.stmt = t.mark()
}

// rollbackStatement undoes the current statement.
func (t *txn) rollbackStatement() error {
	return t.rollbackTo(t.stmt)
}

// checkWritable reports whether the transaction takes writes. READ ONLY
// transactions take DDL, which MySQL runs after an implicit commit (GMS
// lets it through); their row writes are refused by the editors.
func (t *txn) checkWritable() error {
	if t.done {
		return errors.New("sqlstore: transaction already finished")
	}
	return nil
}

// catalogVersion returns the catalog version the transaction reads (see
// catalogCache); ok is false when it reads an older catalog or one it
// changed itself, and for a nil or finished transaction.
func (t *txn) catalogVersion() (v uint64, ok bool) {
	if t == nil {
		return 0, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	v = t.store.catalog.version.Load()
	return v, !t.done && !t.ddl && t.tx.StartVersion() >= v
}

// get reads key as the transaction sees it; found is false when absent.
func (t *txn) get(key []byte) (value []byte, found bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return nil, false, errors.New("sqlstore: transaction already finished")
	}
	cache := &t.store.catalog
	useCache := !t.ddl && cacheableCatalogKey(key)
	var version uint64
	if useCache {
		if e, ok := cache.lookup(key, t.tx.StartVersion()); ok {
			return e.value, e.found, nil
		}
		version = cache.version.Load()
	}
	v, err := t.tx.Get(key, nil)
	if errors.Is(err, storage.ErrNotFound) {
		if useCache {
			cache.add(key, catalogEntry{}, t.tx.StartVersion(), version)
		}
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if useCache {
		cache.add(key, catalogEntry{value: v, found: true}, t.tx.StartVersion(), version)
	}
	return v, true, nil
}

// errTxnTooLarge is MySQL's 1197 for a transaction whose writes outgrow
// Options.MaxTxnBytes.
var errTxnTooLarge = goerrors.NewKind("Multi-statement transaction required more than %d bytes of storage (the store's MaxTxnBytes); commit in smaller transactions")

// checkSize reports errTxnTooLarge when n more bytes of writes would take
// the transaction past the store's bound. Writes of a statement that
// changed the schema are not bounded (see Options.MaxTxnBytes).
func (t *txn) checkSize(n int) error {
	if max := t.store.opts.MaxTxnBytes; int64(t.tx.Len())+int64(n) > max && !t.stmtDDL {
		return errTxnTooLarge.New(max)
	}
	return nil
}

func (t *txn) set(key, value []byte) error {
	if err := t.checkWritable(); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.checkSize(len(key) + len(value)); err != nil {
		return err
	}
	return t.tx.Set(key, value)
}

func (t *txn) del(key []byte) error {
	if err := t.checkWritable(); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.checkSize(len(key)); err != nil {
		return err
	}
	return t.tx.Delete(key)
}

func (t *txn) deleteRange(start, end []byte) error {
	if err := t.checkWritable(); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tx.DeleteRange(start, end)
}

// setCatalog writes a catalog entry and makes the transaction a DDL one.
func (t *txn) setCatalog(key, value []byte) error {
	if err := t.set(key, value); err != nil {
		return err
	}
	t.ddl = true
	t.noteDDL(key)
	t.endStatement()
	return nil
}

func (t *txn) delCatalog(key []byte) error {
	if err := t.del(key); err != nil {
		return err
	}
	t.ddl = true
	t.noteDDL(key)
	t.endStatement()
	return nil
}

// noteDDL records that the statement wrote the catalog, for beginStatement.
// CREATE PROCEDURE is the exception: GMS does not commit it implicitly, so
// its record may rightly stay pending after the statement.
func (t *txn) noteDDL(key []byte) {
	if len(key) > 1 && key[1] != kindProcedure {
		t.stmtDDL = true
	}
}

// wrote records a write to a table's rows and its row-count change.
func (t *txn) wrote(table uint64, rows, bytes int64) {
	t.mu.Lock()
	if !contains(t.written, table) {
		t.written = append(t.written, table)
	}
	if rows != 0 || bytes != 0 {
		t.deltas = append(t.deltas, countDelta{table: table, rows: rows, bytes: bytes})
	}
	t.mu.Unlock()
}

// keyRange is a range of keys [start, end).
type keyRange struct{ start, end []byte }

// guard makes the commit fail if another transaction writes a key in
// [start, end) after this one's snapshot.
func (t *txn) guard(start, end []byte) {
	t.mu.Lock()
	t.guards = append(t.guards, keyRange{start: bytes.Clone(start), end: bytes.Clone(end)})
	t.mu.Unlock()
}

// guardSpans guards the spans of a lookup on index ix of table d.
func (t *txn) guardSpans(d *tableDef, ix *indexDef, spans []span) {
	var indexEnd []byte
	for _, sp := range spans {
		end := sp.end
		if end == nil { // to the index's end
			if indexEnd == nil {
				indexEnd = prefixEnd(appendIndexPrefix(nil, d.id, ix.id))
			}
			end = indexEnd
		}
		t.guard(sp.start, end)
	}
}

// guardDef makes the commit fail if another transaction changes def's
// catalog record (an index or a check added, a rename, a drop) after this
// one's snapshot: its writes followed the old definition, which would
// leave a new index without their entries or a new check unchecked.
func (t *txn) guardDef(def *tableDef) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if contains(t.guarded, def.id) {
		return
	}
	t.guarded = append(t.guarded, def.id)
	t.guards = append(t.guards, def.record) // never modified: no copy
}

// rowDelta returns the transaction's own change to a table's row count.
func (t *txn) rowDelta(table uint64) (rows, bytes int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, d := range t.deltas {
		if d.table == table {
			rows += d.rows
			bytes += d.bytes
		}
	}
	return rows, bytes
}

// tableCreated and tableDropped record changes to the set of live tables.
func (t *txn) tableCreated(id uint64) {
	t.mu.Lock()
	t.created = append(t.created, id)
	t.mu.Unlock()
}

func (t *txn) tableDropped(id uint64) {
	t.mu.Lock()
	t.dropped = append(t.dropped, id)
	t.mu.Unlock()
}

func (t *txn) addCheck(f func(r storage.Reader) error) {
	t.mu.Lock()
	t.checks = append(t.checks, f)
	t.mu.Unlock()
}

func (t *txn) afterCommit(f func()) {
	t.mu.Lock()
	t.after = append(t.after, f)
	t.mu.Unlock()
}

// commit applies the transaction. On any error nothing is applied and the
// transaction is finished all the same: a conflict means retrying it.
func (t *txn) commit() error {
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return nil
	}
	t.done = true
	t.mu.Unlock()
	defer t.release()
	if t.tx.Count() == 0 {
		return nil
	}
	s := t.store
	if t.ddl {
		s.ddlMu.Lock()
		defer s.ddlMu.Unlock()
	} else {
		s.ddlMu.RLock()
		defer s.ddlMu.RUnlock()
	}
	live := s.live
	if t.ddl {
		live = make(map[uint64]bool, len(s.live)+len(t.created))
		for id := range s.live {
			live[id] = true
		}
		for _, id := range t.dropped {
			delete(live, id)
		}
		for _, id := range t.created {
			live[id] = true
		}
		// Creation and drop logs are in order: a table created and dropped
		// again by this transaction is dead.
		for _, id := range t.dropped {
			if contains(t.created, id) && lastIndex(t.dropped, id) > lastIndex(t.created, id) {
				delete(live, id)
			}
		}
		cur := t.tx.Current()
		for _, chk := range t.checks {
			if err := chk(cur); err != nil {
				return toSQLError(err)
			}
		}
	}
	for _, id := range t.written {
		// A table this transaction dropped itself (or rewrote) needs no
		// check: its writes went with it.
		if !live[id] && !contains(t.dropped, id) {
			return toSQLError(fmt.Errorf("%w: a table this transaction wrote to was dropped or altered by another transaction", ErrConflict))
		}
	}
	if t.ddl {
		// No reader may use the cached catalog while this commit lands: a
		// snapshot taken right after it must not see the old entries.
		s.catalog.invalidate(math.MaxUint64)
		defer func() { s.catalog.invalidate(s.engine.LastVersion()) }()
	}
	t.mu.Lock()
	t.unguardLoaded()
	t.mu.Unlock()
	for _, g := range t.guards {
		t.tx.Guard(g.start, g.end)
	}
	tables := t.deltaTables()
	s.counters.beginCommit(tables)
	err := t.tx.Commit()
	s.counters.endCommit(tables, t.deltas, err == nil, s.engine.LastVersion)
	if err != nil {
		t.dropLoaded()
		return toSQLError(s.nameConflict(wrapf(err, "sqlstore: commit")))
	}
	if t.ddl {
		s.live = live
		// The change is committed; a failure to announce it to other
		// processes is reported once the commit's work is done.
		err = s.bumpSchemaVersion()
		for _, id := range t.dropped {
			if !live[id] {
				s.counters.drop(id)
			}
		}
	}
	for _, f := range t.after {
		f()
	}
	if err != nil {
		return toSQLError(err)
	}
	return nil
}

// deltaTables returns the distinct tables with row-count changes.
func (t *txn) deltaTables() []uint64 {
	var out []uint64
	for _, d := range t.deltas {
		if !contains(out, d.table) {
			out = append(out, d.table)
		}
	}
	return out
}

// rollback abandons the transaction.
func (t *txn) rollback() {
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return
	}
	t.done = true
	t.mu.Unlock()
	t.dropLoaded()
	t.release()
}

// idle reports whether no statement is using the transaction.
func (t *txn) idle() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.iters) == 0 && t.editing <= 0 && t.readers <= 0
}

// reusable reports whether t, the transaction an autocommit read began for
// itself (sess's, started by the statement now ending), can be begun again
// in once the statement commits it: what could still hold it after the
// commit is empty. Nothing reads it (no open iterator or row iterator, no
// editor), it never wrote, took a row or metadata lock (the lock registry
// and the metadata lock table keep transactions), nor holds savepoints or
// commit work; it is the session's only open transaction, and no procedure
// body or PREPARE keeps a transaction aside (nestedtxn.go). Called before
// the commit, by the statement's own goroutine.
func (t *txn) reusable(sess *Session) bool {
	if t == nil || t.sess != sess || sess.nestedHeld.Load() || sess.nOpen.Load() != 1 {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.done && !t.ddl && !t.fixedSnapshot && t.tx.Count() == 0 &&
		len(t.iters) == 0 && t.readers == 0 && t.editing == 0 &&
		t.registered.Load() == lockUnregistered && len(t.mdl.held) == 0 && t.mdl.wait == nil &&
		t.mdl.epoch.Load() == 0 && len(t.savepoints) == 0 && len(t.checks) == 0 &&
		len(t.after) == 0 && len(t.guards) == 0 && len(t.loaded) == 0 && len(t.written) == 0
}

// release ends the engine transaction (after a commit, harmlessly) and
// tells the session. Iterators GMS never closed may still read the
// snapshot (storage.Txn.Snapshot outlives the transaction).
func (t *txn) release() {
	_ = t.tx.Rollback()
	// A transaction that never took a metadata lock (an autocommit read)
	// has none to release: epoch is set, under mu, with its first lock,
	// and a lock asked after done was set is let go by its asker (mdl.go).
	if t.mdl.epoch.Load() != 0 {
		t.releaseMDL()
	}
	if t.locker != nil && t.registered.Swap(lockReleased) == lockRegistered {
		t.store.locks.remove(t.locker.LockID())
	}
	if t.sess != nil {
		t.sess.finished(t)
	}
}

func (t *txn) createSavepoint(name string) {
	m := t.mark()
	t.mu.Lock()
	defer t.mu.Unlock()
	// A savepoint of the same name is replaced; later ones stay.
	if i := t.findSavepointLocked(name); i >= 0 {
		t.savepoints = append(t.savepoints[:i], t.savepoints[i+1:]...)
	}
	t.savepoints = append(t.savepoints, savepoint{name: name, mark: m})
}

func (t *txn) rollbackToSavepoint(name string) error {
	t.mu.Lock()
	i := t.findSavepointLocked(name)
	if i < 0 {
		t.mu.Unlock()
		return sql.ErrSavepointDoesNotExist.New(name)
	}
	m := t.savepoints[i].mark
	// Savepoints set after this one are released by the rollback.
	t.savepoints = t.savepoints[:i+1]
	t.mu.Unlock()
	return t.rollbackTo(m)
}

func (t *txn) releaseSavepoint(name string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.findSavepointLocked(name) < 0 {
		return sql.ErrSavepointDoesNotExist.New(name)
	}
	t.releaseSavepointLocked(name)
	return nil
}

func (t *txn) findSavepointLocked(name string) int {
	for i := len(t.savepoints) - 1; i >= 0; i-- {
		if strings.EqualFold(t.savepoints[i].name, name) {
			return i
		}
	}
	return -1
}

func (t *txn) releaseSavepointLocked(name string) {
	if i := t.findSavepointLocked(name); i >= 0 {
		t.savepoints = t.savepoints[:i]
	}
}

func contains(s []uint64, v uint64) bool { return lastIndex(s, v) >= 0 }

func lastIndex(s []uint64, v uint64) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == v {
			return i
		}
	}
	return -1
}

// brokenTxn stands for an engine transaction that could not begin: every
// use reports why.
type brokenTxn struct{ err error }

func (b brokenTxn) Get([]byte, *storage.ReadOptions) ([]byte, error)       { return nil, b.err }
func (b brokenTxn) NewIter(*storage.IterOptions) (storage.Iterator, error) { return nil, b.err }
func (b brokenTxn) Snapshot() storage.Reader                               { return b }
func (b brokenTxn) Current() storage.Reader                                { return b }
func (b brokenTxn) StartVersion() uint64                                   { return 0 }
func (b brokenTxn) Set([]byte, []byte) error                               { return b.err }
func (b brokenTxn) Delete([]byte) error                                    { return b.err }
func (b brokenTxn) DeleteRange([]byte, []byte) error                       { return b.err }
func (b brokenTxn) Count() int                                             { return 0 }
func (b brokenTxn) Len() int                                               { return 0 }
func (b brokenTxn) RollbackTo(int) error                                   { return b.err }
func (b brokenTxn) ViewAt(int) (storage.Reader, error)                     { return nil, b.err }
func (b brokenTxn) AdvanceView(int) (storage.Reader, error)                { return nil, b.err }
func (b brokenTxn) SetDurable()                                            {}
func (b brokenTxn) Guard([]byte, []byte)                                   {}
func (b brokenTxn) Commit() error                                          { return b.err }
func (b brokenTxn) Rollback() error                                        { return nil }
