package codec

import (
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/stretchr/testify/require"
)

// charsetSchema has a column of each character set narrower than utf8mb4
// that a write converts into, and a utf8mb4 one.
var charsetSchema = sql.Schema{
	{Name: "l", Type: types.MustCreateString(sqltypes.VarChar, 20, sql.Collation_latin1_swedish_ci), Nullable: true},
	{Name: "a", Type: types.MustCreateString(sqltypes.VarChar, 20, sql.Collation_ascii_general_ci), Nullable: true},
	{Name: "u", Type: types.MustCreateString(sqltypes.VarChar, 20, sql.Collation_utf8mb3_general_ci), Nullable: true},
	{Name: "m", Type: types.MustCreateString(sqltypes.VarChar, 20, sql.Collation_utf8mb4_0900_bin), Nullable: true},
}

// TestDecodeCharset: a stored value with a character its column's set
// cannot hold (written before writes converted them, or damaged) is
// ErrCorrupt naming the column, never a value GMS's encoders panic on.
func TestDecodeCharset(t *testing.T) {
	for _, tc := range []struct {
		row sql.Row
		bad string // the column named in the error, "" for none
	}{
		{sql.Row{"aé", "ok", "ü中", "中😀"}, ""},
		{sql.Row{"a中", nil, nil, nil}, "l"},
		{sql.Row{nil, "é", nil, nil}, "a"},
		{sql.Row{nil, nil, "a😀", nil}, "u"},
		{sql.Row{"a\xff", nil, nil, nil}, "l"},
	} {
		b, err := AppendRow(nil, charsetSchema, tc.row)
		require.NoError(t, err)
		for _, decode := range []func() (sql.Row, error){
			func() (sql.Row, error) { return DecodeRow(b, charsetSchema, nil) },
			func() (sql.Row, error) { var a Arena; return a.DecodeRow(b, charsetSchema) },
			func() (sql.Row, error) { return DecodeRowColumns(b, charsetSchema, []int{3, 2, 1, 0}, nil) },
		} {
			row, err := decode()
			if tc.bad == "" {
				require.NoError(t, err)
				require.Len(t, row, 4)
				continue
			}
			require.ErrorIs(t, err, ErrCorrupt)
			require.Contains(t, err.Error(), "("+tc.bad+")")
		}
	}
}

// FuzzDecodeCharsetRow feeds arbitrary rows of narrow-charset strings to
// DecodeRow: it must not panic, fails only with ErrCorrupt, and every
// string it returns is one its column's set holds.
func FuzzDecodeCharsetRow(f *testing.F) {
	for _, row := range []sql.Row{{"aé", "ok", "ü中", "中😀"}, {"a中", nil, nil, nil}, {nil, nil, "a😀", "x"}} {
		b, err := AppendRow(nil, charsetSchema, row)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		row, err := DecodeRow(b, charsetSchema, nil)
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			return
		}
		for i, v := range row {
			s, ok := v.(string)
			if !ok {
				continue
			}
			enc := charsetSchema[i].Type.(sql.StringType).Collation().CharacterSet().Encoder()
			_, ok = enc.Encode(append([]byte(s), 0, 0, 0, 0)[:len(s)])
			require.True(t, ok, "column %s holds %q", charsetSchema[i].Name, s)
		}
	})
}
