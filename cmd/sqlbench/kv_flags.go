package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// kvConfig holds the kv subcommand's flags, parsed and checked. Names and
// defaults follow db_bench, except -cache_size (8 MiB, the engine's default),
// -bloom_bits (10: filters on) and -multiread_batched (true: in db_bench
// both settings call MultiGet, through two APIs; here false looks the batch
// up with one Get per key, the baseline MultiGet is compared with).
type kvConfig struct {
	benchmarks []string // workload names, in run order

	num       int64 // keys in the key space
	reads     int64 // read operations per thread; negative means num
	keySize   int
	valueSize int
	// compressionRatio is the share of its size a value compresses to.
	compressionRatio float64

	threads                  int
	duration                 time.Duration // 0: run a number of operations
	opsBetweenDurationChecks int64
	batchSize                int   // writes per batch in fills; keys per batch in multireadrandom
	seekNexts                int   // Next calls after each seek; keys per multiscan range (0: 50)
	maxScanDistance          int64 // seekrandom's upper bound, in keys past the seek key; 0 for none
	seed                     int64 // 0: taken from the clock

	// Read path.
	readaheadSize    int64 // explicit iterator readahead in bytes; 0 automatic, -1 off
	asyncIO          bool
	fillCache        bool  // iterators put the blocks they read into the block cache
	multiReadStride  int64 // multireadrandom batches r, r+S, r+2S, ...; 0 draws every key
	multiReadBatched bool  // one MultiGet per batch; false: one Get per key
	multiScanSize    int64 // ranges per multiscan
	multiScanStride  int64 // keys between two ranges of a multiscan
	multiScanPrepare bool  // a prepared MultiScan; false: one iterator per range
	multiScanGap     int64 // largest gap between blocks one prepared read spans; 0: default
	// ab, when not nil, runs each read workload twice with one flag
	// changed (-ab, -ab_value; see kv_ab.go).
	ab *kvAB

	// Database options.
	db              string // directory; "" makes a temporary one
	useExistingDB   bool
	cacheSize       int64
	compression     string // none, snappy or zstd
	bloomBits       float64
	filter          string // bloom or ribbon
	blockSize       int
	writeBufferSize int64
	useDirectReads  bool
	mmapRead        bool
	ioUring         bool
	sync            bool
	disableWAL      bool

	// Reporting.
	statistics bool
	histogram  bool
	cold       bool
	cpuProfile string // file for a CPU profile of the runs; "" for none
	// compactDuringReads compacts the whole database again and again while
	// each read workload runs (-compact_during_reads).
	compactDuringReads bool
	// compactionRateLimit paces compactions (-compaction_rate_limit).
	compactionRateLimit int64
	// compactionPaceReadsOnly applies the limit only while the database
	// serves reads (-compaction_pace_reads_only).
	compactionPaceReadsOnly bool
	// compactionPriority is the priority of compaction threads
	// (-compaction_priority): idle, low or normal.
	compactionPriority string
}

// kvMaxKeySize and kvMaxValueSize bound the sizes the flags accept.
const (
	kvMaxKeySize       = 1 << 20
	kvMaxValueSize     = 64 << 20
	kvMaxThreads       = 1024
	kvMaxMultiScanSize = 1 << 16
)

