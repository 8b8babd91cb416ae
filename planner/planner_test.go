package planner

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func points(n int) []KeyRange {
	rs := make([]KeyRange, n)
	for i := range rs {
		k := []byte(fmt.Sprintf("k%03d", i))
		rs[i] = KeyRange{Start: k, End: append(append([]byte{}, k...), 0), Point: true}
	}
	return rs
}

func ranges(n int, est int64) []KeyRange {
	rs := make([]KeyRange, n)
	for i := range rs {
		rs[i] = KeyRange{Start: []byte(fmt.Sprintf("a%03d", i)), End: []byte(fmt.Sprintf("b%03d", i)), EstBytes: est}
	}
	return rs
}

func TestChoose(t *testing.T) {
	pk := Index{Primary: true, Unique: true, Covering: true}
	sec := Index{}
	covering := Index{Covering: true}
	nonUniquePoints := ranges(5, 100) // points on a non-unique index arrive as ranges
	for _, tc := range []struct {
		name   string
		ranges []KeyRange
		idx    Index
		h      Hints
		o      Options
		want   string
	}{
		{"no range", nil, pk, Hints{}, Options{}, "Empty()"},
		{"pk = ?", points(1), pk, Hints{}, Options{}, "Get(key=1)"},
		{"pk IN (100 ids)", points(100), pk, Hints{}, Options{}, "MultiGet(keys=100, batch=32)"},
		{"pk IN, batch option", points(10), pk, Hints{}, Options{MultiGetBatch: 8}, "MultiGet(keys=10, batch=8)"},
		{"pk IN, descending", points(3), pk, Hints{Reverse: true}, Options{}, "MultiGet(keys=3, batch=32, reverse)"},
		{"short BETWEEN", ranges(1, 4096), pk, Hints{}, Options{}, "Range(readahead=off)"},
		{"medium BETWEEN", ranges(1, 100<<10), pk, Hints{}, Options{}, "Range(readahead=auto)"},
		{"short threshold option", ranges(1, 100<<10), pk, Hints{}, Options{ShortRangeBytes: 128 << 10}, "Range(readahead=off)"},
		{"unknown size", ranges(1, 0), pk, Hints{}, Options{}, "Range(readahead=auto)"},
		{"long BETWEEN", ranges(1, 4<<20), pk, Hints{}, Options{}, "Range(readahead=1MiB, async)"},
		{"long threshold option", ranges(1, 4<<20), pk, Hints{}, Options{LongRangeBytes: 8 << 20}, "Range(readahead=auto)"},
		{"just long", ranges(1, 256<<10), pk, Hints{}, Options{}, "Range(readahead=256KiB, async)"},
		{"10,000 rows", ranges(1, 2300000), pk, Hints{}, Options{}, "Range(readahead=576KiB, async)"},
		{"10,000 rows, small cache", ranges(1, 2300000), pk, Hints{}, Options{NoFillBytes: 1 << 20}, "Range(readahead=576KiB, async, no cache fill)"},
		{"huge BETWEEN is clamped", ranges(1, 1<<30), pk, Hints{}, Options{}, "Range(readahead=2MiB, async, no cache fill)"},
		{"long but LIMIT 10", ranges(1, 1<<30), pk, Hints{Limit: 10}, Options{}, "Range(readahead=auto)"},
		{"long, descending", ranges(1, 1<<30), pk, Hints{Reverse: true}, Options{}, "Range(readahead=auto, reverse)"},
		{"full scan", []KeyRange{{}}, pk, Hints{}, Options{}, "FullScan(readahead=1MiB after 100 rows, async, no cache fill)"},
		{"full scan of a 2 MiB table", []KeyRange{{EstBytes: 2 << 20}}, pk, Hints{}, Options{}, "FullScan(readahead=1MiB after 100 rows, async)"},
		{"full scan of a large table", []KeyRange{{EstBytes: 1 << 30}}, pk, Hints{}, Options{}, "FullScan(readahead=1MiB after 100 rows, async, no cache fill)"},
		{"full scan of a small table", []KeyRange{{EstBytes: 4 << 10}}, pk, Hints{}, Options{}, "FullScan(readahead=off)"},
		{"full scan of a medium table", []KeyRange{{EstBytes: 100 << 10}}, pk, Hints{}, Options{}, "FullScan(readahead=auto)"},
		{"full scan LIMIT 2", []KeyRange{{}}, pk, Hints{Limit: 2}, Options{}, "FullScan(readahead=auto)"},
		{"full scan LIMIT 1000", []KeyRange{{}}, pk, Hints{Limit: 1000}, Options{}, "FullScan(readahead=1MiB, async, no cache fill)"},
		{"full scan descending", []KeyRange{{}}, pk, Hints{Reverse: true}, Options{}, "FullScan(readahead=auto, reverse)"},
		{"k IN on non-unique", nonUniquePoints, covering, Hints{}, Options{}, "MultiScan(ranges=5, async) covering"},
		{"10 short BETWEENs", ranges(10, 1000), pk, Hints{}, Options{}, "MultiScan(ranges=10, async)"},
		{"10 long BETWEENs", ranges(10, 100<<10), pk, Hints{}, Options{}, "MultiScan(ranges=10, async)"},
		{"BETWEENs of unknown size", ranges(3, 0), pk, Hints{}, Options{}, "MultiScan(ranges=3, async)"},
		{"async threshold option", ranges(10, 1000), pk, Hints{}, Options{MultiScanAsyncBytes: 20000}, "MultiScan(ranges=10)"},
		{"async off", ranges(10, 100<<10), pk, Hints{}, Options{MultiScanAsyncBytes: -1}, "MultiScan(ranges=10)"},
		{"many ranges chunked", ranges(300, 10), pk, Hints{}, Options{}, "MultiScan(ranges=300, chunk=256, async)"},
		{"ranges descending", ranges(3, 10), pk, Hints{Reverse: true}, Options{}, "Scans(ranges=3, readahead=auto, reverse)"},
		{"join probe, unique", points(1), pk, Hints{Probe: true}, Options{}, "Get(key=1)"},
		{"join probe, prefix", ranges(1, 0), sec, Hints{Probe: true}, Options{}, "Range(readahead=auto) then MultiGet(batch=32) by primary key"},
		{"join probe, long", ranges(1, 4<<20), pk, Hints{Probe: true}, Options{}, "Range(readahead=auto)"},
		{"join probe, full scan", []KeyRange{{}}, pk, Hints{Probe: true}, Options{}, "FullScan(readahead=auto)"},
		{"join probe, several ranges", ranges(3, 0), pk, Hints{Probe: true}, Options{}, "Scans(ranges=3, readahead=auto)"},
		{"unique secondary point", points(1), Index{Unique: true}, Hints{}, Options{}, "Get(key=1) then Get by primary key"},
		{"chunk option", ranges(10, 10), pk, Hints{}, Options{MultiScanChunk: 4}, "MultiScan(ranges=10, chunk=4, async)"},
		{"fetch batch option", ranges(2, 10), sec, Hints{}, Options{FetchBatch: 8}, "MultiScan(ranges=2, async) then MultiGet(batch=8) by primary key"},
		{"secondary, non-covering", ranges(1, 100), sec, Hints{}, Options{}, "Range(readahead=off) then MultiGet(batch=32) by primary key"},
		{"secondary, covering", ranges(1, 0), covering, Hints{}, Options{}, "Range(readahead=auto) covering"},
		{"naive, covering", ranges(2, 0), covering, Hints{}, Options{Mode: Naive}, "Scans(ranges=2, readahead=auto, iterator per range) then Get per row by primary key"},
		{"secondary IN, non-covering", nonUniquePoints, sec, Hints{}, Options{}, "MultiScan(ranges=5, async) then MultiGet(batch=32) by primary key"},
		{"unique secondary points", points(4), Index{Unique: true}, Hints{}, Options{}, "MultiGet(keys=4, batch=32) then MultiGet(batch=32) by primary key"},
		{"naive points", points(100), pk, Hints{}, Options{Mode: Naive}, "Scans(ranges=100, readahead=auto, iterator per range)"},
		{"naive secondary", ranges(2, 10), sec, Hints{}, Options{Mode: Naive}, "Scans(ranges=2, readahead=auto, iterator per range) then Get per row by primary key"},
		{"naive point", points(1), pk, Hints{}, Options{Mode: Naive}, "Scans(ranges=1, readahead=auto, iterator per range)"},
		{"naive full scan", []KeyRange{{}}, pk, Hints{}, Options{Mode: Naive}, "Scans(ranges=1, readahead=auto, iterator per range)"},
		{"naive empty", nil, pk, Hints{}, Options{Mode: Naive}, "Empty()"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Choose(tc.ranges, tc.idx, tc.h, tc.o)
			require.Equal(t, tc.want, p.String())
			require.Equal(t, len(tc.ranges), len(p.Ranges))
		})
	}
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
