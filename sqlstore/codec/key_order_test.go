package codec

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/stretchr/testify/require"
)

// TestKeyOrder checks, for random pairs of values of every key type, that the
// encodings compare as typ.Compare does, NULL first for Asc and last for Desc.
func TestKeyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tt := range keyTypes() {
		t.Run(tt.name, func(t *testing.T) {
			// A small pool makes equal pairs common; fresh values cover the range.
			pool := make([]any, 8)
			for i := range pool {
				pool[i] = tt.gen(r)
			}
			pick := func() any {
				switch r.IntN(10) {
				case 0:
					return nil
				case 1, 2, 3:
					return pool[r.IntN(len(pool))]
				}
				return tt.gen(r)
			}
			for i := 0; i < 2000; i++ {
				a, b := pick(), pick()
				want := sign(sqlCompare(t, tt.typ, a, b))
				for _, dir := range []Direction{Asc, Desc} {
					got := bytes.Compare(mustKey(t, tt.typ, a, dir), mustKey(t, tt.typ, b, dir))
					if dir == Desc {
						got = -got
					}
					require.Equal(t, want, got, "%s: %#v vs %#v", dir, a, b)
				}
			}
		})
	}
}

// TestKeyOrderSorted sorts values by their keys and checks that neighbours are
// in typ.Compare order, which also catches non-transitive encodings.
func TestKeyOrderSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tt := range keyTypes() {
		t.Run(tt.name, func(t *testing.T) {
			type kv struct {
				key []byte
				v   any
			}
			items := make([]kv, 300)
			for i := range items {
				v := tt.gen(r)
				if i%50 == 0 {
					v = nil
				}
				items[i] = kv{mustKey(t, tt.typ, v, Asc), v}
			}
			slices.SortFunc(items, func(a, b kv) int { return bytes.Compare(a.key, b.key) })
			for i := 1; i < len(items); i++ {
				require.LessOrEqual(t, sqlCompare(t, tt.typ, items[i-1].v, items[i].v), 0,
					"%#v sorted before %#v", items[i-1].v, items[i].v)
			}
		})
	}
}

// TestCompositeKeyOrder checks that keys of several appended columns, with
// mixed directions, order like the tuples of their columns.
func TestCompositeKeyOrder(t *testing.T) {
	all := keyTypes()
	byName := map[string]testType{}
	for _, tt := range all {
		byName[tt.name] = tt
	}
	schemas := [][]string{
		{"int32", "varchar 0900_ai_ci"},
		{"varchar 0900_bin", "int64", "decimal(10,2)"},
		{"varbinary", "varbinary"},
		{"varchar 0900_ai_ci", "varchar 0900_ai_ci", "float64"},
		{"decimal internal", "date", "enum", "uint64"},
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, names := range schemas {
		cols := make([]testType, len(names))
		for i, n := range names {
			cols[i] = byName[n]
		}
		for _, dirs := range [][]Direction{allDirs(len(cols), Asc), allDirs(len(cols), Desc), mixedDirs(len(cols))} {
			t.Run(fmtCols(names, dirs), func(t *testing.T) {
				gen := func() []any {
					row := make([]any, len(cols))
					for i, c := range cols {
						if r.IntN(8) == 0 {
							continue // NULL
						}
						row[i] = c.gen(r)
					}
					return row
				}
				// Rows sharing prefixes make the later columns matter.
				base := gen()
				for i := 0; i < 1000; i++ {
					a, b := gen(), gen()
					for j := range a {
						if r.IntN(2) == 0 {
							a[j] = base[j]
						}
						if r.IntN(2) == 0 {
							b[j] = base[j]
						}
					}
					want := 0
					for j := range cols {
						if c := sign(sqlCompare(t, cols[j].typ, a[j], b[j])); c != 0 {
							if dirs[j] == Desc {
								c = -c
							}
							want = c
							break
						}
					}
					require.Equal(t, want, bytes.Compare(tupleKey(t, cols, dirs, a), tupleKey(t, cols, dirs, b)),
						"%#v vs %#v", a, b)
				}
			})
		}
	}
}

func tupleKey(t *testing.T, cols []testType, dirs []Direction, row []any) []byte {
	var k []byte
	for i, c := range cols {
		var err error
		k, err = AppendKey(k, c.typ, row[i], dirs[i])
		require.NoError(t, err)
	}
	return k
}

func allDirs(n int, d Direction) []Direction {
	out := make([]Direction, n)
	for i := range out {
		out[i] = d
	}
	return out
}

func mixedDirs(n int) []Direction {
	out := make([]Direction, n)
	for i := range out {
		out[i] = Direction(i % 2)
	}
	return out
}

func fmtCols(names []string, dirs []Direction) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ","
		}
		s += n + " " + dirs[i].String()
	}
	return s
}

// TestCodePointCollations checks the collations whose strings are keyed by
// their bytes: their Sorters must rise strictly with the code point, so that
// code point order and equality are the collation's.
func TestCodePointCollations(t *testing.T) {
	it := sql.NewCollationsIterator()
	found := 0
	for {
		c, ok := it.Next()
		if !ok {
			break
		}
		if s := collationStyle(c.ID); s != styleCodePoint && s != stylePaddedCodePoint {
			continue
		}
		found++
		sorter := c.ID.Sorter()
		require.NotNil(t, sorter, c.Name)
		prev := sorter(0)
		for r := rune(1); r <= 0x10FFFF; r++ {
			if r >= 0xD800 && r <= 0xDFFF {
				continue // not produced by utf8.DecodeRuneInString
			}
			w := sorter(r)
			if w <= prev {
				t.Fatalf("%s: weight %d of %U does not rise above %d", c.Name, w, r, prev)
			}
			prev = w
		}
	}
	require.Equal(t, 4, found)
	require.Equal(t, styleRawBytes, collationStyle(sql.Collation_binary))
	require.Equal(t, styleWeights, collationStyle(sql.Collation_utf8mb4_0900_ai_ci))
	require.Equal(t, stylePadded, collationStyle(sql.Collation_latin1_bin), "latin1_bin is PAD SPACE")
	require.Equal(t, stylePaddedCodePoint, collationStyle(sql.Collation_utf8mb4_bin), "utf8mb4_bin is PAD SPACE")
	require.Equal(t, stylePadded, collationStyle(sql.Collation_utf8mb4_general_ci))
}
