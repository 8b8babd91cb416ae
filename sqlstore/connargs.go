package sqlstore

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/shopspring/decimal"

	"github.com/strata-db/strata/mysqlcompat"
)

// ArgValue returns v as an argument binds it when v is of a type beyond
// database/sql's defaults that a binding takes: an unsigned integer or a
// decimal (github.com/shopspring/decimal), by value or pointer. It reports
// false for other types.
func ArgValue(v any) (any, bool) {
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

// argNames are the names of the first placeholders, made once.
var argNames = func() []string {
	n := make([]string, 64)
	for i := range n {
		n[i] = "v" + strconv.Itoa(i)
	}
	return n
}()

// name is the placeholder name of an argument: its own for :name, vN for
// the N-th ?.
func (a *Arg) name() string {
	if a.Name != "" {
		return a.Name
	}
	if a.Ordinal < len(argNames) {
		return argNames[a.Ordinal]
	}
	return "v" + strconv.Itoa(a.Ordinal)
}

// datetimeLayout is how time.Time arguments are written.
const datetimeLayout = "2006-01-02 15:04:05.999999"

func literal(v any) (sqlparser.Expr, error) {
	switch x := v.(type) {
	case nil:
		return &sqlparser.NullVal{}, nil
	case int64:
		return intLiteralArg(x), nil
	case uint64:
		if x > math.MaxInt64 {
			return sqlparser.InjectedExpr{Expression: injected{expression.NewLiteral(x, types.Uint64)}, Auth: literalAuth}, nil
		}
		return intLiteralArg(int64(x)), nil
	case bool:
		if x {
			return intLiteralArg(1), nil
		}
		return intLiteralArg(0), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%v is not a SQL number", x)
		}
		// Exponent form, so the engine reads a DOUBLE and not a DECIMAL.
		return sqlparser.NewFloatVal(strconv.AppendFloat(nil, x, 'e', -1, 64)), nil
	case decimal.Decimal:
		return mysqlcompat.ExactLiteralArg(sqlparser.NewFloatVal([]byte(x.String()))), nil
	case string:
		return sqlparser.NewStrVal([]byte(x)), nil
	case []byte:
		return binaryArg(x), nil
	case time.Time:
		if x.IsZero() {
			// The zero date, as Rows return it (and go-sql-driver sends it).
			return sqlparser.NewStrVal([]byte("0000-00-00")), nil
		}
		// Rounded to microseconds, the finest a column holds, as MySQL
		// rounds a finer fraction (the layout alone would cut it).
		return sqlparser.NewStrVal([]byte(x.UTC().Round(time.Microsecond).Format(datetimeLayout))), nil
	}
	return nil, fmt.Errorf("unsupported type %T", v)
}

// intLiteralArg is the integer literal x as the engine would build it from its
// digits: of the first type in int8, uint8, int16, uint16, int32, uint32,
// int64 that holds it. It is handed over already built because the
// engine's parse of the digits tries each narrower type in turn, each
// failure allocating an error: 4% of a short query.
func intLiteralArg(x int64) sqlparser.Expr {
	return sqlparser.InjectedExpr{Expression: injected{builtIntLiteral(x)}, Auth: literalAuth}
}

// builtIntLiteral is the literal of intLiteralArg.
func builtIntLiteral(x int64) *expression.Literal {
	var v any
	var t sql.Type
	switch {
	case x >= math.MinInt8 && x <= math.MaxInt8:
		v, t = int8(x), types.Int8
	case x >= 0 && x <= math.MaxUint8:
		v, t = uint8(x), types.Uint8
	case x >= math.MinInt16 && x <= math.MaxInt16:
		v, t = int16(x), types.Int16
	case x >= 0 && x <= math.MaxUint16:
		v, t = uint16(x), types.Uint16
	case x >= math.MinInt32 && x <= math.MaxInt32:
		v, t = int32(x), types.Int32
	case x >= 0 && x <= math.MaxUint32:
		v, t = uint32(x), types.Uint32
	default:
		v, t = x, types.Int64
	}
	return expression.NewLiteral(v, t)
}

// binaryArg is b as a binary string, as the MySQL protocol server binds a
// []byte argument: '42' goes into an INT as 42, where a hex literal
// (x'3432') would be the number 13362.
func binaryArg(b []byte) sqlparser.Expr {
	base := sqltypes.VarBinary
	if len(b) > math.MaxUint16 {
		base = sqltypes.Blob
	}
	t := types.MustCreateBinary(base, int64(len(b)))
	return sqlparser.InjectedExpr{Expression: injected{expression.NewLiteral(string(b), t)}, Auth: literalAuth}
}

// injected carries a built literal through the parser's syntax tree.
type injected struct{ lit *expression.Literal }

// WithResolvedChildren implements sqlparser.Injectable.
func (i injected) WithResolvedChildren([]any) (any, error) { return i.lit, nil }

// String prints the literal where the tree is printed.
func (i injected) String() string { return i.lit.String() }

// literalAuth is the authorization of an argument's literal: none, as for
// a literal in a statement's text (the engine's binder asks every injected
// expression for one, and refuses an empty one when accounts are on).
var literalAuth = sqlparser.AuthInformation{AuthType: sqlparser.AuthType_IGNORE}
