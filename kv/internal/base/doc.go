// Package base holds what every layer of the engine agrees on: the internal
// key format, the ordering of internal keys, the internal iterator contract
// and the corruption error.
//
// # Internal keys
//
// The engine never stores a user key alone. Every entry is keyed by an
// internal key: the user key followed by an 8-byte little-endian trailer
// holding the sequence number and the kind of the entry:
//
//	+---------------------+-------------------------------------+
//	| user key (n bytes)  | trailer: seq<<8 | kind (8 bytes, LE)|
//	+---------------------+-------------------------------------+
//
// Internal keys order by user key ascending (bytewise), then by trailer
// descending, so that the newest version of a user key comes first and a
// search key built with [SeqNumMax] and [KindMax] sorts before every stored
// version of its user key. This layout is part of the on-disk format of WAL
// batches, SSTs and the manifest; it never changes.
//
// # Concurrency
//
// Everything here is either a pure function or an immutable value and is safe
// for concurrent use. Internal iterators are not: one goroutine at a time.
package base
