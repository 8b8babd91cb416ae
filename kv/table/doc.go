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
//     properties, index and metaindex agree, and that the file number
//     recorded in the properties is the one it was opened for, before it
//     answers anything.
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
// The read path has three batch mechanisms (see kv/prefetch for the I/O):
//
//   - Readahead (IterOptions.ReadaheadSize, the automatic knobs, AsyncIO):
//     each Iter has its own prefetch buffer over the reader's file, which
//     turns a forward scan's block reads into few large reads, possibly
//     double-buffered in the background on ReaderOptions.Pool. It never
//     reads past the block holding the upper bound, and reads nothing
//     ahead while the page cache serves a mapped file.
//   - MultiGet: a sorted batch of keys, filter probes batched, one block
//     lookup per distinct block, values copied into one arena.
//   - PrepareScan: the blocks of many ranges collected from the index,
//     looked up in the cache, the misses coalesced into few reads, all
//     pinned until the PreparedScan closes; iterators given the scan
//     (IterOptions.Prepared) serve its ranges without any read.
//
// # Concurrency
//
// A Reader is safe for concurrent use by many iterators and lookups; an
// Iter, a BlockIter and a Writer are not. A PreparedScan is safe for
// concurrent use. Slices returned by iterators are valid until the next
// positioning call. An Iter's background reads run on the pool of
// ReaderOptions (owned and closed by whoever made it, after the readers);
// Iter.Close waits for them, so close iterators before their Reader, and a
// PreparedScan's iterators before the PreparedScan.
//
// # Example
//
//	w := table.NewWriter(f, "000007.sst", table.WriterOptions{Compression: table.SnappyCompression})
//	for _, kv := range sorted {
//		if err := w.Add(kv.K, kv.V); err != nil { ... }
//	}
//	if err := w.Close(); err != nil { ... }
//
//	r, err := table.NewReader(rf, "000007.sst", table.ReaderOptions{Cache: c, CacheNS: ns, FileNum: 7, Pool: pool})
//	it := r.NewIter(table.IterOptions{Lower: []byte("a"), Upper: []byte("m"), ReadaheadSize: 1 << 20, AsyncIO: true})
//	for kv := it.First(); kv != nil; kv = it.Next() { ... }
//	err = it.Close()
//
//	res := make([]table.GetResult, len(keys))
//	arena, err := r.MultiGet(keys, hashes, seq, res, arena[:0], nil)
//
//	p, err := r.PrepareScan(ctx, ranges, table.PrepareOptions{Async: true})
//	it = p.NewIter(table.IterOptions{})
//	for _, rg := range ranges {
//		for kv := it.SeekGE(base.MakeSearchKey(nil, rg.Start, base.SeqNumMax)); kv != nil; kv = it.Next() { ... }
//	}
//	it.Close()
//	p.Close()
package table
