// Package planner chooses how a lookup reaches the engine. Its input is
// what the SQL layer knows about one index access: the encoded byte ranges
// of the lookup (each an exact point or a range, with an estimate of the
// bytes it covers), the index (primary or secondary, unique or not,
// covering or not) and hints (reverse order, a row limit). Its output is a
// Plan: one of the engine's read paths with its parameters, and, for a
// secondary index that does not cover the query, a second step that fetches
// the rows by primary key.
//
// The rules, in order (Choose; thresholds are Options):
//
//  1. No range: Empty. Naive mode: every range through a plain iterator
//     without readahead (Scans) and a Get per row for the fetch step, the
//     baseline the other plans are measured against.
//  2. Every range an exact point on a unique key: one point is a Get; more
//     are a MultiGet, sorted, in batches of MultiGetBatch.
//  3. One range over the whole index: a FullScan with readahead
//     FullScanReadahead and async I/O, unless a small Limit makes readahead
//     a waste.
//  4. One range: a Range through an iterator whose readahead follows the
//     range's estimated size: automatic (the engine's own, which starts
//     after two adjacent block reads) for a short or unknown range or a
//     small Limit; explicit readahead (a quarter of the estimate, clamped to
//     [MinReadahead, MaxReadahead]) with async I/O for a range of at least
//     LongRangeBytes. Reverse scans use automatic readahead (readahead
//     never runs backwards).
//  5. Several ranges (points on a non-unique index, prefixes, disjoint
//     intervals): a MultiScan that prepares up to MultiScanChunk ranges at a
//     time, reading each range's blocks with coalesced I/O before iterating;
//     reverse order falls back to Scans.
//
// A non-covering secondary index adds Fetch: the primary keys the index
// yields are looked up with MultiGet in batches of FetchBatch, in the order
// the index returned them.
//
// The package knows byte ranges, not SQL: it imports neither the engine nor
// go-mysql-server, so its rules are tested on their own and the SQL layer
// only translates.
//
// Everything here is a pure function of its inputs and safe for concurrent
// use.
package planner
