// Package table reads and writes the engine's sorted string tables: the
// immutable, block-based files that memtable flushes and compactions
// produce.
//
// # Format
//
// A table holds point entries (internal keys with values, sorted by
// base.Compare) in data blocks, and range tombstones in a block of their
// own. After the data blocks come an optional whole-file filter over the
// point entries' user keys, the index (one entry per data block: a
// separator key, the block's handle and its first key), the range
// deletions, the properties, the metaindex naming those blocks, and a
// fixed-size footer:
//
//	[data 0][data 1]...[data n-1][filter][index][range dels][properties][metaindex][footer]
//
// Every block carries a 5-byte trailer: its compression (none, Snappy,
// zstd) and a masked CRC-32C that also depends on the block's offset and on
// a random per-file value stored in the footer, so a block read from the
// wrong place fails verification. format.go, block.go, index.go,
// properties.go, rangedel.go and footer.go describe the bytes; all of it is
// durable format version 1.
//
// # Invariants
//
//   - Keys in data blocks strictly increase; the writer refuses anything
//     else. Data blocks tile [0, DataEnd) with no gaps, in key order.
//   - Index entry n has last(n) <= sep(n) < first(n+1), and first(n) is the
//     first key of block n. The reader checks this, and that footer,
//     properties, index and metaindex agree, before it answers anything.
//   - Every byte of a file is covered by a checksum (a block's trailer or
//     the footer's), so corruption is reported as a base.CorruptionError
//     naming the file and offset, never as a wrong answer or a panic.
//   - A data block with one entry is legal: entries larger than the block
//     size get a block of their own.
//
// # Reading
//
// NewReader reads the file's tail (usually in one read), verifies it and
// keeps the index, filter, properties and range tombstones in memory. Data
// blocks are read on demand through the block cache (kv/cache), keyed by
// (namespace, file number, block offset), with hits, misses and reads
// counted in kv/stats. Without a cache, an iterator reads into buffers of
// its own, reused from block to block.
//
// Iter is a two-level iterator (index position, then BlockIter) that
// implements base.InternalIterator, keeps the current block pinned, and
// reuses it when a seek lands in the same block. Get probes the filter,
// then reads the one block that can hold the key. BlocksInRange and
// ApproximateOffset answer from the index alone.
//
// # Concurrency
//
// A Reader is safe for concurrent use by many iterators and lookups; an
// Iter, a BlockIter and a Writer are not. Slices returned by iterators are
// valid until the next positioning call.
//
// # Example
//
//	w := table.NewWriter(f, "000007.sst", table.WriterOptions{Compression: table.SnappyCompression})
//	for _, kv := range sorted {
//		if err := w.Add(kv.K, kv.V); err != nil { ... }
//	}
//	if err := w.Close(); err != nil { ... }
//
//	r, err := table.NewReader(rf, "000007.sst", table.ReaderOptions{Cache: c, CacheNS: ns, FileNum: 7})
//	it := r.NewIter(table.IterOptions{Lower: []byte("a"), Upper: []byte("m")})
//	for kv := it.First(); kv != nil; kv = it.Next() { ... }
//	err = it.Close()
package table
