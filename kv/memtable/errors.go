package memtable

import "errors"

var (
	// ErrArenaFull is returned by Add and AddRangeDelete when the arena has no
	// room left for the entry. Nothing is consumed and nothing is inserted.
	// It cannot happen to an entry covered by a successful [Memtable.Reserve]
	// when every write to the memtable is covered by one.
	ErrArenaFull = errors.New("memtable: arena full")

	// ErrExists is returned by Add and AddRangeDelete when an entry with the
	// same internal key (user key, sequence number and kind) is already in
	// the list. The memtable is left unchanged apart from the arena bytes the
	// rejected entry took.
	ErrExists = errors.New("memtable: entry exists")

	// ErrInvalid is returned for arguments no memtable can hold: a sequence
	// number at or above base.SeqNumMax, a kind that has no place in the
	// list (KindMax, or KindRangeDelete in Add), an empty range tombstone, or
	// a search key too short to be an internal key.
	ErrInvalid = errors.New("memtable: invalid argument")
)
