package sqlstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/strata-db/strata/storage"
)

// Auto-increment counters and ID allocators are global, not transactional:
// two open transactions get distinct values, and a rolled-back transaction
// leaves a gap (as in MySQL). Each is kept in memory and persisted ahead of
// use: before a value at or above the persisted limit is handed out, the
// process claims the next block, in a transaction of its own that reads the
// persisted limit and raises it by a block (synced when commits are), so
// that after a crash the counter resumes at the limit and never reissues a
// value. Several processes serving one shared engine (the TiKV backend)
// each claim their own blocks: two claims conflict on the limit's key and
// the second is retried above the first, so no value is handed out twice,
// and each process's values grow but interleave with the others' (as
// TiDB's do). A clean Close gives back the unused rest of the block only
// when no other process claimed one after it.

// allocator hands out increasing uint64 IDs (table IDs, hidden row IDs).
type allocator struct {
	mu     sync.Mutex
	engine storage.Engine
	key    []byte
	block  uint64
	next   uint64
	limit  uint64 // persisted: no ID >= limit was handed out
}

func newAllocator(e storage.Engine, key []byte, block, floor uint64) (*allocator, error) {
	a := &allocator{engine: e, key: key, block: block}
	v, err := e.Latest().Get(key, nil)
	switch {
	case errors.Is(err, storage.ErrNotFound):
	case err != nil:
		return nil, wrapf(err, "sqlstore: reading %s", key)
	case len(v) != 8:
		return nil, fmt.Errorf("%w: allocator %s holds %d bytes", ErrCorruptCatalog, key, len(v))
	default:
		a.next = binary.BigEndian.Uint64(v)
	}
	a.next = max(a.next, floor)
	a.limit = a.next
	return a, nil
}

// alloc returns a fresh ID.
func (a *allocator) alloc() (uint64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.next >= a.limit {
		next, limit, err := claimBlock(a.engine, a.key, a.next, a.block)
		if err != nil {
			return 0, wrapf(err, "sqlstore: persisting %s", a.key)
		}
		a.next, a.limit = next, limit
	}
	v := a.next
	a.next++
	return v, nil
}

// flush gives back the unused rest of the block (at Close).
func (a *allocator) flush() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := releaseBlock(a.engine, a.key, a.next, a.limit); err != nil {
		return wrapf(err, "sqlstore: persisting %s", a.key)
	}
	a.limit = a.next
	return nil
}

// claimBlock claims [next, limit) for this process, block values from the
// larger of from and the persisted limit at key on, and persists limit.
func claimBlock(e storage.Engine, key []byte, from, block uint64) (next, limit uint64, err error) {
	for attempt := 0; ; attempt++ {
		tx, err := e.Begin()
		if err != nil {
			return 0, 0, err
		}
		persisted, err := readLimit(tx, key)
		if err == nil {
			next = max(from, persisted)
			limit = next + block
			if limit < next { // the top of the range
				limit = ^uint64(0)
			}
			var b [8]byte
			binary.BigEndian.PutUint64(b[:], limit)
			if err = tx.Set(key, b[:]); err == nil {
				err = tx.Commit()
			}
		}
		if err == nil {
			return next, limit, nil
		}
		_ = tx.Rollback()
		if !errors.Is(err, storage.ErrConflict) || attempt == 100 {
			return 0, 0, err
		}
	}
}

// releaseBlock persists next as the limit at key when the limit there is
// still limit, the end of this process's block: no other process claimed a
// block after it.
func releaseBlock(e storage.Engine, key []byte, next, limit uint64) error {
	if next == limit {
		return nil
	}
	tx, err := e.Begin()
	if err != nil {
		return err
	}
	persisted, err := readLimit(tx, key)
	if err != nil || persisted != limit {
		_ = tx.Rollback()
		return err
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], next)
	if err := tx.Set(key, b[:]); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil && !errors.Is(err, storage.ErrConflict) {
		return err
	}
	return nil
}

