package memtable

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/strata-db/strata/kv/internal/base"
)

// Memtable is the engine's in-memory write buffer: point entries and range
// tombstones, each in its own lock-free skiplist, both in one arena.
//
// Keys and values it hands out (from Get and from iterators) alias the
// arena: they stay valid and unchanged for as long as the engine holds the
// memtable, and must not be modified.
//
// A Memtable is safe for concurrent use: any number of goroutines may call
// Reserve, Add, AddRangeDelete, Get and the iterator constructors at once.
// Each Iter belongs to one goroutine.
type Memtable struct {
	points    skiplist
	rangeDels skiplist
	// arena ends with its write-hot allocation offset, so reserved, which
	// only writers touch too, shares that cache line and not the lines
	// readers use.
	arena arena
	// reserved is the arena size promised to callers of Reserve, counted
	// from the start of the arena; see Reserve for how it relates to
	// arena.used.
	reserved atomic.Uint64
}

// New returns an empty memtable whose arena holds arenaSize bytes, rounded
// into [MinArenaSize, MaxArenaSize] and down to a multiple of 8. The whole
// arena is allocated up front.
func New(arenaSize int) *Memtable {
	arenaSize = min(max(arenaSize, MinArenaSize), MaxArenaSize) &^ 7
	return newMemtable(make([]uint64, arenaSize/8))
}

// NewFromArena returns an empty memtable over an arena taken from a retired
// memtable with TakeArena, saving the cost of allocating and faulting in a
// fresh one. The arena's size is its capacity.
func NewFromArena(arena []uint64) *Memtable {
	if len(arena)*8 < MinArenaSize || len(arena)*8 > MaxArenaSize {
		return New(len(arena) * 8)
	}
	return newMemtable(arena)
}

// TakeArena hands the memtable's arena, cleared, to the caller for
// NewFromArena. The memtable, and every key and value it returned, must
// never be used again.
func (m *Memtable) TakeArena() []uint64 {
	words := unsafe.Slice((*uint64)(m.arena.base), len(m.arena.buf)/8)
	used := min(int(m.arena.used.Load()+7)/8, len(words))
	clear(words[:used])
	m.arena = arena{}
	return words
}

func newMemtable(words []uint64) *Memtable {
	m := &Memtable{}
	m.arena.initWords(words)
	// Four sentinels take a few hundred bytes of an arena of at least
	// MinArenaSize: they always fit.
	if !m.points.init(&m.arena) || !m.rangeDels.init(&m.arena) {
		panic("memtable: arena too small for the skiplist sentinels")
	}
	m.reserved.Store(m.arena.used.Load())
	return m
}

// EntrySize returns the most arena bytes one Add of a user key of keyLen
// bytes and a value of valueLen bytes can consume, or one AddRangeDelete of
// a start key of keyLen bytes and an end key of valueLen bytes: a node with
// the tallest tower, the key with its trailer, and the value, rounded up to
// the node alignment. Negative lengths count as zero.
func EntrySize(keyLen, valueLen int) int {
	return int(nodeSize(maxHeight, uint64(max(keyLen, 0))+base.TrailerLen, uint64(max(valueLen, 0))))
}

// Reserve promises n arena bytes to the caller, for a batch it is about to
// apply, and reports whether it could. When it returns false nothing is
// reserved: the arena cannot hold n more bytes and the engine should rotate
// to a new memtable. Concurrent calls are safe; each success is counted
// exactly once.
//
// Reserving the sum of EntrySize over a batch's entries guarantees that the
// batch's Add and AddRangeDelete calls never fail with ErrArenaFull,
// provided every write to this memtable is covered by a reservation (the
// engine's discipline): allocations then never overtake reservations. A
// reservation is never given back; Size counts it from the moment it is
// made. Writes made without a reservation are allowed too; a later Reserve
// counts from whichever is further, what was reserved or what was
// allocated, so a single writer that mixes the two still gets the guarantee.
func (m *Memtable) Reserve(n int) bool {
	if n < 0 {
		return false
	}
	need := uint64(n)
	for {
		r := m.reserved.Load()
		from := max(r, m.arena.used.Load())
		if need > m.arena.capacity()-from {
			return false
		}
		if m.reserved.CompareAndSwap(r, from+need) {
			return true
		}
	}
}

