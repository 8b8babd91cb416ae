// Package cache is the engine's block cache: decoded blocks of table files,
// shared by every reader of a database (or of several), bounded by bytes.
//
// The cache is split into shards, each under its own mutex, so that
// concurrent readers rarely meet on one lock. A lookup returns a [Handle]
// that pins the block: a pinned block is never evicted, its bytes stay valid
// until the handle is released, and the cache may exceed its capacity while
// everything in it is pinned (as RocksDB's LRU cache without a strict
// limit).
//
// A shard evicts by CLOCK, not LRU: its entries sit on a ring in the order
// they were inserted, and a hit only sets the entry's referenced bit. To
// make room, the hand walks the ring: it skips pinned entries, gives a
// referenced one a second chance (clearing its bit) and evicts the first
// that is neither. An LRU list moves an entry to its front on every hit and
// unlinks it while pinned, which touches two other entries' memory per hit
// and per release; at hundreds of thousands of blocks those are cache
// misses, and they were most of a hit's cost. CLOCK also resists scans: a
// block read once, by a long scan, is evicted before blocks that were hit
// again.
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
		s.ring.prev, s.ring.next = &s.ring, &s.ring
		s.hand = &s.ring
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
	key    Key
	value  []byte
	charge int64
	refs   int32 // REQUIRES: shard.mu held
	// resident: in shard.entries and on the ring. referenced: hit since
	// the hand last passed. REQUIRES: shard.mu held.
	resident, referenced bool
	prev, next           *entry
}

type shard struct {
	mu       sync.Mutex
	capacity int64
	usage    int64 // charge of resident entries
	entries  map[Key]*entry
	loading  map[Key]*flight
	// ring holds the resident entries, pinned or not; ring itself is a
	// sentinel. hand is the next entry eviction looks at; new entries go
	// just behind it.
	ring entry
	hand *entry
	// unpinned counts the resident entries only the cache holds (refs 1):
	// the ones eviction may take. With none, it does not walk the ring.
	unpinned int
	pinned   atomic.Int64
}

// ringRemove unlinks e, moving the hand past it if it points there.
func (s *shard) ringRemove(e *entry) {
	if s.hand == e {
		s.hand = e.next
	}
	e.prev.next = e.next
	e.next.prev = e.prev
	e.prev, e.next = nil, nil
}

// ringInsert links e just behind the hand, so that the hand reaches it
// last.
func (s *shard) ringInsert(e *entry) {
	e.next = s.hand
	e.prev = s.hand.prev
	e.prev.next = e
	s.hand.prev = e
}

// refLocked takes a caller's reference on a resident entry and marks it
// referenced. REQUIRES: s.mu held.
func (s *shard) refLocked(e *entry) {
	if e.refs == 1 {
		s.unpinned--
	}
	e.refs++
	e.referenced = true
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
	s.ringInsert(e)
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
	s.ringRemove(e)
	if e.refs == 1 {
		s.unpinned--
	}
	e.refs--
	if e.refs == 0 {
		e.value = nil
	}
}

// evictLocked moves the hand round the ring, evicting unpinned entries
// that were not referenced since it last passed, until usage fits. When
// every entry is pinned it returns at once, and the shard stays over
// capacity until a release; two turns are always enough otherwise.
// REQUIRES: s.mu held.
func (s *shard) evictLocked() {
	// Each step evicts or passes an entry; a pass of every entry clears
	// every referenced bit, so two passes (plus the sentinel) reach every
	// evictable entry.
	steps := 2*len(s.entries) + 2
	for s.usage > s.capacity && s.unpinned > 0 && steps > 0 {
		steps--
		e := s.hand
		switch {
		case e == &s.ring:
			s.hand = e.next
		case e.refs > 1: // pinned by a caller
			s.hand = e.next
		case e.referenced:
			e.referenced = false
			s.hand = e.next
		default:
			s.eraseLocked(e) // moves the hand on
		}
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
		s.unpinned++
		if s.usage > s.capacity {
			// Inserted while everything was pinned: make room now. An
			// entry nobody hit since it came in is the victim CLOCK would
			// pick when the hand reached it; take it without the walk.
			if !e.referenced {
				s.eraseLocked(e)
			} else {
				s.evictLocked()
			}
		}
	case e.refs == 0:
		e.value = nil
	}
	s.mu.Unlock()
}
