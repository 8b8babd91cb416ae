package table

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/stats"
	"github.com/stretchr/testify/require"
)

// This file holds the datadriven commands of testdata/multiget,
// testdata/multiscan and testdata/readahead (see TestDataDriven).

// fmtCounters prints the named counters of s, in order, on one line.
func fmtCounters(s stats.Snapshot, cs ...stats.Counter) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s=%d", c, s.Get(c)))
	}
	return strings.Join(parts, " ")
}

func ddMultiGet(t *testing.T, d *datadriven.TestData, r *Reader, st *stats.Counters) string {
	var seq uint64
	d.ScanArgs(t, "seq", &seq)
	var keys [][]byte
	var res []GetResult
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		f := strings.Fields(line)
		keys = append(keys, []byte(f[0]))
		res = append(res, GetResult{Done: len(f) > 1 && f[1] == "done"})
	}
	before := st.Snapshot()
	arena, err := r.MultiGet(keys, nil, base.SeqNum(seq), res, nil, nil)
	require.NoError(t, err)
	delta := st.Snapshot().Sub(before)
	var b strings.Builder
	for i, k := range keys {
		g := &res[i]
		switch {
		case !g.Done:
			fmt.Fprintf(&b, "%s: not found\n", k)
		case g.Kind == 0 && g.Seq == 0:
			fmt.Fprintf(&b, "%s: skipped (done)\n", k)
		case g.Kind == base.KindDelete:
			fmt.Fprintf(&b, "%s: deleted #%d\n", k, g.Seq)
		default:
			fmt.Fprintf(&b, "%s: %s #%d\n", k, g.Value(arena), g.Seq)
		}
	}
	fmt.Fprintf(&b, "%s\n", fmtCounters(delta, stats.FilterChecked, stats.FilterUseful,
		stats.BlockCacheHit, stats.BlockCacheMiss, stats.FileReadCount))
	return b.String()
}

func ddMultiScan(t *testing.T, d *datadriven.TestData, r *Reader, st *stats.Counters) string {
	var opts PrepareOptions
	d.MaybeScanArgs(t, "threshold", &opts.CoalesceThreshold)
	opts.Async = d.HasArg("async")
	var ranges []ScanRange
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		f := strings.Fields(line)
		require.Len(t, f, 2, "range %q", line)
		rg := ScanRange{Start: []byte(f[0])}
		if f[1] != "-" {
			rg.End = []byte(f[1])
		}
		ranges = append(ranges, rg)
	}
	before := st.Snapshot()
	p, err := r.PrepareScan(context.Background(), ranges, opts)
	if err != nil {
		return fmt.Sprintf("error: %v\n", err)
	}
	delta := st.Snapshot().Sub(before)
	var b strings.Builder
	for k := range ranges {
		var idxs []string
		for _, pb := range p.blocks[p.spans[k].lo:p.spans[k].hi] {
			idxs = append(idxs, strconv.Itoa(pb.idx))
		}
		if len(idxs) == 0 {
			idxs = []string{"none"}
		}
		fmt.Fprintf(&b, "range %d: blocks %s\n", k, strings.Join(idxs, " "))
	}
	fmt.Fprintf(&b, "prepare: %s\n  %s\n", fmtCounters(delta, stats.MultiScanBlocksFromCache, stats.MultiScanBlocksPrefetched,
		stats.MultiScanCoalescedReads, stats.MultiScanPrefetchBytes),
		fmtCounters(delta, stats.FileReadCount, stats.FileReadBytes))
	before = st.Snapshot()
	it := p.NewIter(IterOptions{})
	for k, rg := range ranges {
		var keys []string
		for kv := it.SeekGE(base.MakeSearchKey(nil, rg.Start, base.SeqNumMax)); kv != nil; kv = it.Next() {
			keys = append(keys, fmtKey(kv.K))
		}
		require.NoError(t, it.Error())
		fmt.Fprintf(&b, "range %d: %s\n", k, strings.Join(keys, " "))
	}
	require.NoError(t, it.Close())
	fmt.Fprintf(&b, "iterate: %s\n", fmtCounters(st.Snapshot().Sub(before), stats.FileReadCount, stats.BlockCacheHit, stats.BlockCacheMiss))
	require.NoError(t, p.Close())
	return b.String()
}

func ddScan(t *testing.T, d *datadriven.TestData, r *Reader, st *stats.Counters) string {
	var opts IterOptions
	if d.HasArg("lower") {
		var s string
		d.ScanArgs(t, "lower", &s)
		opts.Lower = []byte(s)
	}
	if d.HasArg("upper") {
		var s string
		d.ScanArgs(t, "upper", &s)
		opts.Upper = []byte(s)
	}
	if d.HasArg("readahead") {
		var s string
		d.ScanArgs(t, "readahead", &s)
		switch s {
		case "off":
			opts.MaxAutoReadahead = -1
		case "auto":
		default:
			n, err := strconv.ParseInt(s, 10, 64)
			require.NoError(t, err)
			opts.ReadaheadSize = n
		}
	}
	d.MaybeScanArgs(t, "initial", &opts.InitialAutoReadahead)
	d.MaybeScanArgs(t, "max", &opts.MaxAutoReadahead)
	opts.AsyncIO = d.HasArg("async")
	before := st.Snapshot()
	it := r.NewIter(opts)
	n := 0
	if d.HasArg("reverse") {
		for kv := it.Last(); kv != nil; kv = it.Prev() {
			n++
		}
	} else {
		for kv := it.First(); kv != nil; kv = it.Next() {
			n++
		}
	}
	require.NoError(t, it.Close())
	delta := st.Snapshot().Sub(before)
	return fmt.Sprintf("entries=%d blocks=%d limit=%d\n%s\n%s\n", n, r.NumDataBlocks(), r.readLimit(opts.Upper),
		fmtCounters(delta, stats.FileReadCount, stats.FileReadBytes, stats.BlockCacheHit, stats.BlockCacheMiss),
		fmtCounters(delta, stats.PrefetchBytes, stats.PrefetchBytesUsed, stats.PrefetchBytesWasted, stats.PrefetchHits, stats.AsyncReadCount))
}
