package codec

import (
	"fmt"
	"math"
	"math/big"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/shopspring/decimal"
)

// DECIMAL keys.
//
// A non-zero decimal is written in normalised scientific form: with the
// trailing zeros of its coefficient removed, |v| = 0.d1 d2 ... dn × 10^E with
// d1 != 0 and dn != 0. Numbers with equal value have equal (E, digits), so
// 1.10 and 1.1 encode alike, as typ.Compare finds them equal; any precision
// and scale is exact. The layout, part of the durable format, is:
//
//	zero:      flagDecimalZero
//	positive:  flagDecimalPos  varint(E)  pairs  0x00
//	negative:  flagDecimalNeg  complement of (varint(E) pairs 0x00) for |v|
//
// varint is the signed order-preserving varint of varint.go. pairs packs the
// digits two by two, d1d2, d3d4, ..., padding an odd count with a 0, each pair
// p (0..99) in one byte p+1; the 0x00 after them ends the digits, so that
// 0.12 (pairs 12) sorts before 0.123 (pairs 12 30). For positive numbers a
// larger exponent is a larger number and, at equal exponents, the digits
// compare lexicographically; complementing reverses both for negative ones.
// Encoders never write a first pair below 10 (d1 != 0) or a last pair of 00;
// decoders reject them, so each value has one encoding.
const (
	decimalPairBias byte = 1    // a pair p is written as p+decimalPairBias
	decimalEnd      byte = 0x00 // ends the digit pairs (before complementing)
)

// appendDecimalKey appends the key of d.
func appendDecimalKey(dst []byte, d decimal.Decimal) []byte {
	if d.Sign() == 0 {
		return append(dst, flagDecimalZero)
	}
	coef := d.Coefficient() // a copy
	neg := coef.Sign() < 0
	coef.Abs(coef)
	var buf [80]byte
	digits := coef.Append(buf[:0], 10)
	e := int64(d.Exponent()) + int64(len(digits))
	for digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if neg {
		dst = append(dst, flagDecimalNeg)
	} else {
		dst = append(dst, flagDecimalPos)
	}
	start := len(dst)
	dst = appendVarintAscending(dst, e)
	for i := 0; i < len(digits); i += 2 {
		p := (digits[i] - '0') * 10
		if i+1 < len(digits) {
			p += digits[i+1] - '0'
		}
		dst = append(dst, p+decimalPairBias)
	}
	dst = append(dst, decimalEnd)
	if neg {
		invert(dst[start:])
	}
	return dst
}

// skipDecimalKey returns the length of the decimal datum at the front of b.
func skipDecimalKey(b []byte, m byte) (int, error) {
	n, _, err := decodeDecimalKeyParts(b, m, nil)
	return n, err
}

// decodeDecimalKey decodes the decimal datum at the front of b.
func decodeDecimalKey(b []byte, m byte) (int, decimal.Decimal, error) {
	var digits []byte
	n, parts, err := decodeDecimalKeyParts(b, m, &digits)
	if err != nil {
		return 0, decimal.Decimal{}, err
	}
	if parts.zero {
		return n, decimal.New(0, 0), nil
	}
	exp := parts.e - int64(len(digits))
	if exp < math.MinInt32 || exp > math.MaxInt32 {
		return 0, decimal.Decimal{}, corruptf("decimal exponent %d out of range", exp)
	}
	var d decimal.Decimal
	if len(digits) <= 18 {
		var c int64
		for _, dg := range digits {
			c = c*10 + int64(dg)
		}
		if parts.neg {
			c = -c
		}
		d = decimal.New(c, int32(exp))
	} else {
		for i := range digits {
			digits[i] += '0'
		}
		c, ok := new(big.Int).SetString(string(digits), 10)
		if !ok {
			return 0, decimal.Decimal{}, corruptf("decimal digits")
		}
		if parts.neg {
			c.Neg(c)
		}
		d = decimal.NewFromBigInt(c, int32(exp))
	}
	return n, d, nil
}

type decimalParts struct {
	zero, neg bool
	e         int64
}

// decodeDecimalKeyParts parses a decimal datum, appending its digits (0..9,
// trailing zero removed) to *digits when digits is not nil.
func decodeDecimalKeyParts(b []byte, m byte, digits *[]byte) (int, decimalParts, error) {
	var parts decimalParts
	switch b[0] ^ m {
	case flagDecimalZero:
		parts.zero = true
		return 1, parts, nil
	case flagDecimalNeg:
		parts.neg = true
		m ^= 0xff
	case flagDecimalPos:
	default:
		return 0, parts, corruptf("flag %#x is not a decimal", b[0]^m)
	}
	l, e, err := readVarintAscending(b[1:], m)
	if err != nil {
		return 0, parts, err
	}
	parts.e = e
	i := 1 + l
	first := true
	for ; ; i++ {
		if i >= len(b) {
			return 0, parts, corruptf("unterminated decimal digits")
		}
		c := b[i] ^ m
		if c == decimalEnd {
			break
		}
		p := c - decimalPairBias
		if p > 99 || (first && p < 10) {
			return 0, parts, corruptf("decimal digit pair byte %#x at offset %d", c, i)
		}
		first = false
		if digits != nil {
			*digits = append(*digits, p/10, p%10)
		}
	}
	if first {
		return 0, parts, corruptf("decimal without digits")
	}
	last := (b[i-1] ^ m) - decimalPairBias
	if last == 0 {
		return 0, parts, corruptf("decimal digits end in a 00 pair")
	}
	if digits != nil && last%10 == 0 {
		*digits = (*digits)[:len(*digits)-1]
	}
	return i + 1, parts, nil
}

// compareDecimal returns the value typ.Compare compares for d, which is
// dt.ConvertToNullDecimal(d): for a column type, d rounded to the scale when it
// has more fractional digits. A number too small to round to anything but zero
// is decided without calling GMS, whose rounding would raise 10 to the power
// of the exponent difference.
func compareDecimal(dt sql.DecimalType, d decimal.Decimal) (decimal.Decimal, error) {
	scale := int32(dt.Scale())
	if d.Exponent() >= -scale {
		return d, nil
	}
	if decimalBelow(d, int64(-scale)-1) {
		if !roundsToScale(dt) {
			return d, nil
		}
		return decimal.New(0, -scale), nil
	}
	nd, err := dt.ConvertToNullDecimal(d)
	if err != nil {
		return d, fmt.Errorf("rounding to scale %d: %v", scale, err)
	}
	if !nd.Valid {
		return d, fmt.Errorf("rounding to scale %d gave NULL", scale)
	}
	return nd.Decimal, nil
}

// decimalBelow reports whether |d| < 10^e is certain from the size of its
// coefficient: a coefficient of b bits has at most b*log10(2)+1 digits.
func decimalBelow(d decimal.Decimal, e int64) bool {
	digits := int64(d.Coefficient().BitLen())*30103/100000 + 1
	return int64(d.Exponent())+digits <= e
}

// roundsToScale reports whether dt rounds values to its scale when it
// converts them, as GMS's column types do and its expression types do not.
func roundsToScale(dt sql.DecimalType) bool {
	probe := decimal.New(1, -int32(dt.Scale())-1)
	nd, err := dt.ConvertToNullDecimal(probe)
	return err == nil && nd.Valid && nd.Decimal.Cmp(probe) != 0
}
