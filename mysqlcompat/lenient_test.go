package mysqlcompat_test

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestLenientWritesSpec runs testdata/lenient_writes: out of strict mode,
// and under IGNORE in any mode, a value its column cannot hold is stored
// adjusted (clamped, truncated, zero) with MySQL's warning naming the
// column and the row; in strict mode it fails with that error. Commands
// as in TestGeneratedValuesSpec.
func TestLenientWritesSpec(t *testing.T) {
	d := newTestDB(t)
	datadriven.RunTest(t, "testdata/lenient_writes", func(t *testing.T, td *datadriven.TestData) string {
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
