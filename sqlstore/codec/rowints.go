package codec

import (
	"encoding/binary"
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
)

// IntColumns reads integer columns of stored rows straight from their
// bytes, with no value boxed and the other columns skipped: what an
// aggregate over a range (SUM(k) ... WHERE id BETWEEN ? AND ?) needs of
// each row. It is immutable after NewIntColumns and safe for concurrent
// use.
type IntColumns struct {
	sch   sql.Schema
	kinds []kind
	cols  []int // the columns read, ascending
	last  int
	// width says how each column up to last is skipped: a varint (0), a
	// fixed number of bytes (> 0), or by skipValue (-1).
	width []int8
	// steps, when not nil, read the usual row in one pass (readShort):
	// one step per column up to last, each skipping or reading it, with
	// no NULL test per column. nullMask has a bit for each of those
	// columns, all in the bitmap's first byte.
	steps    []intStep
	nullMask byte
}

// intStep is what readShort does with one column: skip a varint or a
// fixed number of bytes, or read the value as a signed (zigzag) varint,
// an unsigned varint, or a signed or unsigned byte.
type intStep uint8

const (
	stepSkipVarint intStep = iota
	stepSkip1
	stepSkip4
	stepSkip8
	stepVarint
	stepUvarint
	stepInt8
	stepUint8
)

// NewIntColumns returns the reader of columns cols (ordinals of sch,
// ascending, no duplicates) of rows written with sch, or false when one is
// not a TINYINT, SMALLINT, MEDIUMINT, INT or BIGINT, signed or not.
func NewIntColumns(sch sql.Schema, cols []int) (*IntColumns, bool) {
	r := &IntColumns{sch: sch, cols: cols, last: -1}
	for _, c := range sch {
		r.kinds = append(r.kinds, kindOf(c.Type))
	}
	for i, c := range cols {
		if c < 0 || c >= len(sch) || (i > 0 && c <= cols[i-1]) {
			return nil, false
		}
		switch r.kinds[c] {
		case kindInt8, kindInt16, kindInt32, kindInt64, kindUint8, kindUint16, kindUint32, kindUint64:
		default:
			return nil, false
		}
		r.last = c
	}
	for i := 0; i <= r.last; i++ {
		var w int8
		switch r.kinds[i] {
		case kindInt8, kindUint8:
			w = 1
		case kindFloat32:
			w = 4
		case kindFloat64:
			w = 8
		case kindInt16, kindInt32, kindInt64, kindYear, kindTime,
			kindUint16, kindUint32, kindUint64, kindEnum, kindSet, kindBit:
			w = 0
		default:
			w = -1
		}
		r.width = append(r.width, w)
	}
	r.planSteps()
	return r, len(cols) > 0
}

// planSteps makes r.steps when the columns up to last are all integers,
// floats or other varints (no column skipValue must parse) and fit the
// NULL bitmap's first byte: sysbench's (id, k, ...) reading k.
func (r *IntColumns) planSteps() {
	if r.last < 0 || r.last >= 8 {
		return
	}
	steps := make([]intStep, 0, r.last+1)
	j := 0
	for i := 0; i <= r.last; i++ {
		var s intStep
		if j < len(r.cols) && r.cols[j] == i {
			j++
			switch r.kinds[i] {
			case kindInt8:
				s = stepInt8
			case kindUint8:
				s = stepUint8
			case kindInt16, kindInt32, kindInt64:
				s = stepVarint
			default:
				s = stepUvarint
			}
		} else {
			switch r.width[i] {
			case 0:
				s = stepSkipVarint
			case 1:
				s = stepSkip1
			case 4:
				s = stepSkip4
			case 8:
				s = stepSkip8
			default:
				return
			}
		}
		steps = append(steps, s)
		r.nullMask |= 1 << i
	}
	r.steps = steps
}

// Unsigned reports whether the i-th column read is unsigned.
func (r *IntColumns) Unsigned(i int) bool {
	switch r.kinds[r.cols[i]] {
	case kindUint8, kindUint16, kindUint32, kindUint64:
		return true
	}
	return false
}

