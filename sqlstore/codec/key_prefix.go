package codec

import "github.com/dolthub/go-mysql-server/sql"

// AppendStringPrefixKey appends to dst the bytes that begin the ascending
// key of every value of the string type typ that begins with prefix, as
// LIKE 'prefix%' matches it: rune by rune, by the collation's weights. The
// keys of those values are the keys from the returned bytes up to their
// successor (PrefixSuccessor), in every collation, which is what a range
// over LIKE 'prefix%' reads; no pair of string bounds compared under the
// collation gives that range, since under PAD SPACE 'a\t' sorts before 'a'
// and a string's first rune after the prefix may weigh anything.
//
// A string's key (key_string.go) is its runes' tokens, then an end: the
// terminator, after the tokens of the padding under PAD SPACE. The tokens
// of a string are those of its beginning followed by more, once trailing
// runes that weigh as a space are dropped from that beginning (they are
// tokens only when a heavier or lighter rune follows). So the key of the
// prefix without its end is the beginning sought, a superset of the
// matches when the prefix ends in spaces. ok is false for the types whose
// keys are not keyed by collation: binary strings and every other kind.
func AppendStringPrefixKey(dst []byte, typ sql.Type, prefix string) ([]byte, bool) {
	if kindOf(typ) != kindString {
		return dst, false
	}
	style, err := stringStyle(typ)
	if err != nil {
		return dst, false
	}
	n := len(dst)
	out, err := appendStringKey(dst, typ, prefix)
	if err != nil {
		return dst[:n], false
	}
	end := 2 // escapeByte, terminatorByte
	switch style {
	case stylePaddedCodePoint:
		end += 2 // ' ', runToEnd
	case stylePadded:
		space := uint32(collationOf(typ).Sorter()(' ')) ^ (1 << 31)
		var buf [8]byte
		end += len(appendEscapedWeight(buf[:0], space)) + 1 // runToEnd
	}
	return out[:len(out)-end], true
}
