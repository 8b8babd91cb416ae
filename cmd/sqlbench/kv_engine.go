package main

// The kv workloads reach the engine through kvBackend and kvEngine, a
// narrow view of kv.DB. Keeping them behind these two interfaces keeps the
// workloads, the runner and the report free of engine types, so the same
// workload code can drive another store for a side-by-side comparison. The
// Strata implementation, and the only file of the subcommand that imports
// the engine, is kv_strata.go; it also provides newKVBackend and
// kvCheckEngineFlags.

// kvBackend opens, destroys and inspects databases of one engine with the
// options of a kvConfig. It owns what outlives one open database (the
// block cache, as db_bench keeps one cache across the reopen before each
// fill).
type kvBackend interface {
	// name describes the engine for the run's environment lines.
	name() string
	// open opens the database in dir; with mustExist, a directory without
	// a database is an error.
	open(dir string, mustExist bool, o kvOpenOptions) (kvEngine, error)
	// dropCache replaces the block cache with an empty one for the next
	// open, so that a database reopened for the second side of an A/B
	// comparison starts as cold as the first.
	dropCache()
	// destroy removes the engine's files from dir (and nothing else).
	destroy(dir string) error
	// evictOSCache asks the kernel to drop its cached pages of every table
	// file in dir, and returns how many files it evicted.
	evictOSCache(dir string) (int, error)
}

// kvEngine is an open database as the workloads use it. It is safe for
// concurrent use; the batches and iterators it returns are not.
type kvEngine interface {
	// newBatch returns an empty write batch.
	newBatch() kvBatch
	// get returns the value of key and whether it was found. The value may
	// reuse dst's memory and stays valid until the next get with that dst.
	get(key, dst []byte) (value []byte, found bool, err error)
	// newIter returns an iterator; o may ask for an upper bound and, as the
	// engine grows them, read-path behaviour.
	newIter(o kvIterOptions) (kvIter, error)
	// flush writes the memtable to a table and waits for it.
	flush() error
	// compact compacts the whole key space down the tree.
	compact() error
	// counters returns the engine's statistics, in a fixed order.
	counters() []kvCounter
	// metrics describes the tree's shape (files and bytes per level).
	metrics() string
	close() error
}

// kvOpenOptions are the database options that can differ from one open to
// the next: the ones the A/B mode may toggle between its sides.
type kvOpenOptions struct {
	// directReads opens the tables with O_DIRECT (-use_direct_reads).
	directReads bool
	// mmapRead maps the tables into memory (-mmap_read).
	mmapRead bool
	// ioUring submits background reads to an io_uring (-io_uring).
	ioUring bool
}

// openOptions returns the options the flags open the database with.
func (c *kvConfig) openOptions() kvOpenOptions {
	return kvOpenOptions{directReads: c.useDirectReads, mmapRead: c.mmapRead, ioUring: c.ioUring}
}

// kvMultiGetter is an engine that looks many keys up in one call
// (kv.DB.MultiGet), for multireadrandom.
type kvMultiGetter interface {
	// multiGet returns the values of keys, in the order of keys: nil for a
	// key not found, a non-nil (maybe empty) slice for one found. It may
	// reuse dst for the result; the values stay valid until the next
	// multiGet with that dst. o carries the read-path switches (async I/O
	// reads a batch's uncached blocks at once).
	multiGet(keys, dst [][]byte, o kvIterOptions) ([][]byte, error)
}

// kvMultiScanner is an engine that prepares a scan of several key ranges
// at once (kv.DB.NewMultiScan), for multiscan.
type kvMultiScanner interface {
	// newMultiScan prepares a scan of ranges, which are sorted and do not
	// overlap. The scan refers to ranges until it is closed.
	newMultiScan(ranges []kvRange, o kvIterOptions) (kvMultiScan, error)
}

// kvRange is the key range [start, end).
type kvRange struct{ start, end []byte }

// kvMultiScan is a prepared scan: the shape of kv.MultiScan, which
// implements it. SeekRange(i) positions it on the first key of range i,
// Next moves within that range; Key and Value stay valid until the next
// move.
type kvMultiScan interface {
	SeekRange(i int) bool
	Next() bool
	Key() []byte
	Value() []byte
	Error() error
	Close() error
}

// kvBatch is a reusable write batch.
type kvBatch interface {
	set(key, value []byte) error
	// commit applies the batch atomically and empties it for reuse.
	commit() error
	close() error
}

// kvIter is an iterator: the shape of kv.Iterator (which implements it),
// positioning methods returning whether the iterator is on a key, Key and
// Value valid until the next positioning call.
type kvIter interface {
	SeekGE(key []byte) bool
	First() bool
	Next() bool
	Key() []byte
	Value() []byte
	Close() error
}

// kvIterOptions are the iterator settings a workload run asks for.
// Read-path switches (explicit readahead, async I/O) belong here: kvRun
// carries them and the engine adapter maps them to kv.IterOptions.
type kvIterOptions struct {
	// lowerBound, when not nil, is the inclusive lower bound of the keys.
	lowerBound []byte
	// upperBound, when not nil, is the exclusive upper bound of the keys.
	upperBound []byte
	// readaheadSize is the explicit readahead of iterators in bytes
	// (-readahead_size): 0 leaves readahead automatic, -1 turns it off.
	readaheadSize int64
	// asyncIO reads ahead in the background (-async_io).
	asyncIO bool
	// fillCache puts the blocks iterators read into the block cache
	// (-fill_cache).
	fillCache bool
	// coalesceThreshold is the largest gap between blocks a prepared scan
	// reads in one go (-multiscan_coalesce): 0 for the engine's default.
	coalesceThreshold int64
}

// kvCounter is one statistic and its value.
type kvCounter struct {
	name  string
	value int64
}
