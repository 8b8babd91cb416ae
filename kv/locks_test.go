package kv

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/strata-db/strata/kv/vfs"
	"github.com/strata-db/strata/storage"
	"github.com/stretchr/testify/require"
)

func newLockEngine(t *testing.T) *Engine {
	t.Helper()
	d, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	e := NewEngine(d, NoSync)
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func beginLocker(t *testing.T, e *Engine, pessimistic bool) (storage.Txn, storage.Locker) {
	t.Helper()
	tx, err := e.Begin()
	require.NoError(t, err)
	l := tx.(storage.Locker)
	if pessimistic {
		l.SetPessimistic()
	}
	return tx, l
}

var xlock = storage.LockOptions{Mode: storage.LockExclusive, Wait: 5 * time.Second}

// TestLockThenReadLatest runs the counter workload: read-modify-writes of
// one key by pessimistic transactions, each locking the key and reading it
// at the latest state; every commit succeeds and none is lost.
func TestLockThenReadLatest(t *testing.T) {
	e := newLockEngine(t)
	key := []byte("counter")
	require.NoError(t, e.DB().Set(key, []byte("0"), NoSync))
	const clients, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				tx, err := e.Begin()
				if err != nil {
					errs <- err
					return
				}
				l := tx.(storage.Locker)
				l.SetPessimistic()
				if err := l.LockKeys(context.Background(), xlock, key); err != nil {
					errs <- err
					return
				}
				v, err := tx.Current().Get(key, nil)
				if err != nil {
					errs <- err
					return
				}
				n, _ := strconv.Atoi(string(v))
				if err := tx.Set(key, []byte(strconv.Itoa(n+1))); err != nil {
					errs <- err
					return
				}
				if err := tx.Commit(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	v, err := e.Latest().Get(key, nil)
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(clients*each), string(v))
}

func TestLockErrors(t *testing.T) {
	e := newLockEngine(t)
	ctx := context.Background()
	a, la := beginLocker(t, e, true)
	b, lb := beginLocker(t, e, true)
	defer a.Rollback()
	defer b.Rollback()
	require.NoError(t, la.LockKeys(ctx, xlock, []byte("x")))
	require.NoError(t, lb.LockKeys(ctx, xlock, []byte("y")))

	err := lb.LockKeys(ctx, storage.LockOptions{Mode: storage.LockShared, NoWait: true}, []byte("x"))
	require.ErrorIs(t, err, storage.ErrLockNotAvailable)
	err = lb.LockKeys(ctx, storage.LockOptions{Wait: 20 * time.Millisecond}, []byte("x"))
	require.ErrorIs(t, err, storage.ErrLockWaitTimeout)
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	err = lb.LockKeys(cctx, xlock, []byte("x"))
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// a waits for y (held by b); b asking for x closes the cycle.
	done := make(chan error, 1)
	go func() { done <- la.LockKeys(ctx, xlock, []byte("y")) }()
	require.Eventually(t, func() bool { return len(e.LockWaits()) == 1 }, 5*time.Second, time.Millisecond)
	err = lb.LockKeys(ctx, xlock, []byte("x"))
	require.ErrorIs(t, err, storage.ErrDeadlock)
	require.NoError(t, b.Rollback())
	require.NoError(t, <-done)
	require.NoError(t, a.Commit())
	require.Empty(t, e.Locks())
}

// TestOptimisticCommitRespectsLocks: an optimistic commit of a key another
// transaction holds locked fails, and succeeds once the lock is released.
func TestOptimisticCommitRespectsLocks(t *testing.T) {
	e := newLockEngine(t)
	ctx := context.Background()
	p, lp := beginLocker(t, e, true)
	require.NoError(t, lp.LockKeys(ctx, xlock, []byte("k")))

	o, _ := beginLocker(t, e, false)
	require.NoError(t, o.Set([]byte("k"), []byte("o")))
	err := o.Commit()
	require.ErrorIs(t, err, storage.ErrConflict)
	require.ErrorIs(t, err, ErrConflict)

	require.NoError(t, p.Set([]byte("k"), []byte("p")))
	require.NoError(t, p.Commit())

	o2, _ := beginLocker(t, e, false)
	require.NoError(t, o2.Set([]byte("k"), []byte("o2")))
	require.NoError(t, o2.Commit())
	v, err := e.Latest().Get([]byte("k"), nil)
	require.NoError(t, err)
	require.Equal(t, "o2", string(v))
	require.Empty(t, e.Locks())
}

// TestPessimisticCommitChecks: a pessimistic transaction's written keys are
// checked after its for-update version, not its snapshot; an unlocked key
// written by another commit after the last grant still conflicts, and
// guarded ranges are checked against the snapshot.
func TestPessimisticCommitChecks(t *testing.T) {
	e := newLockEngine(t)
	ctx := context.Background()
	p, lp := beginLocker(t, e, true)
	require.NoError(t, e.DB().Set([]byte("k"), []byte("other"), NoSync))
	require.NoError(t, lp.LockKeys(ctx, xlock, []byte("k")))
	v, err := p.Current().Get([]byte("k"), nil)
	require.NoError(t, err)
	require.Equal(t, "other", string(v))
	require.NoError(t, p.Set([]byte("k"), []byte("p")))
	require.NoError(t, p.Commit())

	p, lp = beginLocker(t, e, true)
	require.NoError(t, lp.LockKeys(ctx, xlock, []byte("k")))
	require.NoError(t, e.DB().Set([]byte("u"), []byte("other"), NoSync))
	require.NoError(t, p.Set([]byte("k"), []byte("p2")))
	require.NoError(t, p.Set([]byte("u"), []byte("p2")))
	require.ErrorIs(t, p.Commit(), storage.ErrConflict)

	p, lp = beginLocker(t, e, true)
	p.Guard([]byte("g"), []byte("h"))
	require.NoError(t, e.DB().Set([]byte("g1"), []byte("other"), NoSync))
	require.NoError(t, lp.LockKeys(ctx, xlock, []byte("k")))
	require.NoError(t, p.Set([]byte("k"), []byte("p3")))
	err = p.Commit()
	require.True(t, errors.Is(err, storage.ErrConflict), "%v", err)
}

// TestPessimisticCommitSharedLockChecked: a shared lock does not keep
// another holder of it from writing the key, so a pessimistic commit
// checks a key it holds only shared like an unlocked one: the second of
// two transactions that both read the key under a shared lock and write
// it fails instead of overwriting the first one's commit.
func TestPessimisticCommitSharedLockChecked(t *testing.T) {
	e := newLockEngine(t)
	ctx := context.Background()
	slock := storage.LockOptions{Mode: storage.LockShared, Wait: 5 * time.Second}
	p1, l1 := beginLocker(t, e, true)
	p2, l2 := beginLocker(t, e, true)
	require.NoError(t, l1.LockKeys(ctx, slock, []byte("k")))
	require.NoError(t, l2.LockKeys(ctx, slock, []byte("k")))
	require.NoError(t, p1.Set([]byte("k"), []byte("p1")))
	require.NoError(t, p2.Set([]byte("k"), []byte("p2")))
	require.NoError(t, p1.Commit())
	require.ErrorIs(t, p2.Commit(), storage.ErrConflict)
	v, err := e.Latest().Get([]byte("k"), nil)
	require.NoError(t, err)
	require.Equal(t, "p1", string(v))
}

// TestPessimisticCommitRangeDeleteChecked: a range deletion takes no
// locks, so a key a pessimistic transaction holds locked may be deleted
// by one committed after the lock; the transaction's write of the key then
// conflicts instead of bringing it back, in the memtable and in a table.
func TestPessimisticCommitRangeDeleteChecked(t *testing.T) {
	for _, flush := range []bool{false, true} {
		e := newLockEngine(t)
		ctx := context.Background()
		require.NoError(t, e.DB().Set([]byte("k"), []byte("v"), NoSync))
		p, lp := beginLocker(t, e, true)
		require.NoError(t, lp.LockKeys(ctx, xlock, []byte("k")))
		o, _ := beginLocker(t, e, false)
		require.NoError(t, o.DeleteRange([]byte("a"), []byte("z")))
		require.NoError(t, o.Commit())
		if flush {
			require.NoError(t, e.DB().Flush())
		}
		require.NoError(t, p.Set([]byte("k"), []byte("p")))
		require.ErrorIs(t, p.Commit(), storage.ErrConflict, "flush %v", flush)
		_, err := e.Latest().Get([]byte("k"), nil)
		require.ErrorIs(t, err, storage.ErrNotFound)
	}
}
