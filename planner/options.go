package planner

import (
	"fmt"
	"strconv"
	"strings"
)

// Options are the thresholds of the rules. The zero value means the
// defaults.
type Options struct {
	Mode Mode
	// MultiGetBatch is the number of keys per MultiGet call. Default 32.
	MultiGetBatch int
	// ShortRangeBytes is the estimated size up to which a range is read
	// without readahead: it spans a few blocks, which the iterator reads
	// as it reaches them. Default 32 KiB.
	ShortRangeBytes int64
	// LongRangeBytes is the estimated size from which a range gets explicit
	// readahead and async I/O. Default 256 KiB.
	LongRangeBytes int64
	// MinReadahead and MaxReadahead clamp an explicit readahead. Defaults
	// 256 KiB and 2 MiB.
	MinReadahead, MaxReadahead int64
	// FullScanReadahead is the readahead of a full scan. Default 1 MiB.
	FullScanReadahead int64
	// NoFillBytes: a scan with explicit readahead estimated at this many
	// bytes or more (a full scan of unknown size too) reads without
	// adding its blocks to the block cache, which it would churn for
	// blocks read once (RocksDB's fill_cache=false for scans); a smaller
	// one fills it, to be found there next time. Default 8 MiB; the SQL
	// layer sets a sixteenth of its block cache.
	NoFillBytes int64
	// SmallLimit: a Limit at or below it turns explicit readahead off, and
	// a full scan whose Limit is unknown defers its readahead until it has
	// returned that many rows. Default 100 rows.
	SmallLimit int64
	// MultiScanAsyncBytes is the estimated size of a MultiScan's ranges
	// from which it asks for async reads (unknown sizes count as large; a
	// negative value: never). Default 0: every MultiScan asks. Asking
	// costs nothing where it does not pay: the engine issues a prepare's
	// reads in the background, all at once, only when it has several to
	// make and reads have lately been reaching the device; blocks in the
	// block cache or the OS page cache are read in turn, faster than
	// handing them to other goroutines.
	MultiScanAsyncBytes int64
	// MultiScanChunk is the most ranges one MultiScan prepares at once; a
	// longer list is prepared chunk by chunk, so memory stays bounded and a
	// query that stops early does not pay for the rest. Default 256.
	MultiScanChunk int
	// FetchBatch is the number of primary keys fetched per MultiGet after
	// a non-covering secondary index. Default 32.
	FetchBatch int
}

// withDefaults returns o with zero fields filled.
func (o Options) withDefaults() Options {
	if o.MultiGetBatch <= 0 {
		o.MultiGetBatch = 32
	}
	if o.ShortRangeBytes <= 0 {
		o.ShortRangeBytes = 32 << 10
	}
	if o.LongRangeBytes <= 0 {
		o.LongRangeBytes = 256 << 10
	}
	if o.LongRangeBytes < o.ShortRangeBytes {
		o.LongRangeBytes = o.ShortRangeBytes
	}
	if o.MinReadahead <= 0 {
		o.MinReadahead = 256 << 10
	}
	if o.MaxReadahead <= 0 {
		o.MaxReadahead = 2 << 20
	}
	if o.MaxReadahead < o.MinReadahead {
		o.MaxReadahead = o.MinReadahead
	}
	if o.FullScanReadahead <= 0 {
		o.FullScanReadahead = 1 << 20
	}
	if o.NoFillBytes <= 0 {
		o.NoFillBytes = 8 << 20
	}
	if o.SmallLimit <= 0 {
		o.SmallLimit = 100
	}
	if o.MultiScanChunk <= 0 {
		o.MultiScanChunk = 256
	}
	if o.FetchBatch <= 0 {
		o.FetchBatch = 32
	}
	return o
}

