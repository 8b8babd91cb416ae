package codec

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// String keys.
//
// Keys order strings as MySQL 8 compares them under their collation: rune
// by rune by the weight the collation's Sorter gives each rune, and then,
// under a NO PAD collation (binary, the utf8mb4_0900_* ones), a shorter
// string first when one is a prefix of the other ('a' < 'a '), while under
// a PAD SPACE collation (utf8mb4_general_ci, utf8mb4_bin and the other
// older ones) the shorter string counts as padded with spaces, so 'a' and
// 'a  ' are equal and 'a' sorts after 'a\t' (a tab weighs less than a
// space). GMS's own comparison knows no PAD SPACE; mysqlcompat corrects
// it. Runes are read with utf8.DecodeRuneInString for every character set
// but binary, which reads bytes; an invalid UTF-8 byte is the rune U+FFFD.
// Keys take one of three forms, chosen by collation (the choice is part of
// the durable format):
//
//   - flagBytes, for binary strings and for utf8mb4_0900_bin, the NO PAD
//     collation whose weights rise strictly with the code point: the bytes
//     themselves, since UTF-8 byte order is code point order. A string that
//     is not valid UTF-8 is written rune by rune, each invalid byte as the
//     UTF-8 of U+FFFD, which is what the comparison saw. These keys decode.
//   - flagWeights, for the other NO PAD collations: each rune's weight as 4
//     bytes big-endian with the sign bit flipped, so that equal weights give
//     equal keys ('a' and 'A' under utf8mb4_0900_ai_ci).
//   - flagPaddedBytes, for the PAD SPACE collations whose weights rise
//     strictly with the code point (utf8mb4_bin, utf16_bin, utf32_bin):
//     as flagPadded below, each rune that is not a space as its UTF-8 bytes
//     (an invalid byte as U+FFFD's) and each inner run of spaces as 0x20,
//     the run's class byte and its length. A rune's first byte is below
//     0x20 exactly when the rune is, and UTF-8 byte order is code point
//     order, so the tokens compare as those of flagPadded do, in about a
//     byte per character.
//   - flagPadded, for the other PAD SPACE collations: the string without its
//     trailing runes that weigh as a space, as tokens. A rune that does not
//     weigh as a space is its 4-byte weight, as in flagWeights. A run of k
//     runes that do, followed by a rune r, is the space's 4-byte weight,
//     then 0x01 and k (4 bytes) when r weighs less than a space, or 0x03
//     and ^k when more; the end of the string is the space's weight and
//     0x02. Padding both strings with spaces, a run followed by a lighter
//     rune sorts before the end, a longer such run later; a run followed by
//     a heavier rune after it, a longer such run earlier; and a single rune
//     against a run is decided by its weight against the space's, which
//     its first 4 bytes settle.
//
// Weight keys do not decode: the row value keeps the original string. Their
// bytes depend on GMS's weight tables, so a change of those tables changes
// the keys.
//
// All are escaped and terminated so that a prefix sorts first: a 0x00 byte
// is written 0x00 0xff, and the string ends with 0x00 0x01.
const (
	escapeByte     byte = 0x00 // starts an escape or the terminator
	escapedZero    byte = 0xff // after escapeByte: a literal 0x00
	terminatorByte byte = 0x01 // after escapeByte: end of string
)

// stringKeyStyle says how a collation's strings are keyed.
type stringKeyStyle uint8

const (
	styleRawBytes        stringKeyStyle = iota // binary: bytes as they are
	styleCodePoint                             // code-point-ordered collations: valid UTF-8
	styleWeights                               // other NO PAD collations: rune weights
	stylePadded                                // PAD SPACE collations: weights and space runs
	stylePaddedCodePoint                       // PAD SPACE code-point collations: UTF-8 and space runs
)

// collationStyle returns how c's strings are keyed. The Sorters of
// utf8mb4_0900_bin, utf8mb4_bin, utf16_bin and utf32_bin are strictly
// increasing over all runes, so their order and equality are those of the
// code points. This choice is part of the durable format.
func collationStyle(c sql.CollationID) stringKeyStyle {
	switch {
	case c == sql.Collation_binary:
		return styleRawBytes
	case c == sql.Collation_utf8mb4_bin, c == sql.Collation_utf16_bin, c == sql.Collation_utf32_bin:
		return stylePaddedCodePoint
	case c.PadAttribute() == "PAD SPACE":
		return stylePadded
	case c == sql.Collation_utf8mb4_0900_bin:
		return styleCodePoint
	}
	return styleWeights
}

// trimChar returns s without its trailing spaces when typ is CHAR: MySQL
// gives a CHAR value back without them (unless PAD_CHAR_TO_FULL_LENGTH),
// so rows store it so and keys are those of the value read back.
func trimChar(typ sql.Type, s string) string {
	if typ.Type() == sqltypes.Char && len(s) > 0 && s[len(s)-1] == ' ' {
		return strings.TrimRight(s, " ")
	}
	return s
}

