package sqlstore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/strata-db/strata/storage"
)

// lazyTxn is a txn's engine transaction, begun at its first use rather
// than when the SQL transaction starts. MySQL's REPEATABLE READ takes its
// snapshot at the transaction's first consistent read, not at BEGIN
// (START TRANSACTION WITH CONSISTENT SNAPSHOT excepted, see begin), and a
// statement that reads no table (SELECT 1, SET, SHOW VARIABLES) then
// begins no engine transaction at all: beginning one is a good part of
// such a statement's cost.
//
// Once begun, every method goes to the same engine transaction, so all
// the reads of the transaction see one snapshot. What does not need a
// snapshot does not begin one: Count and Len are zero, RollbackTo(0),
// Commit and Rollback finish without reaching the engine, SetDurable and
// SetPessimistic are remembered for the begin.
//
// A txn reads through it from one goroutine at a time (see txn), but the
// begin is guarded all the same (begun is the fast path, mu the slow one,
// as sync.Once), so that a use from another goroutine is never a race.
type lazyTxn struct {
	store *Store
	begun atomic.Bool
	mu    sync.Mutex
	// tx is the engine transaction once begun is set: the engine's, a
	// brokenTxn when it could not begin, finishedTxn when the transaction
	// ended before its first use.
	tx storage.Txn
	// pessimistic and durable are asked for before the begin.
	pessimistic, durable bool
}

var (
	_ storage.Txn    = (*lazyTxn)(nil)
	_ storage.Locker = (*lazyTxn)(nil)
)

// finishedTxn stands for the engine transaction of a transaction that
// ended before it needed one.
var finishedTxn storage.Txn = brokenTxn{err: errors.New("sqlstore: transaction already finished")}

// txn returns the engine transaction, beginning it if need be.
func (l *lazyTxn) txn() storage.Txn {
	if l.begun.Load() {
		return l.tx
	}
	return l.begin()
}

// begin begins the engine transaction: its snapshot is the transaction's.
func (l *lazyTxn) begin() storage.Txn {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.begun.Load() {
		return l.tx
	}
	tx, err := l.store.engine.Begin()
	if err != nil {
		// Every use of the transaction reports err (a closed engine).
		tx = brokenTxn{err: wrapf(err, "sqlstore: beginning a transaction")}
	} else if err := l.store.syncCatalog(tx); err != nil {
		_ = tx.Rollback()
		tx = brokenTxn{err: err}
	}
	if lk, ok := tx.(storage.Locker); ok && l.pessimistic {
		lk.SetPessimistic()
	}
	if l.durable {
		tx.SetDurable()
	}
	l.tx = tx
	l.begun.Store(true)
	return tx
}

// started reports whether the engine transaction was begun (or the
// transaction finished before it was).
func (l *lazyTxn) started() bool { return l.begun.Load() }

// finish ends a transaction that was never begun; ok is false when it was.
func (l *lazyTxn) finish() (ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.begun.Load() {
		return false
	}
	l.tx = finishedTxn
	l.begun.Store(true)
	return true
}

// reset abandons the engine transaction, so that the next use begins a
// new one with a later snapshot. The caller makes sure nothing uses the
// old one any more (txn.renewLocked).
func (l *lazyTxn) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.begun.Load() || l.tx == finishedTxn {
		return
	}
	old := l.tx
	l.tx = nil
	l.begun.Store(false)
	_ = old.Rollback()
}

func (l *lazyTxn) Get(key []byte, o *storage.ReadOptions) ([]byte, error) {
	return l.txn().Get(key, o)
}

func (l *lazyTxn) NewIter(o *storage.IterOptions) (storage.Iterator, error) {
	return l.txn().NewIter(o)
}

