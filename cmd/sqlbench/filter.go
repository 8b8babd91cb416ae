package main

// The filter subcommand measures kv/filter the way RocksDB's filter_bench
// does: it builds many filters (by default 20 million keys in filters of
// about 100,000, 17 to 24 MiB, far more than an L2 cache; 200 million keys
// exceed any L3), checks that no added key is missed, measures the
// false-positive rate, then times queries in four modes, half of them for
// added keys and half for others:
//
//	Single filter        every query to one filter, which stays in cache
//	Batched, prepared    batches of -batch_size keys, each batch to a random
//	                     filter, answered by one MayContainBatch call
//	Batched, unprepared  the same batches answered by a loop of MayContain
//	Random filter        every query to a random filter
//
// Query times are "net": each mode runs twice with the same random
// sequence, once querying the filters and once with a trivial stand-in
// that answers "maybe" (a dry run that still makes and hashes the keys),
// and the difference is reported. Hashing is therefore not included in
// query times; build times include it.

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/strata-db/strata/cmd/sqlbench/internal/meter"
	"github.com/strata-db/strata/kv/filter"
	"golang.org/x/sys/unix"
)

func init() {
	register("filter", "Bloom and Ribbon filters: build speed, size, false positives, query speed", runFilter)
}

func runFilter(args []string) error { return filterBench(args, os.Stdout) }

// filterFlags are the subcommand's settings.
type filterFlags struct {
	impl          string
	keysTotal     int
	keysPerFilter int
	varyRatio     float64
	bitsPerKey    float64
	fpRate        float64
	queries       int
	batchSize     int
	keySize       int
	seed          uint64
	cpuTime       bool
}

const maxFilterBatch = 1024

