package storage

import (
	"context"
	"errors"
	"time"

	"github.com/strata-db/strata/kv/stats"
)

// Errors of the contract. Engines return errors that satisfy errors.Is
// against them, wrapped with what they know.
var (
	// ErrNotFound is returned by Get when the key has no value.
	ErrNotFound = errors.New("storage: not found")
	// ErrConflict is wrapped by Txn.Commit when another transaction
	// committed a write to a key the transaction writes or guards after its
	// start: nothing of the transaction was applied, and running it again
	// from a new Begin may succeed.
	ErrConflict = errors.New("storage: write conflict")
	// ErrLockWaitTimeout is returned by Locker.LockKeys when a lock was not
	// granted within LockOptions.Wait.
	ErrLockWaitTimeout = errors.New("storage: lock wait timeout")
	// ErrDeadlock is returned by Locker.LockKeys when waiting would close a
	// cycle of waiting transactions; the caller rolls back.
	ErrDeadlock = errors.New("storage: deadlock")
	// ErrLockNotAvailable is returned by Locker.LockKeys with
	// LockOptions.NoWait when a key is locked by another transaction.
	ErrLockNotAvailable = errors.New("storage: lock not available")
	// ErrNoEstimate is returned by a SizeEstimator that cannot estimate a
	// range (the engine's source of sizes does not give them, or not now):
	// the caller plans as for a range of unknown size.
	ErrNoEstimate = errors.New("storage: no size estimate")
)

// ConflictError is how an engine may report the key of a lost conflict, so
// that the caller can name it: errors.As finds it in the error Commit
// returns, and it wraps the error satisfying errors.Is(err, ErrConflict).
type ConflictError struct {
	// Key is the key written, or the start of the guarded range, End its
	// end (nil for a key).
	Key, End []byte
	Err      error
}

func (e *ConflictError) Error() string { return e.Err.Error() }
func (e *ConflictError) Unwrap() error { return e.Err }

// ReadOptions tune a read. They never change what it returns: a reader is
// bound to the state it reads (a snapshot, a transaction, a view).
type ReadOptions struct {
	// Stats, when not nil, also receives the counters of this read.
	Stats *stats.Counters
	// DontFillCache asks the engine not to cache what only this read needs
	// (a one-off scan that would evict hotter data).
	DontFillCache bool
	// ReadaheadSize, for iterators, asks for that many bytes read ahead of
	// each read from the first one on: for scans known to be long. Zero
	// leaves readahead to the engine; negative turns it off.
	ReadaheadSize int64
	// AsyncIO lets iterators, prepared scans and MultiGet read ahead in the
	// background or issue their reads at once.
	AsyncIO bool
}

// IterOptions tune an iterator and bound it.
type IterOptions struct {
	ReadOptions
	// LowerBound, when not nil, is the inclusive lower bound of the keys the
	// iterator returns; UpperBound, when not nil, the exclusive upper bound.
	LowerBound, UpperBound []byte
	// CoalesceThreshold, for a MultiScan, is the largest gap in bytes between
	// two reads that still lets the engine make them one read. Zero leaves it
	// to the engine; negative merges nothing.
	CoalesceThreshold int64
}

// Range is a key range [Start, End) of a MultiScan; End is above Start.
type Range struct {
	Start, End []byte
}

// Reader reads one state: a snapshot, possibly with a transaction's writes
// over it. A reader that sees a transaction's writes is used as the
// transaction is, by one goroutine at a time; the others are safe for
// concurrent use. Iterators are not safe for concurrent use.
type Reader interface {
	// Get returns the value of key, which the caller may keep and modify,
	// or an error satisfying errors.Is(err, ErrNotFound).
	Get(key []byte, ro *ReadOptions) ([]byte, error)
	// NewIter returns an iterator over the reader's state within o's bounds.
	NewIter(o *IterOptions) (Iterator, error)
}

// Iterator walks keys in byte order. Key and Value are valid until the
// next move or Close; the caller copies what it keeps.
type Iterator interface {
	SeekGE(key []byte) bool
	SeekLT(key []byte) bool
	First() bool
	Last() bool
	Next() bool
	Prev() bool
	Valid() bool
	Key() []byte
	Value() []byte
	// Error returns the error that ended the iteration, if any.
	Error() error
	Close() error
}

// MultiGetter is a Reader that reads many keys in one call. Callers find it
// by type assertion and fall back to Get per key.
type MultiGetter interface {
	// MultiGet returns the values of keys in order, nil for a key without
	// one, reusing dst's storage. The values are the caller's.
	MultiGet(keys [][]byte, ro *ReadOptions, dst [][]byte) ([][]byte, error)
}

