// Package planner chooses how a lookup reaches the engine. Its input is
// what the SQL layer knows about one index access: the encoded byte ranges
// of the lookup (each an exact point or a range, with an estimate of the
// bytes it covers), the index (primary or secondary, unique or not,
// covering or not) and hints (reverse order, a row limit, a lookup join's
// probe, whether what it reads can change under the statement). Its output
// is a Plan: one of the engine's read paths with its parameters, and, for a
// secondary index that does not cover the query, a second step that
// fetches the rows by primary key. The plan is what runs, as it runs: the
// SQL layer executes it without changing it, and Plan.String is what
// EXPLAIN shows and what Strata_last_access reports.
//
// The rules, in order (Choose; thresholds are Options):
//
//  1. No range: Empty, no I/O. Naive mode: Scans that open a fresh plain
//     iterator bounded by each range, with the engine's automatic
//     readahead (what an iterator gets when nothing is asked), and for a
//     secondary index a Get per row, covering or not: the baseline the
//     other plans are measured against.
//  2. Every range an exact point on a unique key: one point is a Get; more
//     are a MultiGet in batches of MultiGetBatch keys (the engine sorts
//     each batch; rows come out in the lookup's order).
//  3. One range over the whole index: a FullScan. Reverse, a probe, or a
//     Limit of at most SmallLimit rows: automatic readahead (the engine's
//     own, which starts after two adjacent block reads). An estimate of at
//     most ShortRangeBytes: readahead off; below LongRangeBytes: automatic.
//     Otherwise (large or unknown): explicit readahead of FullScanReadahead
//     with async I/O (and from NoFillBytes, or of unknown size, without
//     filling the block cache), deferred until SmallLimit rows have been returned
//     when the Limit is unknown, so that an ORDER BY ... LIMIT that stops
//     early (go-mysql-server does not pass LIMIT down) reads no more than
//     it needs.
//  4. One range: a Range through one iterator. Reverse: automatic readahead
//     (readahead never runs backwards). An estimate of at least
//     LongRangeBytes, unless a probe or a small Limit: explicit readahead
//     (a quarter of the estimate rounded up to 64 KiB, clamped to
//     [MinReadahead, MaxReadahead]) with async I/O; from NoFillBytes its
//     blocks are not added to the block cache: such a scan reads them
//     once, and each would cost a copy and evict a block that point reads
//     want (RocksDB's advice for scans: fill_cache=false). An estimate of at most ShortRangeBytes
//     (a few blocks): readahead off. Otherwise, or unknown: automatic.
//  5. Several ranges (points on a non-unique index, prefixes, disjoint
//     intervals): a MultiScan that prepares up to MultiScanChunk ranges at
//     a time, reading each range's blocks with coalesced I/O before
//     iterating; it asks for async reads when the ranges' estimated bytes
//     reach MultiScanAsyncBytes (default 0: always), and the engine then
//     issues the reads in the background, all at once, when there are
//     several and reads have lately been reaching the device (page-cache
//     reads are made in turn: handing them to other goroutines would cost
//     more). Reverse order, probes, and ranges that cannot be prepared
//     together (unbounded, out of order or overlapping: go-mysql-server
//     does not sort every collection of ranges): Scans, one iterator
//     sought from range to range, with automatic readahead.
//  6. A reader that can change under the statement (Hints.Mutable: the
//     SQL layer's transaction that has written reads its own writes,
//     which the next statement boundary or a rollback changes) is read at
//     once, never lazily: the points of a MultiGet in one batch of every
//     key, several ranges by Scans instead of a MultiScan, a deferred
//     readahead from the first row, and the Fetch by one iterator sought
//     to each primary key (Fetch Scans), made when the plan starts.
//
// A non-covering secondary index adds Fetch: the primary keys the index
// yields are looked up with MultiGet in batches of FetchBatch, in the order
// the index returned them (a Get for a single-point plan; an iterator sought
// to each key for a reader that can change, rule 6). A covering one
// (Index.Covering: its entries hold every column the query needs) reads
// its rows from the entries, and the plan says "covering".
//
// The thresholds can be set per store (Options, sqlstore.Options.Access),
// per session (SET strata_planner = 'multiget_batch=64,long_range=1MiB',
// parsed by ParseOptions) and per benchmark (sqlbench sql -planner).
//
// Estimates come from the caller; an estimate of 0 means unknown, and
// unknown sizes get the engine's automatic readahead, never explicit
// readahead.
//
// The package knows byte ranges, not SQL: it imports neither the engine nor
// go-mysql-server, so its rules are tested on their own and the SQL layer
// only translates.
//
// Everything here is a pure function of its inputs and safe for concurrent
// use.
package planner
