// Package leveliter iterates over one level of the LSM tree: a sorted run of
// files whose key ranges do not overlap, read as one sorted stream.
//
// An [Iter] holds at most one file iterator open at a time. It opens a
// file's iterator, through a callback, only when the scan or a seek reaches
// that file, and closes it as soon as the scan moves on to another file, so
// a table cache can bound the number of open files however many levels and
// iterators are live. A scan that ends at a bound inside a file leaves that
// file open until a seek elsewhere or Close, so that a seek after SetBounds
// can use it again. The package knows nothing of manifests or tables: a
// level is a []File, each with its smallest and largest internal keys and an
// opaque Data field for the engine (a file number, a *FileMetadata...).
//
// # Invariants
//
// The files passed to an Iter are sorted and non-overlapping under
// [base.Compare]: Smallest <= Largest within a file, and one file's Largest
// sorts before the next file's Smallest. Each file's iterator yields only
// entries within [Smallest, Largest]. A file's Largest may be the sentinel
// of a range tombstone's exclusive end ([base.MakeRangeDeleteSentinel]):
// the file then holds no point entry of that user key. [CheckFiles] verifies
// all of this; the manifest guarantees it, so Iter does not check it again.
//
// The Iter enforces its user-key bounds [lower, upper) itself: it never
// opens a file that lies wholly outside them, and it compares keys with a
// bound only inside the first and last files of the range, the only ones
// that can straddle a bound. The file iterators are told the bounds too (see
// [OpenFunc]) so they can stop reading ahead at them, but need not apply
// them.
//
// # Concurrency
//
// An Iter belongs to one goroutine at a time. The files slice and the bound
// slices must not change while an Iter uses them.
//
// # Usage
//
//	it := leveliter.New(files, openTable, lower, upper)
//	for kv := it.First(); kv != nil; kv = it.Next() {
//		f := it.CurrentFile() // the file kv came from
//		...
//	}
//	if err := it.Close(); err != nil { ... }
package leveliter
