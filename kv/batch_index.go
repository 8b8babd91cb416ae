package kv

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"

	"github.com/strata-db/strata/kv/internal/base"
)

// batchIndex orders the point entries of an indexed batch by user key
// ascending, then by ordinal descending (a later write of a key first), the
// internal-key order of entries whose sequence number is seqBatchBit|ord.
// It is a plain skiplist over offsets into the batch's buffer: a batch is
// used by one goroutine at a time, so no atomics are needed, and the buffer
// may be reallocated by appends because nodes hold offsets, not slices.
type batchIndex struct {
	b *Batch
	// data is the batch's buffer as of the last add. RollbackTo gives the
	// batch a new buffer and a new index, so an iterator made before a
	// rollback keeps reading the buffer and index it was made on, which
	// nothing writes any more.
	data   []byte
	head   batchNode
	height int
	rng    rand.PCG // tower heights; a value, so an index is one allocation
	// prev is scratch for add: the rightmost node before the new key at
	// each level.
	prev [batchMaxHeight]*batchNode
	// nodes and links are the free tails of the slabs that nodes and their
	// towers are carved from: a node costs no allocation of its own, and
	// its tower only the levels it has (one in 3/4 of nodes), where a node
	// with a full array of links took 176 bytes.
	nodes []batchNode
	links []*batchNode
	// The head's tower and the first slabs are part of the index: a
	// transaction's batch of a few keys (a single-row INSERT writes its
	// row and its index entries) makes the index with one allocation.
	headLinks [batchMaxHeight]*batchNode
	nodes0    [4]batchNode
	links0    [8]*batchNode
}

const batchMaxHeight = 20

type batchNode struct {
	off int // entry offset in Batch.data
	ord uint32
	// klen and kpos locate the user key, at data[off+kpos:][:klen], so that
	// comparisons during add and seeks do not decode the entry.
	klen uint32
	kpos uint8
	// pfx is the key's first 8 bytes, big-endian, zero-padded: unequal
	// prefixes order two keys without reading either from the buffer,
	// whose entries lie far apart (a cache miss each).
	pfx  uint64
	next []*batchNode
}

// keyPrefix returns the first 8 bytes of key as a big-endian number,
// zero-padded. Two keys whose prefixes differ compare as their prefixes do;
// equal prefixes decide nothing.
func keyPrefix(key []byte) uint64 {
	if len(key) >= 8 {
		return binary.BigEndian.Uint64(key)
	}
	var b [8]byte
	copy(b[:], key)
	return binary.BigEndian.Uint64(b[:])
}

// batchSlab is how many nodes a slab of an index holds at most; the first
// slabs are smaller, so that an index of a few entries stays small.
const batchSlab = 512

func newBatchIndex(b *Batch) *batchIndex {
	x := &batchIndex{b: b, height: 1}
	x.head.next = x.headLinks[:]
	x.nodes, x.links = x.nodes0[:0], x.links0[:0]
	x.rng.Seed(uint64(len(b.data)), 0x5eed)
	return x
}

func (x *batchIndex) keyOf(n *batchNode) []byte {
	start := n.off + int(n.kpos)
	return x.data[start : start+int(n.klen)]
}

// less reports whether node n sorts before (ukey, ord); pfx is
// keyPrefix(ukey).
func (x *batchIndex) less(n *batchNode, ukey []byte, pfx uint64, ord uint32) bool {
	if n.pfx != pfx {
		return n.pfx < pfx
	}
	c := bytes.Compare(x.keyOf(n), ukey)
	return c < 0 || (c == 0 && n.ord > ord)
}

// newNode carves a node with a tower of height h from the slabs.
func (x *batchIndex) newNode(h int) *batchNode {
	if len(x.nodes) == cap(x.nodes) {
		x.nodes = make([]batchNode, 0, min(max(2*cap(x.nodes), 16), batchSlab))
	}
	x.nodes = x.nodes[:len(x.nodes)+1]
	n := &x.nodes[len(x.nodes)-1]
	if cap(x.links)-len(x.links) < h {
		x.links = make([]*batchNode, 0, max(min(max(2*cap(x.links), 32), 2*batchSlab), h))
	}
	l := len(x.links)
	x.links = x.links[:l+h]
	n.next = x.links[l : l+h : l+h]
	return n
}

func (x *batchIndex) add(off int, ord uint32) {
	x.data = x.b.data
	_, key, _, _, _ := decodeEntry(x.data[off:])
	h := 1
	for h < batchMaxHeight && x.rng.Uint64()&3 == 0 {
		h++
	}
	n := x.newNode(h)
	n.off, n.ord = off, ord
	n.klen = uint32(len(key))
	n.kpos = uint8(1 + (bits.Len64(uint64(len(key))|1)+6)/7) // kind, uvarint length
	n.pfx = keyPrefix(key)
	cur := &x.head
	for lvl := x.height - 1; lvl >= 0; lvl-- {
		for cur.next[lvl] != nil && x.less(cur.next[lvl], key, n.pfx, ord) {
			cur = cur.next[lvl]
		}
		x.prev[lvl] = cur
	}
	if h > x.height {
		for lvl := x.height; lvl < h; lvl++ {
			x.prev[lvl] = &x.head
		}
		x.height = h
	}
	for lvl := 0; lvl < h; lvl++ {
		n.next[lvl] = x.prev[lvl].next[lvl]
		x.prev[lvl].next[lvl] = n
	}
}

