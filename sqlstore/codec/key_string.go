package codec

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/sqltypes"
)

// String keys.
//
// typ.Compare orders strings rune by rune by the weight the collation's
// Sorter gives each rune, a shorter string first when one is a prefix of the
// other, with no PAD SPACE ('a' < 'a '). Runes are read with
// utf8.DecodeRuneInString for every character set but binary, which reads
// bytes; an invalid UTF-8 byte is the rune U+FFFD. Keys reproduce that order in
// one of two ways, chosen by collation (the choice is part of the durable
// format):
//
//   - flagBytes, for binary strings and for the collations whose weights rise
//     strictly with the code point (binary, utf8mb4_0900_bin, utf8mb4_bin,
//     utf16_bin, utf32_bin): the bytes themselves, since UTF-8 byte order is
//     code point order. For the four character collations a string that is
//     not valid UTF-8 is written rune by rune, each invalid byte as the UTF-8
//     of U+FFFD, which is what typ.Compare saw. These keys decode.
//   - flagWeights, for every other collation: each rune's weight as 4 bytes
//     big-endian with the sign bit flipped, so that equal weights give equal
//     keys ('a' and 'A' under utf8mb4_0900_ai_ci). These keys do not decode;
//     the row value keeps the original string. Their bytes depend on GMS's
//     weight tables, so a change of those tables changes the keys.
//
// Both are escaped and terminated so that a prefix sorts first: a 0x00 byte is
// written 0x00 0xff, and the string ends with 0x00 0x01.
const (
	escapeByte     byte = 0x00 // starts an escape or the terminator
	escapedZero    byte = 0xff // after escapeByte: a literal 0x00
	terminatorByte byte = 0x01 // after escapeByte: end of string
)

// stringKeyStyle says how a collation's strings are keyed.
type stringKeyStyle uint8

const (
	styleRawBytes  stringKeyStyle = iota // binary: bytes as they are
	styleCodePoint                       // code-point-ordered collations: valid UTF-8
	styleWeights                         // everything else: rune weights
)

// codePointCollations have Sorters that are strictly increasing over all
// runes, so their order and equality are those of the code points. This set
// is part of the durable format.
func collationStyle(c sql.CollationID) stringKeyStyle {
	switch c {
	case sql.Collation_binary:
		return styleRawBytes
	case sql.Collation_utf8mb4_0900_bin, sql.Collation_utf8mb4_bin, sql.Collation_utf16_bin, sql.Collation_utf32_bin:
		return styleCodePoint
	}
	return styleWeights
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
	if style == styleWeights && c.Sorter() == nil {
		return style, unsupportedType(typ, fmt.Sprintf("keys (collation %s has no sort order)", c))
	}
	return style, nil
}

func appendStringKey(dst []byte, typ sql.Type, v any) ([]byte, error) {
	s, err := stringOf(typ, v)
	if err != nil {
		return dst, err
	}
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
