// Package lock is a table of key locks for pessimistic transactions: shared
// and exclusive locks on byte-string keys, held by owners (transactions)
// until they release them all at once, granted in the order they were asked
// for, waited for with a bound and a cancellable context, with deadlocks
// found when a wait would close a cycle.
//
// The rules are InnoDB's for row locks:
//
//   - Shared locks are compatible with each other; an exclusive lock with
//     nothing held by another owner.
//   - A request is granted at once when it is compatible with every lock
//     other owners hold on the key and nobody waits for the key; otherwise
//     it joins the key's queue, which is served first come, first served.
//   - An owner that holds a shared lock and asks for the exclusive one
//     (an upgrade) gets it at once when it is the only holder; otherwise it
//     waits ahead of requests from owners that hold nothing on the key,
//     which could not be granted before it anyway.
//   - Asking for a lock one already holds (or a shared lock while holding
//     the exclusive one) returns at once.
//   - Before a request waits, the wait-for graph is searched from it: an
//     owner waits for the owners whose held or earlier queued requests
//     conflict with its own. If the search comes back to the requester,
//     the request fails with ErrDeadlock and the requester is the victim:
//     every cycle is closed by the newest wait, so checking each new wait is
//     enough to find every deadlock, and at once.
//   - Locks are kept until ReleaseAll, whatever happens to the statements
//     that took them.
//
// One mutex guards the table. A lock is one map lookup and, for a key not
// yet locked, an entry taken from a free list; nothing is allocated per lock
// once the table has warmed up, and waits allocate their channel and timer.
package lock

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"time"
)

// Mode is the mode of a lock.
type Mode uint8

const (
	// Shared locks let other owners take shared locks on the key too.
	Shared Mode = iota + 1
	// Exclusive locks let no other owner lock the key.
	Exclusive
)

