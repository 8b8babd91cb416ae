// Package wal frames the records of the engine's write-ahead logs and
// manifests. Both are append-only streams of records; what a record holds is
// the engine's business. This package makes sure that a record read back is
// exactly a record that was written, whole, and tells a log that ends in a
// crash (normal) from a log damaged before its end (an error).
//
// # Format
//
// A log is a sequence of 32 KiB blocks; the last block may be short. Chunks
// never cross a block boundary, so a reader can always find the next chunk at
// the next block, and a damaged byte costs at most the records of one block
// plus a record crossing into it. A record is one full chunk or a first
// chunk, middle chunks and a last chunk. When fewer than 15 bytes (a header)
// remain in a block, they are zero padding:
//
//	  block 0 (32 KiB)                        block 1 (32 KiB)          block 2 ...
//	+-------+-------+-----------------------+---------------------------+--------+---+-----
//	| FULL  | FULL  | FIRST (to block end)  | MIDDLE (the whole block)  | LAST   |FUL|pad
//	|  A    |  B    |  C begins             |  C continues              | C ends | D |
//	+-------+-------+-----------------------+---------------------------+--------+---+-----
//
// Every chunk has a 15-byte header, integers little-endian:
//
//	+----------+--------+------+----------+---------------+-------------------+
//	| checksum | length | type | log ID   | sync distance | payload           |
//	| 4 bytes  | 2      | 1    | 4 bytes  | 4 bytes       | length bytes      |
//	+----------+--------+------+----------+---------------+-------------------+
//	0          4        6      7          11              15
//
// The fields:
//
//   - checksum: CRC-32C (Castagnoli) over bytes 4 to the end of the payload,
//     that is every header field after the checksum and the payload, started
//     from a value derived from the chunk's file offset; stored masked
//     (rotated right 15 bits, plus 0xa282ead8). A damaged length, type, ID or
//     payload, or a chunk found at an offset it was not written at, fails it.
//   - type: 1 full, 2 first, 3 middle, 4 last. 0 is never written, so zeroed
//     space never reads as a chunk.
//   - log ID: chosen by the writer (random, or the log's file number) and
//     the same in every chunk of a log. After a crash a file can hold stale
//     bytes that are not this log's; with the ID in every checksummed header
//     they can never be read as part of it.
//   - sync distance: how many bytes lay between the end of the durable part
//     of the log (the bytes covered by the last successful Sync) and this
//     chunk when it was framed, or 0xffffffff when that does not fit. Each
//     intact chunk thereby proves that the log up to offset-distance was on
//     stable storage before the chunk was written. The reader uses it to
//     tell a torn tail from corruption (below).
//
// The constants in format.go encode this layout and are part of the durable
// format.
//
// # Torn tails and corruption
//
// A crash loses the bytes written since the last Sync, or some of them, in
// any order: a file system may persist a later page and not an earlier one,
// leaving a zeroed hole. The reader therefore classifies damage by whether
// it could be the product of a crash:
//
//   - The log ends cleanly when the file ends at a record boundary (or in
//     the padding after one). Next returns io.EOF and TornTail reports the
//     file's size, torn false.
//   - A damaged chunk (checksum mismatch, impossible length or type, zeroed
//     header, another log's ID), or a record whose chunks stop at the end of
//     the file, is a torn tail when no intact chunk after it proves that it
//     was already durable: no later chunk has a sync distance reaching back
//     past the damage. Next returns io.EOF and TornTail reports where the
//     intact log ends (the start of the first lost record) and what was
//     found there. Intact chunks after the damage that were written before it
//     was durable are dropped with it: they were never promised durable, and
//     replaying them over a gap would not be a state the log ever had. A
//     crash at any point of writing, with any part of the unsynced bytes
//     lost, therefore reads as a torn tail, never as an error.
//   - A damaged chunk followed by an intact chunk that proves the damaged
//     bytes were durable is corruption of durable data. So is an intact
//     chunk out of sequence (a middle or last chunk with no first, a new
//     record before the last one ended), which no crash produces. Next
//     returns an error for which base.IsCorruption holds, naming the file,
//     the offset and what was expected and found. SkipCorrupt then resumes
//     at the first record starting in a later block and reports the bytes
//     dropped, for a user who asks to salvage what remains.
//
// Damage to bytes that were synced, with nothing written after the Sync, is
// indistinguishable from a torn write and reads as a torn tail; the offset
// TornTail reports lets the engine compare it with what it knows was synced.
// A log written without any Sync has no durable part, so any damage ends it.
//
// Next never returns a record that was not written whole, and never panics,
// whatever the bytes.
//
// # Concurrency
//
// Neither a Writer nor a Reader is safe for concurrent use: each belongs to
// one goroutine at a time (the engine serializes writes to a log). Different
// Readers may read the same file concurrently. A Writer hands its buffer to
// the file only in Flush, Sync and Close, in one Write each; WriteRecord
// touches memory only. After a failed Write or Sync a Writer returns that
// failure from every call: the engine must never believe that a failed fsync
// was retried successfully.
//
// # Example
//
//	w := wal.NewWriter(f, "000042.log")
//	off, err := w.WriteRecord(batch) // framed in memory
//	err = w.Sync()                   // one Write, then fsync
//
//	r := wal.NewReader(f, size, "000042.log")
//	for {
//		rec, err := r.Next()
//		if err == io.EOF {
//			break
//		}
//		if err != nil {
//			return err // corruption or I/O
//		}
//		apply(rec)
//	}
//	if off, reason, torn := r.TornTail(); torn {
//		log.Printf("log ends at %d: %s", off, reason)
//	}
package wal