// MultiScanner is a Reader that prepares a scan of many ranges at once (the
// engine may plan and issue the reads of all of them together). Callers
// find it by type assertion and fall back to NewIter per range.
type MultiScanner interface {
	// NewMultiScan prepares a scan of ranges, which must be in ascending
	// order and not overlap; the caller keeps them unchanged until Close.
	NewMultiScan(ctx context.Context, ranges []Range, o *IterOptions) (MultiScan, error)
}

// MultiScan reads the ranges it was prepared for, one at a time.
type MultiScan interface {
	// SeekRange positions the scan at the first key of range r and reports
	// whether there is one.
	SeekRange(r int) bool
	// Next moves to the next key of the current range.
	Next() bool
	Key() []byte
	Value() []byte
	Error() error
	Close() error
}

// Engine is a store of ordered keys with transactions.
type Engine interface {
	// Begin starts a transaction: a snapshot of the latest committed state
	// and an empty write buffer over it.
	Begin() (Txn, error)
	// Latest returns a reader of the latest committed state: each read sees
	// the commits made before it started.
	Latest() Reader
	// LastVersion returns the version of the latest commit. Versions grow
	// with every commit; a transaction begun after a commit returned has a
	// StartVersion at or above the version LastVersion gave after it.
	LastVersion() uint64
	// Close releases the engine. Transactions must be finished first.
	Close() error
}

// TxnReuser is an Engine that can begin a transaction in the memory of a
// finished one, sparing the allocation for callers that begin many short
// transactions (a session's autocommit reads). Callers find it by type
// assertion.
type TxnReuser interface {
	// BeginReusing begins a transaction as Begin does, reusing old's
	// memory where the engine can. old must be finished, and nothing may
	// use it again, nor anything it returned: readers (its Snapshot
	// included, which otherwise outlives it), iterators, views.
	BeginReusing(old Txn) (Txn, error)
}

// SizeEstimator is an Engine that estimates what a key range holds without
// reading it. Callers find it by type assertion.
//
// An estimate may be unknown: an error satisfying errors.Is(err,
// ErrNoEstimate) says so, and the caller falls back as without an
// estimator.
type SizeEstimator interface {
	// ApproximateSize returns the bytes of stored data [start, end) spans: what
	// a scan of the range would read.
	ApproximateSize(start, end []byte) (int64, error)
	// EstimateRange approximates the live keys of [start, end) and the bytes of
	// their keys and values.
	EstimateRange(start, end []byte) (keys, bytes int64, err error)
}

// StatsSource is an Engine that counts its work (kv/stats counters).
type StatsSource interface {
	Stats() stats.Snapshot
}

// Txn is a transaction: reads see its snapshot plus its own writes; Commit
// applies the writes atomically or not at all. Positions in the writes are
// write counts: position n lies after the first n writes (Set, Delete and
// DeleteRange each count one).
//
// A Txn is not safe for concurrent use.
type Txn interface {
	// Reader reads the snapshot plus every write made so far. Its
	// iterators see the writes made before they were opened.
	Reader
	// Snapshot returns a reader of the snapshot alone. It stays usable after
	// the transaction ends, for iterators the caller closes late.
	Snapshot() Reader
	// Current returns a reader of the latest committed state plus the
	// transaction's writes: for checks made just before Commit while the
	// caller keeps conflicting commits out by its own locks.
	Current() Reader
	// StartVersion is the version of the last commit the snapshot sees.
	StartVersion() uint64

	Set(key, value []byte) error
	Delete(key []byte) error
	// DeleteRange deletes every key in [start, end). It is not checked for
	// conflicts unless its range is guarded.
	DeleteRange(start, end []byte) error
	// Count returns the number of writes: the current position.
	Count() int
	// Len returns the bytes the writes take, for bounding a transaction.
	Len() int

	// RollbackTo undoes the writes after position n (n <= Count). Readers
	// and iterators that see writes after n must not be used again: the
	// caller reopens iterators and seeks them back. Those that see only
	// writes before n are unaffected.
	RollbackTo(n int) error
	// ViewAt returns a reader of the snapshot plus the first n writes. It
	// keeps seeing exactly those whatever the transaction does later,
	// rollbacks included. Its cost may be proportional to n.
	ViewAt(n int) (Reader, error)
	// AdvanceView moves the transaction's view forward to position n and
	// returns it: a reader of the snapshot plus the first n writes, made
	// incrementally (only the writes since the last call are added). The
	// reader is shared: a later AdvanceView with a larger n moves it
	// forward, and a RollbackTo below its position moves it back.
	// Iterators opened from it see it as it was when opened (until such a
	// rollback). n must not be below the view's current position.
	AdvanceView(n int) (Reader, error)

	// SetDurable makes Commit durable when it returns, also on an engine
	// opened for commits that may be lost in a crash (never torn).
	SetDurable()
	// Guard makes Commit fail with ErrConflict if another transaction
	// committed a write to a key in [start, end) after the snapshot.
	Guard(start, end []byte)
	// Commit applies the writes atomically, with the durability the engine
	// was opened with. If another transaction committed a write to a key
	// this one writes or guards after the snapshot, it applies nothing and
	// returns an error wrapping ErrConflict. The transaction is finished
	// either way.
	Commit() error
	// Rollback abandons the transaction. Rolling back a finished
	// transaction is harmless.
	Rollback() error
}