// readLimit reads the persisted limit at key (0 when absent).
func readLimit(r storage.Reader, key []byte) (uint64, error) {
	v, err := r.Get(key, nil)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return 0, nil
	case err != nil:
		return 0, err
	case len(v) != 8:
		return 0, fmt.Errorf("%w: %s holds %d bytes", ErrCorruptCatalog, key, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// autoIncs holds the auto-increment counters of all tables by table ID.
type autoIncs struct {
	mu     sync.Mutex
	engine storage.Engine
	m      map[uint64]*autoInc
}

// autoInc is one table's counter: next is the value the next row without an
// explicit value gets.
type autoInc struct {
	mu     sync.Mutex
	loaded bool
	next   uint64
	limit  uint64 // persisted
}

const autoIncBlock = 128

func (a *autoIncs) get(tableID uint64) *autoInc {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = make(map[uint64]*autoInc)
	}
	c := a.m[tableID]
	if c == nil {
		c = &autoInc{}
		a.m[tableID] = c
	}
	return c
}

// loadLocked reads a counter's persisted value once. REQUIRES: c.mu held.
func (a *autoIncs) loadLocked(tableID uint64, c *autoInc) error {
	if c.loaded {
		return nil
	}
	v, err := a.engine.Latest().Get(autoIncKey(tableID), nil)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		c.next = 1
	case err != nil:
		return wrapf(err, "sqlstore: reading auto-increment of table %d", tableID)
	case len(v) != 8:
		return fmt.Errorf("%w: auto-increment of table %d holds %d bytes", ErrCorruptCatalog, tableID, len(v))
	default:
		c.next = binary.BigEndian.Uint64(v)
	}
	c.limit = c.next
	c.loaded = true
	return nil
}

func (a *autoIncs) persistLocked(tableID uint64, c *autoInc, limit uint64) error {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], limit)
	if err := writeNow(a.engine, autoIncKey(tableID), b[:], false); err != nil {
		return wrapf(err, "sqlstore: persisting auto-increment of table %d", tableID)
	}
	c.limit = limit
	return nil
}

// peek returns the next value without using it.
func (a *autoIncs) peek(tableID uint64) (uint64, error) {
	c := a.get(tableID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := a.loadLocked(tableID, c); err != nil {
		return 0, err
	}
	return c.next, nil
}

// next hands out a value for a row without one (given == 0), or records an
// explicit value so that later rows get larger ones.
func (a *autoIncs) next(tableID uint64, given uint64, hasGiven bool) (uint64, error) {
	c := a.get(tableID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := a.loadLocked(tableID, c); err != nil {
		return 0, err
	}
	v := c.next
	if hasGiven {
		if given < c.next {
			return given, nil
		}
		v = given
	}
	if !hasGiven && v >= c.limit {
		// Past this process's block: the next value is the first of a new
		// block, above every block another process claimed.
		next, limit, err := claimBlock(a.engine, autoIncKey(tableID), v, autoIncBlock)
		if err != nil {
			return 0, wrapf(err, "sqlstore: persisting auto-increment of table %d", tableID)
		}
		v, c.limit = next, limit
	}
	if v == ^uint64(0) {
		c.next = v
	} else {
		c.next = v + 1
	}
	if c.next > c.limit {
		// An explicit value past the block: claim from it on.
		next, limit, err := claimBlock(a.engine, autoIncKey(tableID), c.next, autoIncBlock)
		if err != nil {
			return 0, wrapf(err, "sqlstore: persisting auto-increment of table %d", tableID)
		}
		c.next, c.limit = next, limit
	}
	return v, nil
}

// set moves the counter to v (ALTER TABLE ... AUTO_INCREMENT, TRUNCATE).
func (a *autoIncs) set(tableID uint64, v uint64) error {
	c := a.get(tableID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := a.loadLocked(tableID, c); err != nil {
		return err
	}
	c.next = v
	return a.persistLocked(tableID, c, max(v, 1))
}

// flush persists every loaded counter's exact value (at Close).
func (a *autoIncs) flush() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, c := range a.m {
		c.mu.Lock()
		if c.loaded && c.limit != c.next {
			if err := releaseBlock(a.engine, autoIncKey(id), c.next, c.limit); err != nil {
				c.mu.Unlock()
				return wrapf(err, "sqlstore: persisting auto-increment of table %d", id)
			}
			c.limit = c.next
		}
		c.mu.Unlock()
	}
	return nil
}

// forget drops a dropped table's counter.
func (a *autoIncs) forget(tableID uint64) {
	a.mu.Lock()
	delete(a.m, tableID)
	a.mu.Unlock()
	_ = writeNow(a.engine, autoIncKey(tableID), nil, false)
}
