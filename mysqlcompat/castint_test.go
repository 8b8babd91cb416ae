package mysqlcompat_test

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestCastIntegerSpec runs testdata/cast_integer: CAST of strings to
// SIGNED and UNSIGNED as MySQL 8 reads them (the longest integer prefix,
// warnings 1292 and 1105), and CASTs of other types as GMS does them.
// Commands as in TestStringLimitsSpec.
func TestCastIntegerSpec(t *testing.T) {
	d := newTestDB(t)
	datadriven.RunTest(t, "testdata/cast_integer", func(t *testing.T, td *datadriven.TestData) string {
		switch td.Cmd {
		case "exec":
			return specExec(t, d, td)
		case "query":
			return queryWithWarnings(t, d, strings.TrimSpace(td.Input))
		default:
			td.Fatalf(t, "unknown command %q", td.Cmd)
			return ""
		}
	})
}
