package meter

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBarLine(t *testing.T) {
	for _, tc := range []struct {
		name     string
		p        *Bar
		done     int64
		elapsed  time.Duration
		contains []string
	}{
		{
			name: "by operations", p: &Bar{name: "fillrandom", total: 1000000},
			done: 450000, elapsed: 2 * time.Second,
			contains: []string{"fillrandom   [#########-----------]  45%", "450000/1000000 ops", "225.0k ops/s", "ETA 2.4s"},
		},
		{
			name: "by time", p: &Bar{name: "readrandom", total: 1000, duration: 10 * time.Second},
			done: 3000000, elapsed: 5 * time.Second,
			contains: []string{"[##########----------]  50%", "3000000 ops", "600.0k ops/s", "5s of 10s"},
		},
		{
			name: "over the estimate", p: &Bar{name: "readseq", total: 10},
			done: 20, elapsed: time.Second,
			contains: []string{"[####################] 100%", "20 ops/s"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := tc.p.line(tc.done, tc.elapsed)
			for _, want := range tc.contains {
				require.Contains(t, line, want)
			}
		})
	}

	var out bytes.Buffer
	p := Start(&out, "fillseq", 100, 0)
	p.Add(50)
	time.Sleep(progressInterval + 100*time.Millisecond)
	p.Stop()
	p.Stop() // idempotent
	require.Contains(t, out.String(), "fillseq")
	require.True(t, strings.HasSuffix(out.String(), "\r\033[K"), "the bar is erased: %q", out.String())

	var none *Bar = Start(nil, "x", 1, 0)
	none.Add(1)
	none.Stop()
}
