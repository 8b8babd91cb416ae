package codec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/shopspring/decimal"
)

// Row values.
//
// The stored value of a table row holds its columns in schema order. It is
// not ordered, only compact and quick to decode. The layout is part of the
// durable format; never change it, add a new version byte instead:
//
//	row     = version ncols nulls value*
//	version = 0x01 (rowFormatV1)
//	ncols   = uvarint: the number of columns the row was written with
//	nulls   = ceil(ncols/8) bytes; bit i%8 (least significant first) of byte
//	          i/8 is set when column i is NULL
//	value   = one per non-NULL column, in schema order, with no tag:
//
//	TINYINT (signed or not)                 1 byte
//	SMALLINT, MEDIUMINT, INT, BIGINT, YEAR,
//	TIME (microseconds)                     zig-zag varint (encoding/binary)
//	... UNSIGNED, ENUM index, SET, BIT      uvarint
//	FLOAT                                   4 bytes, IEEE-754 bits little-endian
//	DOUBLE                                  8 bytes, IEEE-754 bits little-endian
//	DECIMAL                                 varint(exponent) uvarint(n<<1 | negative)
//	                                        then the coefficient's magnitude,
//	                                        n bytes big-endian (value = c × 10^exponent,
//	                                        exactly as given, scale included)
//	DATE, DATETIME, TIMESTAMP               varint(Unix seconds) uvarint(nanoseconds),
//	                                        decoded in UTC
//	CHAR, VARCHAR, TEXT, BINARY,
//	VARBINARY, BLOB                         uvarint(length) bytes
//	JSON                                    uvarint(length) JSON text
//
// A row decoded with a schema longer than ncols (columns added since it was
// written) gets NULL for the missing trailing columns; the SQL layer fills in
// defaults. A row with more columns than the schema is ErrCorrupt: decode it
// with the schema it was written with.
const rowFormatV1 byte = 0x01

// AppendRow appends the row value of row, whose columns are those of sch in
// order, to dst and returns the extended buffer. Values are the Go values GMS
// uses for each column type (anything typ.Convert accepts is converted), or
// nil for NULL; geometry columns are ErrUnsupportedType. On error dst is
// returned with its original length.
func AppendRow(dst []byte, sch sql.Schema, row sql.Row) ([]byte, error) {
	if len(row) != len(sch) {
		return dst, fmt.Errorf("%w: row of %d values for a schema of %d columns", ErrInvalidValue, len(row), len(sch))
	}
	start := len(dst)
	dst = append(dst, rowFormatV1)
	dst = binary.AppendUvarint(dst, uint64(len(sch)))
	nulls := len(dst)
	for i := 0; i < (len(sch)+7)/8; i++ {
		dst = append(dst, 0)
	}
	for i, col := range sch {
		if k := kindOf(col.Type); k == kindUnsupported || k == kindGeometry {
			return dst[:start], fmt.Errorf("codec: row column %d (%s): %w", i, col.Name, unsupportedType(col.Type, "rows"))
		}
		v := row[i]
		var err error
		if v != nil {
			if v, err = unwrap(col.Type, v); err != nil {
				return dst[:start], fmt.Errorf("codec: row column %d (%s): %w", i, col.Name, err)
			}
		}
		if v == nil {
			dst[nulls+i/8] |= 1 << (i % 8)
			continue
		}
		if dst, err = appendValue(dst, col.Type, v); err != nil {
			return dst[:start], fmt.Errorf("codec: row column %d (%s): %w", i, col.Name, err)
		}
	}
	return dst, nil
}

// appendValue appends the row encoding of the non-NULL value v of typ.
func appendValue(dst []byte, typ sql.Type, v any) ([]byte, error) {
	k := kindOf(typ)
	switch k {
	case kindInt8:
		x, err := intOf(typ, k, v)
		return append(dst, byte(x)), err
	case kindUint8:
		x, err := uintOf(typ, k, v)
		return append(dst, byte(x)), err
	case kindInt16, kindInt32, kindInt64, kindYear, kindTime:
		x, err := intOf(typ, k, v)
		if err != nil {
			return dst, err
		}
		return binary.AppendVarint(dst, x), nil
	case kindUint16, kindUint32, kindUint64, kindEnum, kindSet, kindBit:
		x, err := uintOf(typ, k, v)
		if err != nil {
			return dst, err
		}
		return binary.AppendUvarint(dst, x), nil
	case kindFloat32:
		f, err := floatOf(typ, k, v)
		if err != nil {
			return dst, err
		}
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(f))), nil
	case kindFloat64:
		f, err := floatOf(typ, k, v)
		if err != nil {
			return dst, err
		}
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f)), nil
	case kindDecimal:
		d, err := decimalOf(typ, v)
		if err != nil {
			return dst, err
		}
		return appendDecimalValue(dst, d), nil
	case kindDate, kindDatetime:
		t, err := timeOf(typ, v)
		if err != nil {
			return dst, err
		}
		dst = binary.AppendVarint(dst, t.Unix())
		return binary.AppendUvarint(dst, uint64(t.Nanosecond())), nil
	case kindString:
		s, err := stringOf(typ, v)
		if err != nil {
			return dst, err
		}
		s = trimChar(typ, s)
		return append(binary.AppendUvarint(dst, uint64(len(s))), s...), nil
	case kindBytes:
		b, err := bytesOf(typ, v)
		if err != nil {
			return dst, err
		}
		return append(binary.AppendUvarint(dst, uint64(len(b))), b...), nil
	case kindJSON:
		text, err := jsonText(typ, v)
		if err != nil {
			return dst, err
		}
		return append(binary.AppendUvarint(dst, uint64(len(text))), text...), nil
	case kindNull:
		return dst, invalidValue(typ, v, "the NULL type holds only NULL")
	}
	return dst, unsupportedType(typ, "rows")
}

