package planner

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// points returns n exact points on a unique key, in ascending order.
func points(n int) []KeyRange {
	rs := make([]KeyRange, n)
	for i := range rs {
		k := []byte(fmt.Sprintf("k%03d", i))
		rs[i] = KeyRange{Start: k, End: append(append([]byte{}, k...), 0), Point: true}
	}
	return rs
}

func TestParseMode(t *testing.T) {
	m, err := ParseMode("naive")
	require.NoError(t, err)
	require.Equal(t, Naive, m)
	m, err = ParseMode("Planned")
	require.NoError(t, err)
	require.Equal(t, Planned, m)
	_, err = ParseMode("fast")
	require.Error(t, err)
}

func TestFormatBytes(t *testing.T) {
	require.Equal(t, "1MiB", formatBytes(1<<20))
	require.Equal(t, "256KiB", formatBytes(256<<10))
	require.Equal(t, "300B", formatBytes(300))
	require.Equal(t, "1536KiB", formatBytes(1536<<10))
}

func TestParseOptions(t *testing.T) {
	base := Options{Mode: Naive, FetchBatch: 7}
	for _, tc := range []struct {
		in   string
		want Options
		err  string
	}{
		{in: "", want: base},
		{in: " , ", want: base},
		{in: "multiget_batch=64", want: Options{Mode: Naive, FetchBatch: 7, MultiGetBatch: 64}},
		{in: "long_range=1MiB, short_range=16k,MAX_READAHEAD=4M", want: Options{Mode: Naive, FetchBatch: 7, LongRangeBytes: 1 << 20, ShortRangeBytes: 16 << 10, MaxReadahead: 4 << 20}},
		{in: "fetch_batch=0", want: Options{Mode: Naive}},
		{in: "multiscan_async=-1,multiscan_chunk=8", want: Options{Mode: Naive, FetchBatch: 7, MultiScanAsyncBytes: -1, MultiScanChunk: 8}},
		{in: "min_readahead=1GiB,full_scan_readahead=512KiB,small_limit=10", want: Options{Mode: Naive, FetchBatch: 7, MinReadahead: 1 << 30, FullScanReadahead: 512 << 10, SmallLimit: 10}},
		{in: "batch=3", err: `unknown threshold "batch"`},
		{in: "multiget_batch", err: "want name=value"},
		{in: "multiget_batch=-1", err: "multiget_batch=-1: want a count"},
		{in: "multiget_batch=1k", err: "want a count"},
		{in: "multiget_batch=2000000000", err: "want a count"},
		{in: "long_range=1TB", err: "want a size"},
		{in: "long_range=99999999999999999999", err: "want a size"},
		{in: "long_range=2000GiB", err: "want a size"},
		{in: "short_range=17179869185G", err: "want a size"},
		{in: "short_range=1099511627776G", err: "want a size"},
		{in: "short_range=1024G", want: Options{Mode: Naive, FetchBatch: 7, ShortRangeBytes: 1 << 40}},
	} {
		got, err := ParseOptions(tc.in, base)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.in)
			require.Equal(t, base, got, "a failed parse returns base")
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	// Every name parses, and the parse reaches Choose.
	for _, name := range OptionNames() {
		_, err := ParseOptions(name+"=1", Options{})
		require.NoError(t, err, name)
	}
	o, err := ParseOptions("multiget_batch=8", Options{})
	require.NoError(t, err)
	require.Equal(t, "MultiGet(keys=10, batch=8)", Choose(points(10), Index{Primary: true, Unique: true, Covering: true}, Hints{}, o).String())
}

// TestChooseUnpreparable: ranges a MultiScan cannot prepare together (one
// unbounded, or overlapping) are read by Scans, as they run.
func TestChooseUnpreparable(t *testing.T) {
	open := []KeyRange{{Start: []byte("a"), End: []byte("b")}, {Start: []byte("c")}}
	require.Equal(t, "Scans(ranges=2, readahead=auto)", Choose(open, Index{Primary: true, Unique: true, Covering: true}, Hints{}, Options{}).String())
	overlap := []KeyRange{{Start: []byte("a"), End: []byte("c")}, {Start: []byte("b"), End: []byte("d")}}
	require.Equal(t, "Scans(ranges=2, readahead=auto)", Choose(overlap, Index{Primary: true, Unique: true, Covering: true}, Hints{}, Options{}).String())
	touching := []KeyRange{{Start: []byte("a"), End: []byte("b")}, {Start: []byte("b"), End: []byte("c")}}
	require.Equal(t, "MultiScan(ranges=2, async)", Choose(touching, Index{Primary: true, Unique: true, Covering: true}, Hints{}, Options{}).String())
}

// TestChooseMutable: a plan chosen for a reader that can change says so,
// so that it is run reading at once.
func TestChooseMutable(t *testing.T) {
	for _, rs := range [][]KeyRange{nil, points(1), points(3), {{}}} {
		require.True(t, Choose(rs, Index{Primary: true, Unique: true, Covering: true}, Hints{Mutable: true}, Options{}).Mutable)
		require.False(t, Choose(rs, Index{Primary: true, Unique: true, Covering: true}, Hints{}, Options{}).Mutable)
	}
}
