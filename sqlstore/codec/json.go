package codec

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// JSON column values are stored as JSON text and decoded with types.JSON's
// own parser, so a decoded value is the types.JSONDocument GMS builds from
// that text: numbers come back as float64, as they do for JSON that GMS
// parses itself.

// jsonText returns the JSON text of v, a sql.JSONWrapper or anything
// types.JSON.Convert accepts.
func jsonText(typ sql.Type, v any) ([]byte, error) {
	w, ok := v.(sql.JSONWrapper)
	if !ok {
		cv, err := convert(typ, v)
		if err != nil {
			return nil, err
		}
		if w, ok = cv.(sql.JSONWrapper); !ok {
			return nil, invalidValue(typ, v, "not a JSON document")
		}
	}
	if jb, ok := w.(types.JSONBytes); ok {
		text, err := jb.GetBytes()
		if err != nil {
			return nil, fmt.Errorf("%w: JSON text: %v", ErrInvalidValue, err)
		}
		return text, nil
	}
	val, err := w.ToInterface()
	if err != nil {
		return nil, fmt.Errorf("%w: JSON value: %v", ErrInvalidValue, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(jsonNumbers(val)); err != nil {
		return nil, fmt.Errorf("%w: JSON value: %v", ErrInvalidValue, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// jsonNumbers returns val with every decimal.Decimal replaced by a
// json.Number, so that it is written as a JSON number rather than the quoted
// string decimal.Decimal marshals to. val is copied only if it holds a
// decimal.
func jsonNumbers(val any) any {
	if !hasDecimal(val) {
		return val
	}
	switch x := val.(type) {
	case decimal.Decimal:
		return json.Number(x.String())
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonNumbers(e)
		}
		return out
	}
	return val
}

func hasDecimal(val any) bool {
	switch x := val.(type) {
	case decimal.Decimal:
		return true
	case map[string]any:
		for _, e := range x {
			if hasDecimal(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasDecimal(e) {
				return true
			}
		}
	}
	return false
}

// jsonFromText parses stored JSON text into the types.JSONDocument GMS uses.
// The document does not alias text.
func jsonFromText(text []byte) (any, error) {
	doc, _, err := types.JSON.Convert(convertCtx, text)
	if err != nil {
		return nil, corruptf("JSON text: %v", err)
	}
	return doc, nil
}