// LockMode is the strength of a key lock.
type LockMode uint8

const (
	// LockShared lets other shared locks be granted on the key.
	LockShared LockMode = iota
	// LockExclusive excludes every other lock on the key.
	LockExclusive
)

// LockOptions say how LockKeys waits.
type LockOptions struct {
	Mode LockMode
	// Wait bounds the wait for each lock; zero means the engine's default.
	Wait time.Duration
	// NoWait fails at once with ErrLockNotAvailable instead of waiting.
	NoWait bool
}

// Locker is a Txn that takes key locks held until it ends (pessimistic
// transactions, SELECT ... FOR UPDATE). Callers find it by type
// assertion; without it they rely on Guard and Commit's conflict check.
//
// Locks and commits: a transaction that locks a key and then reads it at
// the latest state (Current) reads the last commit that wrote it, and no
// other transaction commits a write to it until this one ends: a
// pessimistic writer waits for the lock, and an optimistic transaction's
// Commit fails with ErrConflict on a key another transaction holds locked.
type Locker interface {
	// LockKeys locks keys in mode o.Mode, waiting as o says. It returns
	// an error wrapping ErrLockWaitTimeout, ErrDeadlock or
	// ErrLockNotAvailable when a lock cannot be had, or the context's
	// error when ctx ended the wait; locks granted before the failure stay
	// held. Locks are released when the transaction ends, not before.
	// Nothing of the engine keeps ctx after LockKeys returns: the caller
	// reuses it for its next statement.
	LockKeys(ctx context.Context, o LockOptions, keys ...[]byte) error
	// SetPessimistic makes Commit check the keys the transaction writes
	// for commits made after its last granted lock (its for-update
	// version) instead of after its snapshot: the caller locks every row it
	// writes before reading it at the latest state. Guarded ranges are
	// still checked against the snapshot. Call it before the first write.
	SetPessimistic()
	// LockID names the transaction in the engine's LockWaits.
	LockID() uint64
	// LatestView returns a reader of the latest committed state plus the
	// writes of the shared view (AdvanceView), following the view as it
	// moves: what a statement that locked a row reads it with, so that it
	// sees the last commit but not its own writes.
	LatestView() Reader
}

// LockWait is one transaction waiting for a lock another holds, or asked
// for earlier, on a key.
type LockWait struct {
	// Waiter and Blocker are the transactions' Locker.LockID.
	Waiter, Blocker uint64
	// Mode is what the waiter asked for, BlockerMode what the blocker holds
	// or asked for; BlockerWaits is set when the blocker's request is
	// queued, not granted.
	Mode, BlockerMode LockMode
	BlockerWaits      bool
	// Since is when the waiter began to wait.
	Since time.Time
	Key   []byte
}

// LockInspector is an Engine that lists who waits for whom on key locks
// (what performance_schema.data_lock_waits shows in MySQL). Callers find it
// by type assertion.
type LockInspector interface {
	LockWaits() []LockWait
}

// BulkLoader is an Engine that adds many sorted keys to a range at once,
// bypassing the transaction path (the embedded engine writes them straight
// into table files and ingests them). Callers find it by type assertion and
// fall back to writing the keys in a transaction.
//
// A bulk load is not a transaction: it checks no conflict, and its keys
// become visible together when Finish returns, to reads that start
// afterwards. A snapshot taken while the load runs may see the keys appear
// at Finish, so the caller loads a range that no one reads or writes until
// the caller publishes it (sqlstore loads a new index's entries, then
// commits the catalog record that names the index).
type BulkLoader interface {
	NewBulkWriter() (BulkWriter, error)
}

// BulkWriter receives the keys of one bulk load, in strictly ascending
// order. It is used by one goroutine; Finish or Abort must be called.
type BulkWriter interface {
	Set(key, value []byte) error
	// Finish makes the keys visible and durable. It fails, adding nothing,
	// when another writer committed a key in the loaded range after the
	// load began.
	Finish() error
	// Abort discards the keys.
	Abort()
}
