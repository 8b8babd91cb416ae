package sqlstore

import (
	"strconv"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// JSON scalar types. The codec stores JSON as text, and JSON text knows one
// number type: a document built from SQL values (CAST(x AS JSON),
// JSON_OBJECT(...)) would come back with its integers, unsigned integers and
// decimals turned into doubles, which JSON_TYPE and comparisons tell apart,
// as MySQL's binary JSON does. Before a JSON value is stored, every scalar
// of such a type is therefore replaced by a one-key object
// {"\u0000sqlstore": "<tag>:<text>"} (tags: i int64, u uint64, d decimal,
// t time), which reading turns back into the Go value. Documents parsed from
// JSON text hold none of these types and are stored unchanged. The key
// cannot come from SQL text (JSON text cannot hold a raw NUL in a key
// written by a client without escaping it, and the escape is kept). Part of
// the on-disk format.
const jsonTagKey = "\x00sqlstore"

// tagJSON returns v with its typed scalars tagged, and whether it changed.
func tagJSON(v any) (any, bool) {
	switch x := v.(type) {
	case int8:
		return tagInt(int64(x)), true
	case int16:
		return tagInt(int64(x)), true
	case int32:
		return tagInt(int64(x)), true
	case int64:
		return tagInt(x), true
	case int:
		return tagInt(int64(x)), true
	case uint8:
		return tagUint(uint64(x)), true
	case uint16:
		return tagUint(uint64(x)), true
	case uint32:
		return tagUint(uint64(x)), true
	case uint64:
		return tagUint(x), true
	case uint:
		return tagUint(uint64(x)), true
	case decimal.Decimal:
		return map[string]any{jsonTagKey: "d:" + x.String()}, true
	case time.Time:
		return map[string]any{jsonTagKey: "t:" + x.Format(time.RFC3339Nano)}, true
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if te, changed := tagJSON(e); changed {
				if out == nil {
					out = make(map[string]any, len(x))
					for k2, e2 := range x {
						out[k2] = e2
					}
				}
				out[k] = te
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	case []any:
		var out []any
		for i, e := range x {
			if te, changed := tagJSON(e); changed {
				if out == nil {
					out = append([]any(nil), x...)
				}
				out[i] = te
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	return v, false
}

func tagInt(n int64) map[string]any {
	return map[string]any{jsonTagKey: "i:" + strconv.FormatInt(n, 10)}
}

func tagUint(n uint64) map[string]any {
	return map[string]any{jsonTagKey: "u:" + strconv.FormatUint(n, 10)}
}

// untagJSON reverses tagJSON.
func untagJSON(v any) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 1 {
			if s, ok := x[jsonTagKey].(string); ok {
				if u, ok := untagScalar(s); ok {
					return u, true
				}
			}
		}
		changed := false
		for k, e := range x {
			if ue, c := untagJSON(e); c {
				x[k] = ue
				changed = true
			}
		}
		return x, changed
	case []any:
		changed := false
		for i, e := range x {
			if ue, c := untagJSON(e); c {
				x[i] = ue
				changed = true
			}
		}
		return x, changed
	}
	return v, false
}

func untagScalar(s string) (any, bool) {
	tag, text, ok := strings.Cut(s, ":")
	if !ok {
		return nil, false
	}
	switch tag {
	case "i":
		n, err := strconv.ParseInt(text, 10, 64)
		return n, err == nil
	case "u":
		n, err := strconv.ParseUint(text, 10, 64)
		return n, err == nil
	case "d":
		d, err := decimal.NewFromString(text)
		return d, err == nil
	case "t":
		t, err := time.Parse(time.RFC3339Nano, text)
		return t, err == nil
	}
	return nil, false
}

// jsonForStorage returns the value to store for a JSON column.
func jsonForStorage(v any) any {
	w, ok := v.(sql.JSONWrapper)
	if !ok {
		return v
	}
	if _, isText := w.(types.JSONBytes); isText {
		return v
	}
	val, err := w.ToInterface()
	if err != nil {
		return v
	}
	if tagged, changed := tagJSON(val); changed {
		return types.JSONDocument{Val: tagged}
	}
	return v
}

// jsonFromStorage returns the value of a stored JSON column.
func jsonFromStorage(v any) any {
	doc, ok := v.(types.JSONDocument)
	if !ok {
		return v
	}
	if val, changed := untagJSON(doc.Val); changed {
		return types.JSONDocument{Val: val}
	}
	return v
}
