package codec

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// Direction is the sort direction of one key column.
type Direction uint8

const (
	// Asc orders keys by the SQL order, NULL first.
	Asc Direction = iota
	// Desc orders keys by the reverse SQL order, NULL last: every byte of an
	// ascending datum is complemented.
	Desc
)

// String returns "asc" or "desc".
func (d Direction) String() string {
	switch d {
	case Asc:
		return "asc"
	case Desc:
		return "desc"
	}
	return fmt.Sprintf("Direction(%d)", uint8(d))
}

// mask is XORed into every byte of a datum: 0x00 for Asc, 0xff for Desc.
func (d Direction) mask() (byte, error) {
	switch d {
	case Asc:
		return 0, nil
	case Desc:
		return 0xff, nil
	}
	return 0, fmt.Errorf("%w: direction %d", ErrInvalidValue, uint8(d))
}

// Flag bytes. Every key datum starts with one of these (complemented for
// Desc). They are part of the durable format; never change or reuse one.
// NULL has the smallest flag, so it sorts before every value; the flags of
// the other families only need to be distinct, because one column never mixes
// families (except the three DECIMAL flags, which are ordered by sign).
const (
	flagNull        byte = 0x00 // NULL; nothing follows
	flagInt         byte = 0x08 // signed integers and YEAR: 8 bytes, v XOR 1<<63, big-endian
	flagUint        byte = 0x09 // unsigned integers, ENUM index, SET bitmask, BIT: 8 bytes big-endian
	flagFloat       byte = 0x0a // FLOAT, DOUBLE: 8 bytes of the ordered IEEE-754 float64 bits
	flagDecimalNeg  byte = 0x0b // DECIMAL < 0: complement of the positive layout of |v|
	flagDecimalZero byte = 0x0c // DECIMAL = 0; nothing follows
	flagDecimalPos  byte = 0x0d // DECIMAL > 0: exponent varint, base-100 digits, 0x00
	flagTime        byte = 0x0e // DATE, DATETIME, TIMESTAMP: 8 bytes, UTC Unix microseconds XOR 1<<63
	flagDuration    byte = 0x0f // TIME: 8 bytes, microseconds XOR 1<<63
	flagBytes       byte = 0x12 // byte strings and code-point-ordered collations: escaped bytes
	flagWeights     byte = 0x13 // other NO PAD collations: escaped 4-byte rune weights
	flagPadded      byte = 0x14 // PAD SPACE collations: escaped weights and space runs
	flagPaddedBytes byte = 0x15 // PAD SPACE code-point collations: escaped UTF-8 and space runs
)

// signBit is flipped in the 8-byte payloads of signed values so that their
// unsigned big-endian order is the numeric order.
const signBit uint64 = 1 << 63

// fixedLen is the length of a flag byte plus an 8-byte payload.
const fixedLen = 9

// AppendKey appends the memcomparable encoding of v, a value of typ, to dst and
// returns the extended buffer. Comparing two encodings of the same type and
// direction with bytes.Compare gives the order of typ.Compare, except that NULL
// (v == nil) sorts first with Asc and last with Desc. Encodings are
// self-delimiting, so the columns of a composite key are simply appended one
// after the other.
//
// v is the Go value GMS uses for typ (int32 for INT, string for VARCHAR,
// []byte for VARBINARY, decimal.Decimal, time.Time, types.Timespan, ...);
// anything else that typ.Convert accepts within the type's range is converted
// first, as are lazily loaded sql.StringWrapper and sql.BytesWrapper values.
// JSON and geometry types cannot be keys (ErrUnsupportedType); a value that
// does not convert, or a NaN, is ErrInvalidValue. On error dst is returned
// with its original length.
//
// For integers and for strings under the binary collations AppendKey
// allocates only when dst must grow.
func AppendKey(dst []byte, typ sql.Type, v any, dir Direction) ([]byte, error) {
	m, err := dir.mask()
	if err != nil {
		return dst, err
	}
	start := len(dst)
	out, err := appendKeyAsc(dst, typ, v)
	if err != nil {
		return dst[:start], err
	}
	if m != 0 {
		invert(out[start:])
	}
	return out, nil
}

