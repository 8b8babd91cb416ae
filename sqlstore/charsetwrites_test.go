package sqlstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestCharsetWritesSpec runs testdata/charset_writes: text written to
// latin1, ascii and utf8mb3 columns that their character set cannot hold,
// in strict mode, out of it and with IGNORE, as text and prepared, on the
// planned and the kept paths ("run" and "kept" as in strict_writes).
func TestCharsetWritesSpec(t *testing.T) {
	c := openConn(t)
	ctx := context.Background()
	datadriven.RunTest(t, "testdata/charset_writes", func(t *testing.T, td *datadriven.TestData) string {
		var out strings.Builder
		for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
			q, undo, _ := strings.Cut(line, ";;")
			q, undo = strings.TrimSpace(q), strings.TrimSpace(undo)
			fmt.Fprintf(&out, "> %s\n", q)
			runs := 1
			switch td.Cmd {
			case "run":
			case "kept":
				runs = 4
			default:
				td.Fatalf(t, "unknown command %q", td.Cmd)
			}
			var first string
			for i := range runs {
				got := strictRun(t, c, q, i >= 2)
				if undo != "" {
					if _, err := c.Exec(ctx, undo); err != nil {
						t.Fatalf("%s: %v", undo, err)
					}
				}
				if i == 0 {
					first = got
				} else if got != first {
					fmt.Fprintf(&out, "run %d differs from the first:\n%s", i+1, got)
				}
			}
			out.WriteString(first)
		}
		return out.String()
	})
}
