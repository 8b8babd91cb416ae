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
// limit is raised by a block and written straight to the engine (synced
// when commits are), so that after a crash the counter resumes at the limit
// and never reissues a value. A clean Close persists the exact next values.

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
		if err := a.persistLocked(a.next + a.block); err != nil {
			return 0, err
		}
	}
	v := a.next
	a.next++
	return v, nil
}

func (a *allocator) persistLocked(limit uint64) error {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], limit)
	if err := writeNow(a.engine, a.key, b[:], false); err != nil {
		return wrapf(err, "sqlstore: persisting %s", a.key)
	}
	a.limit = limit
	return nil
}

// flush persists the exact next value (at Close).
func (a *allocator) flush() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.persistLocked(a.next)
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
	if v == ^uint64(0) {
		c.next = v
	} else {
		c.next = v + 1
	}
	if c.next > c.limit {
		if err := a.persistLocked(tableID, c, c.next+autoIncBlock); err != nil {
			return 0, err
		}
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
			if err := a.persistLocked(id, c, c.next); err != nil {
				c.mu.Unlock()
				return err
			}
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
