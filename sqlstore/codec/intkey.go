package codec

import (
	"encoding/binary"
	"math"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/sqltypes"
)

// IntRange returns the values the integer type typ holds, [lo, hi]; ok is
// false when typ is not one of the integer types (TINYINT to BIGINT,
// signed or unsigned).
func IntRange(typ sql.Type) (lo, hi int64, ok bool) {
	if typ == nil {
		return 0, 0, false
	}
	switch typ.Type() {
	case sqltypes.Int8:
		return math.MinInt8, math.MaxInt8, true
	case sqltypes.Uint8:
		return 0, math.MaxUint8, true
	case sqltypes.Int16:
		return math.MinInt16, math.MaxInt16, true
	case sqltypes.Uint16:
		return 0, math.MaxUint16, true
	case sqltypes.Int24:
		return -1 << 23, 1<<23 - 1, true
	case sqltypes.Uint24:
		return 0, 1<<24 - 1, true
	case sqltypes.Int32:
		return math.MinInt32, math.MaxInt32, true
	case sqltypes.Uint32:
		return 0, math.MaxUint32, true
	case sqltypes.Int64:
		return math.MinInt64, math.MaxInt64, true
	case sqltypes.Uint64:
		return 0, math.MaxInt64, true // of the values an int64 can give
	}
	return 0, 0, false
}

// AppendIntKey appends the key encoding of v as a value of the integer type
// typ: what AppendKey appends for the value typ.Convert makes of v, without
// boxing it. ok is false, and dst returned as it was, when typ is not an
// integer type (IntRange) or does not hold v.
func AppendIntKey(dst []byte, typ sql.Type, v int64, dir Direction) (out []byte, ok bool) {
	lo, hi, isInt := IntRange(typ)
	if !isInt || v < lo || v > hi {
		return dst, false
	}
	m, err := dir.mask()
	if err != nil {
		return dst, false
	}
	start := len(dst)
	if lo == 0 { // the unsigned types
		dst = binary.BigEndian.AppendUint64(append(dst, flagUint), uint64(v))
	} else {
		dst = binary.BigEndian.AppendUint64(append(dst, flagInt), uint64(v)^signBit)
	}
	if m != 0 {
		invert(dst[start:])
	}
	return dst, true
}
