package codec

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
)

// The golden files pin the durable formats byte for byte: a change to any
// encoding shows up as a diff of testdata/*.golden. Regenerate with
// go test -run Golden -args -rewrite, and review the diff as a format change.

func TestGoldenKeys(t *testing.T) {
	cases := []struct {
		typ sql.Type
		v   any
	}{
		{types.Int32, nil},
		{types.Int8, int8(-1)},
		{types.Int32, int32(1)},
		{types.Int64, int64(math.MinInt64)},
		{types.Uint64, uint64(300)},
		{types.Float64, -2.5},
		{types.Float32, float32(0.5)},
		{decCol, decimal.New(-12345, -2)},
		{decCol, decimal.New(0, -2)},
		{decWide, decimal.RequireFromString("1234567.000000000000000000000000000001")},
		{decInternal, decimal.New(5, -200)},
		{types.Date, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
		{datetime6, time.Date(1000, 1, 1, 12, 30, 0, 5000, time.UTC)},
		{types.Time, types.Timespan(-1000)},
		{types.Year, int16(2024)},
		{enumType, uint16(2)},
		{setType, uint64(5)},
		{bit8, uint64(0x81)},
		{vcBin, "a\x00b"},
		{vcAICI, "Ab"},
		{vcLatin1, "é"},
		{vcMB4Bin, "a  "},
		{vcMB4Bin, "a \tb"},
		{vcMB4Bin, "a  b"},
		{varbinary, []byte{0, 0xff}},
		{binary4, []byte("ab\x00\x00")},
	}
	var sb strings.Builder
	for _, c := range cases {
		for _, dir := range []Direction{Asc, Desc} {
			fmt.Fprintf(&sb, "%-28s %-4s %-40s %x\n", c.typ, dir, goldenValue(c.v), mustKey(t, c.typ, c.v, dir))
		}
	}
	for _, v := range []uint64{0, 247, 248, 65536, math.MaxUint64} {
		fmt.Fprintf(&sb, "uvarint %d %x\n", v, AppendUvarintAscending(nil, v))
	}
	checkGolden(t, "keys.golden", sb.String())
}

func TestGoldenRows(t *testing.T) {
	sch := sql.Schema{
		{Name: "i8", Type: types.Int8}, {Name: "i32", Type: types.Int32}, {Name: "u64", Type: types.Uint64},
		{Name: "f32", Type: types.Float32}, {Name: "f64", Type: types.Float64}, {Name: "d", Type: decCol},
		{Name: "dt", Type: datetime6}, {Name: "tm", Type: types.Time}, {Name: "y", Type: types.Year},
		{Name: "e", Type: enumType}, {Name: "s", Type: vcAICI}, {Name: "b", Type: varbinary},
		{Name: "j", Type: types.JSON},
	}
	rows := []sql.Row{
		{int8(-1), int32(300), uint64(1 << 40), float32(1.5), -0.25, decimal.New(-12345, -2),
			time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC), types.Timespan(-5), int16(1999), uint16(3),
			"héllo", []byte{0, 1}, types.MustJSON(`{"b": [1, "x"], "a": null}`)},
		{nil, int32(0), nil, nil, nil, nil, nil, nil, nil, nil, "", nil, nil},
	}
	var sb strings.Builder
	for _, row := range rows {
		fmt.Fprintf(&sb, "%x\n", mustRow(t, sch, row))
	}
	checkGolden(t, "rows.golden", sb.String())
}

// goldenValue prints v on one line: strings quoted, decimals as c×10^e.
func goldenValue(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case []byte:
		return fmt.Sprintf("%x", x)
	case decimal.Decimal:
		return fmt.Sprintf("%se%d", x.Coefficient(), x.Exponent())
	case time.Time:
		return x.Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("%v", v)
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *rewrite {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -rewrite to create %s", path)
	require.Equal(t, string(want), got, "%s changed: the encoding is durable", path)
}