// optionFields name the thresholds for ParseOptions, in the order of
// Options.
var optionFields = [...]struct {
	name string
	size bool // bytes, with an optional unit; otherwise a count
	neg  bool // a negative value has a meaning
	set  func(o *Options, n int64)
}{
	{"multiget_batch", false, false, func(o *Options, n int64) { o.MultiGetBatch = int(n) }},
	{"short_range", true, false, func(o *Options, n int64) { o.ShortRangeBytes = n }},
	{"long_range", true, false, func(o *Options, n int64) { o.LongRangeBytes = n }},
	{"min_readahead", true, false, func(o *Options, n int64) { o.MinReadahead = n }},
	{"max_readahead", true, false, func(o *Options, n int64) { o.MaxReadahead = n }},
	{"full_scan_readahead", true, false, func(o *Options, n int64) { o.FullScanReadahead = n }},
	{"no_fill", true, false, func(o *Options, n int64) { o.NoFillBytes = n }},
	{"small_limit", false, false, func(o *Options, n int64) { o.SmallLimit = n }},
	{"multiscan_async", true, true, func(o *Options, n int64) { o.MultiScanAsyncBytes = n }},
	{"multiscan_chunk", false, false, func(o *Options, n int64) { o.MultiScanChunk = int(n) }},
	{"fetch_batch", false, false, func(o *Options, n int64) { o.FetchBatch = int(n) }},
}

// Bounds of a threshold's value: a count must fit an int on every
// platform, a size is at most 1 TiB.
const (
	maxCount = 1 << 30
	maxSize  = 1 << 40
)

// OptionNames lists the names ParseOptions accepts.
func OptionNames() []string {
	names := make([]string, len(optionFields))
	for i := range optionFields {
		names[i] = optionFields[i].name
	}
	return names
}

// ParseOptions returns base with the thresholds that s sets, written as
// MySQL's optimizer_switch is: comma-separated name=value pairs, for
// example "multiget_batch=64,long_range=1MiB". Sizes take an optional
// KiB, MiB or GiB suffix (K, M and G are the same); 0 restores the
// planner's default (not a store's own setting, no_fill's sixteenth of the
// cache say); multiscan_async=-1 never asks a MultiScan for async
// reads. The SQL layer reads it from SET strata_planner, sqlbench from
// -planner. The mode is not among them: it has its own switch.
func ParseOptions(s string, base Options) (Options, error) {
	o := base
	for _, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		name, value, ok := strings.Cut(pair, "=")
		if !ok {
			return base, fmt.Errorf("planner: %q: want name=value", pair)
		}
		name, value = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(value)
		i := 0
		for i < len(optionFields) && optionFields[i].name != name {
			i++
		}
		if i == len(optionFields) {
			return base, fmt.Errorf("planner: unknown threshold %q (want one of %s)", name, strings.Join(OptionNames(), ", "))
		}
		f := &optionFields[i]
		n, err := parseCount(value, f.size)
		limit := int64(maxCount)
		if f.size {
			limit = maxSize
		}
		if err != nil || n > limit || (n < 0 && !f.neg) || n < -limit {
			what := fmt.Sprintf("a count up to %d", limit)
			if f.size {
				what = "a size in bytes up to 1TiB (with KiB, MiB or GiB)"
			}
			return base, fmt.Errorf("planner: %s=%s: want %s, or 0 for the default", name, value, what)
		}
		f.set(&o, n)
	}
	return o, nil
}

// parseCount parses a decimal integer with, for a size, a binary unit.
func parseCount(s string, size bool) (int64, error) {
	mult := int64(1)
	if size {
		upper := strings.ToUpper(s)
		for _, u := range [...]struct {
			suffix string
			mult   int64
		}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}} {
			if strings.HasSuffix(upper, u.suffix) {
				s, mult = s[:len(s)-len(u.suffix)], u.mult
				break
			}
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, err
	}
	if n > maxSize/mult || n < -maxSize/mult {
		return 0, strconv.ErrRange // and n*mult cannot overflow
	}
	return n * mult, nil
}