// PadSpace reports whether typ is a string type whose collation is PAD
// SPACE: trailing spaces do not count in its comparisons.
func PadSpace(typ sql.Type) bool {
	st, ok := typ.(sql.StringType)
	if !ok || types.IsBinaryType(typ) {
		return false
	}
	style := collationStyle(st.Collation())
	return style == stylePadded || style == stylePaddedCodePoint
}

func collationOf(typ sql.Type) sql.CollationID {
	if st, ok := typ.(sql.StringType); ok {
		return st.Collation()
	}
	return sql.Collation_Unspecified
}

// stringStyle returns the key style of a CHAR, VARCHAR or TEXT type, or
// ErrUnsupportedType when its collation has no Sorter.
func stringStyle(typ sql.Type) (stringKeyStyle, error) {
	c := collationOf(typ)
	style := collationStyle(c)
	if (style == styleWeights || style == stylePadded) && c.Sorter() == nil {
		return style, unsupportedType(typ, fmt.Sprintf("keys (collation %s has no sort order)", c))
	}
	return style, nil
}

func appendStringKey(dst []byte, typ sql.Type, v any) ([]byte, error) {
	s, err := stringOf(typ, v)
	if err != nil {
		return dst, err
	}
	s = trimChar(typ, s)
	c := collationOf(typ)
	switch collationStyle(c) {
	case styleRawBytes:
		dst = appendEscapedString(append(dst, flagBytes), s)
	case styleCodePoint:
		dst = append(dst, flagBytes)
		if utf8.ValidString(s) {
			dst = appendEscapedString(dst, s)
		} else {
			dst = appendRunes(dst, s)
		}
	case stylePaddedCodePoint:
		dst = appendPaddedRunes(append(dst, flagPaddedBytes), s)
	case stylePadded:
		sorter := c.Sorter()
		if sorter == nil {
			return dst, unsupportedType(typ, fmt.Sprintf("keys (collation %s has no sort order)", c))
		}
		dst = appendPaddedWeights(append(dst, flagPadded), s, sorter)
	default:
		sorter := c.Sorter()
		if sorter == nil {
			return dst, unsupportedType(typ, fmt.Sprintf("keys (collation %s has no sort order)", c))
		}
		dst = append(dst, flagWeights)
		for len(s) > 0 {
			r, n := utf8.DecodeRuneInString(s)
			dst = appendEscapedWeight(dst, uint32(sorter(r))^(1<<31))
			s = s[n:]
		}
	}
	return append(dst, escapeByte, terminatorByte), nil
}

func appendBytesKey(dst []byte, typ sql.Type, v any) ([]byte, error) {
	b, err := bytesOf(typ, v)
	if err != nil {
		return dst, err
	}
	st := typ.(sql.StringType)
	max := st.MaxCharacterLength()
	if int64(len(b)) > max {
		return dst, invalidValue(typ, v, fmt.Sprintf("%d bytes exceed the type's %d", len(b), max))
	}
	dst = appendEscapedBytes(append(dst, flagBytes), b)
	// typ.Compare converts a []byte, which zero-pads BINARY(n); pad the
	// same way without copying the value.
	if typ.Type() == sqltypes.Binary {
		for i := int64(len(b)); i < max; i++ {
			dst = append(dst, escapeByte, escapedZero)
		}
	}
	return append(dst, escapeByte, terminatorByte), nil
}

// appendEscapedString appends s with every 0x00 written as 0x00 0xff.
func appendEscapedString(dst []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i+1]...)
		dst = append(dst, escapedZero)
		s = s[i+1:]
	}
}

// appendEscapedBytes is appendEscapedString for a []byte.
func appendEscapedBytes(dst []byte, b []byte) []byte {
	for {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return append(dst, b...)
		}
		dst = append(dst, b[:i+1]...)
		dst = append(dst, escapedZero)
		b = b[i+1:]
	}
}

// appendRunes appends the escaped UTF-8 of the runes utf8.DecodeRuneInString
// reads from s, so that an invalid byte becomes U+FFFD.
func appendRunes(dst []byte, s string) []byte {
	var buf [utf8.UTFMax]byte
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		w := utf8.EncodeRune(buf[:], r)
		dst = appendEscapedBytes(dst, buf[:w])
		s = s[n:]
	}
	return dst
}

// Space runs in flagPadded keys: after the space's weight, a run followed
// by a lighter rune, the end of the string, or a run followed by a heavier
// rune.
const (
	runBeforeLighter byte = 0x01
	runToEnd         byte = 0x02
	runBeforeHeavier byte = 0x03
)

// appendPaddedWeights appends the escaped flagPadded tokens of s (see the
// top of this file).
func appendPaddedWeights(dst []byte, s string, sorter sql.CollationSorter) []byte {
	space := sorter(' ')
	spaceKey := uint32(space) ^ (1 << 31)
	run := uint32(0)
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		s = s[n:]
		w := sorter(r)
		if w == space {
			run++
			continue
		}
		if run > 0 {
			dst = appendEscapedWeight(dst, spaceKey)
			if w < space {
				dst = appendEscapedWeight(append(dst, runBeforeLighter), run)
			} else {
				dst = appendEscapedWeight(append(dst, runBeforeHeavier), ^run)
			}
			run = 0
		}
		dst = appendEscapedWeight(dst, uint32(w)^(1<<31))
	}
	dst = appendEscapedWeight(dst, spaceKey)
	return append(dst, runToEnd)
}

