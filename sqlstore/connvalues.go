package sqlstore

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// The conversion of result values to the Go values Rows.Next returns (the
// table is at Rows.Next): as a MySQL client sees them, converted once,
// here.

// converter turns one GMS value of a column into a Go value.
type converter func(ctx *sql.Context, t sql.Type, v any) (any, error)

// converterFor picks the conversion of a column type.
func converterFor(t sql.Type) converter {
	if isIntColumn(t) {
		return convInt
	}
	switch t.Type() {
	case querypb.Type_FLOAT32, querypb.Type_FLOAT64:
		return convFloat
	case querypb.Type_DATE, querypb.Type_DATETIME, querypb.Type_TIMESTAMP:
		return convTime
	case querypb.Type_CHAR, querypb.Type_VARCHAR, querypb.Type_TEXT:
		return convString
	case querypb.Type_BINARY, querypb.Type_VARBINARY, querypb.Type_BLOB, querypb.Type_GEOMETRY, querypb.Type_JSON:
		return convBytes
	case querypb.Type_NULL_TYPE:
		return func(*sql.Context, sql.Type, any) (any, error) { return nil, nil }
	default: // DECIMAL, TIME, ENUM, SET and anything else: the text MySQL sends
		return convText
	}
}

// wire returns the MySQL text form of v.
func wire(ctx *sql.Context, t sql.Type, v any) (sqltypes.Value, error) {
	sv, err := t.SQL(ctx, nil, v)
	if err != nil {
		return sqltypes.Value{}, fmt.Errorf("strata: converting %T to %s: %w", v, t, err)
	}
	return sv, nil
}

// The converters return v itself, not x, where v already holds the value
// database/sql takes: boxing x again would allocate a copy of it.

// isIntColumn reports whether converterFor(t) is convInt.
func isIntColumn(t sql.Type) bool {
	switch t.Type() {
	case querypb.Type_INT8, querypb.Type_INT16, querypb.Type_INT24, querypb.Type_INT32, querypb.Type_INT64,
		querypb.Type_UINT8, querypb.Type_UINT16, querypb.Type_UINT24, querypb.Type_UINT32, querypb.Type_UINT64,
		querypb.Type_YEAR, querypb.Type_BIT:
		return true
	}
	return false
}

// narrowInt returns an integer narrower than int64 as the int64 convInt
// converts it to.
func narrowInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int16:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint8:
		return int64(x), true
	}
	return 0, false
}

func convInt(ctx *sql.Context, t sql.Type, v any) (any, error) {
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
	if t.Type() == querypb.Type_BIT {
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

func unsigned(u uint64) any {
	if u > math.MaxInt64 {
		return u
	}
	return int64(u)
}

func convFloat(ctx *sql.Context, t sql.Type, v any) (any, error) {
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

func convTime(ctx *sql.Context, t sql.Type, v any) (any, error) {
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

func convString(ctx *sql.Context, t sql.Type, v any) (any, error) {
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

func convBytes(ctx *sql.Context, t sql.Type, v any) (any, error) {
	switch x := v.(type) {
	case []byte:
		return append([]byte(nil), x...), nil
	case string:
		if t.Type() != querypb.Type_JSON {
			return []byte(x), nil
		}
	}
	sv, err := wire(ctx, t, v)
	if err != nil || sv.IsNull() {
		return nil, err
	}
	return append([]byte(nil), sv.Raw()...), nil
}

func convText(ctx *sql.Context, t sql.Type, v any) (any, error) {
	sv, err := wire(ctx, t, v)
	if err != nil || sv.IsNull() {
		return nil, err
	}
	return string(sv.Raw()), nil
}