// appendDecimalValue appends d exactly: exponent, sign and coefficient.
func appendDecimalValue(dst []byte, d decimal.Decimal) []byte {
	coef := d.Coefficient() // a copy
	var neg uint64
	if coef.Sign() < 0 {
		neg = 1
		coef.Abs(coef)
	}
	n := (coef.BitLen() + 7) / 8
	dst = binary.AppendVarint(dst, int64(d.Exponent()))
	dst = binary.AppendUvarint(dst, uint64(n)<<1|neg)
	l := len(dst)
	for i := 0; i < n; i++ {
		dst = append(dst, 0)
	}
	coef.FillBytes(dst[l : l+n])
	return dst
}

// rowHeader is the parsed front of a row value.
type rowHeader struct {
	ncols int    // columns the row was written with
	nulls []byte // the NULL bitmap, aliasing the row
	off   int    // offset of the first value
}

func (h *rowHeader) isNull(i int) bool {
	return h.nulls[i/8]&(1<<(i%8)) != 0
}

// shortHeader reads a well-formed row header of at most maxCols columns
// whose count is one byte (fewer than 128 columns), as nearly every row's
// is, small enough to be inlined into the decoders, which run for every
// row of a scan; false means readRowHeaderSlow must read it (and tell what
// is wrong).
func shortHeader(b []byte, maxCols int) (rowHeader, bool) {
	if len(b) < 2 || b[0] != rowFormatV1 || b[1] >= 0x80 {
		return rowHeader{}, false
	}
	n := int(b[1])
	off := 2 + (n+7)>>3
	if n > maxCols || off > len(b) {
		return rowHeader{}, false
	}
	return rowHeader{ncols: n, nulls: b[2:off], off: off}, true
}

// readRowHeaderSlow reads any header of row value b written with sch (or
// with fewer trailing columns), or says what is wrong with it.
func readRowHeaderSlow(b []byte, sch sql.Schema) (rowHeader, error) {
	var h rowHeader
	if len(b) == 0 {
		return h, corruptf("empty row")
	}
	if b[0] != rowFormatV1 {
		return h, corruptf("row format version %#x, want %#x", b[0], rowFormatV1)
	}
	ncols, n := binary.Uvarint(b[1:])
	if n <= 0 {
		return h, corruptf("row column count")
	}
	if ncols > uint64(len(sch)) {
		return h, corruptf("row has %d columns, schema has %d", ncols, len(sch))
	}
	h.ncols = int(ncols)
	h.off = 1 + n + (h.ncols+7)/8
	if h.off > len(b) {
		return h, corruptf("row of %d bytes ends in its NULL bitmap", len(b))
	}
	h.nulls = b[1+n : h.off]
	return h, nil
}

// DecodeRow decodes a row value written by AppendRow against sch. It reuses
// dst when its capacity allows and returns a row of len(sch) values of the Go
// types GMS uses for each column; strings and byte slices are copies, never
// aliases of b. Columns the row was written without decode as NULL. Malformed
// input is ErrCorrupt.
func DecodeRow(b []byte, sch sql.Schema, dst sql.Row) (sql.Row, error) {
	return decodeRow(b, sch, dst, nil)
}

