package filter

import "github.com/cespare/xxhash/v2"

// Hash returns the 64-bit hash from which filters are built and queried:
// XXH64 of key with seed 0. It is part of the durable format: a filter
// written with one hash function answers wrongly for keys hashed with
// another, so this definition never changes.
//
// Compute it once per key and share it: MultiGet hashes each key once and
// probes the filter of every table with the same value.
func Hash(key []byte) uint64 {
	return xxhash.Sum64(key)
}