func (m Mode) String() string {
	switch m {
	case Shared:
		return "S"
	case Exclusive:
		return "X"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// compatible reports whether a lock of mode a and one of mode b, held by
// different owners, may be held together.
func compatible(a, b Mode) bool { return a == Shared && b == Shared }

var (
	// ErrTimeout is returned when a request waited as long as it was allowed
	// to.
	ErrTimeout = errors.New("lock: wait timeout")
	// ErrDeadlock is returned when waiting would close a cycle of owners
	// waiting for each other. The requester holds what it held before.
	ErrDeadlock = errors.New("lock: deadlock")
	// ErrNotAvailable is returned by a request that may not wait when the
	// lock cannot be granted at once.
	ErrNotAvailable = errors.New("lock: not available")
)

// Error is the error of a request that was not granted. It wraps
// ErrTimeout, ErrDeadlock, ErrNotAvailable or the context's error.
type Error struct {
	// Key is the key asked for (a copy).
	Key []byte
	// Mode is the mode asked for.
	Mode Mode
	// Blocker is the ID of an owner holding or waiting for a conflicting
	// lock on the key when the request failed (0 if none was left).
	Blocker uint64
	Err     error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%v: %s lock on key %q (blocked by owner %d)", e.Err, e.Mode, e.Key, e.Blocker)
}

func (e *Error) Unwrap() error { return e.Err }

// Table is a lock table. Its zero value is not usable; use New.
type Table struct {
	mu   sync.Mutex
	seed maphash.Seed
	// keys holds an entry per locked or waited-for key, by the key's hash;
	// entries whose keys collide are chained through next.
	keys map[uint64]*entry
	free *entry // entries for reuse, chained through next
	// visit numbers the deadlock searches (Owner.visited).
	visit uint64
	// waiting counts requests in queues, for Waits.
	waiting int
}

// New returns an empty lock table.
func New() *Table {
	return &Table{seed: maphash.MakeSeed(), keys: make(map[uint64]*entry)}
}

// entry is the state of one key: the locks held on it and the requests
// waiting for it.
type entry struct {
	hash    uint64
	key     []byte
	next    *entry
	holders []grant
	queue   []*waiter
}

type grant struct {
	owner *Owner
	mode  Mode
}

// waiter is a request in a queue. ready is closed once it is granted or
// removed with err set.
type waiter struct {
	owner *Owner
	mode  Mode
	e     *entry
	since time.Time
	ready chan struct{}
	done  bool
}

// Owner holds locks: one transaction. Its methods must not be called
// concurrently with each other; different owners are independent.
type Owner struct {
	t  *Table
	id uint64
	// The fields below are guarded by t.mu.
	held    []*entry
	waiting *waiter
	visited uint64
}

// NewOwner returns an owner that holds nothing. id names it in errors and
// in Waits and Locks; the table does not require it to be unique.
func (t *Table) NewOwner(id uint64) *Owner {
	return &Owner{t: t, id: id}
}

// ID returns the owner's ID.
func (o *Owner) ID() uint64 { return o.id }

// Lock takes a lock of mode on key for o, waiting for at most wait (0: not
// at all) while another owner's lock or earlier request conflicts, and no
// longer than ctx lets it. It returns nil once the lock is held, or an
// *Error wrapping ErrNotAvailable, ErrTimeout, ErrDeadlock or ctx's error;
// a failed request leaves o's other locks as they were. The table keeps
// no reference to key.
func (o *Owner) Lock(ctx context.Context, key []byte, mode Mode, wait time.Duration) error {
	if mode != Shared && mode != Exclusive {
		return fmt.Errorf("lock: invalid mode %d", mode)
	}
	t := o.t
	t.mu.Lock()
	e := t.lookup(key, true)
	held := e.heldBy(o)
	if held == Exclusive || held == mode {
		t.mu.Unlock()
		return nil
	}
	if t.grantable(e, o, mode, held) {
		t.grantLocked(e, o, mode, held)
		t.mu.Unlock()
		return nil
	}
	if wait <= 0 {
		err := t.failLocked(e, o, key, mode, ErrNotAvailable)
		t.mu.Unlock()
		return err
	}
	w := &waiter{owner: o, mode: mode, e: e, since: time.Now(), ready: make(chan struct{})}
	t.enqueue(e, w, held != 0)
	o.waiting = w
	if t.closesCycle(o) {
		t.dequeue(w)
		err := t.failLocked(e, o, key, mode, ErrDeadlock)
		t.mu.Unlock()
		return err
	}
	t.mu.Unlock()

	timer := time.NewTimer(wait)
	defer timer.Stop()
	var cause error
	select {
	case <-w.ready:
		return nil
	case <-timer.C:
		cause = ErrTimeout
	case <-ctx.Done():
		cause = ctx.Err()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if w.done {
		// Granted while the wait ended: the lock is held.
		return nil
	}
	t.dequeue(w)
	// The request may have kept later ones waiting.
	t.grantWaiters(e)
	return t.failLocked(e, o, key, mode, cause)
}

// ReleaseAll releases every lock o holds, granting what waited for them.
func (o *Owner) ReleaseAll() {
	t := o.t
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, e := range o.held {
		for j := range e.holders {
			if e.holders[j].owner == o {
				e.holders = append(e.holders[:j], e.holders[j+1:]...)
				break
			}
		}
		t.grantWaiters(e)
		t.recycle(e)
		o.held[i] = nil
	}
	o.held = o.held[:0]
}

// Holds returns the mode of the lock o holds on key, 0 if none.
func (o *Owner) Holds(key []byte) Mode {
	t := o.t
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.lookup(key, false)
	if e == nil {
		return 0
	}
	return e.heldBy(o)
}

// NumHeld returns the number of keys o holds a lock on.
func (o *Owner) NumHeld() int {
	o.t.mu.Lock()
	defer o.t.mu.Unlock()
	return len(o.held)
}

// lookup returns key's entry, creating it when create is set (else nil if
// there is none). REQUIRES: t.mu held.
func (t *Table) lookup(key []byte, create bool) *entry {
	h := maphash.Bytes(t.seed, key)
	first := t.keys[h]
	for e := first; e != nil; e = e.next {
		if string(e.key) == string(key) {
			return e
		}
	}
	if !create {
		return nil
	}
	e := t.free
	if e != nil {
		t.free = e.next
	} else {
		e = &entry{}
	}
	e.hash = h
	e.key = append(e.key[:0], key...)
	e.next = first
	t.keys[h] = e
	return e
}

// recycle drops e from the table when nothing holds or waits for it.
// REQUIRES: t.mu held.
func (t *Table) recycle(e *entry) {
	if len(e.holders) > 0 || len(e.queue) > 0 {
		return
	}
	first := t.keys[e.hash]
	if first == e {
		if e.next == nil {
			delete(t.keys, e.hash)
		} else {
			t.keys[e.hash] = e.next
		}
	} else {
		for p := first; p != nil; p = p.next {
			if p.next == e {
				p.next = e.next
				break
			}
		}
	}
	clear(e.holders[:cap(e.holders)])
	clear(e.queue[:cap(e.queue)])
	e.holders, e.queue = e.holders[:0], e.queue[:0]
	e.next = t.free
	t.free = e
}

// heldBy returns the mode o holds on e, 0 if none.
func (e *entry) heldBy(o *Owner) Mode {
	for _, g := range e.holders {
		if g.owner == o {
			return g.mode
		}
	}
	return 0
}

// grantable reports whether o's request for mode on e, holding held
// there already, can be granted now.
func (t *Table) grantable(e *entry, o *Owner, mode Mode, held Mode) bool {
	for _, g := range e.holders {
		if g.owner != o && !compatible(g.mode, mode) {
			return false
		}
	}
	// An upgrade by the only holder goes ahead of the queue: whoever waits
	// there waits for it anyway.
	return held != 0 || len(e.queue) == 0
}

// grantLocked records the lock. REQUIRES: t.mu held.
func (t *Table) grantLocked(e *entry, o *Owner, mode Mode, held Mode) {
	if held != 0 {
		for i := range e.holders {
			if e.holders[i].owner == o {
				e.holders[i].mode = mode
			}
		}
		return
	}
	e.holders = append(e.holders, grant{owner: o, mode: mode})
	o.held = append(o.held, e)
}

// enqueue adds w to e's queue: at the end, or for an upgrade ahead of the
// requests of owners that hold nothing on e.
func (t *Table) enqueue(e *entry, w *waiter, upgrade bool) {
	t.waiting++
	at := len(e.queue)
	if upgrade {
		at = 0
		for at < len(e.queue) && e.heldBy(e.queue[at].owner) != 0 {
			at++
		}
	}
	e.queue = append(e.queue, nil)
	copy(e.queue[at+1:], e.queue[at:])
	e.queue[at] = w
}

// dequeue removes w, not granted, from its queue. REQUIRES: t.mu held.
func (t *Table) dequeue(w *waiter) {
	e := w.e
	for i, q := range e.queue {
		if q == w {
			copy(e.queue[i:], e.queue[i+1:])
			e.queue[len(e.queue)-1] = nil
			e.queue = e.queue[:len(e.queue)-1]
			t.waiting--
			break
		}
	}
	w.done = true
	w.owner.waiting = nil
}

// failLocked returns the error of o's failed request for key, naming a
// blocker, and forgets e if o's request was all it held.
func (t *Table) failLocked(e *entry, o *Owner, key []byte, mode Mode, cause error) error {
	err := &Error{Key: append([]byte(nil), key...), Mode: mode, Err: cause}
	t.forEachBlocker(e, o, mode, nil, func(b *Owner) bool {
		err.Blocker = b.id
		return false
	})
	t.recycle(e)
	return err
}

// grantWaiters grants the requests at the front of e's queue for as long as
// they can be granted. REQUIRES: t.mu held.
func (t *Table) grantWaiters(e *entry) {
	for len(e.queue) > 0 {
		w := e.queue[0]
		held := e.heldBy(w.owner)
		ok := true
		for _, g := range e.holders {
			if g.owner != w.owner && !compatible(g.mode, w.mode) {
				ok = false
				break
			}
		}
		if !ok {
			return
		}
		copy(e.queue, e.queue[1:])
		e.queue[len(e.queue)-1] = nil
		e.queue = e.queue[:len(e.queue)-1]
		t.waiting--
		t.grantLocked(e, w.owner, w.mode, held)
		w.done = true
		w.owner.waiting = nil
		close(w.ready)
	}
}

// forEachBlocker calls f with each owner that o's request for mode on e
// waits for: the other holders of conflicting locks, and the owners of
// conflicting requests queued ahead of w (w nil: all of the queue). It
// stops when f returns false and reports whether f did.
func (t *Table) forEachBlocker(e *entry, o *Owner, mode Mode, w *waiter, f func(*Owner) bool) bool {
	for _, g := range e.holders {
		if g.owner != o && !compatible(g.mode, mode) {
			if !f(g.owner) {
				return false
			}
		}
	}
	for _, q := range e.queue {
		if q == w {
			break
		}
		if q.owner != o && !compatible(q.mode, mode) {
			if !f(q.owner) {
				return false
			}
		}
	}
	return true
}

// maxSearch bounds the owners one deadlock search visits; a search that
// reaches it counts as a deadlock, as InnoDB's does, rather than stall every
// lock request behind the table's mutex.
const maxSearch = 10_000

// closesCycle reports whether o's wait (o.waiting) closes a cycle of
// waiting owners. REQUIRES: t.mu held.
func (t *Table) closesCycle(o *Owner) bool {
	t.visit++
	visit := t.visit
	steps := 0
	found := false
	var search func(x *Owner) bool
	search = func(x *Owner) bool {
		w := x.waiting
		if w == nil {
			return true
		}
		return t.forEachBlocker(w.e, x, w.mode, w, func(b *Owner) bool {
			if b == o {
				found = true
				return false
			}
			if steps++; steps > maxSearch {
				found = true
				return false
			}
			if b.visited == visit {
				return true
			}
			b.visited = visit
			return search(b)
		})
	}
	o.visited = visit
	search(o)
	return found
}

// Wait describes one owner waiting for another.
type Wait struct {
	// Waiter is the ID of the waiting owner, Mode what it asked for, and
	// Since when it began to wait.
	Waiter uint64
	Mode   Mode
	Since  time.Time
	// Blocker is the ID of an owner it waits for and BlockerMode the mode
	// that owner holds or asked for; BlockerWaits is set when the blocker's
	// request is queued, not held.
	Blocker      uint64
	BlockerMode  Mode
	BlockerWaits bool
	// Key is the key (a copy).
	Key []byte
}

// Waits returns who waits for whom now: one row per waiting request and
// owner it waits for, as performance_schema.data_lock_waits lists them.
func (t *Table) Waits() []Wait {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Wait
	if t.waiting == 0 {
		return nil
	}
	for _, first := range t.keys {
		for e := first; e != nil; e = e.next {
			for _, w := range e.queue {
				add := func(b *Owner, mode Mode, waits bool) {
					out = append(out, Wait{Waiter: w.owner.id, Mode: w.mode, Since: w.since,
						Blocker: b.id, BlockerMode: mode, BlockerWaits: waits, Key: append([]byte(nil), e.key...)})
				}
				for _, g := range e.holders {
					if g.owner != w.owner && !compatible(g.mode, w.mode) {
						add(g.owner, g.mode, false)
					}
				}
				for _, q := range e.queue {
					if q == w {
						break
					}
					if q.owner != w.owner && !compatible(q.mode, w.mode) {
						add(q.owner, q.mode, true)
					}
				}
			}
		}
	}
	return out
}

// Held describes a lock held or asked for.
type Held struct {
	Owner   uint64
	Mode    Mode
	Key     []byte
	Waiting bool // asked for, not yet granted
}

// Locks returns every lock held and every request waiting, as
// performance_schema.data_locks lists them.
func (t *Table) Locks() []Held {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Held
	for _, first := range t.keys {
		for e := first; e != nil; e = e.next {
			for _, g := range e.holders {
				out = append(out, Held{Owner: g.owner.id, Mode: g.mode, Key: append([]byte(nil), e.key...)})
			}
			for _, w := range e.queue {
				out = append(out, Held{Owner: w.owner.id, Mode: w.mode, Key: append([]byte(nil), e.key...), Waiting: true})
			}
		}
	}
	return out
}
