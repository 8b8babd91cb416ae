package kv

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

// TestReadCompaction checks that scans which keep meeting a level-0 table
// over the keys they read get level 0 compacted, though level 0 holds too
// few files for its trigger, and that the data reads the same afterwards:
// long scans, and short ones of an iterator each (as SQL ranges are), which
// sample as often per byte since each iterator draws where it samples.
func TestReadCompaction(t *testing.T) {
	for _, short := range []bool{false, true} {
		t.Run(fmt.Sprint("short=", short), func(t *testing.T) {
			o := testOptions(vfs.NewMem())
			o.MemtableSize = 8 << 20 // the burst stays one table
			d, err := Open("/db", o)
			require.NoError(t, err)
			defer d.Close()
			const n = 20000
			want := make([]string, n)
			for i := range n {
				want[i] = fmt.Sprintf("v%d-%090d", i, 0)
				require.NoError(t, d.Set(fmt.Appendf(nil, "key%08d", i), []byte(want[i]), NoSync))
			}
			require.NoError(t, d.Compact(nil, nil))
			// A burst of updates across the key range, flushed into one table.
			for i := 0; i < n; i += 4 {
				want[i] = fmt.Sprintf("u%d-%090d", i, 1)
				require.NoError(t, d.Set(fmt.Appendf(nil, "key%08d", i), []byte(want[i]), NoSync))
			}
			require.NoError(t, d.Flush())
			require.Equal(t, 1, d.Metrics().Levels[0].NumFiles, "one level-0 table, under the trigger")

			// scan reads keys [from, from+count) and checks them.
			scan := func(from, count int) {
				t.Helper()
				it, err := d.NewIter(&IterOptions{LowerBound: fmt.Appendf(nil, "key%08d", from)})
				require.NoError(t, err)
				i := from
				for ok := it.First(); ok && i < from+count; ok = it.Next() {
					require.Equal(t, want[i], string(it.Value()))
					i++
				}
				require.NoError(t, it.Close())
				require.Equal(t, min(n, from+count), i)
			}
			// About four times the bytes the samples need (a sample per MiB on
			// average, drawn at random): a whole scan returns about 2 MiB.
			if short {
				for k := range readCompactionSamples * 2 * n / 100 {
					scan(k*100%n, 100)
				}
			} else {
				for range readCompactionSamples * 2 {
					scan(0, n)
				}
			}
			require.Eventually(t, func() bool { return d.Metrics().Levels[0].NumFiles == 0 }, 20*time.Second, time.Millisecond,
				"level 0 compacted for the reads")
			scan(0, n)
		})
	}
}
