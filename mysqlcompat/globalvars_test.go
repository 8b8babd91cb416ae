package mysqlcompat_test

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestGlobalOnlyVarsSpec runs testdata/global_only_vars: a global-only
// variable read without a scope is its global value (GMS read the copy the
// session took at its start); @@session of it fails 1238. Commands as in
// TestStringLimitsSpec.
func TestGlobalOnlyVarsSpec(t *testing.T) {
	d := newTestDB(t)
	datadriven.RunTest(t, "testdata/global_only_vars", func(t *testing.T, td *datadriven.TestData) string {
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