// parseKVFlags parses and checks the kv subcommand's arguments; usage and
// -h output go to w. Every problem is reported at once, one line each, as a
// usageError.
func parseKVFlags(args []string, w io.Writer) (*kvConfig, error) {
	c := &kvConfig{}
	var benchmarks, abFlag, abValue string
	var duration int
	fs := flag.NewFlagSet("kv", flag.ContinueOnError)
	fs.StringVar(&benchmarks, "benchmarks", "fillseq,fillrandom,overwrite,readrandom,readseq,seekrandom",
		"comma-separated list of workloads, run in order (see above)")
	fs.Int64Var(&c.num, "num", 1_000_000, "number of keys in the database")
	fs.Int64Var(&c.reads, "reads", -1, "read operations per thread; negative means -num")
	fs.IntVar(&c.keySize, "key_size", 16, "bytes per key")
	fs.IntVar(&c.valueSize, "value_size", 100, "bytes per value")
	fs.Float64Var(&c.compressionRatio, "compression_ratio", 0.5, "values compress to this share of their size")
	fs.IntVar(&c.threads, "threads", 1, "concurrent threads per workload")
	fs.IntVar(&duration, "duration", 0, "seconds to run fillrandom, overwrite, readrandom, seekrandom, multireadrandom and multiscan; 0 runs -num or -reads operations")
	fs.Int64Var(&c.opsBetweenDurationChecks, "ops_between_duration_checks", 1000, "operations between clock checks with -duration")
	fs.IntVar(&c.batchSize, "batch_size", 1, "keys per write batch in fills; keys per batch in multireadrandom")
	fs.IntVar(&c.seekNexts, "seek_nexts", 0, "Next calls after each seek in seekrandom; keys per range in multiscan (0 there means 50)")
	fs.Int64Var(&c.maxScanDistance, "max_scan_distance", 0, "seekrandom's iterator upper bound, in keys past the seek key; 0 for none")
	fs.Int64Var(&c.seed, "seed", 0, "seed of the key sequences; 0 takes one from the clock (and prints it)")
	fs.StringVar(&c.db, "db", "", "database directory; default a temporary directory removed at exit")
	fs.BoolVar(&c.useExistingDB, "use_existing_db", false, "use the database in -db as it is (fills are skipped)")
	fs.Int64Var(&c.cacheSize, "cache_size", 8<<20, "block cache bytes")
	fs.StringVar(&c.compression, "compression_type", "snappy", "block compression: none, snappy or zstd")
	fs.Float64Var(&c.bloomBits, "bloom_bits", 10, "filter bits per key (Bloom-equivalent for Ribbon); 0 for no filter")
	fs.StringVar(&c.filter, "filter", "bloom", "filter type: bloom or ribbon")
	fs.IntVar(&c.blockSize, "block_size", 4096, "target data block bytes")
	fs.Int64Var(&c.writeBufferSize, "write_buffer_size", 64<<20, "memtable bytes")
	fs.BoolVar(&c.useDirectReads, "use_direct_reads", false, "read tables with O_DIRECT")
	fs.BoolVar(&c.mmapRead, "mmap_read", true, "map the tables into memory and copy block reads from the page cache instead of calling pread (not with -use_direct_reads)")
	fs.BoolVar(&c.ioUring, "io_uring", true, "with -async_io, iterators submit their background reads to an io_uring and collect them themselves; false hands them to the I/O pool's goroutines (0/1 or false/true)")
	fs.Int64Var(&c.readaheadSize, "readahead_size", 0, "explicit readahead of iterators in bytes; 0 leaves it automatic, -1 turns it off")
	fs.BoolVar(&c.asyncIO, "async_io", false, "iterators and prepared scans read ahead in the background, MultiGet reads a batch's uncached blocks at once (0/1 or false/true)")
	fs.BoolVar(&c.fillCache, "fill_cache", true, "iterators and prepared scans put the blocks they read into the block cache; false reads long scans in place from the readahead buffer (0/1 or false/true)")
	fs.Int64Var(&c.multiReadStride, "multiread_stride", 0, "multireadrandom looks up keys r, r+S, r+2S, ... from a random r; 0 draws every key")
	fs.BoolVar(&c.multiReadBatched, "multiread_batched", true, "multireadrandom looks each batch up with one MultiGet; false: one Get per key")
	fs.Int64Var(&c.multiScanSize, "multiscan_size", 10, "key ranges per multiscan")
	fs.Int64Var(&c.multiScanStride, "multiscan_stride", 100, "keys between the end of one multiscan range and the start of the next")
	fs.BoolVar(&c.multiScanPrepare, "multiscan_prepare", true, "multiscan prepares all its ranges with one MultiScan; false: one iterator per range")
	fs.Int64Var(&c.multiScanGap, "multiscan_coalesce", 0, "largest gap in bytes between data blocks that one read of a prepared multiscan spans; 0: the engine's default (16 KiB), -1: none")
	fs.StringVar(&abFlag, "ab", "", "run each read workload twice, each time on the database reopened with an empty block cache: A with the flags as given, then B with this flag changed (one of "+kvABFlagNames()+")")
	fs.StringVar(&abValue, "ab_value", "", "the -ab flag's value for B; default: a boolean flipped, -readahead_size 0")
	fs.BoolVar(&c.sync, "sync", false, "sync the write-ahead log on every write batch")
	fs.BoolVar(&c.disableWAL, "disable_wal", false, "write without a write-ahead log")
	fs.BoolVar(&c.statistics, "statistics", false, "print the engine's counters after the runs")
	fs.BoolVar(&c.histogram, "histogram", false, "print latency percentiles of each workload's operations")
	fs.BoolVar(&c.cold, "cold", false, "drop the OS page cache of the database's tables before each workload")
	fs.Int64Var(&c.compactionRateLimit, "compaction_rate_limit", 0, "bytes of entries a compaction may read per second; 0: no limit")
	fs.BoolVar(&c.compactionPaceReadsOnly, "compaction_pace_reads_only", false, "apply -compaction_rate_limit only while the database serves reads")
	fs.StringVar(&c.compactionPriority, "compaction_priority", "normal", "CPU and I/O priority of compaction threads: normal, low or idle")
	fs.BoolVar(&c.compactDuringReads, "compact_during_reads", false, "while each read workload runs, compact the whole database, again and again (each rewrites every table)")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the runs to this file (go tool pprof)")
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintln(w, "usage: sqlbench kv [flags]")
		fmt.Fprintln(w, "\nRuns db_bench-style workloads against the kv engine and reports them in db_bench's format.")
		fmt.Fprintln(w, "\nworkloads:")
		for _, wl := range kvWorkloads {
			fmt.Fprintf(w, "  %-16s %s\n", wl.name, wl.desc)
		}
		fmt.Fprintln(w, "\nflags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	abValueSet := false
	fs.Visit(func(f *flag.Flag) { abValueSet = abValueSet || f.Name == "ab_value" })
	c.duration = time.Duration(duration) * time.Second
	c.compression = strings.ToLower(strings.TrimSpace(c.compression))
	c.filter = strings.ToLower(strings.TrimSpace(c.filter))

	var bad []string
	badf := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	for _, name := range strings.Split(benchmarks, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		if kvWorkloadByName(name) == nil {
			badf("-benchmarks: unknown workload %q (want one of %s)", name, strings.Join(kvWorkloadNames(), ", "))
			continue
		}
		c.benchmarks = append(c.benchmarks, name)
	}
	if len(c.benchmarks) == 0 && len(bad) == 0 {
		badf("-benchmarks=%q: want at least one workload", benchmarks)
	}
	if c.num < 1 {
		badf("-num=%d: want at least 1", c.num)
	}
	if c.keySize < 1 || c.keySize > kvMaxKeySize {
		badf("-key_size=%d: want 1 to %d", c.keySize, kvMaxKeySize)
	} else if c.keySize < 8 && c.num > 1<<(8*c.keySize) {
		badf("-key_size=%d holds only %d distinct keys, fewer than -num=%d", c.keySize, 1<<(8*c.keySize), c.num)
	}
	if c.valueSize < 0 || c.valueSize > kvMaxValueSize {
		badf("-value_size=%d: want 0 to %d", c.valueSize, kvMaxValueSize)
	}
	if !(c.compressionRatio >= 0 && c.compressionRatio <= 1) {
		badf("-compression_ratio=%v: want 0 to 1", c.compressionRatio)
	}
	if c.threads < 1 || c.threads > kvMaxThreads {
		badf("-threads=%d: want 1 to %d", c.threads, kvMaxThreads)
	}
	if duration < 0 || duration > math.MaxInt32 {
		badf("-duration=%d: want 0 or more seconds", duration)
	}
	if c.opsBetweenDurationChecks < 1 {
		badf("-ops_between_duration_checks=%d: want at least 1", c.opsBetweenDurationChecks)
	}
	if c.batchSize < 1 || c.batchSize > 1<<20 {
		badf("-batch_size=%d: want 1 to %d", c.batchSize, 1<<20)
	}
	if c.seekNexts < 0 {
		badf("-seek_nexts=%d: want 0 or more", c.seekNexts)
	}
	if c.maxScanDistance < 0 {
		badf("-max_scan_distance=%d: want 0 or more", c.maxScanDistance)
	}
	if c.readaheadSize < -1 {
		badf("-readahead_size=%d: want bytes, 0 (automatic) or -1 (off)", c.readaheadSize)
	}
	if c.multiReadStride < 0 {
		badf("-multiread_stride=%d: want 0 or more", c.multiReadStride)
	} else if c.runs("multireadrandom") && c.multiReadStride > 0 && c.batchSize >= 1 && c.num >= 1 &&
		c.multiReadStride > c.num/int64(c.batchSize) {
		badf("-multiread_stride=%d: a batch of -batch_size=%d keys that far apart spans more than -num=%d keys",
			c.multiReadStride, c.batchSize, c.num)
	}
	if c.multiScanSize < 1 || c.multiScanSize > kvMaxMultiScanSize {
		badf("-multiscan_size=%d: want 1 to %d", c.multiScanSize, kvMaxMultiScanSize)
	}
	if c.multiScanStride < 0 {
		badf("-multiscan_stride=%d: want 0 or more", c.multiScanStride)
	}
	if c.runs("multiscan") && c.multiScanSize >= 1 && c.multiScanSize <= kvMaxMultiScanSize &&
		c.multiScanStride >= 0 && c.seekNexts >= 0 && c.num >= 1 {
		if span := c.multiScanSpan(); span >= c.num {
			badf("-num=%d is too small for multiscan: %d ranges of %d keys, %d keys apart, span %d keys",
				c.num, c.multiScanSize, kvMultiScanKeys(c.seekNexts), c.multiScanStride, span)
		}
	}
	if c.cacheSize < 0 {
		badf("-cache_size=%d: want 0 or more bytes", c.cacheSize)
	}
	if _, ok := kvCompressionNames[c.compression]; !ok {
		badf("-compression_type=%q: want none, snappy or zstd", c.compression)
	}
	if !(c.bloomBits >= 0) {
		badf("-bloom_bits=%v: want 0 (no filter) or more", c.bloomBits)
	}
	if c.filter != "bloom" && c.filter != "ribbon" {
		badf("-filter=%q: want bloom or ribbon", c.filter)
	}
	if c.blockSize < 1 {
		badf("-block_size=%d: want at least 1", c.blockSize)
	}
	if c.writeBufferSize < 1 {
		badf("-write_buffer_size=%d: want at least 1", c.writeBufferSize)
	}
	if c.useExistingDB && c.db == "" {
		badf("-use_existing_db needs -db (the default directory is a new, empty one)")
	}
	if c.sync && c.disableWAL {
		badf("-sync and -disable_wal contradict each other: there is no log to sync")
	}
	c.ab, bad = parseKVAB(c, abFlag, abValue, abValueSet, bad)
	// The engine's own limits, named by flag.
	bad = append(bad, kvCheckEngineFlags(c)...)
	if len(bad) > 0 {
		return nil, usageError{fmt.Errorf("%s", strings.Join(bad, "\n"))}
	}
	return c, nil
}

// kvCompressionNames maps -compression_type to the name db_bench prints.
var kvCompressionNames = map[string]string{
	"none":   "NoCompression",
	"snappy": "Snappy",
	"zstd":   "ZSTD",
}

// runs reports whether -benchmarks lists the workload.
func (c *kvConfig) runs(name string) bool {
	for _, b := range c.benchmarks {
		if b == name {
			return true
		}
	}
	return false
}

// kvMultiScanKeys returns the keys per multiscan range for -seek_nexts: 50
// when it is 0, as db_bench does.
func kvMultiScanKeys(seekNexts int) int64 {
	if seekNexts == 0 {
		return 50
	}
	return int64(seekNexts)
}

// multiScanSpan returns the keys a multiscan spans from its first key to
// the end of its stride after the last range, which db_bench keeps inside
// the key space (its random start is below num minus this).
func (c *kvConfig) multiScanSpan() int64 {
	keys := kvMultiScanKeys(c.seekNexts)
	if c.multiScanStride > math.MaxInt64-keys {
		return math.MaxInt64
	}
	per := keys + c.multiScanStride
	if c.multiScanSize > math.MaxInt64/per {
		return math.MaxInt64
	}
	return per * c.multiScanSize
}

// readsPerThread returns -reads, or -num when -reads is negative.
func (c *kvConfig) readsPerThread() int64 {
	if c.reads < 0 {
		return c.num
	}
	return c.reads
}
