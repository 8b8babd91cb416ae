package memtable

import (
	"fmt"

	"github.com/strata-db/strata/kv/internal/base"
)

var _ base.InternalIterator = (*Iter)(nil)

// Iter walks one skiplist of a memtable. It implements
// base.InternalIterator: seeks take internal keys and cost O(log n)
// comparisons; First, Last, Next and Prev cost one link each (Prev follows
// the level-0 back links). No positioning call allocates.
//
// The returned *KV is reused by every positioning call, but the key and
// value slices in it alias the arena, not a buffer of the iterator: they
// stay valid, unchanged, for as long as the engine holds the memtable. The
// caller must not modify them.
//
// An Iter never blocks writers and is not blocked by them. Entries added
// while it is positioned may or may not be seen; an entry it sees is
// complete. Next after a nil from Prev and Prev after a nil from Next both
// work (they return the first and the last entry). An Iter is not safe for
// concurrent use.
type Iter struct {
	list *skiplist
	nd   uint32 // current node; head or tail when exhausted
	kv   base.KV
	err  error
}

// init points it at list, before the first entry.
func (it *Iter) init(list *skiplist) {
	*it = Iter{list: list, nd: list.head}
}

// SeekGE positions on the first entry whose internal key is >= key and
// returns it, or nil when there is none. key must be an internal key (see
// base.MakeSearchKey); a shorter one sets Error and returns nil.
func (it *Iter) SeekGE(key []byte) *base.KV {
	if !it.checkKey(key) {
		return nil
	}
	_, it.nd = it.list.seek(base.UserKey(key), base.Trailer(key))
	return it.load()
}

// NextGE positions on the first entry whose internal key is >= key and
// returns it, or nil when there is none, searching forward from the current
// entry (base.ForwardSeeker): O(log d) links for an entry d nodes ahead,
// where SeekGE costs O(log n). When the iterator is not on an entry before
// key it seeks as SeekGE does.
func (it *Iter) NextGE(key []byte) *base.KV {
	if it.err != nil || it.nd == it.list.head || it.nd == it.list.tail || !base.Valid(key) {
		return it.SeekGE(key)
	}
	ukey, trailer := base.UserKey(key), base.Trailer(key)
	if it.list.cmp(ukey, trailer, it.nd) <= 0 {
		return it.SeekGE(key)
	}
	it.nd = it.list.seekFrom(it.nd, ukey, trailer)
	return it.load()
}

// SeekLT positions on the last entry whose internal key is < key and returns
// it, or nil when there is none. key must be an internal key; a shorter one
// sets Error and returns nil.
func (it *Iter) SeekLT(key []byte) *base.KV {
	if !it.checkKey(key) {
		return nil
	}
	it.nd, _ = it.list.seek(base.UserKey(key), base.Trailer(key))
	return it.load()
}

// First positions on the first entry and returns it, or nil when the list is
// empty.
func (it *Iter) First() *base.KV {
	it.err = nil
	it.nd = it.list.arena.next(it.list.head, 0).Load()
	return it.load()
}

// Last positions on the last entry and returns it, or nil when the list is
// empty.
func (it *Iter) Last() *base.KV {
	it.err = nil
	it.nd = it.list.arena.prev(it.list.tail).Load()
	return it.load()
}

// Next moves to the following entry and returns it, or nil at the end. After
// an error it returns nil.
func (it *Iter) Next() *base.KV {
	if it.err != nil || it.nd == it.list.tail {
		it.nd = it.list.tail
		return nil
	}
	it.nd = it.list.arena.next(it.nd, 0).Load()
	return it.load()
}

// Prev moves to the preceding entry and returns it, or nil at the start.
// After an error it returns nil.
func (it *Iter) Prev() *base.KV {
	if it.err != nil || it.nd == it.list.head {
		it.nd = it.list.head
		return nil
	}
	it.nd = it.list.arena.prev(it.nd).Load()
	return it.load()
}

// Error returns the error that made the last positioning call return nil, if
// any. Only a malformed search key causes one: memory cannot be corrupt in
// ways the iterator could detect.
func (it *Iter) Error() error { return it.err }

// Close returns Error's value and leaves the iterator unpositioned. The
// memtable is not affected; an Iter holds no resources of its own.
func (it *Iter) Close() error {
	err := it.err
	if it.list != nil {
		it.init(it.list)
	}
	return err
}

// checkKey clears a previous error and reports whether key can be searched
// for; when it cannot it records why and leaves the iterator exhausted.
func (it *Iter) checkKey(key []byte) bool {
	if base.Valid(key) {
		it.err = nil
		return true
	}
	it.err = fmt.Errorf("%w: search key %q is shorter than a %d-byte trailer", ErrInvalid, key, base.TrailerLen)
	it.nd = it.list.head
	it.kv = base.KV{}
	return false
}

// load fills it.kv from the current node and returns it, or returns nil when
// the iterator is on a sentinel.
func (it *Iter) load() *base.KV {
	if it.nd == it.list.head || it.nd == it.list.tail {
		it.kv = base.KV{}
		return nil
	}
	a := it.list.arena
	it.kv.K = a.key(it.nd)
	it.kv.V = a.value(it.nd)
	return &it.kv
}
