//go:build !darwin || cgo

package tikv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/strata-db/strata/storage"
	"github.com/tikv/client-go/v2/kv"
	"github.com/tikv/client-go/v2/tikv"
	"github.com/tikv/client-go/v2/txnkv/transaction"
)

// txn is a transaction: a client-go KVTxn for its start timestamp, its
// locks and its commit, and the writes kept here (overlay.go) until
// Commit puts them in the KVTxn's membuffer.
type txn struct {
	e *Engine
	// startTS is the snapshot's timestamp. kt is made when first needed:
	// at Commit, at startTS; at the first LockKeys, pessimistic and at a
	// fresh timestamp, so that TiKV checks the transaction's writes
	// against its locks, not against a snapshot older than them (the
	// contract's pessimistic commit; mocktikv checks a pessimistic
	// prewrite against the transaction's start). bg counts kt's
	// background goroutines (secondary commits, cleanup), which Commit
	// waits for: a commit that returned leaves no lock behind.
	startTS uint64
	kt      *transaction.KVTxn
	bg      sync.WaitGroup

	ops  []op
	size int
	head *overlay // the overlay of every write

	snap reader // the snapshot alone
	self reader // the snapshot plus head

	// view is the shared view at position synced (AdvanceView), viewR
	// its reader; old caches the private view at oldAt (ViewAt).
	view   *overlay
	synced int
	viewR  *reader
	old    *overlay
	oldAt  int

	guards []storage.Range

	pessimistic bool // SetPessimistic
	done        bool
}

func (t *txn) Get(key []byte, o *storage.ReadOptions) ([]byte, error) { return t.self.Get(key, o) }

func (t *txn) NewIter(o *storage.IterOptions) (storage.Iterator, error) { return t.self.NewIter(o) }

func (t *txn) MultiGet(keys [][]byte, o *storage.ReadOptions, dst [][]byte) ([][]byte, error) {
	return t.self.MultiGet(keys, o, dst)
}

func (t *txn) NewMultiScan(ctx context.Context, ranges []storage.Range, o *storage.IterOptions) (storage.MultiScan, error) {
	return t.self.NewMultiScan(ctx, ranges, o)
}

func (t *txn) Snapshot() storage.Reader { return &t.snap }

func (t *txn) Current() storage.Reader { return &reader{e: t.e, ov: &t.head} }

func (t *txn) StartVersion() uint64 { return t.startTS }

func (t *txn) write(w op) error {
	if t.done {
		return errors.New("tikv: transaction already finished")
	}
	t.ops = append(t.ops, w)
	t.size += len(w.key) + len(w.value) + 1
	t.head.apply(&t.ops[len(t.ops)-1])
	return nil
}

func (t *txn) Set(key, value []byte) error {
	return t.write(op{kind: opSet, key: bytes.Clone(key), value: append(make([]byte, 0, len(value)), value...)})
}

func (t *txn) Delete(key []byte) error {
	return t.write(op{kind: opDelete, key: bytes.Clone(key)})
}

func (t *txn) DeleteRange(start, end []byte) error {
	return t.write(op{kind: opDeleteRange, key: bytes.Clone(start), value: bytes.Clone(end)})
}

func (t *txn) Count() int { return len(t.ops) }

func (t *txn) Len() int { return t.size }

// RollbackTo implements storage.Txn: the overlay is built again from the
// writes kept (a statement rollback is rare; its cost is that of the
// writes before it). Iterators opened before hold clones and are
// unaffected.
func (t *txn) RollbackTo(n int) error {
	if n < 0 || n > len(t.ops) {
		return fmt.Errorf("tikv: RollbackTo(%d) outside the transaction's %d writes", n, len(t.ops))
	}
	if n == len(t.ops) {
		return nil
	}
	for _, w := range t.ops[n:] {
		t.size -= len(w.key) + len(w.value) + 1
	}
	clear(t.ops[n:])
	t.ops = t.ops[:n]
	t.head = build(t.ops)
	if t.old != nil && t.oldAt > n {
		t.old = nil
	}
	if t.synced > n {
		t.view = build(t.ops)
		t.synced = n
	}
	return nil
}

// ViewAt implements storage.Txn.
func (t *txn) ViewAt(n int) (storage.Reader, error) {
	if n < 0 || n > len(t.ops) {
		return nil, fmt.Errorf("tikv: ViewAt(%d) outside the transaction's %d writes", n, len(t.ops))
	}
	if n == 0 {
		return &t.snap, nil
	}
	if t.old == nil || t.oldAt != n {
		t.old, t.oldAt = build(t.ops[:n]), n
	}
	ov := t.old
	return &reader{e: t.e, ts: t.startTS, ov: &ov}, nil
}

