package main

// The Strata implementation of kvBackend and kvEngine.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-db/strata/kv"
	"github.com/strata-db/strata/kv/cache"
	"github.com/strata-db/strata/kv/filter"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/table"
	"github.com/strata-db/strata/kv/vfs"
)

// kvEngineOptions maps the configuration to the engine's options (without
// a block cache).
func kvEngineOptions(c *kvConfig) (*kv.Options, error) {
	comp, err := table.ParseCompression(c.compression)
	if err != nil {
		return nil, err
	}
	ftype, err := filter.ParseType(c.filter)
	if err != nil {
		return nil, err
	}
	o := &kv.Options{
		MemtableSize:   int(min(c.writeBufferSize, 1<<40)),
		BlockSize:      c.blockSize,
		Compression:    comp,
		CacheSize:      c.cacheSize,
		UseDirectReads: c.useDirectReads,
		DisableWAL:     c.disableWAL,

		CompactionRateLimit:     c.compactionRateLimit,
		CompactionPaceReadsOnly: c.compactionPaceReadsOnly,
	}
	switch c.compactionPriority {
	case "idle":
		o.CompactionPriority = kv.CompactionPriorityIdle
	case "low":
		o.CompactionPriority = kv.CompactionPriorityLow
	case "normal", "":
		o.CompactionPriority = kv.CompactionPriorityNormal
	default:
		return nil, fmt.Errorf("-compaction_priority=%q: want normal, low or idle", c.compactionPriority)
	}
	if c.bloomBits == 0 {
		o.DisableFilters = true
		o.FilterPolicy = filter.Policy{Type: filter.None}
	} else {
		o.FilterPolicy = filter.Policy{Type: ftype, BitsPerKey: c.bloomBits}
	}
	return o, nil
}

// kvCheckEngineFlags returns the engine's objections to the configuration,
// one line each, in terms of the flags. Compression and filter names are
// parseKVFlags's to check: unknown ones are replaced here by valid ones, so
// that the other limits are still checked.
func kvCheckEngineFlags(c *kvConfig) []string {
	cc := *c
	if _, err := table.ParseCompression(cc.compression); err != nil {
		cc.compression = "none"
	}
	if cc.filter != "bloom" && cc.filter != "ribbon" {
		cc.filter = "bloom"
	}
	o, err := kvEngineOptions(&cc)
	if err != nil {
		return []string{err.Error()}
	}
	var bad []string
	if !o.DisableFilters {
		if err := o.FilterPolicy.Validate(); err != nil {
			bad = append(bad, strings.Split(err.Error(), "\n")...)
		}
	}
	if err := o.Clone().EnsureDefaults().Validate(); err != nil {
		lines := strings.Split(err.Error(), "\n")
		for _, l := range lines[1:] { // the first line is the error's title
			bad = append(bad, strings.TrimSpace(l))
		}
	}
	flagNames := strings.NewReplacer(
		"MemtableSize", "-write_buffer_size",
		"BlockSize", "-block_size",
		"CacheSize", "-cache_size",
		"FilterPolicy.BitsPerKey", "-bloom_bits",
		"filter: Policy.BitsPerKey", "-bloom_bits",
	)
	for i, l := range bad {
		bad[i] = flagNames.Replace(l)
	}
	return bad
}

// kvStrataBackend opens Strata databases.
type kvStrataBackend struct {
	opts      *kv.Options // with the shared block cache
	wo        *kv.WriteOptions
	cacheSize int64
}

// newKVBackend returns the backend for the configuration, which
// parseKVFlags has checked.
func newKVBackend(c *kvConfig) (kvBackend, error) {
	o, err := kvEngineOptions(c)
	if err != nil {
		return nil, err
	}
	o.Cache = cache.New(c.cacheSize)
	return &kvStrataBackend{opts: o, wo: &kv.WriteOptions{Sync: c.sync}, cacheSize: c.cacheSize}, nil
}

func (b *kvStrataBackend) name() string { return "strata kv" }

func (b *kvStrataBackend) open(dir string, mustExist bool, oo kvOpenOptions) (kvEngine, error) {
	o := b.opts.Clone()
	o.ErrorIfNotExist = mustExist
	o.UseDirectReads = oo.directReads
	o.DisableMmapReads = !oo.mmapRead
	o.DisableIOUring = !oo.ioUring
	db, err := kv.Open(dir, o)
	if err != nil {
		return nil, err
	}
	return &kvStrataDB{db: db, wo: b.wo}, nil
}

func (b *kvStrataBackend) dropCache() { b.opts.Cache = cache.New(b.cacheSize) }

