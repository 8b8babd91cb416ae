package memtable

import (
	"encoding/binary"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/strata-db/strata/kv/internal/base"
)

// The arena is one preallocated byte slice that holds every node, key and
// value of a memtable. Memory is handed out by bumping an offset and is never
// freed or reused while the memtable lives, so an offset, once published,
// names the same bytes forever and readers need no locks to follow it.
//
// Node layout. A node is one allocation, aligned to nodeAlign bytes. Its
// offset names its header, which the tower precedes and the key follows:
//
//	+--------------------------+----------+-----------+-----------+-----------+--------------+-------+
//	| next[height-1..0] (4 ea) | prev (4) | keyLen(4) | valLen(4) | height(4) | internal key | value |
//	+--------------------------+----------+-----------+-----------+-----------+--------------+-------+
//	                           ^ node offset
//
// A search compares its key with a node's key far more often than it follows
// the node's upper links: every step of a search compares, only steps that
// move right read a link, and mostly a low one. So the header and the key sit
// together, where one cache line usually holds both, and the tower grows
// downwards from the header, next[0] (the link read most) next to it. With
// the tower between header and key, as before, a tall node's key began a
// tower's length (up to 48 bytes) past its header, on another cache line, and
// the tall nodes are the ones a search from the head compares with first.
//
// Fields:
//
//   - prev: offset of the node's predecessor at level 0 (the back link),
//     read and written atomically. It may briefly lag behind a node that was
//     just linked in front of this one (see skiplist.insert) but it always
//     names a node that sorts before this one.
//   - keyLen, valLen, height: written once before the node is published and
//     never changed; read with plain loads.
//   - next[i]: offset of the successor at level i, read and written
//     atomically, at (i+1)*linkSize bytes before the header. Only the first
//     height links exist; the tower is cut to the node's height so short
//     nodes cost little.
//   - internal key: the user key followed by the 8-byte little-endian trailer
//     (base.AppendKey layout); keyLen counts both.
//   - value: valLen bytes.
//
// Every integer field is native-endian: the arena lives only in memory and
// is not part of any durable format, so this layout may change freely.
//
// Offset 0 is never handed out and means "no node"; the first arenaStart
// bytes are left unused so that it stays so.
const (
	nodeAlign      = 4  // atomic uint32 links must be 4-byte aligned
	nodeHeaderSize = 16 // prev, keyLen, valLen, height
	linkSize       = 4  // one next link
	arenaStart     = 8  // offsets below this are never allocated; 0 is nil

	// maxHeight is the tallest tower. With the branching factor of 4 used by
	// randomHeight, lists stay balanced up to 4^12 (about 16.7 million)
	// entries and degrade gently beyond. A taller maximum would make every
	// reservation (EntrySize assumes a full tower) larger for nothing.
	maxHeight = 12

	// cacheLineSize separates fields written by writers from fields read by
	// everybody.
	cacheLineSize = 64

	// maxNodeSize is the size of a node with a full tower, without its key
	// and value.
	maxNodeSize = nodeHeaderSize + maxHeight*linkSize
)

const (
	// MinArenaSize is the smallest arena New will make; smaller requests are
	// rounded up to it.
	MinArenaSize = 64 << 10

	// MaxArenaSize is the largest arena New will make; larger requests are
	// cut to it. Links are 32-bit offsets, so an arena cannot reach 4 GiB.
	MaxArenaSize = min(1<<32-8, math.MaxInt&^7)
)

// nodeHeader is the fixed part of a node; the tower, key and value follow it.
type nodeHeader struct {
	prev   atomic.Uint32
	keyLen uint32
	valLen uint32
	height uint32
}

// Compile-time check that nodeHeader has the layout the comment describes.
var _ [nodeHeaderSize - unsafe.Sizeof(nodeHeader{})]struct{}
var _ [unsafe.Sizeof(nodeHeader{}) - nodeHeaderSize]struct{}