func (l *lazyTxn) Snapshot() storage.Reader            { return l.txn().Snapshot() }
func (l *lazyTxn) Current() storage.Reader             { return l.txn().Current() }
func (l *lazyTxn) StartVersion() uint64                { return l.txn().StartVersion() }
func (l *lazyTxn) Set(key, value []byte) error         { return l.txn().Set(key, value) }
func (l *lazyTxn) Delete(key []byte) error             { return l.txn().Delete(key) }
func (l *lazyTxn) DeleteRange(start, end []byte) error { return l.txn().DeleteRange(start, end) }
func (l *lazyTxn) Guard(start, end []byte)             { l.txn().Guard(start, end) }

func (l *lazyTxn) ViewAt(n int) (storage.Reader, error)      { return l.txn().ViewAt(n) }
func (l *lazyTxn) AdvanceView(n int) (storage.Reader, error) { return l.txn().AdvanceView(n) }

func (l *lazyTxn) Count() int {
	if !l.begun.Load() {
		return 0
	}
	return l.tx.Count()
}

func (l *lazyTxn) Len() int {
	if !l.begun.Load() {
		return 0
	}
	return l.tx.Len()
}

func (l *lazyTxn) RollbackTo(n int) error {
	if n == 0 && !l.begun.Load() {
		return nil
	}
	return l.txn().RollbackTo(n)
}

func (l *lazyTxn) SetDurable() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.begun.Load() {
		l.tx.SetDurable()
		return
	}
	l.durable = true
}

func (l *lazyTxn) Commit() error {
	if l.finish() {
		return nil
	}
	return l.tx.Commit()
}

func (l *lazyTxn) Rollback() error {
	if l.finish() {
		return nil
	}
	return l.tx.Rollback()
}

// The storage.Locker methods: lazyTxn is one when the engine's
// transactions are (Store.canLock); txn.setMode checks that.

func (l *lazyTxn) LockKeys(ctx context.Context, o storage.LockOptions, keys ...[]byte) error {
	tx := l.txn()
	lk, ok := tx.(storage.Locker)
	if !ok {
		if b, ok := tx.(brokenTxn); ok {
			return b.err
		}
		return errors.New("sqlstore: the engine's transactions take no locks")
	}
	return lk.LockKeys(ctx, o, keys...)
}

func (l *lazyTxn) SetPessimistic() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pessimistic = true
	if l.begun.Load() {
		if lk, ok := l.tx.(storage.Locker); ok {
			lk.SetPessimistic()
		}
	}
}

func (l *lazyTxn) LockID() uint64 {
	if lk, ok := l.txn().(storage.Locker); ok {
		return lk.LockID()
	}
	return 0
}

func (l *lazyTxn) LatestView() storage.Reader {
	if lk, ok := l.txn().(storage.Locker); ok {
		return lk.LatestView()
	}
	return l.txn()
}

// canLock reports whether the engine's transactions are storage.Lockers,
// found out once by beginning one.
func (s *Store) canLock() bool {
	switch s.lockable.Load() {
	case 1:
		return true
	case 2:
		return false
	}
	tx, err := s.engine.Begin()
	if err != nil {
		return false
	}
	_, ok := tx.(storage.Locker)
	_ = tx.Rollback()
	if ok {
		s.lockable.Store(1)
	} else {
		s.lockable.Store(2)
	}
	return ok
}

// consistentSnapshot reports whether q is START TRANSACTION WITH CONSISTENT
// SNAPSHOT, whose transaction takes its snapshot at once, as MySQL's does.
// The parser drops the clause, so the text tells; only a statement that
// starts with START is looked at.
func consistentSnapshot(q string) bool {
	q = strings.TrimLeft(q, " \t\r\n")
	if len(q) < 5 || !strings.EqualFold(q[:5], "start") {
		return false
	}
	f := strings.Fields(strings.TrimRight(q, "; \t\r\n"))
	return len(f) == 5 && strings.EqualFold(f[0], "start") && strings.EqualFold(f[1], "transaction") &&
		strings.EqualFold(f[2], "with") && strings.EqualFold(f[3], "consistent") && strings.EqualFold(f[4], "snapshot")
}
