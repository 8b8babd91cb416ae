package codec

import (
	"context"
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/sqltypes"
)

// kind is the encoding family of a SQL type together with the Go type GMS
// uses for its values. It is derived from sql.Type.Type(); only an Arena
// keeps it, for the one schema whose rows it decodes.
type kind uint8

const (
	kindUnsupported kind = iota
	kindNull             // the NULL type: every value is nil
	kindInt8             // TINYINT, BOOLEAN: int8
	kindInt16            // SMALLINT: int16
	kindInt32            // MEDIUMINT, INT: int32
	kindInt64            // BIGINT: int64
	kindUint8            // TINYINT UNSIGNED: uint8
	kindUint16           // SMALLINT UNSIGNED: uint16
	kindUint32           // MEDIUMINT UNSIGNED, INT UNSIGNED: uint32
	kindUint64           // BIGINT UNSIGNED: uint64
	kindFloat32          // FLOAT: float32
	kindFloat64          // DOUBLE: float64
	kindDecimal          // DECIMAL: decimal.Decimal
	kindDate             // DATE: time.Time
	kindDatetime         // DATETIME, TIMESTAMP: time.Time
	kindTime             // TIME: types.Timespan
	kindYear             // YEAR: int16
	kindEnum             // ENUM: uint16
	kindSet              // SET: uint64
	kindBit              // BIT: uint64
	kindString           // CHAR, VARCHAR, TEXT: string
	kindBytes            // BINARY, VARBINARY, BLOB: []byte
	kindJSON             // JSON: sql.JSONWrapper
	kindGeometry         // GEOMETRY and its subtypes: types.GeometryValue
)

// kindOf classifies typ. It never fails: unknown types are kindUnsupported.
func kindOf(typ sql.Type) kind {
	if typ == nil {
		return kindUnsupported
	}
	switch typ.Type() {
	case sqltypes.Null:
		return kindNull
	case sqltypes.Int8:
		return kindInt8
	case sqltypes.Int16:
		return kindInt16
	case sqltypes.Int24, sqltypes.Int32:
		return kindInt32
	case sqltypes.Int64:
		return kindInt64
	case sqltypes.Uint8:
		return kindUint8
	case sqltypes.Uint16:
		return kindUint16
	case sqltypes.Uint24, sqltypes.Uint32:
		return kindUint32
	case sqltypes.Uint64:
		return kindUint64
	case sqltypes.Float32:
		return kindFloat32
	case sqltypes.Float64:
		return kindFloat64
	case sqltypes.Decimal:
		if _, ok := typ.(sql.DecimalType); ok {
			return kindDecimal
		}
	case sqltypes.Date:
		return kindDate
	case sqltypes.Datetime, sqltypes.Timestamp:
		return kindDatetime
	case sqltypes.Time:
		return kindTime
	case sqltypes.Year:
		return kindYear
	case sqltypes.Enum:
		if _, ok := typ.(sql.EnumType); ok {
			return kindEnum
		}
	case sqltypes.Set:
		if _, ok := typ.(sql.SetType); ok {
			return kindSet
		}
	case sqltypes.Bit:
		return kindBit
	case sqltypes.Char, sqltypes.VarChar, sqltypes.Text:
		if _, ok := typ.(sql.StringType); ok {
			return kindString
		}
	case sqltypes.Binary, sqltypes.VarBinary, sqltypes.Blob:
		if _, ok := typ.(sql.StringType); ok {
			return kindBytes
		}
	case sqltypes.TypeJSON:
		return kindJSON
	case sqltypes.Geometry:
		return kindGeometry
	}
	return kindUnsupported
}

// convertCtx is the context handed to typ.Convert. The conversions of the
// types this package supports do not read the session.
var convertCtx = context.Background()

// convert runs typ.Convert on v for a value that is not already of the Go
// type GMS uses for typ, and unwraps lazy wrappers. A conversion that fails,
// leaves the type's range, or yields NULL is ErrInvalidValue.
func convert(typ sql.Type, v any) (any, error) {
	cv, inRange, err := typ.Convert(convertCtx, v)
	if err != nil {
		return nil, fmt.Errorf("%w: %T value %s for %s: %v", ErrInvalidValue, v, shortValue(v), typeName(typ), err)
	}
	if inRange == sql.OutOfRange {
		return nil, invalidValue(typ, v, "out of range")
	}
	if cv, err = sql.UnwrapAny(convertCtx, cv); err != nil {
		return nil, fmt.Errorf("%w: unwrapping %T for %s: %v", ErrInvalidValue, v, typeName(typ), err)
	}
	if cv == nil {
		return nil, invalidValue(typ, v, "converts to NULL")
	}
	return cv, nil
}

// unwrap resolves a lazily loaded value (sql.StringWrapper, sql.BytesWrapper).
func unwrap(typ sql.Type, v any) (any, error) {
	w, ok := v.(sql.AnyWrapper)
	if !ok {
		return v, nil
	}
	u, err := w.UnwrapAny(convertCtx)
	if err != nil {
		return nil, fmt.Errorf("%w: unwrapping %T for %s: %v", ErrInvalidValue, v, typeName(typ), err)
	}
	return u, nil
}
