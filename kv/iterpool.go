package kv

import (
	"sync"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/internal/leveliter"
	"github.com/strata-db/strata/kv/internal/manifest"
	"github.com/strata-db/strata/kv/internal/merging"
	"github.com/strata-db/strata/kv/memtable"
	"github.com/strata-db/strata/kv/table"
)

// iterMem is the memory an Iterator needs besides itself: the merging
// iterator and its children's slice, the list its constructor gathers the
// children in, the memtables' and the levels' iterators with the levels'
// table opener and bound keys, L0's overlapping files, and the key
// buffers. An Iterator takes one from iterMemPool when it is made and
// gives it back at Close, so that a short scan (a secondary-index lookup,
// a point's range) does not allocate them again: about fifteen
// allocations per iterator over a memtable, L0 and a lower level
// otherwise, each a few dozen bytes. Pebble pools its iterators for the
// same reason.
//
// The Iterator itself is not pooled: a second Close, or a method called
// after Close, then finds an Iterator that says it is closed rather than
// one another reader is using. Every part is reset when it goes back
// (putIterMem), so that the pool pins no memtable, version or table.
type iterMem struct {
	merge  merging.Iter
	iters  []base.InternalIterator
	tio    table.IterOptions // the table iterators' options
	keyBuf []byte
	valBuf []byte
	search []byte

	// mems are the memtables' iterators, newest first; a slice, as the
	// number of immutable memtables varies.
	mems []memtable.Iter
	// levels[l] is level l's iterator (L1 and below), used when
	// levelsUsed has bit l: its Init keeps the buffers of its bound keys.
	levels     [manifest.NumLevels]leveliter.Iter
	levelsUsed uint8
	// l0 gathers the L0 files an iterator reads.
	l0 []*manifest.FileMetadata
	// opener opens the levels' tables; open is its method value, made once
	// per iterMem rather than a closure per level per iterator.
	opener tableOpener
	open   leveliter.OpenFunc
}

// tableOpener opens the tables of an Iterator's levels with the options
// its iterMem holds.
type tableOpener struct {
	d   *DB
	tio *table.IterOptions
}

func (o *tableOpener) open(f *leveliter.File, lower, upper []byte) (base.InternalIterator, error) {
	return o.d.openTableIter(f.Data.(*manifest.FileMetadata).FileNum, lower, upper, *o.tio)
}

func newIterMem() any {
	m := new(iterMem)
	m.opener.tio = &m.tio
	m.open = m.opener.open
	return m
}

var iterMemPool = sync.Pool{New: newIterMem}

// memIters returns n reset memtable iterators of m.
func (m *iterMem) memIters(n int) []memtable.Iter {
	if cap(m.mems) < n {
		m.mems = make([]memtable.Iter, n)
	}
	return m.mems[:n]
}

// level returns m's iterator of level l, initialized over files, which
// opens its tables through d with m.tio.
func (m *iterMem) level(l int, d *DB, files []leveliter.File, lower, upper []byte) *leveliter.Iter {
	m.opener.d = d
	m.levelsUsed |= 1 << l
	li := &m.levels[l]
	li.Init(files, m.open, lower, upper)
	return li
}

// maxPooledBuf is the largest key or value buffer kept in the pool: a
// scan that met one large value should not pin it for every later one.
const maxPooledBuf = 64 << 10

// putIterMem gives m back to the pool, with the buffers of the Iterator
// that used it.
func putIterMem(m *iterMem, keyBuf, valBuf, search []byte) {
	m.merge.Init() // drops the closed children
	m.tio = table.IterOptions{}
	m.opener.d = nil
	for l := range m.levels {
		if m.levelsUsed&(1<<l) != 0 {
			// Closed by the merge: Init drops the files and bounds and
			// keeps the key buffers.
			m.levels[l].Init(nil, nil, nil, nil)
		}
	}
	m.levelsUsed = 0
	clear(m.mems) // the memtables' lists
	clear(m.l0[:cap(m.l0)])
	m.l0 = m.l0[:0]
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