func appendKeyAsc(dst []byte, typ sql.Type, v any) ([]byte, error) {
	k := kindOf(typ)
	switch k {
	case kindUnsupported, kindJSON, kindGeometry:
		return dst, unsupportedType(typ, "keys")
	}
	if v == nil {
		return append(dst, flagNull), nil
	}
	v, err := unwrap(typ, v)
	if err != nil {
		return dst, err
	}
	if v == nil {
		return append(dst, flagNull), nil
	}
	switch k {
	case kindInt8, kindInt16, kindInt32, kindInt64, kindYear:
		x, err := intOf(typ, k, v)
		if err != nil {
			return dst, err
		}
		return binary.BigEndian.AppendUint64(append(dst, flagInt), uint64(x)^signBit), nil
	case kindTime:
		x, err := intOf(typ, k, v)
		if err != nil {
			return dst, err
		}
		return binary.BigEndian.AppendUint64(append(dst, flagDuration), uint64(x)^signBit), nil
	case kindUint8, kindUint16, kindUint32, kindUint64, kindEnum, kindSet, kindBit:
		x, err := uintOf(typ, k, v)
		if err != nil {
			return dst, err
		}
		return binary.BigEndian.AppendUint64(append(dst, flagUint), x), nil
	case kindFloat32, kindFloat64:
		f, err := floatOf(typ, k, v)
		if err != nil {
			return dst, err
		}
		if math.IsNaN(f) {
			return dst, invalidValue(typ, v, "NaN has no place in the order")
		}
		return binary.BigEndian.AppendUint64(append(dst, flagFloat), orderedFloatBits(f)), nil
	case kindDecimal:
		d, err := decimalOf(typ, v)
		if err != nil {
			return dst, err
		}
		if d, err = compareDecimal(typ.(sql.DecimalType), d); err != nil {
			return dst, invalidValue(typ, v, err.Error())
		}
		return appendDecimalKey(dst, d), nil
	case kindDate, kindDatetime:
		t, err := timeKeyOf(typ, k, v)
		if err != nil {
			return dst, err
		}
		us, ok := unixMicro(t)
		if !ok {
			return dst, invalidValue(typ, v, "outside the microsecond range of int64")
		}
		return binary.BigEndian.AppendUint64(append(dst, flagTime), uint64(us)^signBit), nil
	case kindString:
		return appendStringKey(dst, typ, v)
	case kindBytes:
		return appendBytesKey(dst, typ, v)
	case kindNull:
		return dst, invalidValue(typ, v, "the NULL type holds only NULL")
	}
	return dst, unsupportedType(typ, "keys")
}

// orderedFloatBits maps f (not NaN) to a uint64 whose unsigned order is the
// numeric order of f: non-negative floats get the sign bit set, negative
// floats have every bit complemented. -0 is first made +0, since typ.Compare
// calls them equal.
func orderedFloatBits(f float64) uint64 {
	if f == 0 {
		f = 0
	}
	u := math.Float64bits(f)
	if u&signBit == 0 {
		return u | signBit
	}
	return ^u
}

func floatFromOrderedBits(u uint64) float64 {
	if u&signBit != 0 {
		return math.Float64frombits(u &^ signBit)
	}
	return math.Float64frombits(^u)
}

// timeKeyOf returns the instant that typ.Compare compares for v: DATE values
// truncated to the UTC day, and values with a sub-microsecond part rounded to
// the type's precision by typ.Convert (GMS never produces those).
func timeKeyOf(typ sql.Type, k kind, v any) (time.Time, error) {
	t, err := timeOf(typ, v)
	if err != nil {
		return t, err
	}
	if t.Nanosecond()%1000 != 0 {
		cv, err := convert(typ, t)
		if err != nil {
			return t, err
		}
		if ct, ok := cv.(time.Time); ok {
			t = ct
		}
	}
	if k == kindDate {
		t = t.Truncate(24 * time.Hour)
	}
	return t, nil
}

