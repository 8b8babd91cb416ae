package sqlstore

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestDuplicateIndexSpec runs testdata/duplicate_index: which new indexes
// warn 1831, checked against MariaDB (same columns, prefix lengths and
// kind), where GMS warned for any two indexes of as many columns.
func TestDuplicateIndexSpec(t *testing.T) {
	d := newTestDB(t)
	datadriven.RunTest(t, "testdata/duplicate_index", func(t *testing.T, td *datadriven.TestData) string {
		if out, ok := specSetup(t, d, td); ok {
			return out
		}
		if td.Cmd == "query" {
			return queryWithWarnings(t, d, strings.TrimSpace(td.Input))
		}
		td.Fatalf(t, "unknown command %q", td.Cmd)
		return ""
	})
}
