package codec_test

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/strata-db/strata/sqlstore/codec"
)

// TestStringPrefixKey checks that the key of every string that begins
// with a prefix begins with the prefix's key beginning, in each key style,
// and that strings that do not begin with it (under the collation) lie
// outside [beginning, successor).
func TestStringPrefixKey(t *testing.T) {
	colls := []sql.CollationID{
		sql.Collation_utf8mb4_0900_bin,   // code points, NO PAD
		sql.Collation_utf8mb4_0900_ai_ci, // weights, NO PAD
		sql.Collation_utf8mb4_bin,        // code points, PAD SPACE
		sql.Collation_utf8mb4_general_ci, // weights, PAD SPACE
		sql.Collation_latin1_swedish_ci,  // weights, PAD SPACE
		sql.Collation_utf8mb4_unicode_ci, // weights, PAD SPACE
	}
	prefixes := []string{"a", "ab", "a b", "a ", "a\t", "\x00", "a\x00", "ÿ"}
	tails := []string{"", " ", "  ", "\t", "\x00", "b", " b", "\tb", "Ā", "€", "😀", "\U0010FFFF", "ÿ", "z  "}
	others := []string{"", "`", "b", "aa", "A", "B", "a\x01", "`\U0010FFFF"}
	for _, c := range colls {
		for _, base := range []sql.Type{types.MustCreateString(sqltypes.VarChar, 20, c), types.MustCreateString(sqltypes.Char, 20, c), types.CreateText(c)} {
			for _, p := range prefixes {
				if c.CharacterSet() == sql.CharacterSet_latin1 && p == "ÿ" {
					continue
				}
				begin, ok := codec.AppendStringPrefixKey(nil, base, p)
				if !ok {
					t.Fatalf("%s: no prefix key", base)
				}
				end := codec.PrefixSuccessor(nil, begin)
				in := func(s string) bool {
					k, err := codec.AppendKey(nil, base, s, codec.Asc)
					if err != nil {
						t.Fatalf("%s: key of %q: %v", base, s, err)
					}
					return bytes.Compare(k, begin) >= 0 && (end == nil || bytes.Compare(k, end) < 0)
				}
				for _, tail := range tails {
					if c.CharacterSet() == sql.CharacterSet_latin1 && len([]rune(tail)) != len(tail) {
						continue
					}
					if !in(p + tail) {
						t.Errorf("%s: %q begins with %q but its key is outside the prefix's range", base, p+tail, p)
					}
				}
				// A prefix with runes that weigh as a space (NUL under
				// utf8mb4_unicode_ci) may stand for a shorter one: the
				// range is then wider, which the LIKE kept as a filter
				// allows.
				if spaced(c, p) {
					continue
				}
				for _, o := range others {
					if o == "" || o[0] == p[0] || (c != sql.Collation_utf8mb4_0900_bin && c != sql.Collation_utf8mb4_bin && (o[0]|0x20) == (p[0]|0x20)) {
						continue
					}
					if in(o) {
						t.Errorf("%s: %q is inside the range of prefix %q", base, o, p)
					}
				}
			}
		}
	}
	if _, ok := codec.AppendStringPrefixKey(nil, types.MustCreateBinary(sqltypes.VarBinary, 10), "a"); ok {
		t.Error("a binary string has a prefix key")
	}
	if _, ok := codec.AppendStringPrefixKey(nil, types.Int64, "a"); ok {
		t.Error("an integer has a prefix key")
	}
}

func spaced(c sql.CollationID, s string) bool {
	sorter := c.Sorter()
	for _, r := range s {
		if sorter(r) == sorter(' ') {
			return true
		}
	}
	return false
}

// FuzzStringPrefixKey checks, for any string s, split point and key
// style, that the key of s lies in the range of the key beginning of its
// first runes.
func FuzzStringPrefixKey(f *testing.F) {
	f.Add("a\tb", uint8(1), uint8(0))
	f.Add("a  b", uint8(2), uint8(3))
	f.Add("Ā€😀", uint8(1), uint8(1))
	f.Add("a\x00b", uint8(2), uint8(2))
	colls := []sql.CollationID{
		sql.Collation_utf8mb4_0900_bin,
		sql.Collation_utf8mb4_0900_ai_ci,
		sql.Collation_utf8mb4_bin,
		sql.Collation_utf8mb4_general_ci,
		sql.Collation_utf8mb4_unicode_ci,
	}
	f.Fuzz(func(t *testing.T, s string, split, coll uint8) {
		if !utf8.ValidString(s) || len([]rune(s)) > 40 {
			return
		}
		runes := []rune(s)
		p := string(runes[:int(split)%(len(runes)+1)])
		typ := types.MustCreateString(sqltypes.VarChar, 255, colls[int(coll)%len(colls)])
		begin, ok := codec.AppendStringPrefixKey(nil, typ, p)
		if !ok {
			t.Fatalf("no prefix key for %q", p)
		}
		k, err := codec.AppendKey(nil, typ, s, codec.Asc)
		if err != nil {
			t.Fatal(err)
		}
		end := codec.PrefixSuccessor(nil, begin)
		if bytes.Compare(k, begin) < 0 || (end != nil && bytes.Compare(k, end) >= 0) {
			t.Fatalf("%s: key of %q outside the range of its prefix %q", typ, s, p)
		}
	})
}