// Add inserts the point entry (ukey, seq, kind) with value, copying both
// into the arena. It returns ErrExists when that exact internal key is
// already present, ErrArenaFull when the arena has no room (nothing is
// inserted or consumed), and ErrInvalid for a kind that is not a point kind
// (KindRangeDelete, KindMax) or a sequence number >= base.SeqNumMax. Add
// allocates nothing on the Go heap on success; it may be called from
// several goroutines at once.
func (m *Memtable) Add(ukey []byte, seq base.SeqNum, kind base.Kind, value []byte) error {
	if seq >= base.SeqNumMax || kind == base.KindRangeDelete || kind == base.KindMax {
		return fmt.Errorf("%w: point entry %q#%d,%s", ErrInvalid, ukey, seq, kind)
	}
	return m.add(&m.points, ukey, base.MakeTrailer(seq, kind), value)
}

// AddRangeDelete inserts the range tombstone [start, end) at seq: an entry
// of the range-deletion list keyed by (start, seq, KindRangeDelete) whose
// value is end. Its arena cost is bounded by EntrySize(len(start),
// len(end)). It returns ErrInvalid when start >= end or seq >=
// base.SeqNumMax, and otherwise fails as Add does.
func (m *Memtable) AddRangeDelete(start, end []byte, seq base.SeqNum) error {
	if seq >= base.SeqNumMax || bytes.Compare(start, end) >= 0 {
		return fmt.Errorf("%w: range tombstone [%q, %q)#%d", ErrInvalid, start, end, seq)
	}
	return m.add(&m.rangeDels, start, base.MakeTrailer(seq, base.KindRangeDelete), end)
}

// add copies (ukey, trailer) and value into a new node and links it into s.
func (m *Memtable) add(s *skiplist, ukey []byte, trailer uint64, value []byte) error {
	if uint64(len(ukey))+uint64(len(value)) > m.arena.capacity() {
		// Checked before any arithmetic in uint32 so that nothing can wrap.
		return ErrArenaFull
	}
	height := randomHeight()
	nd, ok := m.arena.newNode(height, ukey, trailer, value)
	if !ok {
		return ErrArenaFull
	}
	if err := s.insert(nd, height, ukey, trailer); err != nil {
		// The node stays allocated but unreachable: arena bytes are never
		// given back. It cost no more than EntrySize, so reservations hold.
		return fmt.Errorf("%w: %s", err, base.FormatKey(m.arena.key(nd)))
	}
	return nil
}

// Get returns the newest point entry of ukey whose sequence number is <= seq:
// its value and kind, and found=true. A KindDelete entry is returned like any
// other (kind tells the caller it is a tombstone); range tombstones are not
// consulted. found is false when ukey has no entry at or below seq. The value
// aliases the arena and stays valid for as long as the memtable is
// referenced; the caller must not modify it. Get allocates nothing.
func (m *Memtable) Get(ukey []byte, seq base.SeqNum) (value []byte, kind base.Kind, entrySeq base.SeqNum, found bool) {
	seq = min(seq, base.SeqNumMax)
	_, nd := m.points.seek(ukey, base.MakeTrailer(seq, base.KindMax))
	if nd == m.points.tail {
		return nil, 0, 0, false
	}
	k := m.arena.key(nd)
	if !bytes.Equal(base.UserKey(k), ukey) {
		return nil, 0, 0, false
	}
	t := base.Trailer(k)
	return m.arena.value(nd), base.KindOf(t), base.SeqOf(t), true
}

// A Getter looks up keys of one Memtable in ascending order, each searched
// for from the last one's predecessor (a finger search, as Inserter's):
// a MultiGet's sorted keys, often close together, cost a few comparisons
// each instead of a search from the head. Keys out of order are searched
// from the head. A Getter belongs to one goroutine, holds no resources and
// allocates nothing.
type Getter struct {
	m    *Memtable
	prev uint32 // a node before the last key looked up (head: none)
}

// Init makes g look up keys in m, from the head.
func (g *Getter) Init(m *Memtable) {
	g.m, g.prev = m, m.points.head
}

