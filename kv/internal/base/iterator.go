package base

// KV is one entry produced by an internal iterator: an internal key and its
// value. Both slices belong to the iterator and stay valid only until the
// next positioning call or Close; a caller that keeps them copies them.
type KV struct {
	K []byte // internal key
	V []byte
}

// UserKey returns the user-key part of the entry's key.
func (kv *KV) UserKey() []byte { return UserKey(kv.K) }

// Kind returns the entry's kind.
func (kv *KV) Kind() Kind { return KindOfKey(kv.K) }

// Seq returns the entry's sequence number.
func (kv *KV) Seq() SeqNum { return Seq(kv.K) }

// InternalIterator is the iterator every layer of the engine implements
// (block, table, level, memtable, merging) and composes.
//
// Positioning methods return the entry the iterator is now on, or nil when it
// is exhausted in that direction or failed; Error tells the two apart. Search
// keys are internal keys: SeekGE(k) positions on the first entry >= k and
// SeekLT(k) on the last entry < k, under [Compare]. To seek by user key use
// [MakeSearchKey] (SeekGE) or a search key with SeqNumMax and KindMax
// (SeekLT: every entry of a smaller user key sorts below it).
//
// After nil, the iterator may be repositioned by any seek, First or Last.
// Next after a nil from a backward move (and Prev after a nil from a forward
// move) is not required to work; callers reseek instead. An error is sticky
// until the next successful seek, First or Last.
//
// The returned *KV and the slices in it are owned by the iterator and valid
// only until the next positioning call or Close.
//
// Close releases resources (block cache handles, prefetch buffers) and
// returns the first error the iterator met, if Error did not already.
// An InternalIterator is not safe for concurrent use.
type InternalIterator interface {
	SeekGE(key []byte) *KV
	SeekLT(key []byte) *KV
	First() *KV
	Last() *KV
	Next() *KV
	Prev() *KV
	Error() error
	Close() error
}

// BoundsSetter is an internal iterator whose user-key bounds [lower,
// upper) can change between seeks; SetBounds leaves it unpositioned. A
// level iterator and a table iterator are; a merging iterator passes new
// bounds on to its children that are.
type BoundsSetter interface {
	SetBounds(lower, upper []byte)
}

// BoundsApplier is an internal iterator that applies the user-key bounds
// it was given (at open or by SetBounds) itself, when AppliesBounds says
// so: no forward move returns an entry at or past upper, no backward move
// one below lower. A caller that gave it its bounds then compares none of
// its entries with them again, which a scan would otherwise do per entry
// in every layer.
type BoundsApplier interface {
	AppliesBounds() bool
}

// ForwardSeeker is an internal iterator that can move forward to a key
// ahead of its current entry for less than a seek from scratch costs: the
// skip over a run of versions of one user key, which a hot key piles up
// between flushes and compactions.
type ForwardSeeker interface {
	// NextGE positions on the first entry >= key and returns it, or nil, as
	// SeekGE does.
	// REQUIRES: the last positioning call moved forward and returned an
	// entry that sorts before key.
	NextGE(key []byte) *KV
}
