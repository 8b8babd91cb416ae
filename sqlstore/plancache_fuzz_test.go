package sqlstore

import (
	"strconv"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// FuzzNormalize checks normalize against the parser: a text it accepts
// and that parses as one statement still parses with its integer
// literals replaced by placeholders, with one placeholder per literal, and
// the values put back as digits give the same statement. A literal the
// tokenizer reads otherwise (part of a number, an identifier, a string or
// a comment) would fail one of these.
//
//	go test ./sqlstore -run '^$' -fuzz FuzzNormalize -fuzztime 60s
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"SELECT 1",
		"SELECT c FROM t WHERE id = 5",
		"select c from t where id between 10 and 20 order by c limit 3",
		"SELECT 1.5, 1e-5, 1e+5, .5, 0x1f, x'0a', b'01', 18446744073709551616",
		"SELECT `a1`, t1.c2, @v1, @@session.x FROM db1.t2 WHERE c = 'x''7' AND d = \"y\\\"8\"",
		"SELECT 1 /* 2 */ -- 3\n, 4 # 5\n",
		"SELECT 1--1, -2, +3",
		"SELECT /*! 9 */ 8",
		"SELECT _utf8mb4'5', N'6'",
		"SET @x = 12",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		out, ints, ok := normalize(nil, nil, q)
		if !ok {
			return
		}
		orig, err := parseRecovering(q)
		if err != nil {
			return
		}
		param, err := parseRecovering(string(out))
		if err != nil {
			t.Fatalf("%q parses, its normalized %q does not: %v", q, out, err)
		}
		if n := countParams(param); n != len(ints) {
			t.Fatalf("%q normalized to %q: %d placeholders for %d literals", q, out, n, len(ints))
		}
		// The placeholders stand where the literals were: the parser's
		// reading of the normalized text, each placeholder printed as the
		// literal's digits, is its reading of the text.
		var lits []string
		for i, j := 0, 0; j < len(out); j++ {
			if out[j] == '?' && i < len(q) && isDigit(q[i]) {
				e := i
				for e < len(q) && isDigit(q[e]) {
					e++
				}
				lits = append(lits, q[i:e])
				i = e
				continue
			}
			i++
		}
		if len(lits) != len(ints) {
			t.Fatalf("%q normalized to %q: %d literals found again for %d", q, out, len(lits), len(ints))
		}
		got := sqlparser.String(param)
		for k := len(lits); k >= 1; k-- {
			got = strings.ReplaceAll(got, ":v"+strconv.Itoa(k), lits[k-1])
		}
		// Spaces and plus signs aside: the parser folds unary pluses
		// into a literal, not into a placeholder, and the printer spaces
		// the operators it kept.
		if want := sqlparser.String(orig); squeeze(got) != squeeze(want) {
			t.Fatalf("%q normalized to %q reads %q, the text reads %q", q, out, got, want)
		}
	})
}

// parseRecovering parses q, returning the parser's panics (v0.20.0's
// vitess panics on SELECT"", for one) as errors: the engine recovers from
// them per statement (query.go).
func parseRecovering(q string) (stmt sqlparser.Statement, err error) {
	defer recoverInto(&err, q)
	return sqlparser.Parse(q)
}

func squeeze(s string) string { return strings.NewReplacer(" ", "", "+", "").Replace(s) }

// FuzzNormalizeInsert holds normalizeValues with strings (an INSERT's or
// UPDATE's text's literals made arguments) to the parser: when a text and its
// normalized form both parse, the normalized statement with each
// placeholder given back its value as a literal reads as the text does,
// so an argument carries exactly the string or integer the text held.
func FuzzNormalizeInsert(f *testing.F) {
	for _, s := range []string{
		"INSERT INTO t (id, k, c, pad) VALUES (0, 5, 'abc', 'def')",
		"INSERT INTO t VALUES (1, 'it''s', 'x\\'y', _utf8mb4'z', N'n', X'0a', 'a' 'b')",
		"insert into t values (2, DATE '2026-12-07', '', 'q' COLLATE utf8mb4_bin)",
		"INSERT INTO t VALUES (3, '\"', '`', '#', '-- x', '/* y */')",
		"INSERT INTO t SELECT 'a', 1 FROM u WHERE c = 'b'",
		"UPDATE sbtest1 SET c='12345-67890 abc' WHERE id=42",
		"UPDATE t SET c = 'x', pad = 'it''s', k = -3 WHERE id = '7'",
		"update t set c = 'a' COLLATE utf8mb4_bin, d = _latin1'b' where c = 'q' and c like 'a%'",
		"SELECT id, k FROM t WHERE name = 'bob' AND c IN ('x', 'y''z') OR d LIKE 'p%' -- 'q'\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		out, _, vals, ok := normalizeValues(nil, nil, nil, q, true)
		if !ok {
			return
		}
		orig, err := parseRecovering(q)
		if err != nil {
			return
		}
		param, err := parseRecovering(string(out))
		if err != nil {
			return // a typed literal (DATE ?) or an introduced one: GMS plans it
		}
		if n := countParams(param); n != len(vals) {
			t.Fatalf("%q normalized to %q: %d placeholders for %d values", q, out, n, len(vals))
		}
		_ = sqlparser.Walk(func(node sqlparser.SQLNode) (bool, error) {
			v, isVal := node.(*sqlparser.SQLVal)
			if !isVal || v.Type != sqlparser.ValArg {
				return true, nil
			}
			k, err := strconv.Atoi(strings.TrimPrefix(string(v.Val), ":v"))
			if err != nil || k < 1 || k > len(vals) {
				t.Fatalf("%q normalized to %q: placeholder %s", q, out, v.Val)
			}
			switch x := vals[k-1].(type) {
			case int64:
				v.Type, v.Val = sqlparser.IntVal, []byte(strconv.FormatInt(x, 10))
			case string:
				v.Type, v.Val = sqlparser.StrVal, []byte(x)
			}
			return true, nil
		}, param)
		// An integer argument carries the value, not its digits: 007 is 7.
		_ = sqlparser.Walk(func(node sqlparser.SQLNode) (bool, error) {
			if v, isVal := node.(*sqlparser.SQLVal); isVal && v.Type == sqlparser.IntVal {
				if x, err := parseDigits(string(v.Val)); err == nil {
					v.Val = []byte(strconv.FormatInt(x, 10))
				}
			}
			return true, nil
		}, orig)
		if got, want := sqlparser.String(param), sqlparser.String(orig); squeeze(got) != squeeze(want) {
			t.Fatalf("%q normalized to %q reads %q, the text reads %q", q, out, got, want)
		}
	})
}
