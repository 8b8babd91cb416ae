package kv

import (
	"sync"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/internal/merging"
	"github.com/strata-db/strata/kv/table"
)

// iterMem is the memory an Iterator needs besides itself: the merging
// iterator and its children's slice, the list its constructor gathers the
// children in, and the key buffers. An Iterator takes one from
// iterMemPool when it is made and gives it back at Close, so that a short
// scan (a secondary-index lookup, a point's range) does not allocate them
// again: about eight allocations per iterator otherwise, each a few dozen
// bytes. Pebble pools its iterators for the same reason.
//
// The Iterator itself is not pooled: a second Close, or a method called
// after Close, then finds an Iterator that says it is closed rather than
// one another reader is using.
type iterMem struct {
	merge  merging.Iter
	iters  []base.InternalIterator
	tio    table.IterOptions // the table iterators' options
	keyBuf []byte
	valBuf []byte
	search []byte
}

var iterMemPool = sync.Pool{New: func() any { return new(iterMem) }}

// maxPooledBuf is the largest key or value buffer kept in the pool: a
// scan that met one large value should not pin it for every later one.
const maxPooledBuf = 64 << 10

// putIterMem gives m back to the pool, with the buffers of the Iterator
// that used it.
func putIterMem(m *iterMem, keyBuf, valBuf, search []byte) {
	m.merge.Init() // drops the closed children
	m.tio = table.IterOptions{}
	clear(m.iters[:cap(m.iters)])
	m.iters = m.iters[:0]
	m.keyBuf, m.valBuf, m.search = pooledBuf(keyBuf), pooledBuf(valBuf), pooledBuf(search)
	iterMemPool.Put(m)
}

func pooledBuf(b []byte) []byte {
	if cap(b) > maxPooledBuf {
		return nil
	}
	return b[:0]
}

// closedIter is what a closed Iterator reads in place of the merge it gave
// back: nothing.
type closedIter struct{}

func (closedIter) SeekGE([]byte) *base.KV { return nil }
func (closedIter) SeekLT([]byte) *base.KV { return nil }
func (closedIter) First() *base.KV        { return nil }
func (closedIter) Last() *base.KV         { return nil }
func (closedIter) Next() *base.KV         { return nil }
func (closedIter) Prev() *base.KV         { return nil }
func (closedIter) Error() error           { return nil }
func (closedIter) Close() error           { return nil }
