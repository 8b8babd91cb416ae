package mysqlcompat_test

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestGeneratedValuesSpec runs testdata/generated_values: values given for
// generated columns are refused with 3105 in strict mode, as in MySQL 8,
// and ignored with warning 1906 out of it, as in MariaDB; DEFAULT is taken
// in both. Commands:
//
//	exec
//	  statements, one a line
//	query
//	  one statement; prints its rows or its error, then the warnings it
//	  left, in the order they were raised
func TestGeneratedValuesSpec(t *testing.T) {
	d := newTestDB(t)
	datadriven.RunTest(t, "testdata/generated_values", func(t *testing.T, td *datadriven.TestData) string {
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