// seekGE returns the first node at or after internal search key (ukey,
// trailer).
func (x *batchIndex) seekGE(ukey []byte, trailer uint64) *batchNode {
	cur := &x.head
	pfx := keyPrefix(ukey)
	for lvl := x.height - 1; lvl >= 0; lvl-- {
		for cur.next[lvl] != nil && x.nodeBefore(cur.next[lvl], ukey, pfx, trailer) {
			cur = cur.next[lvl]
		}
	}
	return cur.next[0]
}

// seekLT returns the last node before the search key, or nil.
func (x *batchIndex) seekLT(ukey []byte, trailer uint64) *batchNode {
	cur := &x.head
	pfx := keyPrefix(ukey)
	for lvl := x.height - 1; lvl >= 0; lvl-- {
		for cur.next[lvl] != nil && x.nodeBefore(cur.next[lvl], ukey, pfx, trailer) {
			cur = cur.next[lvl]
		}
	}
	if cur == &x.head {
		return nil
	}
	return cur
}

// nodeBefore reports whether node n sorts strictly before the internal key
// (ukey, trailer); pfx is keyPrefix(ukey).
func (x *batchIndex) nodeBefore(n *batchNode, ukey []byte, pfx uint64, trailer uint64) bool {
	if n.pfx != pfx {
		return n.pfx < pfx
	}
	c := bytes.Compare(x.keyOf(n), ukey)
	if c != 0 {
		return c < 0
	}
	kind, _, _, _, _ := decodeEntry(x.data[n.off:])
	return base.MakeTrailer(seqBatchBit|base.SeqNum(n.ord), kind) > trailer
}

// last returns the last node, or nil.
func (x *batchIndex) last() *batchNode {
	cur := &x.head
	for lvl := x.height - 1; lvl >= 0; lvl-- {
		for cur.next[lvl] != nil {
			cur = cur.next[lvl]
		}
	}
	if cur == &x.head {
		return nil
	}
	return cur
}

// batchIter iterates over the point entries of an indexed batch with an
// ordinal below limit (the batch as it was when the iterator was made),
// implementing base.InternalIterator.
type batchIter struct {
	x     *batchIndex
	limit uint32
	n     *batchNode
	kv    base.KV
	key   []byte
}

var _ base.InternalIterator = (*batchIter)(nil)

func (it *batchIter) visible(n *batchNode) bool { return n.ord < it.limit }

func (it *batchIter) load() *base.KV {
	if it.n == nil {
		return nil
	}
	kind, key, value, _, _ := decodeEntry(it.x.data[it.n.off:])
	it.key = base.AppendKey(it.key[:0], key, seqBatchBit|base.SeqNum(it.n.ord), kind)
	it.kv = base.KV{K: it.key, V: value}
	return &it.kv
}

func (it *batchIter) skipForward() *base.KV {
	for it.n != nil && !it.visible(it.n) {
		it.n = it.n.next[0]
	}
	return it.load()
}

func (it *batchIter) skipBackward() *base.KV {
	for it.n != nil && !it.visible(it.n) {
		it.prevNode()
	}
	return it.load()
}

// prevNode moves to the previous node by searching from the head: batches
// are small and reverse scans of them rare, so the index keeps no back links.
func (it *batchIter) prevNode() {
	kind, key, _, _, _ := decodeEntry(it.x.data[it.n.off:])
	it.n = it.x.seekLT(key, base.MakeTrailer(seqBatchBit|base.SeqNum(it.n.ord), kind))
}

func (it *batchIter) SeekGE(k []byte) *base.KV {
	it.n = it.x.seekGE(base.UserKey(k), base.Trailer(k))
	return it.skipForward()
}

func (it *batchIter) SeekLT(k []byte) *base.KV {
	it.n = it.x.seekLT(base.UserKey(k), base.Trailer(k))
	return it.skipBackward()
}

func (it *batchIter) First() *base.KV {
	it.n = it.x.head.next[0]
	return it.skipForward()
}

func (it *batchIter) Last() *base.KV {
	it.n = it.x.last()
	return it.skipBackward()
}

func (it *batchIter) Next() *base.KV {
	if it.n == nil {
		return nil
	}
	it.n = it.n.next[0]
	return it.skipForward()
}

func (it *batchIter) Prev() *base.KV {
	if it.n == nil {
		return nil
	}
	it.prevNode()
	return it.skipBackward()
}

func (it *batchIter) Error() error { return nil }
func (it *batchIter) Close() error { it.n = nil; return nil }
