package mysqlcompat

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseStrInt reads strings as MySQL's strtoll10 does, from strings
// and from bytes alike, without allocating.
func TestParseStrInt(t *testing.T) {
	for _, c := range []struct {
		in   string
		want strInt
	}{
		{"7", strInt{bits: 7}},
		{"7x", strInt{bits: 7, truncated: true}},
		{" \t+12 \t\n", strInt{bits: 12}},
		{"\n12", strInt{truncated: true}},
		{"\x00123", strInt{truncated: true}},
		{"12\x00", strInt{bits: 12, truncated: true}},
		{"", strInt{truncated: true}},
		{"-", strInt{truncated: true}},
		{"-0", strInt{negative: true}},
		{"-3.7", strInt{bits: math.MaxUint64 - 2, negative: true, truncated: true}},
		{"18446744073709551615", strInt{bits: math.MaxUint64}},
		{"18446744073709551616", strInt{bits: math.MaxUint64, overflow: true, truncated: true}},
		{"-9223372036854775808", strInt{bits: 1 << 63, negative: true}},
		{"-9223372036854775809", strInt{bits: 1 << 63, overflow: true, truncated: true}},
		{"000000000000000000000000000042", strInt{bits: 42}},
	} {
		require.Equal(t, c.want, parseStrInt(c.in), "%q", c.in)
		require.Equal(t, c.want, parseStrInt([]byte(c.in)), "%q as bytes", c.in)
	}
	b := []byte(" 12345abc")
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = parseStrInt(b) }))
}
