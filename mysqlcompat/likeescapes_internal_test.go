package mysqlcompat

import (
	"strings"
	"testing"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// mysqlStringBody decodes body, the text between the quotes of a
// single-quoted string, as MySQL 8 does: \_ and \% keep their backslash,
// \0 \b \n \r \t \Z are control characters, any other escaped character
// is itself, ” is one quote; under NO_BACKSLASH_ESCAPES (noEscapes) a
// backslash is an ordinary character. ok is false when body is not such a
// text (a lone quote, an escape at its end).
func mysqlStringBody(body string, noEscapes bool) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\\' && !noEscapes:
			if i+1 == len(body) {
				return "", false
			}
			i++
			switch e := body[i]; e {
			case '_', '%':
				b.WriteByte('\\')
				b.WriteByte(e)
			case '0':
				b.WriteByte(0)
			case 'b':
				b.WriteByte('\b')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'Z':
				b.WriteByte(26)
			default:
				b.WriteByte(e)
			}
		case c == '\'':
			if i+1 == len(body) || body[i+1] != '\'' {
				return "", false
			}
			i++
			b.WriteByte('\'')
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// parsedStrings parses query as keepWildcardEscapes rewrites it and
// returns the values of its string literals.
func parsedStrings(t testing.TB, query string, ansiQuotes, noEscapes bool) []string {
	text, _ := keepWildcardEscapes(query, ansiQuotes, noEscapes)
	st, err := ast.ParseWithOptions(t.Context(), text, ast.ParserOptions{AnsiQuotes: ansiQuotes})
	if err != nil {
		t.Fatalf("%q rewritten %q: %v", query, text, err)
	}
	var vals []string
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		if v, ok := n.(*ast.SQLVal); ok && v.Type == ast.StrVal {
			vals = append(vals, string(v.Val))
		}
		return true, nil
	}, st)
	return vals
}

func TestKeepWildcardEscapes(t *testing.T) {
	for _, c := range []struct {
		query     string
		ansi, nbe bool
		want      []string
		wantAdded int
		unchanged bool
	}{
		{query: `SELECT 'a\_b', 'a\%', 'a\\_', 'a\n'`, want: []string{`a\_b`, `a\%`, `a\_`, "a\n"}, wantAdded: 2},
		{query: `SELECT /*!50000 'a\_b' */`, want: []string{`a\_b`}, wantAdded: 1},
		{query: "SELECT 'x' -- 'it''s \\_\n, \"y\\_\" # '\\_\n", want: []string{"x", `y\_`}, wantAdded: 1},
		{query: `SELECT 'x' /* it's \_ */, 'z\_'`, want: []string{"x", `z\_`}, wantAdded: 1},
		{query: "SELECT `a\\_'b` FROM t WHERE s = 'q\\_'", want: []string{`q\_`}, wantAdded: 1},
		{query: `SELECT "x\_y" FROM t WHERE 'a\_b'`, ansi: true, want: []string{`a\_b`}, wantAdded: 1},
		{query: `SELECT 'a\b', 'c\', 'd\\'`, nbe: true, want: []string{`a\b`, `c\`, `d\\`}, wantAdded: 4},
		{query: `SELECT 'abc'`, want: []string{"abc"}, unchanged: true},
	} {
		text, added := keepWildcardEscapes(c.query, c.ansi, c.nbe)
		if len(added) != c.wantAdded || len(text) != len(c.query)+len(added) {
			t.Errorf("%q: rewritten %q, added %v", c.query, text, added)
		}
		for _, a := range added {
			if text[a] != '\\' {
				t.Errorf("%q: rewritten %q has no backslash at %d", c.query, text, a)
			}
		}
		if got := parsedStrings(t, c.query, c.ansi, c.nbe); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%q: values %q, want %q", c.query, got, c.want)
		}
		if !c.nbe {
			// Text already rewritten is left as it is (a stored body
			// parsed again).
			if again, _ := keepWildcardEscapes(text, c.ansi, false); again != text {
				t.Errorf("%q: rewritten again %q", text, again)
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { keepWildcardEscapes("SELECT 'abc' FROM t WHERE s LIKE 'a_b%'", false, false) }); n != 0 {
		t.Errorf("a text without a backslash: %v allocations", n)
	}
}

// TestOriginalOffset: the rest of a multi-statement text is the caller's,
// so that a second rewrite under NO_BACKSLASH_ESCAPES does not double its
// backslashes again.
func TestOriginalOffset(t *testing.T) {
	query := `SELECT 'a\b'; SELECT 'c\d'`
	text, added := keepWildcardEscapes(query, false, true)
	rest := text[strings.Index(text, ";")+1:]
	if got := originalRest(query, text, rest, added); got != ` SELECT 'c\d'` {
		t.Errorf("rest %q", got)
	}
}

// FuzzKeepWildcardEscapes parses a string literal of random content, and
// the same after a comment and a quoted identifier, rewritten by
// keepWildcardEscapes, and compares its value with MySQL's decoding.
func FuzzKeepWildcardEscapes(f *testing.F) {
	for _, s := range []string{`a\_b`, `\%`, `\\_`, `\\\_`, `it''s\_`, `\n\0\Z\'`, `x\`, `\\`, `%_`, `é\_`} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, body string, noEscapes bool) {
		if strings.ContainsAny(body, "\x00") {
			return
		}
		want, ok := mysqlStringBody(body, noEscapes)
		if !ok {
			return
		}
		qs := []string{
			"SELECT '" + body + "'",
			"SELECT /* '\\_ */ `x\\_'` , '" + body + "' -- '\n",
		}
		if !strings.Contains(body, "*/") {
			// The tokenizer ends an executable comment at its first */.
			qs = append(qs, "SELECT /*!50000 '"+body+"' */")
		}
		for _, q := range qs {
			got := parsedStrings(t, q, false, noEscapes)
			if len(got) != 1 || got[0] != want {
				t.Fatalf("%q: values %q, want %q", q, got, want)
			}
		}
	})
}

func TestDefinesStored(t *testing.T) {
	for q, want := range map[string]bool{
		"CREATE VIEW v AS SELECT 1":                   true,
		" /* c */ -- x\n# y\n create procedure p() 1": true,
		"alter view v as select 1":                    true,
		"SELECT 'create'":                             false,
		"/*!50000 CREATE */ VIEW":                     false,
		"/* unterminated":                             false,
	} {
		if got := definesStored(q); got != want {
			t.Errorf("definesStored(%q) = %v", q, got)
		}
	}
}
