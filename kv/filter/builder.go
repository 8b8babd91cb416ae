package filter

// Builder collects the key hashes of one filter and serializes the filter.
// Make one with Policy.NewBuilder and reuse it: Finish resets it and keeps
// its memory (the hash list and, for Ribbon, the banding scratch) for the
// next filter, so that steady-state building allocates nothing beyond the
// caller's output buffer.
//
// A Builder is not safe for concurrent use.
type Builder struct {
	cfg    config
	hashes []uint64
	band   banding
}

// Add adds the hash of a key (see Hash). Consecutive duplicates, as sorted
// input with several versions of one key produces, are skipped;
// non-consecutive duplicates are harmless.
func (b *Builder) Add(hash uint64) {
	if b.cfg.typ == None {
		return
	}
	if n := len(b.hashes); n > 0 && b.hashes[n-1] == hash {
		return
	}
	b.hashes = append(b.hashes, hash)
}

// Len returns the number of hashes added since the last Finish or Reset,
// not counting skipped duplicates. It is always 0 for the None policy.
func (b *Builder) Len() int { return len(b.hashes) }

// Reset drops the hashes added so far, keeping the builder's memory.
func (b *Builder) Reset() { b.hashes = b.hashes[:0] }

// Finish appends the serialized filter over the hashes added since the last
// Finish to dst, returns the extended slice and resets the builder. With no
// hashes it appends an empty filter, which answers "no" to every query.
// Under the None policy it appends nothing.
//
// A Ribbon policy writes a Bloom filter instead when that is smaller (a few
// hundred keys or fewer), when the filter would exceed 950 million keys,
// and in the practically impossible case that all 256 construction seeds
// fail; readers tell the two apart by the filter's trailer.
func (b *Builder) Finish(dst []byte) []byte {
	defer b.Reset()
	switch b.cfg.typ {
	case None:
		return dst
	case Ribbon:
		if len(b.hashes) == 0 {
			return append(dst, ribbonMarker, 0, 0, 0, 0)
		}
		if out, ok := b.appendRibbon(dst, b.hashes); ok {
			return out
		}
	}
	return appendBloom(dst, b.hashes, b.cfg.millibitsPerKey, b.cfg.bloomProbes)
}
