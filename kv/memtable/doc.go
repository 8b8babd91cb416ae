// Package memtable is the engine's in-memory write buffer: the sorted set of
// recent writes that reads consult before any SST, and that a flush turns
// into an L0 table.
//
// A [Memtable] holds two lock-free skiplists in one preallocated arena: point
// entries (sets and point tombstones), keyed by internal key (user key plus
// the seq<<8|kind trailer, base.AppendKey layout) in base.Compare order, and
// range tombstones, keyed by (start, seq, KindRangeDelete) with the
// exclusive end key as value. Nodes, keys and values are all carved out of
// the arena, and nodes link to each other by 32-bit arena offsets, so adding
// an entry costs no Go heap allocation and the garbage collector sees one
// byte slice however many entries there are. The node layout is described in
// arena.go; it is an in-memory layout, not part of any durable format.
//
// # Space accounting
//
// The arena never grows. Before applying a batch the engine calls
// [Memtable.Reserve] with the sum of [EntrySize] over the batch's entries; a
// true result guarantees the batch's Adds cannot run out of space, a false
// one means the memtable is full and the engine rotates to a new one before
// writing anything, so no batch is ever half applied. EntrySize assumes the
// tallest tower, so reservations overstate what entries actually take by up
// to 44 bytes each; that is the price of a guarantee that needs no give-back
// step. Arena bytes are never freed: the engine drops the whole memtable
// once it is flushed and no reader references it.
//
// # Invariants
//
//   - Every internal key appears at most once: the engine gives every entry a
//     distinct sequence number, and an Add of a key already present fails
//     with [ErrExists] without touching the list.
//   - A node becomes reachable only once its key, value and every link a
//     reader can follow from it are written; readers see each entry either
//     not at all or complete.
//   - Nothing is ever removed or changed once reachable, so keys and values
//     handed out alias the arena and stay valid for the memtable's life.
//
// # Concurrency
//
// A Memtable is safe for concurrent use without locks: any number of
// goroutines may Reserve, Add, AddRangeDelete, Get and iterate at once.
// Inserts link nodes with compare-and-swap on their links and retry only the
// level whose neighbourhood changed; readers follow links with atomic loads
// and never wait. An [Iter] belongs to one goroutine at a time, and so does
// an [Inserter], which adds entries given in key order (a sorted batch)
// searching each from where the last went instead of from the head.
//
// # Usage
//
//	m := memtable.New(64 << 20)
//	if !m.Reserve(memtable.EntrySize(len(k), len(v))) {
//		// rotate: m is full
//	}
//	if err := m.Add(k, seq, base.KindSet, v); err != nil { ... }
//	v, kind, ok := m.Get(k, snapshotSeq)
//	it := m.NewIter()
//	for kv := it.SeekGE(base.MakeSearchKey(nil, k, snapshotSeq)); kv != nil; kv = it.Next() { ... }
package memtable
