package base

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// SeqNum is a sequence number. Every committed write gets the next one; a
// snapshot is the sequence number of the last write it sees.
type SeqNum uint64

// SeqNumMax is the largest sequence number that fits in a trailer. It is
// never assigned to a write: search keys and range-deletion sentinels use it
// to sort before every real entry of a user key.
const SeqNumMax SeqNum = 1<<56 - 1

// Kind says what an entry is. Part of the on-disk format; never change the
// values.
type Kind uint8

const (
	// KindDelete is a point tombstone.
	KindDelete Kind = 0
	// KindSet is a value.
	KindSet Kind = 1
	// KindRangeDelete marks a range tombstone. Range tombstones live in their
	// own block of an SST and their own list in a memtable; the kind appears
	// in point-key positions only in file bounds, as the exclusive end
	// sentinel of a tombstone (see [MakeRangeDeleteSentinel]).
	KindRangeDelete Kind = 2

	// KindMax sorts before every other kind at the same sequence number. It
	// is used only in search keys and never stored.
	KindMax Kind = 0xff
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case KindDelete:
		return "DEL"
	case KindSet:
		return "SET"
	case KindRangeDelete:
		return "RANGEDEL"
	case KindMax:
		return "MAX"
	}
	return fmt.Sprintf("KIND(%d)", uint8(k))
}

// TrailerLen is the length of the trailer that ends every internal key.
const TrailerLen = 8

// MakeTrailer packs a sequence number and a kind.
func MakeTrailer(seq SeqNum, k Kind) uint64 { return uint64(seq)<<8 | uint64(k) }

// SeqOf returns the sequence number of a trailer.
func SeqOf(trailer uint64) SeqNum { return SeqNum(trailer >> 8) }

// KindOf returns the kind of a trailer.
func KindOf(trailer uint64) Kind { return Kind(trailer) }

// AppendKey appends the internal key for (ukey, seq, k) to dst.
func AppendKey(dst, ukey []byte, seq SeqNum, k Kind) []byte {
	dst = append(dst, ukey...)
	return binary.LittleEndian.AppendUint64(dst, MakeTrailer(seq, k))
}

// MakeSearchKey returns the internal key that sorts before every entry of
// ukey visible at seq: a SeekGE to it lands on the newest version of ukey
// with a sequence number <= seq (or on a later user key).
func MakeSearchKey(dst, ukey []byte, seq SeqNum) []byte {
	return AppendKey(dst, ukey, seq, KindMax)
}

// MakeRangeDeleteSentinel returns the internal key used as the exclusive end
// of a range tombstone [start, end) in file bounds: it sorts before every
// real entry of end, so a file whose largest key is the sentinel holds no
// entry of end itself.
func MakeRangeDeleteSentinel(dst, end []byte) []byte {
	return AppendKey(dst, end, SeqNumMax, KindRangeDelete)
}

// Valid reports whether ik is long enough to hold a trailer.
func Valid(ik []byte) bool { return len(ik) >= TrailerLen }

// UserKey returns the user-key part of ik. REQUIRES: Valid(ik).
func UserKey(ik []byte) []byte { return ik[:len(ik)-TrailerLen] }

// Trailer returns the trailer of ik. REQUIRES: Valid(ik).
func Trailer(ik []byte) uint64 { return binary.LittleEndian.Uint64(ik[len(ik)-TrailerLen:]) }

// Seq returns the sequence number of ik. REQUIRES: Valid(ik).
func Seq(ik []byte) SeqNum { return SeqOf(Trailer(ik)) }

// KindOfKey returns the kind of ik. REQUIRES: Valid(ik).
func KindOfKey(ik []byte) Kind { return KindOf(Trailer(ik)) }

// IsRangeDeleteSentinel reports whether ik is the exclusive-end sentinel of a
// range tombstone.
func IsRangeDeleteSentinel(ik []byte) bool {
	return Valid(ik) && Trailer(ik) == MakeTrailer(SeqNumMax, KindRangeDelete)
}

// Compare orders internal keys: user key ascending, then trailer descending.
// Both keys must be valid internal keys.
func Compare(a, b []byte) int {
	if c := bytes.Compare(UserKey(a), UserKey(b)); c != 0 {
		return c
	}
	ta, tb := Trailer(a), Trailer(b)
	switch {
	case ta > tb:
		return -1
	case ta < tb:
		return 1
	}
	return 0
}

// FormatKey renders an internal key for errors and test output, as
// "ukey#seq,KIND".
func FormatKey(ik []byte) string {
	if !Valid(ik) {
		return fmt.Sprintf("invalid(%q)", ik)
	}
	t := Trailer(ik)
	return fmt.Sprintf("%q#%d,%s", UserKey(ik), SeqOf(t), KindOf(t))
}

// Separator appends to dst an internal key k with a <= k < b that is as short
// as the user keys allow, for index blocks: the user key is shortened to the
// first byte where a and b differ, incremented, when that still sorts below b.
// When nothing shorter works it appends a itself.
// REQUIRES: Compare(a, b) < 0.
func Separator(dst, a, b []byte) []byte {
	ua, ub := UserKey(a), UserKey(b)
	n := 0
	for n < len(ua) && n < len(ub) && ua[n] == ub[n] {
		n++
	}
	if n < len(ua) && n < len(ub) {
		if c := ua[n]; c < 0xff && c+1 < ub[n] {
			// a's prefix through n, with byte n incremented, is a shorter user
			// key strictly between ua and ub. Give it the largest trailer so it
			// sorts before every real entry of that user key.
			dst = append(dst, ua[:n+1]...)
			dst[len(dst)-1]++
			return AppendKey(dst, nil, SeqNumMax, KindMax)
		}
	}
	return append(dst, a...)
}

// Successor appends to dst an internal key k >= a that is as short as
// possible, for the index entry of a file's last block: the first byte of the
// user key that can be incremented is, and the rest is cut.
func Successor(dst, a []byte) []byte {
	ua := UserKey(a)
	for i, c := range ua {
		if c != 0xff {
			dst = append(dst, ua[:i+1]...)
			dst[len(dst)-1]++
			return AppendKey(dst, nil, SeqNumMax, KindMax)
		}
	}
	return append(dst, a...)
}