// Get is Memtable.Get.
func (g *Getter) Get(ukey []byte, seq base.SeqNum) (value []byte, kind base.Kind, entrySeq base.SeqNum, found bool) {
	m := g.m
	s := &m.points
	seq = min(seq, base.SeqNumMax)
	trailer := base.MakeTrailer(seq, base.KindMax)
	var nd uint32
	if g.prev != s.head && s.cmp(ukey, trailer, g.prev) > 0 {
		g.prev, nd = s.seekFromPrev(g.prev, ukey, trailer)
	} else {
		g.prev, nd = s.seek(ukey, trailer)
	}
	if nd == s.tail {
		return nil, 0, 0, false
	}
	k := m.arena.key(nd)
	if !bytes.Equal(base.UserKey(k), ukey) {
		return nil, 0, 0, false
	}
	t := base.Trailer(k)
	return m.arena.value(nd), base.KindOf(t), base.SeqOf(t), true
}

// Size returns the arena bytes in use: what was allocated or reserved,
// whichever is more, including the few hundred bytes of the list sentinels.
// It never exceeds Capacity.
func (m *Memtable) Size() int {
	return int(max(m.reserved.Load(), m.arena.used.Load()))
}

// Capacity returns the size of the arena in bytes.
func (m *Memtable) Capacity() int { return len(m.arena.buf) }

// Empty reports whether the memtable holds neither point entries nor range
// tombstones.
func (m *Memtable) Empty() bool { return m.points.empty() && m.rangeDels.empty() }

// HasRangeDeletes reports whether the memtable holds a range tombstone.
func (m *Memtable) HasRangeDeletes() bool { return !m.rangeDels.empty() }

// NewIter returns an iterator over the point entries, in base.Compare order.
// It sees entries added before it was positioned and may or may not see
// entries added concurrently.
func (m *Memtable) NewIter() *Iter {
	it := &Iter{}
	m.InitIter(it)
	return it
}

// InitIter makes it an iterator over the point entries, like NewIter, in
// place: a caller that embeds an Iter in a larger struct or pools them
// allocates nothing.
func (m *Memtable) InitIter(it *Iter) { it.init(&m.points) }

// NewRangeDelIter returns an iterator over the range tombstones, ordered by
// start key then newest first: KV.K is the start internal key (kind
// KindRangeDelete) and KV.V the exclusive end user key. Tombstones are as
// added: they may overlap and are not fragmented.
func (m *Memtable) NewRangeDelIter() *Iter {
	it := &Iter{}
	m.InitRangeDelIter(it)
	return it
}

// InitRangeDelIter makes it an iterator over the range tombstones, like
// NewRangeDelIter, in place.
func (m *Memtable) InitRangeDelIter(it *Iter) { it.init(&m.rangeDels) }

// An Inserter adds point entries to one Memtable and remembers where the
// last one went, so that entries given in ascending internal-key order are
// each searched for from there instead of from the head of the list (as
// RocksDB's insert hints and Pebble's cached splices do). A batch applied in
// key order then costs a few comparisons per entry where there are few
// entries between one key and the next. Entries out of order are inserted
// as Add inserts them. An Inserter belongs to one goroutine; other
// goroutines may Add to the same memtable at the same time. It holds no
// resources and allocates nothing.
type Inserter struct {
	m      *Memtable
	prevs  [maxHeight]uint32
	hinted bool
}

// Init makes ins insert into m, forgetting any earlier position.
func (ins *Inserter) Init(m *Memtable) {
	ins.m = m
	ins.hinted = false
}

// Add is Memtable.Add through the inserter's position.
func (ins *Inserter) Add(ukey []byte, seq base.SeqNum, kind base.Kind, value []byte) error {
	m := ins.m
	if seq >= base.SeqNumMax || kind == base.KindRangeDelete || kind == base.KindMax {
		return fmt.Errorf("%w: point entry %q#%d,%s", ErrInvalid, ukey, seq, kind)
	}
	if uint64(len(ukey))+uint64(len(value)) > m.arena.capacity() {
		return ErrArenaFull
	}
	trailer := base.MakeTrailer(seq, kind)
	height := randomHeight()
	nd, ok := m.arena.newNode(height, ukey, trailer, value)
	if !ok {
		return ErrArenaFull
	}
	if err := m.points.insertFrom(nd, height, ukey, trailer, &ins.prevs, ins.hinted); err != nil {
		ins.hinted = false
		return fmt.Errorf("%w: %s", err, base.FormatKey(m.arena.key(nd)))
	}
	ins.hinted = true
	return nil
}