// unixMicro is t.UnixMicro with an overflow check.
func unixMicro(t time.Time) (int64, bool) {
	const limit = math.MaxInt64 / 1_000_000
	sec := t.Unix()
	if sec < -limit || sec >= limit {
		return 0, false
	}
	return t.UnixMicro(), true
}

// DecodeKey decodes one datum written by AppendKey with the same typ and dir
// from the front of b. It returns the bytes after the datum and the value as
// the Go type GMS uses for typ (nil for NULL); strings and byte slices never
// alias b.
//
// Strings under a collation that is not ordered by code point (anything but
// binary, utf8mb4_0900_bin, utf8mb4_bin, utf16_bin and utf32_bin) are stored
// as collation weights: DecodeKey returns ErrNotDecodable for them, with rest
// positioned after the datum. DECIMAL values come back with the type's scale
// when typ.Convert would give them that scale (column types); strings under a
// code-point collation that were not valid UTF-8 come back with each invalid
// byte replaced by U+FFFD, the rune typ.Compare saw. Malformed input is
// ErrCorrupt.
func DecodeKey(b []byte, typ sql.Type, dir Direction) (rest []byte, v any, err error) {
	m, err := dir.mask()
	if err != nil {
		return b, nil, err
	}
	n, v, err := decodeKey(b, typ, m)
	if err != nil {
		if n > 0 {
			return b[n:], nil, fmt.Errorf("codec: key of %s: %w", typeName(typ), err)
		}
		return b, nil, fmt.Errorf("codec: key of %s: %w", typeName(typ), err)
	}
	return b[n:], v, nil
}

// KeyRoundTrips reports whether DecodeKey gives back, for every value of
// typ, the value AppendKey was given as typ.Convert makes it, so that a key
// can stand in for the stored value: true for the integer types, YEAR,
// BIT, ENUM, SET, DATE, DATETIME, TIMESTAMP and TIME; false for strings
// (collation weights, and pad spaces that compare equal), FLOAT and DOUBLE
// (a key does not tell -0 from 0), DECIMAL (a stored value keeps the
// digits it was written with, 100 or 100.00, which its key does not),
// JSON and spatial types.
func KeyRoundTrips(typ sql.Type) bool {
	switch kindOf(typ) {
	case kindInt8, kindInt16, kindInt32, kindInt64, kindUint8, kindUint16, kindUint32, kindUint64,
		kindYear, kindBit, kindEnum, kindSet, kindDate, kindDatetime, kindTime:
		return true
	}
	return false
}

// decodeKey returns the length of the datum and its value. On ErrNotDecodable
// the length is still set.
func decodeKey(b []byte, typ sql.Type, m byte) (int, any, error) {
	if len(b) == 0 {
		return 0, nil, corruptf("empty key")
	}
	flag := b[0] ^ m
	if flag == flagNull {
		return 1, nil, nil
	}
	k := kindOf(typ)
	if err := checkFlag(typ, k, flag); err != nil {
		return 0, nil, err
	}
	switch flag {
	case flagInt, flagUint, flagFloat, flagTime, flagDuration:
		if len(b) < fixedLen {
			return 0, nil, corruptf("flag %#x needs 8 bytes, have %d", flag, len(b)-1)
		}
		u := binary.BigEndian.Uint64(b[1:fixedLen])
		if m != 0 {
			u = ^u
		}
		v, err := fixedValue(typ, k, u)
		if err != nil {
			return 0, nil, err
		}
		return fixedLen, v, nil
	case flagDecimalNeg, flagDecimalZero, flagDecimalPos:
		n, d, err := decodeDecimalKey(b, m)
		if err != nil {
			return 0, nil, err
		}
		dt := typ.(sql.DecimalType)
		d = rescaleDecimal(dt, d)
		if d.Exponent() < -int32(dt.Scale()) {
			if cd, err := compareDecimal(dt, d); err != nil || cd.Cmp(d) != 0 {
				return 0, nil, corruptf("%s has more fractional digits than %s keeps", d, typeName(typ))
			}
		}
		return n, d, nil
	case flagBytes:
		return decodeBytesKey(b, typ, k, m)
	case flagWeights:
		n, err := skipWeightsKey(b, m)
		if err != nil {
			return 0, nil, err
		}
		return n, nil, fmt.Errorf("%w: string under collation %s is stored as weights", ErrNotDecodable, collationOf(typ))
	case flagPadded, flagPaddedBytes:
		n, err := skipEscaped(b, 1, m)
		if err != nil {
			return 0, nil, err
		}
		return n, nil, fmt.Errorf("%w: string under PAD SPACE collation %s is stored as weights", ErrNotDecodable, collationOf(typ))
	}
	return 0, nil, corruptf("unknown flag %#x", flag)
}