// appendPaddedRunes appends the escaped flagPaddedBytes tokens of s (see
// the top of this file).
func appendPaddedRunes(dst []byte, s string) []byte {
	s = strings.TrimRight(s, " ")
	for len(s) > 0 {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			i = len(s)
		}
		if utf8.ValidString(s[:i]) {
			dst = appendEscapedString(dst, s[:i])
		} else {
			dst = appendRunes(dst, s[:i])
		}
		s = s[i:]
		if len(s) == 0 {
			break
		}
		// A run of spaces, and a rune after it (s has no trailing spaces).
		run := len(s) - len(strings.TrimLeft(s, " "))
		s = s[run:]
		r, _ := utf8.DecodeRuneInString(s)
		dst = append(dst, ' ')
		if r < ' ' {
			dst = appendEscapedWeight(append(dst, runBeforeLighter), uint32(run))
		} else {
			dst = appendEscapedWeight(append(dst, runBeforeHeavier), ^uint32(run))
		}
	}
	return append(dst, ' ', runToEnd)
}

// appendEscapedWeight appends the 4 bytes of w big-endian, escaped.
func appendEscapedWeight(dst []byte, w uint32) []byte {
	for shift := 24; shift >= 0; shift -= 8 {
		c := byte(w >> shift)
		if c == escapeByte {
			dst = append(dst, escapeByte, escapedZero)
		} else {
			dst = append(dst, c)
		}
	}
	return dst
}

// skipEscaped returns the offset just past the terminator of an escaped
// string that starts at b[from], in a datum whose bytes are XORed with m.
func skipEscaped(b []byte, from int, m byte) (int, error) {
	i := from
	for {
		j := bytes.IndexByte(b[i:], escapeByte^m)
		if j < 0 || i+j+1 >= len(b) {
			return 0, corruptf("unterminated string at offset %d", from)
		}
		i += j
		switch b[i+1] ^ m {
		case escapedZero:
			i += 2
		case terminatorByte:
			return i + 2, nil
		default:
			return 0, corruptf("bad escape %#x at offset %d", b[i+1]^m, i+1)
		}
	}
}

// unescape appends the string that starts at b[from] to dst, and returns it
// with the offset just past the terminator.
func unescape(dst, b []byte, from int, m byte) ([]byte, int, error) {
	i := from
	for {
		j := bytes.IndexByte(b[i:], escapeByte^m)
		if j < 0 || i+j+1 >= len(b) {
			return dst, 0, corruptf("unterminated string at offset %d", from)
		}
		start := len(dst)
		dst = append(dst, b[i:i+j]...)
		if m != 0 {
			invert(dst[start:])
		}
		i += j
		switch b[i+1] ^ m {
		case escapedZero:
			dst = append(dst, 0)
			i += 2
		case terminatorByte:
			return dst, i + 2, nil
		default:
			return dst, 0, corruptf("bad escape %#x at offset %d", b[i+1]^m, i+1)
		}
	}
}

// decodeBytesKey decodes a flagBytes datum as a string or []byte. It accepts
// only what AppendKey writes: valid UTF-8 for the code-point collations, at
// most the type's length for binary strings and exactly it for BINARY(n).
func decodeBytesKey(b []byte, typ sql.Type, k kind, m byte) (int, any, error) {
	n, err := skipEscaped(b, 1, m)
	if err != nil {
		return 0, nil, err
	}
	// n-3 bounds the unescaped length: flag and terminator are 3 bytes.
	out, _, err := unescape(make([]byte, 0, n-3), b[:n], 1, m)
	if err != nil {
		return 0, nil, err
	}
	if k == kindBytes {
		max := typ.(sql.StringType).MaxCharacterLength()
		if int64(len(out)) > max || (typ.Type() == sqltypes.Binary && int64(len(out)) != max) {
			return 0, nil, corruptf("%d bytes for %s", len(out), typeName(typ))
		}
		return n, out, nil
	}
	if collationStyle(collationOf(typ)) == styleCodePoint && !utf8.Valid(out) {
		return 0, nil, corruptf("invalid UTF-8 in a %s key", collationOf(typ))
	}
	return n, string(out), nil
}

// skipWeightsKey returns the length of a flagWeights datum, checking that it
// holds whole 4-byte weights.
func skipWeightsKey(b []byte, m byte) (int, error) {
	n, err := skipEscaped(b, 1, m)
	if err != nil {
		return 0, err
	}
	zeros := bytes.Count(b[1:n-2], []byte{escapeByte ^ m})
	if (n-3-zeros)%4 != 0 {
		return 0, corruptf("weight string of %d bytes is not whole weights", n-3-zeros)
	}
	return n, nil
}