// arena is the bump allocator under a memtable. alloc may be called from
// several goroutines at once; the accessors may be used by any number of
// readers of published nodes.
type arena struct {
	buf  []byte
	base unsafe.Pointer // &buf[0]; 8-byte aligned

	// Every reader reads buf and base; every writer bumps used. The pad keeps
	// them on separate cache lines so that writes do not evict what readers
	// need.
	_ [cacheLineSize]byte

	// used is the number of bytes handed out, including the unused prefix.
	// It only grows and never exceeds len(buf); it is always a multiple of
	// nodeAlign, so every allocation starts aligned.
	used atomic.Uint64
}

// init makes an arena of size bytes (a multiple of 8). The buffer is made of
// uint64 words so that its start is 8-byte aligned on every platform.
func (a *arena) init(size int) {
	a.initWords(make([]uint64, size/8))
}

// initWords makes an arena over words, which must be zero.
func (a *arena) initWords(words []uint64) {
	a.base = unsafe.Pointer(&words[0])
	a.buf = unsafe.Slice((*byte)(a.base), len(words)*8)
	a.used.Store(arenaStart)
}

// capacity returns the arena's size in bytes.
func (a *arena) capacity() uint64 { return uint64(len(a.buf)) }

// alignUp rounds n up to a multiple of nodeAlign.
func alignUp(n uint64) uint64 { return (n + nodeAlign - 1) &^ (nodeAlign - 1) }

// nodeSize returns the arena bytes a node of the given height with a key of
// keyLen bytes (trailer included) and a value of valLen bytes takes.
func nodeSize(height int, keyLen, valLen uint64) uint64 {
	return alignUp(nodeHeaderSize + uint64(height)*linkSize + keyLen + valLen)
}

// alloc hands out n bytes rounded up to nodeAlign and returns their offset,
// or false when they do not fit, in which case nothing is consumed.
func (a *arena) alloc(n uint64) (uint32, bool) {
	n = alignUp(n)
	for {
		u := a.used.Load()
		if n > a.capacity()-u {
			return 0, false
		}
		if a.used.CompareAndSwap(u, u+n) {
			return uint32(u), true
		}
	}
}

// newNode allocates a node of the given height and fills in everything a
// reader may look at: the header, the internal key (ukey plus trailer) and
// the value. Its links are left zero for the inserter to set. The node is
// not reachable by anyone until it is linked.
func (a *arena) newNode(height int, ukey []byte, trailer uint64, value []byte) (uint32, bool) {
	keyLen := uint64(len(ukey)) + base.TrailerLen
	nd, ok := a.alloc(nodeSize(height, keyLen, uint64(len(value))))
	if !ok {
		return 0, false
	}
	nd += uint32(height) * linkSize // the tower comes first
	h := a.header(nd)
	h.keyLen = uint32(keyLen)
	h.valLen = uint32(len(value))
	h.height = uint32(height)
	koff := int(nd) + nodeHeaderSize
	n := copy(a.buf[koff:], ukey)
	binary.LittleEndian.PutUint64(a.buf[koff+n:koff+n+base.TrailerLen], trailer)
	copy(a.buf[koff+int(keyLen):], value)
	return nd, true
}

// header returns the fixed part of node nd.
func (a *arena) header(nd uint32) *nodeHeader {
	return (*nodeHeader)(unsafe.Add(a.base, nd))
}

// next returns the level-i successor link of node nd.
// REQUIRES: i < the node's height.
func (a *arena) next(nd uint32, i int) *atomic.Uint32 {
	return (*atomic.Uint32)(unsafe.Add(a.base, uintptr(nd)-uintptr(i+1)*linkSize))
}

// prev returns the level-0 back link of node nd.
func (a *arena) prev(nd uint32) *atomic.Uint32 { return &a.header(nd).prev }

// key returns the internal key of node nd, aliasing the arena. Its capacity
// is cut to its length so that an append by the caller copies rather than
// writing over the arena.
func (a *arena) key(nd uint32) []byte {
	off := int(nd) + nodeHeaderSize
	end := off + int(a.header(nd).keyLen)
	return a.buf[off:end:end]
}

// value returns the value of node nd, aliasing the arena, with its capacity
// cut to its length.
func (a *arena) value(nd uint32) []byte {
	h := a.header(nd)
	off := int(nd) + nodeHeaderSize + int(h.keyLen)
	end := off + int(h.valLen)
	return a.buf[off:end:end]
}
