package table

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/strata-db/strata/kv/cache"
	"github.com/strata-db/strata/kv/filter"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/prefetch"
	"github.com/strata-db/strata/kv/stats"
	"github.com/stretchr/testify/require"
)

// TestDataDriven runs testdata/table. Commands:
//
//	build [block-size=N] [restart=N] [compression=none|snappy|zstd] [filter=bloom|ribbon]
//	  one entry per line: "ukey.SET.seq:value", "ukey.DEL.seq", or
//	  "rangedel start-end.seq"; prints the index (one line per data block)
//	iter [lower=k] [upper=k]
//	  one move per line: first, last, next, prev, seek-ge k [seq], seek-lt k [seq]
//	get
//	  one lookup per line: "ukey seq"
//	blocks-in-range [lower=k] [upper=k]
//	props
//
// testdata/multiget, testdata/multiscan and testdata/readahead add:
//
//	build ... [cache=N] [gen=N vsize=N]
//	  a block cache of N bytes for the reader; N generated entries
//	  "key00000" ... at seq 1 with vsize-byte values instead of the input
//	multiget seq=N
//	  one user key per line (a line "k done" is pre-resolved); prints each
//	  result and the block-cache lookups the batch made
//	multiscan [threshold=N] [async]
//	  one range per line, "start end" ("-" for no end); prints the blocks
//	  each range holds and the counters of Prepare, then the entries a
//	  seek to each start and Next to its end return, and the reads that
//	  made (none)
//	scan [lower=k] [upper=k] [readahead=off|auto|N] [initial=N] [max=N] [async] [reverse]
//	  a full scan (First and Next, or Last and Prev) and its counters
//
// Rewrite the expected output with -rewrite and review the diff.
func TestDataDriven(t *testing.T) {
	for _, file := range []string{"table", "multiget", "multiscan", "readahead"} {
		t.Run(file, func(t *testing.T) { runDataDriven(t, "testdata/"+file) })
	}
}