func decodeRow(b []byte, sch sql.Schema, dst sql.Row, a *Arena) (sql.Row, error) {
	h, ok := shortHeader(b, len(sch))
	if !ok {
		var err error
		if h, err = readRowHeaderSlow(b, sch); err != nil {
			return dst, fmt.Errorf("codec: row: %w", err)
		}
	}
	kinds := a.kindsOf(sch)
	row := resizeRow(dst, len(sch))
	off := h.off
	for i, col := range sch {
		if i >= h.ncols || h.isNull(i) {
			row[i] = nil
			continue
		}
		v, n, err := decodeValue(b[off:], col.Type, kindAt(kinds, i, col.Type), a)
		if err != nil {
			return dst, fmt.Errorf("codec: row column %d (%s) at offset %d: %w", i, col.Name, off, err)
		}
		row[i] = v
		off += n
	}
	if off != len(b) {
		return dst, fmt.Errorf("codec: row: %w", corruptf("%d bytes after the last column", len(b)-off))
	}
	return row, nil
}

// DecodeRowColumns decodes only the columns with the ordinals cols (indexes
// into sch), in that order, skipping the others without decoding them. It
// reuses dst like DecodeRow and returns len(cols) values.
func DecodeRowColumns(b []byte, sch sql.Schema, cols []int, dst sql.Row) (sql.Row, error) {
	return decodeRowColumns(b, sch, cols, dst, nil)
}

func decodeRowColumns(b []byte, sch sql.Schema, cols []int, dst sql.Row, a *Arena) (sql.Row, error) {
	h, ok := shortHeader(b, len(sch))
	if !ok {
		var err error
		if h, err = readRowHeaderSlow(b, sch); err != nil {
			return dst, fmt.Errorf("codec: row: %w", err)
		}
	}
	last := -1
	for _, c := range cols {
		if c < 0 || c >= len(sch) {
			return dst, fmt.Errorf("%w: column ordinal %d for a schema of %d columns", ErrInvalidValue, c, len(sch))
		}
		last = max(last, c)
	}
	kinds := a.kindsOf(sch)
	// Offsets of the columns up to the last one wanted that the row holds.
	var offBuf [32]int
	offs := offBuf[:0]
	off := h.off
	for i := 0; i <= last && i < h.ncols; i++ {
		offs = append(offs, off)
		if h.isNull(i) {
			continue
		}
		k := kindAt(kinds, i, sch[i].Type)
		if varintKind(k) {
			// The commonest skip, inline: an integer's varint.
			_, n := binary.Uvarint(b[off:])
			if n <= 0 {
				return dst, fmt.Errorf("codec: row column %d (%s) at offset %d: %w", i, sch[i].Name, off, corruptf("bad varint"))
			}
			off += n
			continue
		}
		n, err := skipValue(b[off:], sch[i].Type, k)
		if err != nil {
			return dst, fmt.Errorf("codec: row column %d (%s) at offset %d: %w", i, sch[i].Name, off, err)
		}
		off += n
	}
	row := resizeRow(dst, len(cols))
	for j, c := range cols {
		if c >= h.ncols || h.isNull(c) {
			row[j] = nil
			continue
		}
		v, _, err := decodeValue(b[offs[c]:], sch[c].Type, kindAt(kinds, c, sch[c].Type), a)
		if err != nil {
			return dst, fmt.Errorf("codec: row column %d (%s) at offset %d: %w", c, sch[c].Name, offs[c], err)
		}
		row[j] = v
	}
	return row, nil
}

func resizeRow(dst sql.Row, n int) sql.Row {
	if cap(dst) >= n {
		return dst[:n]
	}
	return make(sql.Row, n)
}

// decodeValue decodes the row encoding of one non-NULL value of typ, of
// kind k, from the front of b and returns it with its length. With an Arena
// a, strings take their bytes from it and values their boxes.
func decodeValue(b []byte, typ sql.Type, k kind, a *Arena) (any, int, error) {
	ba := a.boxer() // nil for the first row, and without an Arena
	switch k {
	case kindInt8, kindUint8:
		if len(b) < 1 {
			return nil, 0, corruptf("truncated TINYINT")
		}
		if k == kindInt8 {
			return int8(b[0]), 1, nil
		}
		return b[0], 1, nil
	case kindInt16, kindInt32, kindInt64, kindYear, kindTime:
		x, n := binary.Varint(b)
		if n <= 0 {
			return nil, 0, corruptf("bad varint")
		}
		v, err := intValue(k, x, ba)
		return v, n, err
	case kindUint16, kindUint32, kindUint64, kindEnum, kindSet, kindBit:
		x, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, 0, corruptf("bad uvarint")
		}
		if !validUint(typ, k, x) {
			return nil, 0, corruptf("%d is not a value of %s", x, typeName(typ))
		}
		v, err := uintValue(k, x, ba)
		return v, n, err
	case kindFloat32:
		if len(b) < 4 {
			return nil, 0, corruptf("truncated FLOAT")
		}
		return box(ba, float32Type, math.Float32frombits(binary.LittleEndian.Uint32(b))), 4, nil
	case kindFloat64:
		if len(b) < 8 {
			return nil, 0, corruptf("truncated DOUBLE")
		}
		return box(ba, float64Type, math.Float64frombits(binary.LittleEndian.Uint64(b))), 8, nil
	case kindDecimal:
		return decodeDecimalValue(b)
	case kindDate, kindDatetime:
		sec, n := binary.Varint(b)
		if n <= 0 {
			return nil, 0, corruptf("bad time seconds")
		}
		ns, m := binary.Uvarint(b[n:])
		if m <= 0 || ns >= 1e9 {
			return nil, 0, corruptf("bad time nanoseconds")
		}
		return time.Unix(sec, int64(ns)).UTC(), n + m, nil
	case kindString, kindBytes, kindJSON:
		body, n, err := lengthPrefixed(b)
		if err != nil {
			return nil, 0, err
		}
		switch k {
		case kindString:
			switch {
			case ba != nil:
				return ba.boxString(ba.string(body)), n, nil
			case a != nil:
				return a.string(body), n, nil
			}
			return string(body), n, nil
		case kindBytes:
			return append(make([]byte, 0, len(body)), body...), n, nil
		}
		v, err := jsonFromText(body)
		return v, n, err
	}
	return nil, 0, unsupportedType(typ, "rows")
}