// AdvanceView implements storage.Txn.
func (t *txn) AdvanceView(n int) (storage.Reader, error) {
	if n < t.synced || n > len(t.ops) {
		return nil, fmt.Errorf("tikv: AdvanceView(%d) outside [%d, %d]", n, t.synced, len(t.ops))
	}
	if t.view == nil {
		t.view = newOverlay()
		t.viewR = &reader{e: t.e, ts: t.startTS, ov: &t.view}
	}
	for i := t.synced; i < n; i++ {
		t.view.apply(&t.ops[i])
	}
	t.synced = n
	return t.viewR, nil
}

// SetDurable implements storage.Txn: a Raft commit is durable.
func (t *txn) SetDurable() {}

// Guard implements storage.Txn. TiKV has no check of a range's versions;
// Commit compares the range at the snapshot with the latest state just
// before the commit (checkGuards).
func (t *txn) Guard(start, end []byte) {
	t.guards = append(t.guards, storage.Range{Start: bytes.Clone(start), End: bytes.Clone(end)})
}

// Commit implements storage.Txn: the writes go into the KVTxn's membuffer
// (a range deletion as a deletion of each key the latest state holds in
// it) and commit by client-go's two-phase commit.
func (t *txn) Commit() error {
	if t.done {
		return errors.New("tikv: transaction already finished")
	}
	t.done = true
	if len(t.ops) == 0 {
		return t.rollback()
	}
	ctx := context.Background()
	if err := t.begin(false); err != nil {
		return err
	}
	if err := t.fill(ctx); err != nil {
		_ = t.rollback()
		return err
	}
	if err := t.checkGuards(ctx); err != nil {
		_ = t.rollback()
		return err
	}
	err := t.kt.Commit(ctx)
	t.bg.Wait()
	if err != nil {
		return fmt.Errorf("tikv: commit: %w", mapError(err))
	}
	return nil
}

// begin makes the KVTxn: pessimistic at a fresh timestamp (locking), or
// at the snapshot's.
func (t *txn) begin(locking bool) error {
	if t.kt != nil {
		return nil
	}
	var kt *transaction.KVTxn
	var err error
	if locking {
		kt, err = t.e.store.Begin()
	} else {
		kt, err = t.e.store.Begin(tikv.WithStartTS(t.startTS))
	}
	if err != nil {
		return fmt.Errorf("tikv: begin: %w", err)
	}
	kt.SetBackgroundGoroutineLifecycleHooks(transaction.LifecycleHooks{
		Pre: func() { t.bg.Add(1) }, Post: t.bg.Done})
	if locking {
		kt.SetPessimistic(true)
	} else {
		// An optimistic commit that meets another transaction's lock
		// fails at once as a conflict instead of waiting the lock out
		// (as the embedded engine's optimistic commit does).
		kt.SetPrewriteEncounterLockPolicy(transaction.NoResolvePolicy)
	}
	t.kt = kt
	return nil
}

// fill puts the transaction's writes into the KVTxn.
func (t *txn) fill(ctx context.Context) error {
	var err error
	t.head.t.Ascend(func(e entry) bool {
		if e.del {
			err = t.kt.Delete(e.key)
		} else {
			err = t.kt.Set(e.key, encodeValue(e.value))
		}
		return err == nil
	})
	if err != nil {
		return fmt.Errorf("tikv: commit: %w", err)
	}
	if len(t.head.dels) == 0 {
		return nil
	}
	latest := &reader{e: t.e}
	for _, r := range t.head.dels {
		it, _ := latest.NewIter(&storage.IterOptions{LowerBound: r.Start, UpperBound: r.End, ReadOptions: storage.ReadOptions{ReadaheadSize: maxBatch * 64}})
		for ok := it.First(); ok; ok = it.Next() {
			if _, found := t.head.t.Get(entry{key: it.Key()}); found {
				continue // written after the range deletion, or already deleted
			}
			if err := t.kt.Delete(bytes.Clone(it.Key())); err != nil {
				it.Close()
				return fmt.Errorf("tikv: commit: %w", err)
			}
		}
		err := it.Error()
		it.Close()
		if err != nil {
			return fmt.Errorf("tikv: commit: delete range: %w", err)
		}
	}
	return nil
}

