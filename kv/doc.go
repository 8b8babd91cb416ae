// Package kv is Strata's storage engine: an ordered key-value store built as
// a log-structured merge tree in one directory. Keys and values are byte
// slices; keys are ordered bytewise. The SQL layer (sqlstore) keeps every
// table, index and catalog record in one kv keyspace, but kv knows nothing of
// SQL and can be used on its own.
//
// # Structure
//
// A write goes to the write-ahead log and then to the mutable memtable, a
// concurrent skiplist. A full memtable becomes immutable and is flushed to a
// level-0 table (an SST file: data blocks, a Bloom or Ribbon filter, an
// index, range tombstones and properties, each block checksummed). A
// background goroutine compacts tables down a leveled tree: level 0 by file
// count, deeper levels by size against targets ten times apart, dropping
// versions no snapshot can see. The MANIFEST records which tables form each
// level; Open replays it and every log written since, so a reopened database
// holds every commit that reached a synced log or a table. A block cache
// (CLOCK eviction, shareable between databases) holds data blocks, and a table
// cache bounds the open files.
//
// # Reading
//
// Reads never take the database lock: they reference the current memtables
// and tables and read them lock-free, so flushes and compactions never block
// them.
//
//   - Get looks a key up through the memtables and one table per level,
//     asking each table's filter first.
//   - NewIter returns an Iterator over the live keys between optional bounds,
//     in either direction. Iterators read ahead automatically once they read
//     adjacent blocks (8 KiB doubling to 256 KiB); ReadOptions.ReadaheadSize
//     asks for a fixed readahead for scans known to be long, AsyncIO reads the
//     next region in the background (on an io_uring where Linux offers one),
//     and DontFillCache keeps a one-off scan out of the block cache.
//   - MultiGet looks up many keys in sorted batches of MultiGetMaxBatch: a
//     table's filter is probed for the whole batch, and keys in one data
//     block share one block read.
//   - NewMultiScan prepares a scan of an ordered list of ranges: it finds
//     every data block the ranges need, reads the missing ones with as few
//     reads as it can (nearby blocks share one read; with AsyncIO all at
//     once) and pins them, so that iterating the ranges reads no file.
//
// Table files are also mapped read-only; while the page cache serves them,
// small reads are copies from the mapping instead of system calls (see
// Options.DisableMmapReads). EstimateRange and ApproximateSize size a key
// range without reading data blocks.
//
// # Guarantees
//
//   - A Batch commits atomically: after a crash either all of its writes are
//     visible or none is. Batch.CommitIfNoConflict commits only if no key the
//     batch writes (or guards with Batch.Guard) was committed after a given
//     snapshot, which gives transactions snapshot isolation.
//   - A commit with Sync (WriteOptions.Sync) returns only once the log is on
//     stable storage and survives a machine crash; commits waiting together
//     share one sync. A commit with NoSync is handed to the operating system
//     in the background and may be lost in a crash, but never partly: the
//     log's torn tail is dropped at Open. Close flushes the memtable, so a
//     cleanly closed database does not depend on its log.
//   - A Snapshot, an Iterator and a MultiScan each read one consistent state:
//     the commits made before they were created.
//   - Damage found by a read or by Open is an error naming the file
//     (IsCorruption), unless Options.WALRecovery says to skip corrupt log
//     records. After a failed log write, flush or compaction, writes fail
//     until Resume succeeds; reads keep working.
//
// # Use
//
// Open a directory (created if missing), write with Set, Delete, DeleteRange
// or a Batch, read with Get, MultiGet, NewIter or NewMultiScan, and Close the
// database when done. Values returned by Get and MultiGet belong to the
// caller; an Iterator's Key and Value are valid only until it moves, and every
// Iterator, MultiScan, Snapshot and Batch must be closed. A DB is safe for
// concurrent use; Batch, Iterator and MultiScan are not.
//
// Metrics and Stats report the tree's shape and the engine's counters
// (file reads, cache hits, filter probes, flushes, compactions, stalls).
//
// NewEngine gives a DB the storage contract of package storage, through
// which the SQL layer reads and writes: transactions of a snapshot and an
// indexed batch, committed with Batch.CommitIfNoConflict.
package kv
