// Package merging merges the output of several internal iterators into one
// sorted stream.
//
// The engine reads from many sorted sources at once: the memtables, each L0
// file and one level iterator per deeper level. An [Iter] presents their
// union as a single [base.InternalIterator], in [base.Compare] order, moving
// in either direction. It does not interpret entries: shadowing of older
// versions, point and range tombstones and snapshot visibility are the
// business of the layer above, which sees every version of every key exactly
// as the children hold them.
//
// # How it works
//
// Every child that is positioned on an entry sits in a binary heap ordered by
// its current key: a min-heap while moving forward, a max-heap while moving
// backward. The top of the heap is the merged position. Next advances the
// top child and sifts it down; Prev does the same with the max-heap. Neither
// allocates.
//
// # Invariants
//
// Let P be the merged position. Moving forward, every child's current entry
// is its first entry >= P and everything before it is < P; moving backward,
// every child's current entry is its last entry <= P and everything after it
// is > P. A child with no such entry is exhausted and left out of the heap.
// Switching direction restores the opposite invariant by stepping each
// positioned child once in the new direction (its neighbour on the far side
// of P) and repositioning each exhausted child with First or Last; no child
// is sought and no key is copied.
//
// Entries are ordered by (internal key, child index): when two children hold
// the same internal key, which a correct engine never produces, the child
// passed first comes first moving forward and last moving backward, so the
// order is deterministic and direction switches stay exact.
//
// # Errors
//
// When a child returns nil and reports an error, the merged iterator stops:
// the positioning call returns nil, Error returns the child's error, and Next
// and Prev keep returning nil until a seek, First or Last repositions every
// child. Close closes every child and returns the first error met.
//
// # Concurrency
//
// An Iter, like its children, belongs to one goroutine at a time.
//
// # Usage
//
//	var m merging.Iter // or m := merging.New(mem, l0a, l0b, level1)
//	m.Init(children...)
//	for kv := m.SeekGE(base.MakeSearchKey(nil, k, base.SeqNumMax)); kv != nil; kv = m.Next() {
//		...
//	}
//	if err := m.Close(); err != nil { ... }
package merging