// checkFlag verifies that flag belongs to the family of k.
func checkFlag(typ sql.Type, k kind, flag byte) error {
	ok := false
	switch k {
	case kindInt8, kindInt16, kindInt32, kindInt64, kindYear:
		ok = flag == flagInt
	case kindTime:
		ok = flag == flagDuration
	case kindUint8, kindUint16, kindUint32, kindUint64, kindEnum, kindSet, kindBit:
		ok = flag == flagUint
	case kindFloat32, kindFloat64:
		ok = flag == flagFloat
	case kindDecimal:
		ok = flag == flagDecimalNeg || flag == flagDecimalZero || flag == flagDecimalPos
	case kindDate, kindDatetime:
		ok = flag == flagTime
	case kindString:
		style, err := stringStyle(typ)
		if err != nil {
			return err
		}
		switch style {
		case styleWeights:
			ok = flag == flagWeights
		case stylePadded:
			ok = flag == flagPadded
		case stylePaddedCodePoint:
			ok = flag == flagPaddedBytes
		default:
			ok = flag == flagBytes
		}
	case kindBytes:
		ok = flag == flagBytes
	case kindNull:
		ok = false
	default:
		return unsupportedType(typ, "keys")
	}
	if !ok {
		return corruptf("flag %#x is not a %s key", flag, typeName(typ))
	}
	return nil
}

// fixedValue turns the 8-byte payload of a fixed-width datum (already
// un-complemented) into the Go value of typ. It accepts only payloads that
// AppendKey writes, so that every decoded key re-encodes to the same bytes.
func fixedValue(typ sql.Type, k kind, u uint64) (any, error) {
	switch k {
	case kindInt8, kindInt16, kindInt32, kindInt64, kindYear, kindTime:
		return intValue(k, int64(u^signBit), nil)
	case kindUint8, kindUint16, kindUint32, kindUint64, kindEnum, kindSet, kindBit:
		if !validUint(typ, k, u) {
			return nil, corruptf("%d is not a value of %s", u, typeName(typ))
		}
		return uintValue(k, u, nil)
	case kindFloat32, kindFloat64:
		f := floatFromOrderedBits(u)
		if math.IsNaN(f) || (f == 0 && math.Signbit(f)) {
			return nil, corruptf("float bits %#x are never written", u)
		}
		if k == kindFloat64 {
			return f, nil
		}
		if float64(float32(f)) != f {
			return nil, corruptf("%v is not a FLOAT", f)
		}
		return float32(f), nil
	case kindDate, kindDatetime:
		us := int64(u ^ signBit)
		t := time.UnixMicro(us).UTC()
		if _, ok := unixMicro(t); !ok {
			return nil, corruptf("time %d µs out of range", us)
		}
		if k == kindDate && us%(24*60*60*1e6) != 0 {
			return nil, corruptf("DATE %d µs is not a whole day", us)
		}
		return t, nil
	}
	return nil, unsupportedType(typ, "keys")
}

// intValue boxes x as the Go type of k, checking its range; in a's slabs
// when a is not nil (see box.go).
func intValue(k kind, x int64, a *Arena) (any, error) {
	switch k {
	case kindInt8:
		if x >= math.MinInt8 && x <= math.MaxInt8 {
			return int8(x), nil // one byte: Go boxes it without allocating
		}
	case kindInt16:
		if x >= math.MinInt16 && x <= math.MaxInt16 {
			return box(a, int16Type, int16(x)), nil
		}
	case kindYear:
		if validYear(x) {
			return box(a, int16Type, int16(x)), nil
		}
	case kindInt32:
		if x >= math.MinInt32 && x <= math.MaxInt32 {
			return box(a, int32Type, int32(x)), nil
		}
	case kindInt64:
		return box(a, int64Type, x), nil
	case kindTime:
		return box(a, timespanType, types.Timespan(x)), nil
	}
	return nil, corruptf("integer %d out of range", x)
}

