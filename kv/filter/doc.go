// Package filter builds and queries the per-table key filters of the
// engine: a cache-line-local Bloom filter and a Standard128 Ribbon filter.
// A filter answers "is this key possibly in the table?" with no false
// negatives and a small, configurable rate of false positives, so that a
// point lookup skips the tables that cannot hold its key without reading
// any data block.
//
// Both filters are built from and queried with 64-bit key hashes computed
// by [Hash] (XXH64). Callers hash each key once and share the hash between
// the filters of every table they probe.
//
// # Choosing a filter
//
// Bloom (about 10 bits per key for 1% false positives) is the fastest to
// build and to query: every probe of a key falls in one 64-byte cache line.
// Ribbon reaches the same false-positive rate with about 30% less memory
// (about 7 bits per key for 1%), at the price of a build about three times
// slower and a query about three times slower on hot data. On cold data,
// where a query costs its cache misses, the two are close, and batched
// queries ([Reader.MayContainBatch]) hide most of the misses of either
// (docs/benchmarks.md has the figures). Ribbon suits large, long-lived
// tables (the bottom levels of the tree), Bloom small, short-lived ones.
// [Policy] selects one; for Ribbon, BitsPerKey is Bloom-equivalent (10
// targets the 0.95% of a 10 bits/key Bloom filter) and FPRate sets the
// target rate directly.
//
// # Ribbon: standard, not homogeneous
//
// A Ribbon filter is the solution of a linear system over GF(2), one
// equation per key: the key's 128-bit coefficient row, placed at a hashed
// start slot, times the solution must give the key's result bits. This
// package implements the standard variant, in which the result bits come
// from the key hash. The homogeneous variant instead requires all result
// bits to be zero and fills unconstrained slots with random bits; it never
// fails to build, but its false-positive rate rises above 2^-columns as the
// system fills up, quickly so near capacity, and it therefore needs more
// slots (memory) for a given rate. The standard variant's rate is exactly
// 2^-columns per key whenever construction succeeds, which makes sizing for
// a target rate exact; the price is that construction can fail for a given
// hash seed. The slot count is chosen so that one seed fails with
// probability about 1 in 20 (3.6% more slots than keys at 100,000 keys), the
// builder tries up to 256 seeds (about 1.05 tries on average), and in the
// practically impossible case that all fail it writes a Bloom filter.
//
// # Format
//
// Every filter is a payload followed by a 5-byte trailer whose first byte
// names the layout:
//
//	+------------------+--------+-------------------+
//	| payload          | marker | 4 bytes of layout |
//	+------------------+--------+-------------------+
//	  marker 0xFF: cache-local Bloom   (see bloom.go)
//	  marker 0xFE: Standard128 Ribbon  (see ribbon.go)
//
// A filter with an empty payload holds no keys and answers "no" to every
// query. A marker, sub-format or reserved field this version does not know
// decodes as a filter that answers "maybe" to every query: that is always
// correct, only slower, so a future layout never causes a missed key.
// The hash function, both layouts and the trailer are part of the durable
// format: they never change. testdata/golden freezes example filters.
//
// # Invariants
//
//   - No false negatives: a Reader decoded from Builder.Finish output answers
//     true for every hash added to the builder.
//   - MayContainBatch answers exactly as MayContain, key by key.
//   - Decode never panics: malformed data returns an error marked as
//     corruption (kv.IsCorruption), and any Reader it returns can be queried
//     safely.
//   - MayContain, MayContainBatch and Decode do not allocate; a warmed-up
//     Builder allocates only when the output buffer must grow.
//
// # Concurrency
//
// A Reader is an immutable value and safe for concurrent use; it aliases the
// bytes it was decoded from, which must not change while it is in use. A
// Builder is not safe for concurrent use; use one per goroutine.
//
// # Example
//
//	b := filter.Policy{Type: filter.Ribbon, BitsPerKey: 10}.NewBuilder()
//	for _, k := range keys {
//		b.Add(filter.Hash(k))
//	}
//	block := b.Finish(nil) // written to the table's filter block
//
//	r, err := filter.Decode(block)
//	if err != nil {
//		return err
//	}
//	if !r.MayContain(filter.Hash(key)) {
//		// key is certainly not in the table
//	}
package filter