func runDataDriven(t *testing.T, path string) {
	var r *Reader
	var st *stats.Counters
	pool := prefetch.NewPool(2)
	defer pool.Close()
	defer func() {
		if r != nil {
			r.Close()
		}
	}()
	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "build":
			if r != nil {
				r.Close()
			}
			var opts WriterOptions
			d.MaybeScanArgs(t, "block-size", &opts.BlockSize)
			d.MaybeScanArgs(t, "restart", &opts.RestartInterval)
			if d.HasArg("compression") {
				var s string
				d.ScanArgs(t, "compression", &s)
				c, err := ParseCompression(s)
				require.NoError(t, err)
				opts.Compression = c
			}
			if d.HasArg("filter") {
				var s string
				d.ScanArgs(t, "filter", &s)
				ft, err := filter.ParseType(s)
				require.NoError(t, err)
				opts.FilterPolicy.Type = ft
			}
			es, ts := parseEntries(t, d.Input)
			if d.HasArg("gen") {
				// gen=N generated entries "key%05d" at seq 1 with
				// vsize-byte values, instead of the input.
				var n, vsize int
				d.ScanArgs(t, "gen", &n)
				d.MaybeScanArgs(t, "vsize", &vsize)
				for i := range n {
					es = append(es, entry{ikey(fmt.Sprintf("key%05d", i), 1, base.KindSet), []byte(strings.Repeat("v", vsize))})
				}
			}
			st = &stats.Counters{}
			ro := ReaderOptions{Stats: st, Pool: pool}
			if d.HasArg("cache") {
				var n int64
				d.ScanArgs(t, "cache", &n)
				ro.Cache = cache.New(n)
			}
			var err error
			r, err = openBytes(buildTable(t, es, ts, opts), ro)
			require.NoError(t, err)
			var b strings.Builder
			if d.HasArg("gen") {
				fmt.Fprintf(&b, "%d blocks, data end %d\n", len(r.index), r.DataEnd())
				return b.String()
			}
			for i, e := range r.index {
				fmt.Fprintf(&b, "block %d %s first=%s sep=%s\n", i, e.h, fmtKey(e.first), fmtKey(e.sep))
			}
			for _, tb := range r.RangeDeletes() {
				fmt.Fprintf(&b, "rangedel [%s, %s)#%d\n", tb.Start, tb.End, tb.Seq)
			}
			return b.String()

		case "iter":
			var lower, upper []byte
			if d.HasArg("lower") {
				var s string
				d.ScanArgs(t, "lower", &s)
				lower = []byte(s)
			}
			if d.HasArg("upper") {
				var s string
				d.ScanArgs(t, "upper", &s)
				upper = []byte(s)
			}
			it := r.NewIter(IterOptions{Lower: lower, Upper: upper})
			var b strings.Builder
			for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
				f := strings.Fields(line)
				var kv *base.KV
				switch f[0] {
				case "first":
					kv = it.First()
				case "last":
					kv = it.Last()
				case "next":
					kv = it.Next()
				case "prev":
					kv = it.Prev()
				case "seek-ge", "seek-lt":
					seq := base.SeqNumMax
					if len(f) > 2 {
						n, err := strconv.ParseUint(f[2], 10, 64)
						require.NoError(t, err)
						seq = base.SeqNum(n)
					}
					k := base.MakeSearchKey(nil, []byte(f[1]), seq)
					if f[0] == "seek-ge" {
						kv = it.SeekGE(k)
					} else {
						kv = it.SeekLT(k)
					}
				default:
					t.Fatalf("unknown move %q", f[0])
				}
				fmt.Fprintf(&b, "%-16s ", line)
				if kv == nil {
					b.WriteString(".")
					if err := it.Error(); err != nil {
						fmt.Fprintf(&b, " err=%v", err)
					}
				} else {
					fmt.Fprintf(&b, "%s:%s", fmtKey(kv.K), kv.V)
				}
				b.WriteString("\n")
			}
			require.NoError(t, it.Close())
			return b.String()

		case "get":
			var b strings.Builder
			for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
				f := strings.Fields(line)
				seq, err := strconv.ParseUint(f[1], 10, 64)
				require.NoError(t, err)
				v, kind, _, found, err := r.Get([]byte(f[0]), base.SeqNum(seq), nil, nil)
				require.NoError(t, err)
				switch {
				case !found:
					fmt.Fprintf(&b, "%s: not found\n", line)
				case kind == base.KindDelete:
					fmt.Fprintf(&b, "%s: deleted\n", line)
				default:
					fmt.Fprintf(&b, "%s: %s\n", line, v)
				}
			}
			return b.String()

		case "blocks-in-range":
			var lower, upper []byte
			if d.HasArg("lower") {
				var s string
				d.ScanArgs(t, "lower", &s)
				lower = []byte(s)
			}
			if d.HasArg("upper") {
				var s string
				d.ScanArgs(t, "upper", &s)
				upper = []byte(s)
			}
			var out []string
			for _, h := range r.BlocksInRange(lower, upper, nil) {
				for i, e := range r.index {
					if e.h == h {
						out = append(out, strconv.Itoa(i))
					}
				}
			}
			if len(out) == 0 {
				return "blocks: none\n"
			}
			return "blocks: " + strings.Join(out, " ") + "\n"

		case "multiget":
			return ddMultiGet(t, d, r, st)
		case "multiscan":
			return ddMultiScan(t, d, r, st)
		case "scan":
			return ddScan(t, d, r, st)

		case "props":
			p := r.Properties()
			return fmt.Sprintf("entries=%d deletions=%d range-deletions=%d data-blocks=%d\n"+
				"raw-key-size=%d raw-value-size=%d\n"+
				"smallest-point=%s largest-point=%s\nsmallest=%s largest=%s\nseqs=[%d, %d]\n"+
				"compression=%s filter=%s format=%d\n",
				p.NumEntries, p.NumDeletions, p.NumRangeDeletions, p.NumDataBlocks,
				p.RawKeySize, p.RawValueSize,
				fmtKey(p.SmallestPoint), fmtKey(p.LargestPoint), fmtKey(p.Smallest), fmtKey(p.Largest),
				p.SmallestSeq, p.LargestSeq, p.Compression, p.FilterPolicy, p.FormatVersion)
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

// fmtKey renders an internal key as "ukey#seq,KIND", with "max" for the
// maximal sequence number.
func fmtKey(k []byte) string {
	if k == nil {
		return "<none>"
	}
	seq := strconv.FormatUint(uint64(base.Seq(k)), 10)
	if base.Seq(k) == base.SeqNumMax {
		seq = "max"
	}
	return fmt.Sprintf("%s#%s,%s", base.UserKey(k), seq, base.KindOfKey(k))
}

// parseEntries parses the input of build.
func parseEntries(t *testing.T, input string) ([]entry, []Tombstone) {
	var es []entry
	var ts []Tombstone
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "rangedel "); ok {
			span, seq, _ := strings.Cut(rest, ".")
			start, end, _ := strings.Cut(span, "-")
			n, err := strconv.ParseUint(seq, 10, 64)
			require.NoError(t, err)
			ts = append(ts, Tombstone{Start: []byte(start), End: []byte(end), Seq: base.SeqNum(n)})
			continue
		}
		key, value, _ := strings.Cut(line, ":")
		parts := strings.Split(key, ".")
		require.Len(t, parts, 3, "entry %q", line)
		n, err := strconv.ParseUint(parts[2], 10, 64)
		require.NoError(t, err)
		kind := base.KindSet
		if parts[1] == "DEL" {
			kind = base.KindDelete
		}
		es = append(es, entry{ikey(parts[0], base.SeqNum(n), kind), []byte(value)})
	}
	return es, ts
}
