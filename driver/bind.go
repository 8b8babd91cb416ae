package driver

import (
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/shopspring/decimal"
)

// Arguments bind to placeholders as SQL literals:
//
//	nil                      NULL
//	int64, uint64, bool      integer (true is 1)
//	float64                  DOUBLE
//	decimal.Decimal          exact DECIMAL
//	string                   string in the connection's character set
//	[]byte                   binary string (x'...')
//	time.Time                'YYYY-MM-DD HH:MM:SS.ffffff' in UTC
//
// Other types go through database/sql's default conversion (driver.Valuer,
// named integer and string types, ...).

// checkArg accepts the argument types bind handles beyond database/sql's
// defaults.
func checkArg(v any) (any, bool) {
	switch x := v.(type) {
	case uint64:
		return x, true
	case uint:
		return uint64(x), true
	case decimal.Decimal:
		return x, true
	case *decimal.Decimal:
		if x == nil {
			return nil, true
		}
		return *x, true
	}
	return nil, false
}

// bind turns arguments into the engine's bindings: ? placeholders are named
// v1, v2, ... by position, :name placeholders by name.
func bind(args []driver.NamedValue) (map[string]sqlparser.Expr, error) {
	if len(args) == 0 {
		return nil, nil
	}
	out := make(map[string]sqlparser.Expr, len(args))
	for _, a := range args {
		name := a.Name
		if name == "" {
			name = "v" + strconv.Itoa(a.Ordinal)
		}
		e, err := literal(a.Value)
		if err != nil {
			return nil, fmt.Errorf("strata: argument %s: %w", name, err)
		}
		out[name] = e
	}
	return out, nil
}

// datetimeLayout is how time.Time arguments are written.
const datetimeLayout = "2006-01-02 15:04:05.999999"

func literal(v any) (sqlparser.Expr, error) {
	switch x := v.(type) {
	case nil:
		return &sqlparser.NullVal{}, nil
	case int64:
		return sqlparser.NewIntVal(strconv.AppendInt(nil, x, 10)), nil
	case uint64:
		return sqlparser.NewIntVal(strconv.AppendUint(nil, x, 10)), nil
	case bool:
		if x {
			return sqlparser.NewIntVal([]byte("1")), nil
		}
		return sqlparser.NewIntVal([]byte("0")), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%v is not a SQL number", x)
		}
		// Exponent form, so the engine reads a DOUBLE and not a DECIMAL.
		return sqlparser.NewFloatVal(strconv.AppendFloat(nil, x, 'e', -1, 64)), nil
	case decimal.Decimal:
		return sqlparser.NewFloatVal([]byte(x.String())), nil
	case string:
		return sqlparser.NewStrVal([]byte(x)), nil
	case []byte:
		return sqlparser.NewHexVal([]byte(hex.EncodeToString(x))), nil
	case time.Time:
		return sqlparser.NewStrVal([]byte(x.UTC().Format(datetimeLayout))), nil
	}
	return nil, fmt.Errorf("unsupported type %T", v)
}
