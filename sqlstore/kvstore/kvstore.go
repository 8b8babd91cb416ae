// Package kvstore opens a sqlstore.Store over the embedded engine (package
// kv): the one place a front end (the driver, the shell, the server, the
// benchmarks) turns a directory into a store. sqlstore itself reaches
// storage only through the contract in package storage.
package kvstore

import (
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/strata-db/strata/kv"
	"github.com/strata-db/strata/sqlstore"
)

// Options configure a store over the embedded engine. The zero value (or
// nil) gives durable defaults.
type Options struct {
	// Options are the store's own.
	sqlstore.Options
	// KV configures the engine; nil means the engine's defaults, except
	// the block cache: a SQL database gets sqlstore.DefaultCacheSize unless
	// KV sets CacheSize or Cache. Open works on a copy.
	KV *kv.Options
	// NoSync makes commits return before the write-ahead log is synced or
	// even written (a background writer hands it to the system within
	// moments): a crash of the process or of the machine may lose the last
	// commits (never tear one). Default false: every commit is durable
	// when it returns.
	NoSync bool
}

// Open opens (creating if needed) the engine in directory dir and the store
// over it. The store owns the engine (Store.Close closes it); the DB is
// returned for its metrics and maintenance (Flush, Compact, Metrics), not
// to be closed or written directly.
func Open(dir string, opts *Options) (*sqlstore.Store, *kv.DB, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	kvOpts := o.KV.Clone()
	if kvOpts.Cache == nil && kvOpts.CacheSize == 0 {
		kvOpts.CacheSize = sqlstore.DefaultCacheSize
	}
	db, err := kv.Open(dir, kvOpts)
	if err != nil {
		return nil, nil, fmt.Errorf("sqlstore: open %s: %w", dir, err)
	}
	if o.Access.NoFillBytes == 0 {
		// A scan of a sixteenth of the block cache or more reads past it.
		c := kvOpts.CacheSize
		if kvOpts.Cache != nil {
			c = kvOpts.Cache.Capacity()
		}
		o.Access.NoFillBytes = max(c/16, 1)
	}
	wo := kv.Sync
	if o.NoSync {
		wo = kv.NoSync
	}
	s, err := sqlstore.New(kv.NewEngine(db, wo), &o.Options)
	if err != nil {
		return nil, nil, err
	}
	return s, db, nil
}

// OpenDir is Open for a front end that owns its data folder (the shell,
// the server): it creates dir when missing, readable by its owner alone
// since it holds the data and the accounts, and names dir in its error.
func OpenDir(dir string, opts *Options) (*sqlstore.Store, *kv.DB, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("creating the data folder: %w", err)
	}
	st, db, err := Open(dir, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("opening %s: %w", dir, err)
	}
	return st, db, nil
}

// NoticeLog returns an engine logger (kv.Options.Logger) that passes to out
// what an operator acts on: the engine's errors (a failed log write, a
// background error that made the database read-only) and its recovery
// notices (a torn log tail dropped, writes resumed after a full disk). The
// routine ones, each flush and compaction, it drops.
func NoticeLog(out *log.Logger) kv.Logger { return noticeLog{out} }

type noticeLog struct{ out *log.Logger }

func (l noticeLog) Infof(format string, args ...any) {
	if strings.HasPrefix(format, "kv: recovery") || strings.HasPrefix(format, "kv: resumed") {
		l.out.Printf(format, args...)
	}
}

func (l noticeLog) Errorf(format string, args ...any) { l.out.Printf(format, args...) }