// skipValue returns the length of the row encoding of one non-NULL value of
// typ, of kind k, at the front of b.
// varintKind reports whether values of kind k are stored as one varint
// (skipValue's second case).
func varintKind(k kind) bool {
	switch k {
	case kindInt16, kindInt32, kindInt64, kindYear, kindTime,
		kindUint16, kindUint32, kindUint64, kindEnum, kindSet, kindBit:
		return true
	}
	return false
}

func skipValue(b []byte, typ sql.Type, k kind) (int, error) {
	switch k {
	case kindInt8, kindUint8, kindFloat32, kindFloat64:
		n := 1
		switch k {
		case kindFloat32:
			n = 4
		case kindFloat64:
			n = 8
		}
		if len(b) < n {
			return 0, corruptf("truncated %d-byte value", n)
		}
		return n, nil
	case kindInt16, kindInt32, kindInt64, kindYear, kindTime,
		kindUint16, kindUint32, kindUint64, kindEnum, kindSet, kindBit:
		_, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, corruptf("bad varint")
		}
		return n, nil
	case kindDate, kindDatetime:
		_, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, corruptf("bad time seconds")
		}
		_, m := binary.Uvarint(b[n:])
		if m <= 0 {
			return 0, corruptf("bad time nanoseconds")
		}
		return n + m, nil
	case kindDecimal:
		_, n, err := decimalValueParts(b)
		return n, err
	case kindString, kindBytes, kindJSON:
		_, n, err := lengthPrefixed(b)
		return n, err
	}
	return 0, unsupportedType(typ, "rows")
}

// lengthPrefixed returns the body of a uvarint-length-prefixed value, aliasing
// b, and the total length.
func lengthPrefixed(b []byte) ([]byte, int, error) {
	l, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, 0, corruptf("bad length")
	}
	if l > uint64(len(b)-n) {
		return nil, 0, corruptf("length %d exceeds the %d bytes left", l, len(b)-n)
	}
	end := n + int(l)
	return b[n:end], end, nil
}

type decimalValue struct {
	exp int32
	neg bool
	mag []byte // big-endian magnitude, aliasing the row
}

func decimalValueParts(b []byte) (decimalValue, int, error) {
	var d decimalValue
	exp, n := binary.Varint(b)
	if n <= 0 || exp < math.MinInt32 || exp > math.MaxInt32 {
		return d, 0, corruptf("bad decimal exponent")
	}
	d.exp = int32(exp)
	ls, m := binary.Uvarint(b[n:])
	if m <= 0 {
		return d, 0, corruptf("bad decimal length")
	}
	n += m
	d.neg = ls&1 != 0
	l := ls >> 1
	if l > uint64(len(b)-n) {
		return d, 0, corruptf("decimal of %d bytes exceeds the %d bytes left", l, len(b)-n)
	}
	d.mag = b[n : n+int(l)]
	return d, n + int(l), nil
}

func decodeDecimalValue(b []byte) (any, int, error) {
	p, n, err := decimalValueParts(b)
	if err != nil {
		return nil, 0, err
	}
	if len(p.mag) < 8 {
		c := int64(readBigEndian(p.mag, 0))
		if p.neg {
			c = -c
		}
		return decimal.New(c, p.exp), n, nil
	}
	c := new(big.Int).SetBytes(p.mag)
	if p.neg {
		c.Neg(c)
	}
	return decimal.NewFromBigInt(c, p.exp), n, nil
}
