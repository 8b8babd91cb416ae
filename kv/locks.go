package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/lock"
	"github.com/strata-db/strata/storage"
)

// Key locks of an Engine's transactions (storage.Locker).
//
// An Engine keeps one lock table (package lock); a transaction becomes an
// owner in it at its first lock and releases everything when it ends, after
// its commit is visible, so that a transaction granted a lock afterwards
// reads the commit.
//
// Commit rules:
//
//   - An optimistic transaction locks (without waiting) every key it writes
//     for the duration of its commit, and fails with ErrConflict when
//     another transaction holds one: it never overwrites a key a pessimistic
//     transaction locked and may have read at the latest. Its snapshot check
//     stays as it was.
//   - A pessimistic transaction (SetPessimistic) checks the keys it writes
//     against its for-update version, the last version visible when it was
//     last granted a lock, not against its snapshot: the caller locks each
//     row before reading it at the latest, and a key locked at version v
//     cannot be written by anyone else after v (a pessimistic writer waits
//     for the lock, an optimistic one fails on it, and a commit holding it
//     is visible before it is released). A key written without a lock is
//     still checked against that version. Guarded ranges are checked
//     against the snapshot.

// DefaultLockWait bounds a lock wait when storage.LockOptions.Wait is zero:
// InnoDB's default innodb_lock_wait_timeout.
const DefaultLockWait = 50 * time.Second

var (
	_ storage.Locker        = (*engineTxn)(nil)
	_ storage.LockInspector = (*Engine)(nil)
)

// LockID implements storage.Locker: the transaction's owner ID in the
// engine's lock table, unique among the engine's transactions.
func (t *engineTxn) LockID() uint64 { return t.id }

// SetPessimistic implements storage.Locker.
func (t *engineTxn) SetPessimistic() { t.pessimistic = true }

// LatestView implements storage.Locker.
func (t *engineTxn) LatestView() storage.Reader { return (*latestViewReader)(t) }

// latestViewReader reads a transaction's shared view (AdvanceView) over the
// latest committed state.
type latestViewReader engineTxn

// writes returns the shared view's batch, nil when it holds no writes.
func (r *latestViewReader) writes() *Batch {
	if r.view == nil || r.synced == 0 {
		return nil
	}
	return r.view.b
}

func (r *latestViewReader) Get(key []byte, o *storage.ReadOptions) ([]byte, error) {
	return batchGet(r.e.db, r.writes(), nil, key, o)
}

func (r *latestViewReader) NewIter(o *storage.IterOptions) (storage.Iterator, error) {
	return batchNewIter(r.e.db, r.writes(), nil, o)
}

// LockKeys implements storage.Locker.
func (t *engineTxn) LockKeys(ctx context.Context, o storage.LockOptions, keys ...[]byte) error {
	if t.ended.Load() {
		return errors.New("kv: transaction already finished")
	}
	mode := lock.Exclusive
	if o.Mode == storage.LockShared {
		mode = lock.Shared
	}
	wait := o.Wait
	switch {
	case o.NoWait:
		wait = 0
	case wait <= 0:
		wait = DefaultLockWait
	}
	own := t.lockOwner()
	for _, k := range keys {
		if err := own.Lock(ctx, k, mode, wait); err != nil {
			return lockError(err)
		}
	}
	if t.ended.Load() {
		// Rolled back while waiting (a session ending under a statement):
		// release what was granted after the release.
		own.ReleaseAll()
		return errors.New("kv: transaction already finished")
	}
	// Read after the grants: every commit that held one of these locks
	// before is visible at this version.
	t.forUpdate = base.SeqNum(t.e.db.LastSeq())
	return nil
}

// lockOwner returns the transaction's owner in the lock table, made at the
// first use.
func (t *engineTxn) lockOwner() *lock.Owner {
	if t.owner == nil {
		t.owner = t.e.locks.NewOwner(t.id)
	}
	return t.owner
}

// holdsLock reports whether the transaction holds an exclusive lock on
// key. A pessimistic commit does not check such a key for newer commits:
// once the lock was granted nobody else could write it (see the commit
// rules above), and before, only versions its for-update version covers. A
// shared lock does not qualify: another holder of it may write the key.
// Range deletions take no locks: such a key is still checked for them.
func (t *engineTxn) holdsLock(key []byte) bool {
	return t.owner != nil && t.owner.Holds(key) == lock.Exclusive
}

// lockWrites locks every key of the batch exclusively without waiting, for
// an optimistic commit: ErrConflict when another transaction holds one.
func (t *engineTxn) lockWrites() error {
	own := t.lockOwner()
	return forEachEntry(t.batch.data[batchHeaderLen:], func(kind base.Kind, key, _ []byte) error {
		if kind == base.KindRangeDelete {
			return nil
		}
		err := own.Lock(context.Background(), key, lock.Exclusive, 0)
		if err == nil {
			return nil
		}
		var le *lock.Error
		if errors.As(err, &le) && errors.Is(err, lock.ErrNotAvailable) {
			return &storage.ConflictError{Key: bytes.Clone(key),
				Err: fmt.Errorf("%w: key %q is locked by transaction %d", ErrConflict, key, le.Blocker)}
		}
		return err
	})
}

// releaseLocks releases the transaction's locks. A LockKeys still waiting
// on another goroutine sees ended once granted and releases its grant.
func (t *engineTxn) releaseLocks() {
	t.ended.Store(true)
	if t.owner != nil {
		t.owner.ReleaseAll()
	}
}

// lockError maps a lock table error onto the contract's errors; a context's
// error passes through.
func lockError(err error) error {
	switch {
	case errors.Is(err, lock.ErrTimeout):
		return fmt.Errorf("kv: %w: %w", storage.ErrLockWaitTimeout, err)
	case errors.Is(err, lock.ErrDeadlock):
		return fmt.Errorf("kv: %w: %w", storage.ErrDeadlock, err)
	case errors.Is(err, lock.ErrNotAvailable):
		return fmt.Errorf("kv: %w: %w", storage.ErrLockNotAvailable, err)
	}
	return fmt.Errorf("kv: lock: %w", err)
}

// LockWaits implements storage.LockInspector.
func (e *Engine) LockWaits() []storage.LockWait {
	ws := e.locks.Waits()
	if len(ws) == 0 {
		return nil
	}
	out := make([]storage.LockWait, len(ws))
	for i, w := range ws {
		out[i] = storage.LockWait{Waiter: w.Waiter, Blocker: w.Blocker, Mode: storageMode(w.Mode),
			BlockerMode: storageMode(w.BlockerMode), BlockerWaits: w.BlockerWaits, Since: w.Since, Key: w.Key}
	}
	return out
}

func storageMode(m lock.Mode) storage.LockMode {
	if m == lock.Shared {
		return storage.LockShared
	}
	return storage.LockExclusive
}

// Locks returns the locks held and asked for in the engine's lock table.
func (e *Engine) Locks() []lock.Held { return e.locks.Locks() }
