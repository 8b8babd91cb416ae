package codec

import (
	"errors"
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
)

// Sentinel errors. Every error returned by this package wraps exactly one of
// them, with the type, value or offset that caused it; test with errors.Is.
var (
	// ErrUnsupportedType is returned when a SQL type has no encoding: JSON and
	// geometry values in keys, strings under a collation without a sort order,
	// and types this package does not know in keys or rows.
	ErrUnsupportedType = errors.New("codec: unsupported type")

	// ErrInvalidValue is returned by the encoders when a value is neither the
	// Go value GMS uses for the type nor something typ.Convert turns into one
	// without leaving the type's range, and for values that have no place in
	// the order (a NaN float) or in a row of the given schema.
	ErrInvalidValue = errors.New("codec: invalid value")

	// ErrNotDecodable is returned by DecodeKey for an encoding that cannot be
	// reversed: strings under a collation whose weights are not injective (a
	// case- or accent-insensitive collation, for example) are encoded by their
	// collation weights, and the original string lives only in the row value.
	// The rest returned with it is positioned after the datum, so a caller can
	// go on decoding the columns that follow.
	ErrNotDecodable = errors.New("codec: key not decodable")

	// ErrCorrupt is returned by the decoders and SkipKey when the input is not a
	// valid encoding for the given type and direction: truncated, a flag byte
	// of another family, a bad escape, a non-canonical varint, or a value out
	// of the type's Go range.
	ErrCorrupt = errors.New("codec: corrupt encoding")
)

// corruptf returns an ErrCorrupt error with a description of what was expected
// and found.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

func invalidValue(typ sql.Type, v any, reason string) error {
	return fmt.Errorf("%w: %T value %s for %s: %s", ErrInvalidValue, v, shortValue(v), typeName(typ), reason)
}

// shortValue formats v for an error message, cut to a readable length.
func shortValue(v any) string {
	const max = 64
	if b, ok := v.([]byte); ok && len(b) > max {
		v = b[:max]
	}
	s := fmt.Sprintf("%q", fmt.Sprint(v))
	if len(s) > max {
		s = s[:max] + "..."
	}
	return s
}

func unsupportedType(typ sql.Type, what string) error {
	return fmt.Errorf("%w: %s in %s", ErrUnsupportedType, typeName(typ), what)
}

// typeName is typ.String() without a panic for a nil type.
func typeName(typ sql.Type) string {
	if typ == nil {
		return "<nil type>"
	}
	return typ.String()
}
