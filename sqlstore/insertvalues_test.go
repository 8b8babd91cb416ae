package sqlstore

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/stretchr/testify/require"
)

// checkInsertValues parses query with parseInsertValues and, when it reads
// it, with the engine's parser without the fast path: the trees and
// statement texts must be the same. It reports whether the fast path read
// it. parser is the engine's.
func checkInsertValues(t testing.TB, ctx *sql.Context, parser sql.Parser, query string) bool {
	t.Helper()
	parser = parser.(insertValuesParser).Parser
	got, one, ok := parseInsertValues(query, func(prefix string) (sqlparser.Statement, string, error) {
		st, _, rest, err := parser.Parse(ctx, prefix, true)
		return st, rest, err
	})
	if !ok {
		return false
	}
	want, wantOne, rest, err := parser.Parse(ctx, query, true)
	if err != nil {
		t.Fatalf("the fast path read %q, which the parser refuses: %v", query, err)
	}
	if rest != "" {
		t.Fatalf("the fast path read %q, which holds more than one statement (%q)", query, rest)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the trees of %q differ:\nfast   %#v\nparser %#v", query, got, want)
	}
	// The engine's parser returns its text with the \_ and \% of strings
	// written \\_ and \\% (mysqlcompat's likeescapes.go), the same
	// statement; the fast path returns the caller's text.
	if one != wantOne && strings.ReplaceAll(one, `\`, "") != strings.ReplaceAll(wantOne, `\`, "") {
		t.Fatalf("the statement texts of %q differ: %q, parser %q", query, one, wantOne)
	}
	return true
}

// TestInsertValuesMatchesParser holds the tree of the VALUES fast path to
// the parser's, over texts it must read and texts it must leave alone.
func TestInsertValuesMatchesParser(t *testing.T) {
	d := newTestDB(t)
	read := []string{
		"INSERT INTO t VALUES (1),(2)",
		"insert into t (a, b) values (1, 'x'), (-2, '')",
		"INSERT INTO `my t` (`a`, b) VALUES (1,'a'),(2,'b');",
		"INSERT INTO mydb.t VALUES (NULL, null, TRUE, false),(1,2,3,4) ; ;",
		"INSERT IGNORE INTO t VALUE (1),(2)",
		"INSERT /* hint */ INTO t VALUES (1), (2)",
		"  INSERT INTO t VALUES\n(1.5, -1.5, 1e3, 1E-3, 2.5e+10, -0, 007),\t(18446744073709551616, -9223372036854775809, 0.0, 3, 4, 5, 6)  ",
		`INSERT INTO t VALUES ('a\'b', 'c''d', '\\', '\n\t\r\0\Z\b\"', '\%\_\x', 'é', '"')` + `, ('', ' ', '\\''', '''''', '(', ')', ',')`,
		"INSERT INTO t VALUES ('x\xff\xfe', 'line\nbreak'), ('VALUES (1)', 'a')",
		"INSERT INTO t (a) VALUES (1) , ( 2 ) ,(3)",
	}
	for _, q := range read {
		require.True(t, checkInsertValues(t, d.ctx, d.e.Parser, q), "not read: %q", q)
	}
	left := []string{
		"INSERT INTO t VALUES (1)",
		"INSERT INTO t VALUES (1),(2) ON DUPLICATE KEY UPDATE a = 1",
		"INSERT INTO t VALUES (1),(1+1)",
		"INSERT INTO t VALUES (1),(DEFAULT)",
		"INSERT INTO t VALUES (1),(0x1f)",
		"INSERT INTO t VALUES (1),(X'1f')",
		"INSERT INTO t VALUES (1),(b'1')",
		"INSERT INTO t VALUES ('a'),(_utf8mb4'b')",
		"INSERT INTO t VALUES ('a'),('b' 'c')",
		"INSERT INTO t VALUES ('a'),(\"b\")",
		"INSERT INTO t VALUES (1),(- 1)",
		"INSERT INTO t VALUES (1),(--1)",
		"INSERT INTO t VALUES (1),(1.)",
		"INSERT INTO t VALUES (1),(.5)",
		"INSERT INTO t VALUES (1),(1e)",
		"INSERT INTO t VALUES (1),(1a)",
		"INSERT INTO t VALUES (1),(2); SELECT 1",
		"INSERT INTO t VALUES (1),(2) -- c",
		"INSERT INTO t VALUES (1),(2) /* c */",
		"INSERT INTO t VALUES (1),(2",
		"INSERT INTO t VALUES (1),('a)",
		"INSERT INTO t VALUES (1),('a\x00')",
		"INSERT INTO t VALUES (1),(2) AS new",
		"INSERT INTO t VALUES ROW(1), ROW(2)",
		"INSERT INTO t SELECT * FROM u",
		"INSERT INTO t (a) SELECT 1 FROM u WHERE b IN (SELECT c FROM v)",
		"INSERT INTO t VALUES (1),(@a)",
		"INSERT INTO t VALUES (1),(?)",
		"INSERT INTO t VALUES (1),(now())",
		"INSERT INTO t VALUES (1),()",
		"INSERT INTO t VALUES (1),(2),",
		"INSERT INTO t VALUES (1)(2)",
		"WITH x AS (SELECT 1) INSERT INTO t VALUES (1),(2)",
		"INSERT INTO t RETURNING a VALUES (1),(2)",
	}
	for _, q := range left {
		require.False(t, checkInsertValues(t, d.ctx, d.e.Parser, q), "read: %q", q)
	}
	// Random texts of the shapes above.
	r := rand.New(rand.NewPCG(7, 7))
	readN := 0
	for range 3000 {
		if checkInsertValues(t, d.ctx, d.e.Parser, randomInsertText(r)) {
			readN++
		}
	}
	require.Greater(t, readN, 1000, "the fast path read too few of the random texts")
}

// randomInsertText returns a multi-row INSERT of random literals, mostly of
// the kinds the fast path reads, sometimes not, with random spacing.
func randomInsertText(r *rand.Rand) string {
	var b strings.Builder
	b.WriteString([]string{"INSERT INTO t VALUES", "insert into t (a, b, c) values", "INSERT IGNORE INTO t VALUE", "INSERT INTO `t` (`a`,`b`,`c`) VALUES"}[r.IntN(4)])
	clean := r.IntN(3) > 0 // only literals the fast path reads
	rows := 1 + r.IntN(5)
	for i := range rows {
		if i > 0 {
			b.WriteString(randomSpace(r) + "," + randomSpace(r))
		} else {
			b.WriteString(randomSpace(r))
		}
		b.WriteByte('(')
		for j := range 3 {
			if j > 0 {
				b.WriteString(randomSpace(r) + "," + randomSpace(r))
			}
			b.WriteString(randomLiteral(r, clean))
		}
		b.WriteString(randomSpace(r) + ")")
	}
	b.WriteString([]string{"", "", ";", " ; ", "\n", ";;"}[r.IntN(6)])
	return b.String()
}

func randomSpace(r *rand.Rand) string {
	return []string{"", "", "", " ", "\n", "\t ", "\r\n"}[r.IntN(7)]
}

// literalPieces are literals the fast path reads.
var literalPieces = []string{
	"0", "-0", "1", "-1", "127", "128", "255", "256", "-128", "-129", "32767", "65535", "2147483647", "2147483648",
	"4294967295", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "18446744073709551615",
	"18446744073709551616", "99999999999999999999999999999999", "0.5", "-0.5", "1.25", "123.4567", "1e3", "1E-3",
	"-2.5e+7", "NULL", "null", "TRUE", "False", "''", "' '", "'a'", `'it''s'`, `'a\'b'`, `'\\'`, `'\n\t\0\Z'`,
	`'\%\_'`, `'\q'`, "'é'", "'\xff'", `'"'`, "'0'", "'12abc'", "'-3'", "'1e2'", "'2024-02-30'", "'12:61:00'",
	"'-1.5e400'", "'  7 '", "'x'",
}

// otherPieces are literals the fast path leaves to the parser.
var otherPieces = []string{
	"1.e3", ".5", "0x1F", "X'1F'", "b'01'", "DEFAULT", "1+1", "now()", "'a' 'b'", "\"dq\"", "_utf8mb4'x'", "N'x'",
	"'x'/*c*/", "?",
}

func randomLiteral(r *rand.Rand, clean bool) string {
	if r.IntN(4) == 0 {
		// A random string of awkward bytes.
		var b strings.Builder
		b.WriteByte('\'')
		for range r.IntN(8) {
			awkward := "a'\\\"\n\t \xc3\xa9%_(),;"
			if !clean {
				awkward += "\x00"
			}
			c := awkward[r.IntN(len(awkward))]
			b.WriteByte(c)
			if clean && (c == '\\' || c == '\'') {
				b.WriteByte(c) // an escaped backslash, a doubled quote
			}
		}
		b.WriteByte('\'')
		return b.String()
	}
	if clean || r.IntN(2) == 0 {
		return literalPieces[r.IntN(len(literalPieces))]
	}
	return otherPieces[r.IntN(len(otherPieces))]
}

// FuzzInsertValues holds the fast path's tree to the parser's for any
// text it reads (testdata/fuzz/FuzzInsertValues holds the seed corpus).
func FuzzInsertValues(f *testing.F) {
	for _, s := range []string{
		"INSERT INTO t VALUES (1,'a'),(2,'b')",
		"INSERT INTO t (a,b) VALUES (-1, NULL), (1.5e3, TRUE);",
		`INSERT INTO t VALUES ('a\'b''c\\', ''), ('\0\Z\%', 'é')`,
		"INSERT INTO t VALUES (1),(2) ON DUPLICATE KEY UPDATE a = 1",
	} {
		f.Add(s)
	}
	d := newTestDB(f)
	f.Fuzz(func(t *testing.T, q string) {
		if first, _ := LeadingWords(q); !strings.EqualFold(first, "insert") {
			return
		}
		checkInsertValues(t, d.ctx, d.e.Parser, q)
	})
}