func filterBench(args []string, w io.Writer) error {
	var f filterFlags
	fs := flag.NewFlagSet("filter", flag.ContinueOnError)
	fs.StringVar(&f.impl, "impl", "both", "filter implementation: bloom, ribbon or both")
	fs.IntVar(&f.keysTotal, "keys_total", 20_000_000, "keys added over all filters")
	fs.IntVar(&f.keysPerFilter, "keys_per_filter", 100_000, "average keys per filter")
	fs.Float64Var(&f.varyRatio, "vary_key_count_ratio", 0.4,
		"vary the keys per filter by up to +/- this share of -keys_per_filter")
	fs.Float64Var(&f.bitsPerKey, "bits_per_key", 10, "bits per key; for Ribbon, Bloom-equivalent (the FP rate of a Bloom filter with this many bits per key)")
	fs.Float64Var(&f.fpRate, "fp_rate", 0, "Ribbon's target false-positive rate (e.g. 0.01); overrides -bits_per_key for Ribbon")
	fs.IntVar(&f.queries, "queries", 20_000_000, "queries per mode, and outside-key queries for the FP rate")
	fs.IntVar(&f.batchSize, "batch_size", 8, "keys per batch in the batched modes")
	fs.IntVar(&f.keySize, "key_size", 24, "bytes per key (at least 8)")
	fs.Uint64Var(&f.seed, "seed", 0, "random seed")
	fs.BoolVar(&f.cpuTime, "cpu_time", false,
		"time with the thread's CPU clock instead of the wall clock (steadier when other programs compete for the CPU)")
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintln(w, "usage: sqlbench filter [flags]")
		fmt.Fprintln(w, "\nBuilds Bloom and Ribbon filters over -keys_total keys and measures them like RocksDB's filter_bench.")
		fmt.Fprintln(w, "\nflags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var impls []filter.Type
	var bad []string
	switch strings.ToLower(f.impl) {
	case "both":
		impls = []filter.Type{filter.Bloom, filter.Ribbon}
	case "bloom":
		impls = []filter.Type{filter.Bloom}
	case "ribbon":
		impls = []filter.Type{filter.Ribbon}
	default:
		bad = append(bad, fmt.Sprintf("-impl=%q: want bloom, ribbon or both", f.impl))
	}
	if f.keysTotal < 1 {
		bad = append(bad, fmt.Sprintf("-keys_total=%d: want at least 1", f.keysTotal))
	}
	if f.keysPerFilter < 1 || f.keysPerFilter > 1<<29 {
		bad = append(bad, fmt.Sprintf("-keys_per_filter=%d: want 1 to 2^29", f.keysPerFilter))
	}
	if !(f.varyRatio >= 0 && f.varyRatio <= 1) {
		bad = append(bad, fmt.Sprintf("-vary_key_count_ratio=%v: want [0, 1]", f.varyRatio))
	}
	if f.queries < 1 {
		bad = append(bad, fmt.Sprintf("-queries=%d: want at least 1", f.queries))
	}
	if f.batchSize < 1 || f.batchSize > maxFilterBatch {
		bad = append(bad, fmt.Sprintf("-batch_size=%d: want 1 to %d", f.batchSize, maxFilterBatch))
	}
	if f.keySize < 8 {
		bad = append(bad, fmt.Sprintf("-key_size=%d: want at least 8", f.keySize))
	}
	if f.bitsPerKey == 0 {
		bad = append(bad, "-bits_per_key=0: want 1 to 100")
	}
	if err := (filter.Policy{Type: filter.Ribbon, BitsPerKey: f.bitsPerKey, FPRate: f.fpRate}).Validate(); err != nil {
		msg := strings.NewReplacer("filter: Policy.BitsPerKey", "-bits_per_key", "filter: Policy.FPRate", "-fp_rate").Replace(err.Error())
		bad = append(bad, msg)
	}
	if len(bad) > 0 {
		return usageError{fmt.Errorf("%s", strings.Join(bad, "\n"))}
	}

	if f.cpuTime {
		// The thread CPU clock counts this thread only: stay on it.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	var results []filterResult
	for i, typ := range impls {
		if i > 0 {
			fmt.Fprintln(w)
		}
		res, err := runFilterImpl(w, f, typ)
		if err != nil {
			return err
		}
		results = append(results, res)
	}
	if len(results) == 2 {
		bloom, ribbon := results[0], results[1]
		fmt.Fprintln(w)
		fmt.Fprintf(w, "Ribbon vs Bloom bits/key stored: %.3f vs %.3f (%.1f%% smaller), FP rate %%: %.4f vs %.4f\n",
			ribbon.bitsPerKey, bloom.bitsPerKey, 100*(1-ribbon.bitsPerKey/bloom.bitsPerKey), ribbon.fpPct, bloom.fpPct)
	}
	for _, r := range results {
		if r.prepared > 0 {
			fmt.Fprintf(w, "%s random filter / batched, prepared: %.2fx\n", filterTypeTitle(r.typ), r.random/r.prepared)
		}
	}
	return nil
}

// filterResult holds one implementation's figures.
type filterResult struct {
	typ                                  filter.Type
	bitsPerKey, fpPct                    float64
	single, prepared, unprepared, random float64 // net ns per key
}

// filterEntry is one built filter.
type filterEntry struct {
	id   uint32 // key-space of the filter
	keys uint32 // keys 0..keys-1 were added
	r    filter.Reader
}

// filterRun is the state of one implementation's run.
type filterRun struct {
	f       filterFlags
	typ     filter.Type
	filters []filterEntry
	key     []byte
	sink    uint64 // keeps dry-run work observable
}

func filterTypeTitle(t filter.Type) string {
	s := t.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

func runFilterImpl(w io.Writer, f filterFlags, typ filter.Type) (filterResult, error) {
	fr := &filterRun{f: f, typ: typ, key: make([]byte, f.keySize)}
	policy := filter.Policy{Type: typ, BitsPerKey: f.bitsPerKey}
	if typ == filter.Ribbon {
		policy.FPRate = f.fpRate
	}
	buildNs, bytes := fr.build(policy)

	var expected float64
	fallbacks := 0
	for i := range fr.filters {
		bf := &fr.filters[i]
		expected += bf.r.EstimatedFPRate(int(bf.keys)) * float64(bf.keys)
		if bf.r.Type() != typ {
			fallbacks++
		}
	}
	expected /= float64(f.keysTotal)
	setting := fmt.Sprintf("bits_per_key=%g", f.bitsPerKey)
	if typ == filter.Ribbon {
		if f.fpRate > 0 {
			setting = fmt.Sprintf("fp_rate=%g", f.fpRate)
		} else {
			setting += " (Bloom-equivalent)"
		}
	}
	fmt.Fprintf(w, "%s filter, %s: %d filters, %d keys, %.2f MiB, expected FP rate %.4f%%, queries=%d, batch_size=%d, seed=%d\n",
		filterTypeTitle(typ), setting, len(fr.filters), f.keysTotal, float64(bytes)/(1<<20), 100*expected,
		f.queries, f.batchSize, f.seed)
	if fallbacks > 0 {
		fmt.Fprintf(w, "(%d of %d filters were written as Bloom)\n", fallbacks, len(fr.filters))
	}

	fp, err := fr.verify()
	if err != nil {
		return filterResult{}, err
	}
	res := filterResult{typ: typ, bitsPerKey: float64(bytes) * 8 / float64(f.keysTotal), fpPct: 100 * fp}
	fmt.Fprintf(w, "Build avg ns/key: %.2f\n", buildNs)
	fmt.Fprintf(w, "Bits/key stored: %.3f\n", res.bitsPerKey)
	fmt.Fprintf(w, "FP rate %%: %.4f\n", res.fpPct)
	for _, m := range []struct {
		mode  filterQueryMode
		label string
		dst   *float64
	}{
		{filterModeSingle, "Single filter", &res.single},
		{filterModePrepared, "Batched, prepared", &res.prepared},
		{filterModeUnprepared, "Batched, unprepared", &res.unprepared},
		{filterModeRandom, "Random filter", &res.random},
	} {
		gross, err := fr.query(m.mode, false)
		if err != nil {
			return filterResult{}, err
		}
		dry, _ := fr.query(m.mode, true)
		*m.dst = gross - dry
		fmt.Fprintf(w, "%s net ns/op: %.2f\n", m.label, *m.dst)
	}
	return res, nil
}

// makeKey fills the reusable key buffer with key v of filter id: v and
// id+v as little-endian 32-bit words, then zeros. Keys with bit 31 of v set
// are never added.
func (fr *filterRun) makeKey(id, v uint32) []byte {
	binary.LittleEndian.PutUint32(fr.key[0:], v)
	binary.LittleEndian.PutUint32(fr.key[4:], id+v)
	return fr.key
}

// build builds the filters and returns the build time per key (hashing
// included) and the total size of the filters.
func (fr *filterRun) build(policy filter.Policy) (nsPerKey float64, bytes int) {
	f := fr.f
	rng := newFilterRNG(f.seed)
	spread := uint32(2*int(f.varyRatio*float64(f.keysPerFilter)) + 1)
	b := policy.NewBuilder()
	start := fr.now()
	for total := 0; total < f.keysTotal; {
		id := uint32(rng.next())
		n := f.keysPerFilter + int(rng.below(spread)) - int(spread/2)
		n = max(1, min(n, f.keysTotal-total))
		for v := range uint32(n) {
			b.Add(filter.Hash(fr.makeKey(id, v)))
		}
		data := b.Finish(nil)
		r, err := filter.Decode(data)
		if err != nil {
			panic(fmt.Sprintf("sqlbench: decoding a filter just built: %v", err))
		}
		fr.filters = append(fr.filters, filterEntry{id: id, keys: uint32(n), r: r})
		total += n
		bytes += len(data)
	}
	return float64(fr.now()-start) / float64(f.keysTotal), bytes
}

// verify checks every added key of every filter and returns the share of
// about -queries keys outside the filters that they let through.
func (fr *filterRun) verify() (float64, error) {
	perFilter := max(1, fr.f.queries/len(fr.filters))
	fps := 0
	for i := range fr.filters {
		bf := &fr.filters[i]
		for v := range bf.keys {
			if !bf.r.MayContain(filter.Hash(fr.makeKey(bf.id, v))) {
				return 0, fmt.Errorf("false negative: key %d of filter %d", v, i)
			}
		}
		for v := range uint32(perFilter) {
			if bf.r.MayContain(filter.Hash(fr.makeKey(bf.id, v|1<<31))) {
				fps++
			}
		}
	}
	return float64(fps) / float64(perFilter*len(fr.filters)), nil
}

type filterQueryMode int

const (
	filterModeSingle filterQueryMode = iota
	filterModePrepared
	filterModeUnprepared
	filterModeRandom
)

// query runs -queries queries in mode m and returns the time per query.
// With dry set, the filter is replaced by an answer of "maybe". Every
// batch (one key outside the batched modes) goes wholly to added keys or
// wholly to others, at random.
func (fr *filterRun) query(m filterQueryMode, dry bool) (float64, error) {
	rng := newFilterRNG(fr.f.seed + 1)
	nf := uint32(len(fr.filters))
	batch := 1
	if m == filterModePrepared || m == filterModeUnprepared {
		batch = fr.f.batchSize
	}
	var hashes [maxFilterBatch]uint64
	var out [maxFilterBatch]bool
	hs, res := hashes[:batch], out[:batch]
	fn := 0
	start := fr.now()
	for q := 0; q < fr.f.queries; q += batch {
		r := rng.next()
		inside := r&1 == 0
		fi := uint32(0)
		if m != filterModeSingle {
			fi = uint32((r >> 32) * uint64(nf) >> 32)
		}
		bf := &fr.filters[fi]
		outside := uint32(0)
		if !inside {
			outside = 1 << 31
		}
		for i := range hs {
			hs[i] = filter.Hash(fr.makeKey(bf.id, rng.below(bf.keys)|outside))
		}
		switch {
		case dry:
			for i := range hs {
				fr.sink += hs[i]
				res[i] = true
			}
		case m == filterModePrepared:
			bf.r.MayContainBatch(hs, res)
		default:
			for i := range hs {
				res[i] = bf.r.MayContain(hs[i])
			}
		}
		if inside {
			for _, ok := range res {
				if !ok {
					fn++
				}
			}
		}
	}
	elapsed := fr.now() - start
	if fn > 0 {
		return 0, fmt.Errorf("%d false negatives", fn)
	}
	n := (fr.f.queries + batch - 1) / batch * batch
	return float64(elapsed) / float64(n), nil
}

// now returns a time in nanoseconds: on the monotonic wall clock, or with
// -cpu_time the CPU time of the calling thread.
func (fr *filterRun) now() int64 {
	if fr.f.cpuTime {
		if d, ok := meter.CPUClock(unix.CLOCK_THREAD_CPUTIME_ID); ok {
			return int64(d)
		}
	}
	return int64(time.Since(filterClockStart))
}

var filterClockStart = time.Now()

// filterRNG is splitmix64: fast, and reproducible from a seed.
type filterRNG struct{ s uint64 }

func newFilterRNG(seed uint64) *filterRNG { return &filterRNG{s: seed} }

func (r *filterRNG) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// below returns a number in [0, n).
func (r *filterRNG) below(n uint32) uint32 { return uint32((r.next() >> 32) * uint64(n) >> 32) }
