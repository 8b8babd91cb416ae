package prefetch

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
)

// TestReadaheadDataDriven runs testdata/readahead, the specification of the
// readahead state machine. Commands:
//
//	init [initial=N] [max=N] [explicit=N]
//	  a new state machine (automatic unless explicit is given)
//	reads
//	  one block read per line: "miss OFF LEN" (the block must come from the
//	  file) or "hit OFF LEN" (served by the block cache or a buffer); each
//	  prints the readahead the read takes and the state after it
func TestReadaheadDataDriven(t *testing.T) {
	var ra Readahead
	datadriven.RunTest(t, "testdata/readahead", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "init":
			var initial, maxSize, explicit int64 = DefaultInitialReadahead, DefaultMaxReadahead, 0
			d.MaybeScanArgs(t, "initial", &initial)
			d.MaybeScanArgs(t, "max", &maxSize)
			d.MaybeScanArgs(t, "explicit", &explicit)
			if explicit != 0 {
				ra = MakeExplicitReadahead(explicit)
			} else {
				ra = MakeReadahead(initial, maxSize)
			}
			return ra.String() + "\n"
		case "reads":
			var b strings.Builder
			for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
				f := strings.Fields(line)
				require.Len(t, f, 3, "line %q", line)
				off, err := strconv.ParseInt(f[1], 10, 64)
				require.NoError(t, err)
				n, err := strconv.ParseInt(f[2], 10, 64)
				require.NoError(t, err)
				var got int64
				switch f[0] {
				case "miss":
					got = ra.Observe(off, n, false)
				case "hit":
					got = ra.Observe(off, n, true)
				default:
					t.Fatalf("unknown read %q", f[0])
				}
				fmt.Fprintf(&b, "%-18s readahead=%-6d %s\n", line, got, ra.String())
			}
			return b.String()
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

// TestReadaheadSizes checks the window sequence of a clean scan in which
// every read past a window misses: 8, 16, ..., 256 KiB, then 256 KiB.
func TestReadaheadSizes(t *testing.T) {
	for _, tc := range []struct {
		name         string
		ra           Readahead
		block        int64
		wantWindows  []int64
		wantFirstOff int64 // offset of the first read that reads ahead
	}{
		{"auto", MakeReadahead(DefaultInitialReadahead, DefaultMaxReadahead), 4096,
			[]int64{8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 256 << 10, 256 << 10}, 8192},
		{"auto-small-max", MakeReadahead(8<<10, 20<<10), 1000,
			[]int64{8 << 10, 16 << 10, 20 << 10, 20 << 10}, 2000},
		{"initial-above-max", MakeReadahead(64<<10, 16<<10), 4096,
			[]int64{16 << 10, 16 << 10}, 8192},
		{"explicit", MakeExplicitReadahead(100 << 10), 4096,
			[]int64{100 << 10, 100 << 10, 100 << 10}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ra := tc.ra
			var windows []int64
			first := int64(-1)
			var covered int64 // bytes [0, covered) are buffered
			for off := int64(0); len(windows) < len(tc.wantWindows); off += tc.block {
				w := ra.Observe(off, tc.block, off+tc.block <= covered)
				if w > 0 {
					if first < 0 {
						first = off
					}
					windows = append(windows, w)
					covered = off + tc.block + w
				}
			}
			require.Equal(t, tc.wantWindows, windows)
			require.Equal(t, tc.wantFirstOff, first)
		})
	}
}

func TestReadaheadDisabled(t *testing.T) {
	for _, ra := range []Readahead{{}, MakeReadahead(8<<10, 0), MakeReadahead(8<<10, -1), MakeExplicitReadahead(0)} {
		require.False(t, ra.Enabled())
		for off := int64(0); off < 100<<10; off += 4096 {
			require.Zero(t, ra.Observe(off, 4096, false))
		}
		require.False(t, ra.Eligible())
	}
	big := MakeExplicitReadahead(1 << 40)
	require.Equal(t, int64(MaxReadaheadSize), big.Size())
}