// uintValue boxes x as the Go type of k, checking its range; in a's slabs
// when a is not nil.
func uintValue(k kind, x uint64, a *Arena) (any, error) {
	switch k {
	case kindUint8:
		if x <= math.MaxUint8 {
			return uint8(x), nil
		}
	case kindUint16, kindEnum:
		if x <= math.MaxUint16 {
			return box(a, uint16Type, uint16(x)), nil
		}
	case kindUint32:
		if x <= math.MaxUint32 {
			return box(a, uint32Type, uint32(x)), nil
		}
	case kindUint64, kindSet, kindBit:
		return box(a, uint64Type, x), nil
	}
	return nil, corruptf("unsigned integer %d out of range", x)
}

// rescaleDecimal gives a decoded (normalised) DECIMAL the representation
// typ.Convert gives the same value: column types pad the fraction to their
// scale. The work is bounded so that a corrupt exponent cannot make it large.
func rescaleDecimal(dt sql.DecimalType, d decimal.Decimal) decimal.Decimal {
	scale := int64(dt.Scale())
	exp := int64(d.Exponent())
	if exp <= -scale || exp+scale > maxRescaleDigits {
		return d
	}
	nd, err := dt.ConvertToNullDecimal(d)
	if err != nil || !nd.Valid || nd.Decimal.Cmp(d) != 0 {
		return d
	}
	return nd.Decimal
}

// maxRescaleDigits bounds the zeros rescaleDecimal may add: MySQL allows 65
// digits of precision and 30 of scale.
const maxRescaleDigits = 96

// SkipKey returns the bytes after one datum written by AppendKey with the same
// typ and dir, without decoding it. It checks the flag against typ and the
// structure of variable-length data, and returns ErrCorrupt if they are wrong.
func SkipKey(b []byte, typ sql.Type, dir Direction) (rest []byte, err error) {
	m, err := dir.mask()
	if err != nil {
		return b, err
	}
	n, err := keyLen(b, typ, m)
	if err != nil {
		return b, fmt.Errorf("codec: skipping key of %s: %w", typeName(typ), err)
	}
	return b[n:], nil
}

func keyLen(b []byte, typ sql.Type, m byte) (int, error) {
	if len(b) == 0 {
		return 0, corruptf("empty key")
	}
	flag := b[0] ^ m
	if flag == flagNull {
		return 1, nil
	}
	if err := checkFlag(typ, kindOf(typ), flag); err != nil {
		return 0, err
	}
	switch flag {
	case flagInt, flagUint, flagFloat, flagTime, flagDuration:
		if len(b) < fixedLen {
			return 0, corruptf("flag %#x needs 8 bytes, have %d", flag, len(b)-1)
		}
		return fixedLen, nil
	case flagDecimalNeg, flagDecimalZero, flagDecimalPos:
		return skipDecimalKey(b, m)
	case flagBytes:
		return skipEscaped(b, 1, m)
	case flagWeights:
		return skipWeightsKey(b, m)
	case flagPadded, flagPaddedBytes:
		return skipEscaped(b, 1, m)
	}
	return 0, corruptf("unknown flag %#x", flag)
}

// PrefixSuccessor appends to dst the smallest key that is greater than every
// key starting with prefix, and returns it; use it as the exclusive upper
// bound of all keys with that prefix (for example the keys of "column = k",
// whose encodings all start with AppendKey(k)). It returns nil when no such
// key exists, that is when prefix is empty or all 0xff: the range then has no
// upper bound.
func PrefixSuccessor(dst, prefix []byte) []byte {
	n := len(prefix)
	for n > 0 && prefix[n-1] == 0xff {
		n--
	}
	if n == 0 {
		return nil
	}
	dst = append(dst, prefix[:n]...)
	dst[len(dst)-1]++
	return dst
}