// Read reads the columns of the row value b (written by AppendRow with the
// reader's schema, or with fewer trailing columns) into vals and null, one
// per column read: a signed value as it is, an unsigned one as its uint64
// bits. Malformed input is ErrCorrupt.
func (r *IntColumns) Read(b []byte, vals []int64, null []bool) error {
	if r.steps != nil && r.readShort(b, vals, null) {
		return nil
	}
	h, ok := shortHeader(b, len(r.sch))
	if !ok {
		var err error
		if h, err = readRowHeaderSlow(b, r.sch); err != nil {
			return fmt.Errorf("codec: row: %w", err)
		}
	}
	off, j, want := h.off, 0, r.cols[0]
	for i := 0; i <= r.last; i++ {
		isNull := i >= h.ncols || h.nulls[i>>3]&(1<<(i&7)) != 0
		if i != want {
			if isNull {
				continue
			}
			switch w := r.width[i]; {
			case w > 0:
				if off+int(w) > len(b) {
					return fmt.Errorf("codec: row column %d (%s) at offset %d: %w", i, r.sch[i].Name, off, corruptf("truncated %d-byte value", w))
				}
				off += int(w)
			case w == 0:
				_, n := binary.Uvarint(b[off:])
				if n <= 0 {
					return fmt.Errorf("codec: row column %d (%s) at offset %d: %w", i, r.sch[i].Name, off, corruptf("bad varint"))
				}
				off += n
			default:
				n, err := skipValue(b[off:], r.sch[i].Type, r.kinds[i])
				if err != nil {
					return fmt.Errorf("codec: row column %d (%s) at offset %d: %w", i, r.sch[i].Name, off, err)
				}
				off += n
			}
			continue
		}
		if isNull {
			vals[j], null[j] = 0, true
		} else {
			var v int64
			var n int
			switch k := r.kinds[i]; k {
			case kindInt8, kindUint8:
				if off >= len(b) {
					return fmt.Errorf("codec: row column %d (%s): %w", i, r.sch[i].Name, corruptf("truncated TINYINT"))
				}
				if k == kindInt8 {
					v = int64(int8(b[off]))
				} else {
					v = int64(b[off])
				}
				n = 1
			case kindInt16, kindInt32, kindInt64:
				// binary.Varint, whose call is not inlined, by hand.
				var u uint64
				u, n = binary.Uvarint(b[off:])
				v = int64(u>>1) ^ -int64(u&1)
			default:
				var u uint64
				u, n = binary.Uvarint(b[off:])
				v = int64(u)
			}
			if n <= 0 {
				return fmt.Errorf("codec: row column %d (%s) at offset %d: %w", i, r.sch[i].Name, off, corruptf("bad varint"))
			}
			vals[j], null[j] = v, false
			off += n
		}
		if j++; j < len(r.cols) {
			want = r.cols[j]
		}
	}
	return nil
}

// readShort reads the columns of a row with a one-byte column count that
// has every column up to last, none of them NULL, in one pass over
// r.steps. It reports false, having read nothing reliable, for any other
// row and for any row it cannot read (a truncated value, a bad varint):
// Read's general loop then reads it or says what is wrong.
func (r *IntColumns) readShort(b []byte, vals []int64, null []bool) bool {
	if len(b) < 3 || b[0] != rowFormatV1 || b[1] >= 0x80 {
		return false
	}
	n := int(b[1])
	if n <= r.last || n > len(r.sch) || b[2]&r.nullMask != 0 {
		return false
	}
	off, j := 2+(n+7)>>3, 0
	for _, s := range r.steps {
		if off >= len(b) {
			return false
		}
		switch s {
		case stepSkipVarint:
			for b[off] >= 0x80 {
				if off++; off >= len(b) {
					return false
				}
			}
			off++
		case stepSkip1:
			off++
		case stepSkip4:
			off += 4
		case stepSkip8:
			off += 8
		case stepInt8:
			vals[j], null[j] = int64(int8(b[off])), false
			off++
			j++
		case stepUint8:
			vals[j], null[j] = int64(b[off]), false
			off++
			j++
		default:
			u, m := binary.Uvarint(b[off:])
			if m <= 0 {
				return false
			}
			v := int64(u)
			if s == stepVarint {
				v = int64(u>>1) ^ -int64(u&1)
			}
			vals[j], null[j] = v, false
			off += m
			j++
		}
	}
	return off <= len(b)
}