// checkGuards fails with ErrConflict when another transaction committed a
// write in a guarded range after the snapshot: the range's keys differ at
// the latest state from the snapshot's, or one of them has a commit
// timestamp above the snapshot's. A commit between this check and the
// prewrite goes unnoticed.
func (t *txn) checkGuards(ctx context.Context) error {
	if len(t.guards) == 0 {
		return nil
	}
	ts := t.e.now()
	var keys [][]byte
	for _, g := range t.guards {
		a, err := t.scanKeys(t.startTS, g)
		if err != nil {
			return err
		}
		b, err := t.scanKeys(ts, g)
		if err != nil {
			return err
		}
		if len(a) != len(b) {
			return guardConflict(g)
		}
		for i := range a {
			if !bytes.Equal(a[i], b[i]) {
				return guardConflict(g)
			}
		}
		keys = append(keys, b...)
	}
	if len(keys) == 0 {
		return nil
	}
	got, err := t.e.store.GetSnapshot(ts).BatchGet(ctx, keys, kv.WithReturnCommitTS())
	if err != nil {
		return fmt.Errorf("tikv: guard: %w", mapError(err))
	}
	for k, ve := range got {
		if ve.CommitTS > t.startTS {
			return &storage.ConflictError{Key: []byte(k),
				Err: fmt.Errorf("tikv: %w: a guarded key was written after the transaction began", storage.ErrConflict)}
		}
	}
	return nil
}

func guardConflict(g storage.Range) error {
	return &storage.ConflictError{Key: g.Start, End: g.End,
		Err: fmt.Errorf("tikv: %w: a guarded range was written after the transaction began", storage.ErrConflict)}
}

// scanKeys returns the keys of g at ts.
func (t *txn) scanKeys(ts uint64, g storage.Range) ([][]byte, error) {
	snap := t.e.store.GetSnapshot(ts)
	snap.SetKeyOnly(true)
	snap.SetScanBatchSize(maxBatch)
	it, err := snap.Iter(g.Start, g.End)
	if err != nil {
		return nil, fmt.Errorf("tikv: guard: %w", mapError(err))
	}
	defer it.Close()
	var keys [][]byte
	for it.Valid() {
		keys = append(keys, bytes.Clone(it.Key()))
		if err := it.Next(); err != nil {
			return nil, fmt.Errorf("tikv: guard: %w", mapError(err))
		}
	}
	return keys, nil
}

// Rollback implements storage.Txn.
func (t *txn) Rollback() error {
	if t.done {
		return nil
	}
	t.done = true
	return t.rollback()
}

func (t *txn) rollback() error {
	if t.kt == nil || !t.kt.Valid() {
		return nil
	}
	err := t.kt.Rollback()
	t.bg.Wait()
	if err != nil {
		return fmt.Errorf("tikv: rollback: %w", err)
	}
	return nil
}

// LockID implements storage.Locker: the start timestamp, which is what
// TiKV's deadlock detector and lock waits name a transaction by.
func (t *txn) LockID() uint64 { return t.startTS }

// SetPessimistic implements storage.Locker.
func (t *txn) SetPessimistic() { t.pessimistic = true }

// LatestView implements storage.Locker.
func (t *txn) LatestView() storage.Reader {
	if t.view == nil {
		t.view = newOverlay()
		t.viewR = &reader{e: t.e, ts: t.startTS, ov: &t.view}
	}
	return &reader{e: t.e, ov: &t.view}
}

// LockKeys implements storage.Locker with client-go's LockKeys at a fresh
// for-update timestamp. Shared locks are taken exclusive: TiKV's shared
// pessimistic locks are recent and not everywhere.
func (t *txn) LockKeys(ctx context.Context, o storage.LockOptions, keys ...[]byte) error {
	if t.done {
		return errors.New("tikv: transaction already finished")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := t.begin(true); err != nil {
		return err
	}
	wait := o.Wait
	if wait <= 0 {
		wait = DefaultLockWait
	}
	deadline := time.Now().Add(wait)
	// client-go keeps the keys (the first becomes the primary): they must
	// be the transaction's own, not buffers the caller reuses.
	own := make([][]byte, len(keys))
	for i, k := range keys {
		own[i] = bytes.Clone(k)
	}
	// client-go keeps the context of a lock that failed for its
	// asynchronous rollback, past this call's return, while the caller may
	// reuse ctx for its next statement (storage.Locker): it gets a context
	// of its own, cancelled when ctx is; none of ctx's values reach it (a
	// context derived from ctx would read ctx after the return).
	lctx, cancel := context.WithCancel(context.Background())
	defer context.AfterFunc(ctx, cancel)()
	for {
		waitMs := max(time.Until(deadline).Milliseconds(), 1)
		if o.NoWait {
			waitMs = kv.LockNoWait
		}
		lc := kv.NewLockCtx(t.e.now(), waitMs, time.Now())
		err := t.kt.LockKeys(lctx, lc, own...)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		err = mapError(err)
		// A commit after the for-update timestamp (by the holder waited
		// for): lock again at a fresh one, as TiDB retries the statement.
		if errors.Is(err, storage.ErrConflict) && !o.NoWait && time.Now().Before(deadline) {
			continue
		}
		return fmt.Errorf("tikv: lock: %w", err)
	}
}
