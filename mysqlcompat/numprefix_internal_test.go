package mysqlcompat

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/shopspring/decimal"
)

// TestNumberPrefixSpec reads strings as MySQL reads them for an INT,
// DECIMAL or DOUBLE column (testdata/number_prefix): each input line is a
// Go-quoted string, each output line the number read, the code storing it
// gives, and the double a comparison reads (NumericPrefix).
func TestNumberPrefixSpec(t *testing.T) {
	datadriven.RunTest(t, "testdata/number_prefix", func(t *testing.T, td *datadriven.TestData) string {
		if td.Cmd != "scan" {
			td.Fatalf(t, "unknown command %q", td.Cmd)
		}
		var out strings.Builder
		for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
			s, err := strconv.Unquote(line)
			if err != nil {
				td.Fatalf(t, "%s: %v", line, err)
			}
			num, code := numberPrefixCode(s)
			fmt.Fprintf(&out, "%s -> %s %d %v\n", line, num, code, NumericPrefix(s))
		}
		return out.String()
	})
}

// numberPrefixGrammar is numberPrefix written as a regular expression.
var numberPrefixGrammar = regexp.MustCompile(`^[ \t\n\v\f\r]*([+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)`)

// FuzzNumberPrefix checks numberPrefix against its grammar: the number it
// finds is the grammar's, rest is what follows it, and every number it
// finds parses as a DECIMAL and a double.
func FuzzNumberPrefix(f *testing.F) {
	for _, s := range []string{"7", "\v7x", " -1.5e3abc", "5.", ".5", "+.e1", "1e", "1e+", "5.e1", "", "\t", "--5", "0x1A"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		num, rest, ok := numberPrefix(s)
		m := numberPrefixGrammar.FindStringSubmatchIndex(s)
		if ok != (m != nil) {
			t.Fatalf("%q: ok %v, grammar %v", s, ok, m)
		}
		if !ok {
			if rest != s || num != "" {
				t.Fatalf("%q: no number, yet %q %q", s, num, rest)
			}
			return
		}
		if want := s[m[2]:m[3]]; num != want || rest != s[m[1]:] {
			t.Fatalf("%q: %q %q, grammar %q %q", s, num, rest, want, s[m[1]:])
		}
		if _, err := decimal.NewFromString(num); err != nil && !strings.ContainsAny(num, "eE") {
			t.Fatalf("%q: %q is no DECIMAL: %v", s, num, err)
		}
		if _, err := strconv.ParseFloat(num, 64); err != nil && !strings.Contains(err.Error(), "range") {
			t.Fatalf("%q: %q is no double: %v", s, num, err)
		}
	})
}
