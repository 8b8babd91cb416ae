package driver

import (
	"database/sql"
	"database/sql/driver"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/proto/query"
)

// Result values reach database/sql as a MySQL client sees them:
//
//	TINYINT ... BIGINT, YEAR          int64 (uint64 above math.MaxInt64)
//	BIT                               int64 (uint64 above math.MaxInt64)
//	FLOAT, DOUBLE                     float64
//	DECIMAL                           string with the column's scale ("12.50")
//	DATE, DATETIME, TIMESTAMP         time.Time in UTC (the zero time for zero dates)
//	TIME                              string ("-01:02:03.500000")
//	CHAR, VARCHAR, TEXT, ENUM, SET    string (ENUM and SET by their labels)
//	BINARY, VARBINARY, BLOB, geometry []byte
//	JSON                              []byte holding the JSON text
//	NULL                              nil

// converter turns one GMS value of a column into a driver.Value.
type converter func(ctx *gsql.Context, t gsql.Type, v any) (driver.Value, error)

// converterFor picks the conversion of a column type.
func converterFor(t gsql.Type) converter {
	switch t.Type() {
	case query.Type_INT8, query.Type_INT16, query.Type_INT24, query.Type_INT32, query.Type_INT64,
		query.Type_UINT8, query.Type_UINT16, query.Type_UINT24, query.Type_UINT32, query.Type_UINT64,
		query.Type_YEAR, query.Type_BIT:
		return convInt
	case query.Type_FLOAT32, query.Type_FLOAT64:
		return convFloat
	case query.Type_DATE, query.Type_DATETIME, query.Type_TIMESTAMP:
		return convTime
	case query.Type_CHAR, query.Type_VARCHAR, query.Type_TEXT:
		return convString
	case query.Type_BINARY, query.Type_VARBINARY, query.Type_BLOB, query.Type_GEOMETRY, query.Type_JSON:
		return convBytes
	case query.Type_NULL_TYPE:
		return func(*gsql.Context, gsql.Type, any) (driver.Value, error) { return nil, nil }
	default: // DECIMAL, TIME, ENUM, SET and anything else: the text MySQL sends
		return convText
	}
}

// wire returns the MySQL text form of v.
func wire(ctx *gsql.Context, t gsql.Type, v any) (sqltypes.Value, error) {
	sv, err := t.SQL(ctx, nil, v)
	if err != nil {
		return sqltypes.Value{}, fmt.Errorf("strata: converting %T to %s: %w", v, t, err)
	}
	return sv, nil
}

// The converters return v itself, not x, where v already holds the value
// database/sql takes: boxing x again would allocate a copy of it.

func convInt(ctx *gsql.Context, t gsql.Type, v any) (driver.Value, error) {
	switch x := v.(type) {
	case int64:
		return v, nil
	case int32:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int:
		return int64(x), nil
	case uint64:
		return unsigned(x), nil
	case uint32:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint8:
		return int64(x), nil
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	}
	if isNullText(v) {
		return nil, nil
	}
	sv, err := wire(ctx, t, v)
	if err != nil || sv.IsNull() {
		return nil, err
	}
	if t.Type() == query.Type_BIT {
		var u uint64
		for _, b := range sv.Raw() {
			u = u<<8 | uint64(b)
		}
		return unsigned(u), nil
	}
	s := string(sv.Raw())
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	}
	u, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("strata: integer column holds %q: %w", s, err)
	}
	return unsigned(u), nil
}

// isNullText reports whether v, a value of a numeric column, is the text
// NULL, which GMS's plain EXPLAIN puts in its row's numeric columns: a
// NULL, as a MySQL client shows it.
func isNullText(v any) bool {
	s, ok := v.(string)
	return ok && s == "NULL"
}

func unsigned(u uint64) driver.Value {
	if u > math.MaxInt64 {
		return u
	}
	return int64(u)
}

