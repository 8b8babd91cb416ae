// Package prefetch sits between a table reader and its file and turns many
// small block reads into few large ones: readahead for iterators (automatic
// or explicit, synchronous or double-buffered in the background), a pool of
// goroutines for background reads, and the coalescing of block reads for
// MultiScan.
//
// # Pieces
//
//   - [Readahead] is the state machine that decides how far to read ahead.
//     Automatic mode watches block reads (cache hits included): after two
//     reads that are exactly adjacent (the previous block's offset plus its
//     length, trailer included, equals the next offset), the third read
//     that misses reads InitialReadahead bytes past its block, and every
//     further read that misses doubles the window up to MaxReadahead. A read
//     that is not adjacent resets it. Reads served from a window do not grow
//     it. Explicit mode reads a fixed window past every miss, from the
//     first.
//   - [Buffer] is one iterator's prefetch buffer over one file. Without
//     async I/O it has one region: a miss reads the block and the window
//     past it, keeping the bytes of the old region that the new one still
//     needs ("refit"). With async I/O it has two regions (slots) that hold
//     one window between them: while the iterator consumes one, the other
//     is read in the background, on an io_uring the Buffer borrows from its
//     [Pool] where the system has one, else on the pool's goroutines (see
//     ring.go for why the ring comes first); a slot the iterator has moved
//     past is refilled at once; a block that straddles the two is copied
//     into an overlap buffer, and the drained slot is refilled before the
//     buffer waits for the second one. In every mode, a Buffer over a
//     mapped file whose reads come from the page cache (the [Latency]
//     gauge of its Pool says fast) reads nothing ahead for a block that
//     [ReadAt] would copy from the mapping (up to [MaxMappedRead]), and
//     leaves the block to its caller, unless Options.ForceReadahead.
//   - [Pool] runs background reads on a fixed set of goroutines, and lends
//     io_uring instances (package uring) to Buffers, one each.
//   - [Coalesce] merges the block extents of a MultiScan into few reads.
//
// # Invariants
//
//   - Reads never extend past Options.Limit (the end of the data blocks, or
//     of the block holding an iterator's upper bound), except that a read
//     of a file with direct I/O is rounded out to its alignment, and that a
//     block the caller asks for is always read whole.
//   - With direct I/O (File.Alignment() > 1) every read the package issues
//     has an aligned offset, length and buffer address.
//   - Files are immutable: a slot whose read completed holds the file's
//     bytes at its offset for as long as it is filled. A slot's memory is
//     never written by two reads: a slot whose read is abandoned (the
//     iterator moved away) is reused only after that read completes, and a
//     completion whose generation is not the slot's current one is dropped.
//   - Slot states move free -> inFlight -> filled -> free, or inFlight ->
//     abandoned -> free, only on the goroutine that owns the Buffer; a pool
//     goroutine (or the kernel, for a read on the Buffer's ring) only fills
//     the request's bytes and signals its completion. A Buffer's Close
//     collects every read still on its ring before the ring, and the
//     slots' memory, go back to their pools.
//
// # Concurrency
//
// A Buffer belongs to one goroutine (the iterator's) and is not safe for
// concurrent use. A Pool is safe for concurrent use. Whoever creates a Pool
// owns its goroutines and stops them with Close, which waits for every
// queued and running read; a Buffer's Close waits for that Buffer's reads.
// Close every Buffer (every iterator) before closing the file it reads.
//
// # Statistics
//
// Counts go to the stats.Sink in Options: prefetch.bytes (read by
// readahead, background reads included), prefetch.bytes.used (handed to the
// reader), prefetch.bytes.wasted (read ahead and never handed out, counted
// when a region is dropped or the buffer closes), prefetch.hits (reads
// served from bytes already buffered), async.read.count/bytes (reads done
// in the background; async.read.ring of them on a ring), async.wait.count/micros (times the reader waited for one),
// async.read.abandoned, and file.read.count/bytes for every read issued.
//
// # Example
//
//	pool := prefetch.NewPool(32) // one per database
//	defer pool.Close()
//
//	var b prefetch.Buffer
//	b.Init(f, prefetch.Options{AsyncIO: true, Pool: pool, Limit: dataEnd, Stats: sink})
//	defer b.Close()
//	for _, blk := range blocks {
//		p, ok, err := b.Read(blk.Off, int(blk.Len), prefetch.Forward)
//		if err != nil { ... }
//		if !ok { p = readItMyself(blk) } // readahead not engaged yet
//		use(p) // valid until the next call on b
//	}
package prefetch