// kvEngineFile reports whether a directory entry is one of the engine's
// files (see kv/filenames.go).
func kvEngineFile(name string) bool {
	switch {
	case name == "CURRENT", name == "LOCK", strings.HasPrefix(name, "MANIFEST-"):
		return true
	}
	switch filepath.Ext(name) {
	case ".log", ".sst", ".tmp":
		return true
	}
	return false
}

func (b *kvStrataBackend) destroy(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("removing the database in %s: %w", dir, err)
	}
	for _, e := range ents {
		if e.Type().IsRegular() && kvEngineFile(e.Name()) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("removing the database in %s: %w", dir, err)
			}
		}
	}
	return nil
}

func (b *kvStrataBackend) evictOSCache(dir string) (int, error) {
	names, err := vfs.Default.List(dir)
	if err != nil {
		return 0, fmt.Errorf("evicting tables from the OS cache: %w", err)
	}
	n := 0
	for _, name := range names {
		if filepath.Ext(name) != ".sst" {
			continue
		}
		path := filepath.Join(dir, name)
		f, err := vfs.Default.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // removed by a compaction meanwhile
		}
		if err != nil {
			return n, fmt.Errorf("evicting %s from the OS cache: %w", path, err)
		}
		err = f.Evict()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return n, fmt.Errorf("evicting %s from the OS cache: %w", path, err)
		}
		n++
	}
	return n, nil
}

// kvStrataDB is an open Strata database.
type kvStrataDB struct {
	db *kv.DB
	wo *kv.WriteOptions
}

var (
	_ kvIter         = (*kv.Iterator)(nil)
	_ kvMultiScan    = (*kv.MultiScan)(nil)
	_ kvMultiGetter  = (*kvStrataDB)(nil)
	_ kvMultiScanner = (*kvStrataDB)(nil)
)

func (s *kvStrataDB) newBatch() kvBatch { return &kvStrataBatch{b: s.db.NewBatch(), wo: s.wo} }

func (s *kvStrataDB) get(key, dst []byte) ([]byte, bool, error) {
	v, err := s.db.Get(key, nil)
	if errors.Is(err, kv.ErrNotFound) {
		return dst, false, nil
	}
	if err != nil {
		return dst, false, err
	}
	return v, true, nil
}

// kvStrataIterOptions maps a run's iterator settings to the engine's.
func kvStrataIterOptions(o kvIterOptions) *kv.IterOptions {
	return &kv.IterOptions{
		ReadOptions:       kv.ReadOptions{ReadaheadSize: o.readaheadSize, AsyncIO: o.asyncIO, DontFillCache: !o.fillCache},
		LowerBound:        o.lowerBound,
		UpperBound:        o.upperBound,
		CoalesceThreshold: o.coalesceThreshold,
	}
}

func (s *kvStrataDB) newIter(o kvIterOptions) (kvIter, error) {
	it, err := s.db.NewIter(kvStrataIterOptions(o))
	if err != nil {
		return nil, err
	}
	return it, nil
}

func (s *kvStrataDB) multiGet(keys, dst [][]byte, o kvIterOptions) ([][]byte, error) {
	return s.db.MultiGet(keys, &kvStrataIterOptions(o).ReadOptions, dst)
}

func (s *kvStrataDB) newMultiScan(ranges []kvRange, o kvIterOptions) (kvMultiScan, error) {
	sr := make([]kv.ScanRange, len(ranges))
	for i, r := range ranges {
		sr[i] = kv.ScanRange{Start: r.start, End: r.end}
	}
	ms, err := s.db.NewMultiScan(context.Background(), sr, kvStrataIterOptions(o))
	if err != nil {
		return nil, err
	}
	return ms, nil
}

func (s *kvStrataDB) flush() error   { return s.db.Flush() }
func (s *kvStrataDB) compact() error { return s.db.Compact(nil, nil) }
func (s *kvStrataDB) metrics() string {
	return s.db.Metrics().String()
}
func (s *kvStrataDB) close() error { return s.db.Close() }

func (s *kvStrataDB) counters() []kvCounter {
	snap := s.db.Stats()
	out := make([]kvCounter, stats.NumCounters)
	for c := range stats.NumCounters {
		out[c] = kvCounter{name: c.String(), value: snap.Get(c)}
	}
	return out
}

// kvStrataBatch is a reusable kv.Batch.
type kvStrataBatch struct {
	b  *kv.Batch
	wo *kv.WriteOptions
}

func (b *kvStrataBatch) set(key, value []byte) error { return b.b.Set(key, value) }

func (b *kvStrataBatch) commit() error {
	err := b.b.Commit(b.wo)
	b.b.Reset()
	return err
}

func (b *kvStrataBatch) close() error { return b.b.Close() }
