package codec

import (
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// The functions below take a value for a column of kind k and return it as
// the primitive the encoders write. Each first accepts exactly the Go type
// GMS uses for the kind (no allocation, no interface conversion), and only
// then falls back to typ.Convert.

// intOf returns v as an int64 for the signed kinds, YEAR and TIME.
func intOf(typ sql.Type, k kind, v any) (int64, error) {
	if x, ok := exactInt(k, v); ok {
		return x, nil
	}
	cv, err := convert(typ, v)
	if err != nil {
		return 0, err
	}
	if x, ok := exactInt(k, cv); ok {
		return x, nil
	}
	return 0, invalidValue(typ, v, "not an integer of the type's width")
}

func exactInt(k kind, v any) (int64, bool) {
	switch k {
	case kindInt8:
		x, ok := v.(int8)
		return int64(x), ok
	case kindInt16:
		x, ok := v.(int16)
		return int64(x), ok
	case kindYear:
		// typ.Convert maps 1..99 to 2001..2069 and 1970..1999, so only
		// canonical years are taken as they are.
		x, ok := v.(int16)
		return int64(x), ok && validYear(int64(x))
	case kindInt32:
		x, ok := v.(int32)
		return int64(x), ok
	case kindInt64:
		x, ok := v.(int64)
		return x, ok
	case kindTime:
		x, ok := v.(types.Timespan)
		return int64(x), ok
	}
	return 0, false
}

// uintOf returns v as a uint64 for the unsigned kinds, ENUM, SET and BIT,
// checking that ENUM indexes, SET bitmasks and BIT values are valid for typ.
func uintOf(typ sql.Type, k kind, v any) (uint64, error) {
	if x, ok := exactUint(typ, k, v); ok {
		return x, nil
	}
	cv, err := convert(typ, v)
	if err != nil {
		return 0, err
	}
	if x, ok := exactUint(typ, k, cv); ok {
		return x, nil
	}
	return 0, invalidValue(typ, v, "not a valid unsigned value of the type")
}

func exactUint(typ sql.Type, k kind, v any) (uint64, bool) {
	switch k {
	case kindUint8:
		x, ok := v.(uint8)
		return uint64(x), ok
	case kindUint16:
		x, ok := v.(uint16)
		return uint64(x), ok
	case kindUint32:
		x, ok := v.(uint32)
		return uint64(x), ok
	case kindUint64:
		x, ok := v.(uint64)
		return x, ok
	case kindEnum:
		x, ok := v.(uint16)
		return uint64(x), ok && validUint(typ, k, uint64(x))
	case kindSet, kindBit:
		x, ok := v.(uint64)
		return x, ok && validUint(typ, k, x)
	}
	return 0, false
}

// validUint reports whether x is an ENUM index, SET bitmask or BIT value that
// typ allows; other kinds accept every x.
func validUint(typ sql.Type, k kind, x uint64) bool {
	switch k {
	case kindEnum:
		if x > 0xffff {
			return false
		}
		_, ok := typ.(sql.EnumType).At(int(x))
		return ok
	case kindSet:
		n := typ.(sql.SetType).NumberOfElements()
		return n >= 64 || x < 1<<n
	case kindBit:
		if bt, ok := typ.(types.BitType); ok && bt.NumberOfBits() < 64 {
			return x < 1<<bt.NumberOfBits()
		}
	}
	return true
}

// floatOf returns v as a float64 for FLOAT and DOUBLE; float32 widens exactly.
func floatOf(typ sql.Type, k kind, v any) (float64, error) {
	if f, ok := exactFloat(k, v); ok {
		return f, nil
	}
	cv, err := convert(typ, v)
	if err != nil {
		return 0, err
	}
	if f, ok := exactFloat(k, cv); ok {
		return f, nil
	}
	return 0, invalidValue(typ, v, "not a float of the type's width")
}

func exactFloat(k kind, v any) (float64, bool) {
	if k == kindFloat32 {
		f, ok := v.(float32)
		return float64(f), ok
	}
	f, ok := v.(float64)
	return f, ok
}

// decimalOf returns v as a decimal.Decimal.
func decimalOf(typ sql.Type, v any) (decimal.Decimal, error) {
	if d, ok := v.(decimal.Decimal); ok {
		return d, nil
	}
	cv, err := convert(typ, v)
	if err != nil {
		return decimal.Decimal{}, err
	}
	if d, ok := cv.(decimal.Decimal); ok {
		return d, nil
	}
	return decimal.Decimal{}, invalidValue(typ, v, "not a decimal")
}

// timeOf returns v as a time.Time for DATE, DATETIME and TIMESTAMP.
func timeOf(typ sql.Type, v any) (time.Time, error) {
	if t, ok := v.(time.Time); ok {
		return t, nil
	}
	cv, err := convert(typ, v)
	if err != nil {
		return time.Time{}, err
	}
	if t, ok := cv.(time.Time); ok {
		return t, nil
	}
	return time.Time{}, invalidValue(typ, v, "not a time")
}

// stringOf returns v as a string for CHAR, VARCHAR and TEXT.
func stringOf(typ sql.Type, v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	cv, err := convert(typ, v)
	if err != nil {
		return "", err
	}
	if s, ok := cv.(string); ok {
		return s, nil
	}
	return "", invalidValue(typ, v, "not a string")
}

// bytesOf returns v as a []byte for BINARY, VARBINARY and BLOB. A []byte is
// returned as it is; anything else goes through typ.Convert, which zero-pads
// BINARY(n).
func bytesOf(typ sql.Type, v any) ([]byte, error) {
	if b, ok := v.([]byte); ok {
		return b, nil
	}
	cv, err := convert(typ, v)
	if err != nil {
		return nil, err
	}
	if b, ok := cv.([]byte); ok {
		return b, nil
	}
	return nil, invalidValue(typ, v, "not a byte string")
}

// validYear reports whether y is a YEAR value as typ.Convert returns it: 0 or
// 1901..2155.
func validYear(y int64) bool {
	return y == 0 || (y >= 1901 && y <= 2155)
}
