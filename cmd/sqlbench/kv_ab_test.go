package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestKVABSides(t *testing.T) {
	abOf := func(name string) *kvABFlag {
		for _, f := range kvABFlags {
			if f.name == name {
				return f
			}
		}
		t.Fatalf("no A/B flag %s", name)
		return nil
	}
	base := kvRun{iter: kvIterOptions{readaheadSize: 1 << 20}, multiReadBatched: true, multiScanPrepare: true}
	for _, tc := range []struct {
		name     string
		ab       kvAB
		a, b     string // the flag's value on each side
		check    func(t *testing.T, a, b kvRun)
		wantErr  string
		modified func(r *kvRun) // applied to base before the sides are made
	}{
		{
			name: "readahead to 0", ab: kvAB{flag: abOf("readahead_size")}, a: "1048576", b: "0",
			check: func(t *testing.T, a, b kvRun) {
				require.Equal(t, int64(1<<20), a.iter.readaheadSize)
				require.Zero(t, b.iter.readaheadSize)
			},
		},
		{
			name: "readahead to a value", ab: kvAB{flag: abOf("readahead_size"), value: "524288", hasValue: true},
			a: "1048576", b: "524288",
		},
		{
			name: "readahead off", ab: kvAB{flag: abOf("readahead_size"), value: "-1", hasValue: true},
			a: "1048576", b: "-1",
		},
		{
			name: "async flipped", ab: kvAB{flag: abOf("async_io")}, a: "false", b: "true",
			check: func(t *testing.T, a, b kvRun) {
				require.False(t, a.iter.asyncIO)
				require.True(t, b.iter.asyncIO)
				require.Equal(t, a.iter.readaheadSize, b.iter.readaheadSize, "only the flag changes")
			},
		},
		{
			name: "fill_cache flipped", ab: kvAB{flag: abOf("fill_cache")}, a: "true", b: "false",
			modified: func(r *kvRun) { r.iter.fillCache = true },
			check: func(t *testing.T, a, b kvRun) {
				require.False(t, kvStrataIterOptions(a.iter).DontFillCache)
				require.True(t, kvStrataIterOptions(b.iter).DontFillCache)
			},
		},
		{
			name: "direct reads are an open option", ab: kvAB{flag: abOf("use_direct_reads")}, a: "false", b: "true",
			check: func(t *testing.T, a, b kvRun) {
				require.Equal(t, kvOpenOptions{}, a.open)
				require.Equal(t, kvOpenOptions{directReads: true}, b.open)
			},
		},
		{
			name: "mmap reads are an open option", ab: kvAB{flag: abOf("mmap_read")}, a: "true", b: "false",
			modified: func(r *kvRun) { r.open.mmapRead = true },
			check: func(t *testing.T, a, b kvRun) {
				require.Equal(t, kvOpenOptions{mmapRead: true}, a.open)
				require.Equal(t, kvOpenOptions{}, b.open)
			},
		},
		{name: "MultiGet against Gets", ab: kvAB{flag: abOf("multiread_batched")}, a: "true", b: "false"},
		{name: "prepared against plain", ab: kvAB{flag: abOf("multiscan_prepare"), value: "0", hasValue: true}, a: "true", b: "false"},
		{
			name: "same value", ab: kvAB{flag: abOf("multiscan_prepare"), value: "1", hasValue: true},
			wantErr: "-ab=multiscan_prepare: A and B are both true",
		},
		{
			name: "nothing to toggle", ab: kvAB{flag: abOf("readahead_size")},
			modified: func(r *kvRun) { r.iter.readaheadSize = 0 },
			wantErr:  "A and B are both 0",
		},
		{
			name: "bad value", ab: kvAB{flag: abOf("readahead_size"), value: "1MiB", hasValue: true},
			wantErr: `-ab_value="1MiB": want an integer of at least -1 for -readahead_size`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := base
			if tc.modified != nil {
				tc.modified(&r)
			}
			a, b, err := tc.ab.sides(r)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.a, tc.ab.flag.get(&a))
			require.Equal(t, tc.b, tc.ab.flag.get(&b))
			if tc.check != nil {
				tc.check(t, a, b)
			}
		})
	}
}

func TestFormatKVAB(t *testing.T) {
	side := func(value string, ops, bytes int64, reads int64) *kvABSide {
		return &kvABSide{
			value:    value,
			res:      kvResult{ops: ops, bytes: bytes, elapsed: 10 * time.Second},
			counters: []kvCounter{{"file.opens", 3}, {"file.read.count", reads}},
		}
	}
	for _, tc := range []struct {
		name string
		a, b *kvABSide
		want string
	}{
		{
			name: "bytes counted",
			a:    side("1048576", 1420, 1420<<20, 1203), b: side("0", 1000, 1000<<20, 24012),
			want: "A/B readahead_size=1048576 vs 0: ops/sec x1.42, MB/s x1.42, file.read.count x0.050 (1203 vs 24012), per op x0.035 (0.847 vs 24)\n",
		},
		{
			name: "no bytes: no MB/s",
			a:    side("true", 1500, 0, 500), b: side("false", 1000, 0, 10000),
			want: "A/B readahead_size=true vs false: ops/sec x1.50, file.read.count x0.050 (500 vs 10000), per op x0.033 (0.333 vs 10)\n",
		},
		{
			name: "no reads on B",
			a:    side("true", 1000, 10, 0), b: side("false", 2000, 10, 0),
			want: "A/B readahead_size=true vs false: ops/sec x0.50, MB/s x1.00, file.read.count x- (0 vs 0), per op x- (0 vs 0)\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, formatKVAB("readahead_size", tc.a, tc.b))
		})
	}
}

func TestKVRatio(t *testing.T) {
	for _, tc := range []struct {
		a, b float64
		want string
	}{
		{142, 100, "x1.42"},
		{1, 3, "x0.33"},
		{1, 20, "x0.050"},
		{1, 21, "x0.048"},
		{2000, 100, "x20.00"},
		{0, 5, "x0.000"},
		{5, 0, "x-"},
	} {
		require.Equal(t, tc.want, kvRatio(tc.a, tc.b), "%v / %v", tc.a, tc.b)
	}
}

func TestKVCounterDeltas(t *testing.T) {
	before := []kvCounter{{"file.read.count", 10}, {"file.opens", 2}}
	after := []kvCounter{{"file.read.count", 35}, {"file.opens", 2}}
	d := subKVCounters(after, before)
	require.Equal(t, []kvCounter{{"file.read.count", 25}, {"file.opens", 0}}, d)
	require.Equal(t, int64(35), after[0].value, "the operands are not modified")
	require.Equal(t, int64(25), kvCounterValue(d, "file.read.count"))
	require.Zero(t, kvCounterValue(d, "no.such.counter"))

	var out bytes.Buffer
	printKVStatisticsTitled(&out, "STATISTICS (A: async_io=true):", d)
	require.Equal(t, "STATISTICS (A: async_io=true):\nfile.read.count COUNT : 25\nfile.opens COUNT : 0\n\n", out.String())
}
