package table

import "errors"

// Errors returned by this package. Corruption of a file's bytes is not among
// them: it is reported as a *base.CorruptionError (base.IsCorruption).
var (
	// ErrClosed is returned by Writer methods called after Close, and by
	// Reader methods called after Close.
	ErrClosed = errors.New("table: closed")
	// ErrOutOfOrder is returned (wrapped, naming both keys) by Writer.Add
	// when a key does not sort strictly after the previous one.
	ErrOutOfOrder = errors.New("table: keys out of order")
	// ErrInvalidKey is returned (wrapped) by Writer.Add for a key that is not
	// an internal key or has a kind that cannot be stored as a point entry,
	// and by Writer.AddRangeDelete for an empty or inverted range.
	ErrInvalidKey = errors.New("table: invalid key")
	// ErrNotFinished is returned by Writer.Metadata before a successful
	// Close.
	ErrNotFinished = errors.New("table: writer not closed")
	// ErrInvalidRanges is returned (wrapped, naming the range) by
	// Reader.PrepareScan for ranges that are unsorted, overlapping, empty,
	// or without a start, or without an end before the last.
	ErrInvalidRanges = errors.New("table: invalid scan ranges")
	// ErrBatchMismatch is returned (wrapped) by Reader.MultiGet when keys,
	// hashes and results differ in length.
	ErrBatchMismatch = errors.New("table: MultiGet slices differ in length")
)