func convFloat(ctx *gsql.Context, t gsql.Type, v any) (driver.Value, error) {
	switch x := v.(type) {
	case float64:
		return v, nil
	case float32:
		// Through the shortest decimal form, so FLOAT 1.1 reads as 1.1.
		f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
		return f, nil
	}
	if isNullText(v) {
		return nil, nil
	}
	sv, err := wire(ctx, t, v)
	if err != nil || sv.IsNull() {
		return nil, err
	}
	f, err := strconv.ParseFloat(string(sv.Raw()), 64)
	if err != nil {
		return nil, fmt.Errorf("strata: float column holds %q: %w", sv.Raw(), err)
	}
	return f, nil
}

// engineZeroDate is the engine's value for a zero DATE or DATETIME
// ('0000-00-00'): 0000-01-01 00:00:00 UTC.
var engineZeroDate = time.Unix(-62167219200, 0).UTC()

// zeroDate is how a zero DATE or DATETIME is written.
const zeroDate = "0000-00-00"

func convTime(ctx *gsql.Context, t gsql.Type, v any) (driver.Value, error) {
	if x, ok := v.(time.Time); ok {
		if x.Equal(engineZeroDate) {
			// The engine's zero date, '0000-00-00'.
			return time.Time{}, nil
		}
		return x.UTC(), nil
	}
	sv, err := wire(ctx, t, v)
	if err != nil || sv.IsNull() {
		return nil, err
	}
	s := string(sv.Raw())
	if len(s) >= len(zeroDate) && s[:len(zeroDate)] == zeroDate {
		return time.Time{}, nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05.999999", "2006-01-02"} {
		if tm, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return tm, nil
		}
	}
	return nil, fmt.Errorf("strata: date column holds %q", s)
}

func convString(ctx *gsql.Context, t gsql.Type, v any) (driver.Value, error) {
	switch x := v.(type) {
	case string:
		return v, nil
	case []byte:
		return string(x), nil
	}
	sv, err := wire(ctx, t, v)
	if err != nil || sv.IsNull() {
		return nil, err
	}
	return string(sv.Raw()), nil
}

func convBytes(ctx *gsql.Context, t gsql.Type, v any) (driver.Value, error) {
	switch x := v.(type) {
	case []byte:
		return append([]byte(nil), x...), nil
	case string:
		if t.Type() != query.Type_JSON {
			return []byte(x), nil
		}
	}
	sv, err := wire(ctx, t, v)
	if err != nil || sv.IsNull() {
		return nil, err
	}
	return append([]byte(nil), sv.Raw()...), nil
}

func convText(ctx *gsql.Context, t gsql.Type, v any) (driver.Value, error) {
	sv, err := wire(ctx, t, v)
	if err != nil || sv.IsNull() {
		return nil, err
	}
	return string(sv.Raw()), nil
}

// scanType is the Go type a column's values scan into best
// (Rows.ColumnTypeScanType): sql.Null* types for nullable columns.
func scanType(t gsql.Type, nullable bool) reflect.Type {
	var v, n any
	switch t.Type() {
	case query.Type_INT8, query.Type_INT16, query.Type_INT24, query.Type_INT32, query.Type_INT64,
		query.Type_UINT8, query.Type_UINT16, query.Type_UINT24, query.Type_UINT32, query.Type_YEAR:
		v, n = int64(0), sql.NullInt64{}
	case query.Type_UINT64, query.Type_BIT:
		v, n = uint64(0), sql.Null[uint64]{}
	case query.Type_FLOAT32, query.Type_FLOAT64:
		v, n = float64(0), sql.NullFloat64{}
	case query.Type_DATE, query.Type_DATETIME, query.Type_TIMESTAMP:
		v, n = time.Time{}, sql.NullTime{}
	case query.Type_BINARY, query.Type_VARBINARY, query.Type_BLOB, query.Type_GEOMETRY, query.Type_JSON:
		v, n = []byte(nil), []byte(nil)
	case query.Type_NULL_TYPE:
		return reflect.TypeOf((*any)(nil)).Elem()
	default:
		v, n = "", sql.NullString{}
	}
	if nullable {
		return reflect.TypeOf(n)
	}
	return reflect.TypeOf(v)
}
