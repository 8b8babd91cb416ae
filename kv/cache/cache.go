// Package cache is the engine's block cache: decoded blocks of table files,
// shared by every reader of a database (or of several), bounded by bytes.
//
// The cache is split into shards, each an LRU list under its own mutex, so
// that concurrent readers rarely meet on one lock. A lookup returns a
// [Handle] that pins the block: a pinned block is never evicted, its bytes
// stay valid until the handle is released, and the cache may exceed its
// capacity while everything in it is pinned (as RocksDB's LRU cache without a
// strict limit). An entry is on its shard's LRU list exactly when nobody but
// the cache holds it, so eviction never has to skip pinned entries.
//
// Concurrent misses on one block load it once ([Cache.GetOrLoad]): the
// first caller reads while the others wait for its result, and if the read
// fails one of the waiters tries in turn.
//
// # Concurrency
//
// A Cache is safe for concurrent use. A Handle is a value; each Handle
// obtained from the cache (or from [Handle.Clone]) must be released exactly
// once, by any goroutine.
package cache

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Key names a block: a namespace (one per database, so that databases can
// share a cache), the file number, and the block's offset in the file.
type Key struct {
	NS, File, Offset uint64
}

func (k Key) hash() uint64 {
	// A 64-bit mix of the three fields (splitmix64 finaliser).
	h := k.NS*0x9e3779b97f4a7c15 ^ k.File*0xbf58476d1ce4e5b9 ^ k.Offset
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// entryOverhead approximates the bytes an entry costs beyond its value:
// the entry struct and its map slot.
const entryOverhead = 96

// Cache is a sharded LRU cache of blocks charged by bytes.
type Cache struct {
	shards []shard
	mask   uint64
	nextNS atomic.Uint64
	cap    int64
}

// New returns a cache that holds about capacity bytes of unpinned blocks.
// A capacity of zero or less makes a cache that keeps nothing it is not
// asked to pin.
func New(capacity int64) *Cache {
	n := 1
	for n < 4*runtime.GOMAXPROCS(0) {
		n *= 2
	}
	// Keep shards large enough to hold a few big blocks each.
	for n > 1 && capacity/int64(n) < 256<<10 {
		n /= 2
	}
	c := &Cache{shards: make([]shard, n), mask: uint64(n - 1), cap: max(capacity, 0)}
	for i := range c.shards {
		s := &c.shards[i]
		s.capacity = c.cap / int64(n)
		s.entries = map[Key]*entry{}
		s.lru.prev, s.lru.next = &s.lru, &s.lru
	}
	return c
}

// NewNamespace returns a namespace no other caller of this cache has: a
// database takes one at open and puts it in every Key it uses.
func (c *Cache) NewNamespace() uint64 { return c.nextNS.Add(1) }

// Capacity returns the capacity the cache was made with.
func (c *Cache) Capacity() int64 { return c.cap }

// Usage returns the bytes charged for resident blocks, pinned or not.
func (c *Cache) Usage() int64 {
	var u int64
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		u += s.usage
		s.mu.Unlock()
	}
	return u
}

// Pinned returns the number of handles currently held by callers.
func (c *Cache) Pinned() int64 {
	var p int64
	for i := range c.shards {
		p += c.shards[i].pinned.Load()
	}
	return p
}

func (c *Cache) shard(k Key) *shard { return &c.shards[k.hash()&c.mask] }

// Get returns a pinned handle to the block under k, if resident.
func (c *Cache) Get(k Key) (Handle, bool) {
	s := c.shard(k)
	s.mu.Lock()
	e := s.entries[k]
	if e == nil {
		s.mu.Unlock()
		return Handle{}, false
	}
	s.refLocked(e)
	s.mu.Unlock()
	return Handle{e: e, s: s}, true
}

// Set inserts value under k, replacing any resident block of that key, and
// returns a pinned handle to it. The cache takes ownership of value: nobody
// may modify it afterwards.
func (c *Cache) Set(k Key, value []byte) Handle {
	s := c.shard(k)
	s.mu.Lock()
	e := s.insertLocked(k, value)
	s.mu.Unlock()
	return Handle{e: e, s: s}
}

// GetOrLoad returns a pinned handle to the block under k, calling load to
// read it on a miss. Concurrent callers missing on the same key share one
// call of load. hit reports whether the block was resident (or loaded by
// another caller meanwhile) rather than loaded by this call.
func (c *Cache) GetOrLoad(k Key, load func() ([]byte, error)) (h Handle, hit bool, err error) {
	s := c.shard(k)
	for {
		s.mu.Lock()
		if e := s.entries[k]; e != nil {
			s.refLocked(e)
			s.mu.Unlock()
			return Handle{e: e, s: s}, true, nil
		}
		if f := s.loading[k]; f != nil {
			s.mu.Unlock()
			<-f.done
			if f.err == nil {
				// The loader inserted it; take our own reference (it may
				// already have been evicted again, then loop).
				continue
			}
			// The loader failed: try ourselves.
			continue
		}
		f := &flight{done: make(chan struct{})}
		if s.loading == nil {
			s.loading = map[Key]*flight{}
		}
		s.loading[k] = f
		s.mu.Unlock()

		value, lerr := load()

		s.mu.Lock()
		delete(s.loading, k)
		if lerr != nil {
			f.err = lerr
			s.mu.Unlock()
			close(f.done)
			return Handle{}, false, lerr
		}
		e := s.insertLocked(k, value)
		s.mu.Unlock()
		close(f.done)
		return Handle{e: e, s: s}, false, nil
	}
}

// flight is a load in progress.
type flight struct {
	done chan struct{}
	err  error
}

// entry is one cached block. refs counts the cache's own reference (while
// the entry is resident) plus one per outstanding Handle.
type entry struct {
	key        Key
	value      []byte
	charge     int64
	refs       int32 // REQUIRES: shard.mu held
	resident   bool  // in shard.entries; REQUIRES: shard.mu held
	prev, next *entry
}

type shard struct {
	mu       sync.Mutex
	capacity int64
	usage    int64 // charge of resident entries
	entries  map[Key]*entry
	loading  map[Key]*flight
	// lru holds the resident entries nobody else references, least recently
	// used at lru.prev. lru itself is a sentinel.
	lru    entry
	pinned atomic.Int64
}

func (s *shard) listRemove(e *entry) {
	e.prev.next = e.next
	e.next.prev = e.prev
	e.prev, e.next = nil, nil
}

func (s *shard) listPushFront(e *entry) {
	e.next = s.lru.next
	e.prev = &s.lru
	e.next.prev = e
	s.lru.next = e
}

// refLocked takes a caller's reference on a resident entry.
// REQUIRES: s.mu held.
func (s *shard) refLocked(e *entry) {
	if e.refs == 1 {
		// Only the cache held it: it was on the LRU list.
		s.listRemove(e)
	}
	e.refs++
	s.pinned.Add(1)
}

// insertLocked inserts a new entry with a caller's reference and evicts
// what no longer fits. REQUIRES: s.mu held.
func (s *shard) insertLocked(k Key, value []byte) *entry {
	if old := s.entries[k]; old != nil {
		s.eraseLocked(old)
	}
	e := &entry{key: k, value: value, charge: int64(cap(value)) + entryOverhead, refs: 2, resident: true}
	s.entries[k] = e
	s.usage += e.charge
	s.pinned.Add(1)
	s.evictLocked()
	return e
}

// eraseLocked removes a resident entry from the index and drops the cache's
// reference. REQUIRES: s.mu held.
func (s *shard) eraseLocked(e *entry) {
	delete(s.entries, e.key)
	e.resident = false
	s.usage -= e.charge
	if e.refs == 1 {
		s.listRemove(e)
	}
	e.refs--
	if e.refs == 0 {
		e.value = nil
	}
}

// evictLocked drops least recently used unpinned entries until usage fits.
// REQUIRES: s.mu held.
func (s *shard) evictLocked() {
	for s.usage > s.capacity && s.lru.prev != &s.lru {
		s.eraseLocked(s.lru.prev)
	}
}

// Handle pins one cached block. The zero Handle holds nothing.
type Handle struct {
	e *entry
	s *shard
}

// Valid reports whether h holds a block.
func (h Handle) Valid() bool { return h.e != nil }

// Value returns the block's bytes, valid until h is released. The bytes are
// shared: never modify them.
func (h Handle) Value() []byte {
	if h.e == nil {
		return nil
	}
	return h.e.value
}

// Clone takes another reference to the same block, to be released on its own.
func (h Handle) Clone() Handle {
	if h.e == nil {
		return h
	}
	h.s.mu.Lock()
	h.e.refs++
	h.s.mu.Unlock()
	h.s.pinned.Add(1)
	return h
}

// Release drops the reference. Releasing the zero Handle does nothing.
func (h Handle) Release() {
	if h.e == nil {
		return
	}
	s, e := h.s, h.e
	s.pinned.Add(-1)
	s.mu.Lock()
	e.refs--
	switch {
	case e.refs == 1 && e.resident:
		s.listPushFront(e)
		s.evictLocked()
	case e.refs == 0:
		e.value = nil
	}
	s.mu.Unlock()
}
