package main

// SQLite beside Strata: the same workloads, through database/sql with
// prepared statements, against sbtest in a SQLite file of its own per
// driver, loaded with the same rows by the same multi-row INSERTs.
//
// Two drivers: sqlite_cgo is github.com/mattn/go-sqlite3 (SQLite's C
// source through cgo; without cgo its stub refuses to open, and the engine
// fails at start), sqlite_go is modernc.org/sqlite (SQLite translated
// to Go). Each opens a file beside the Strata database: <db>.sqlite_cgo and
// <db>.sqlite_go. Two SQLite libraries in one process must not share a
// file: each keeps its own POSIX locks, which the kernel merges per
// process.
//
// Durability matches Strata's -sync: the WAL journal with
// synchronous=NORMAL (a commit is not synced, a crash keeps a prefix of
// the commits) without -sync, synchronous=FULL with it. The page cache is
// as large as Strata's block cache (-cache_size, or its default), so that
// both keep the same bytes of table in their own memory; the rest comes
// from the OS page cache for both. Explicit transactions begin IMMEDIATE,
// taking the write lock at BEGIN, which is what the counter workload's
// SELECT ... FOR UPDATE asks of Strata.

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3" // database/sql driver "sqlite3"
	_ "modernc.org/sqlite"          // database/sql driver "sqlite"

	"github.com/strata-db/strata/cmd/sqlbench/sqlrun"
)

// sqliteEngine is one SQLite driver, a sqlrun.Engine.
type sqliteEngine struct {
	name        string // as -engines names it
	description string
	driver      string // database/sql driver name
	// dsn returns the data source name of the file at path with the
	// pragmas every connection sets.
	dsn func(path string, p sqlitePragmas) string
}

// sqlitePragmas are the settings each SQLite connection applies when it
// opens: journal_mode=WAL, synchronous, cache_size (negative: KiB) and
// busy_timeout, for writers that find the write lock taken.
type sqlitePragmas struct {
	synchronous string
	cacheKiB    int64
}

const sqliteBusyTimeoutMS = 10000

// sqliteEngines are the SQLite engines -engines accepts.
var sqliteEngines = []sqliteEngine{
	{name: "sqlite_cgo", description: "SQLite through cgo, github.com/mattn/go-sqlite3", driver: "sqlite3", dsn: func(path string, p sqlitePragmas) string {
		v := url.Values{}
		v.Set("_journal_mode", "WAL")
		v.Set("_synchronous", p.synchronous)
		v.Set("_cache_size", fmt.Sprint(-p.cacheKiB))
		v.Set("_busy_timeout", fmt.Sprint(sqliteBusyTimeoutMS))
		v.Set("_txlock", "immediate")
		return "file:" + path + "?" + v.Encode()
	}},
	{name: "sqlite_go", description: "SQLite in Go, modernc.org/sqlite", driver: "sqlite", dsn: func(path string, p sqlitePragmas) string {
		v := url.Values{}
		v.Add("_pragma", "journal_mode(WAL)")
		v.Add("_pragma", "synchronous("+p.synchronous+")")
		v.Add("_pragma", fmt.Sprintf("cache_size(%d)", -p.cacheKiB))
		v.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", sqliteBusyTimeoutMS))
		v.Set("_txlock", "immediate")
		return "file:" + path + "?" + v.Encode()
	}},
}

func (e sqliteEngine) Name() string        { return e.name }
func (e sqliteEngine) Description() string { return e.description }

// Settings names the pragmas that differ from SQLite's defaults.
func (e sqliteEngine) Settings(s *sqlrun.Setup) string {
	p := sqlitePragmasFor(s)
	return fmt.Sprintf("SQLite: journal_mode=WAL, synchronous=%s, %d MiB page cache (cache_size=%d)", p.synchronous, p.cacheKiB>>10, -p.cacheKiB)
}

// sqliteDDL creates sbtest as sqlLoad's Strata table: INTEGER PRIMARY KEY
// makes id the rowid, the key the table's B-tree is ordered by, as the
// primary key orders Strata's rows.
var sqliteDDL = []string{
	"DROP TABLE IF EXISTS sbtest",
	"CREATE TABLE sbtest (id INTEGER PRIMARY KEY, k INTEGER NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '')",
	"CREATE INDEX k_idx ON sbtest (k)",
}

// Statement returns a workload's statement as SQLite takes it: SQLite has
// no FOR UPDATE, and its IMMEDIATE transactions hold the write lock from
// BEGIN on instead.
func (e sqliteEngine) Statement(text string) string {
	return strings.TrimSuffix(text, " FOR UPDATE")
}

// sqlitePath is the file of engine e beside the Strata database in dir.
func sqlitePath(dir, engine string) string {
	return strings.TrimRight(dir, "/") + "." + engine
}

// sqlitePragmasFor returns the connection settings that match s's
// durability and block cache.
func sqlitePragmasFor(s *sqlrun.Setup) sqlitePragmas {
	p := sqlitePragmas{synchronous: "NORMAL", cacheKiB: s.Cache >> 10}
	if s.Sync {
		p.synchronous = "FULL"
	}
	return p
}

// Open opens the engine's database beside s.Dir and makes sure it holds
// sbtest with the ids 1 to s.Rows, loading it when it does not. It returns
// the database and the table's largest id.
func (e sqliteEngine) Open(ctx context.Context, s *sqlrun.Setup) (*sql.DB, int64, error) {
	path := sqlitePath(s.Dir, e.name)
	db, err := sql.Open(e.driver, e.dsn(path, sqlitePragmasFor(s)))
	if err != nil {
		return nil, 0, err
	}
	db.SetMaxIdleConns(s.Threads + 2)
	maxID, err := e.prepareTable(ctx, db, path, s)
	if err != nil {
		_ = db.Close()
		return nil, 0, err
	}
	return db, maxID, nil
}

func (e sqliteEngine) prepareTable(ctx context.Context, db *sql.DB, path string, s *sqlrun.Setup) (int64, error) {
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return 0, err
	}
	if !strings.EqualFold(mode, "wal") {
		return 0, fmt.Errorf("journal_mode is %q, want wal", mode)
	}
	n, maxID, err := s.TableRows(ctx, db)
	if err == nil && n == int64(s.Rows) {
		fmt.Fprintf(s.Stderr, "... %s: reusing sbtest in %s (ids 1 to %d, largest %d)\n", e.name, path, n, maxID)
		return maxID, nil
	}
	start := time.Now()
	if err := s.Load(ctx, db, e.name, sqliteDDL); err != nil {
		return 0, err
	}
	fmt.Fprintf(s.Stderr, "... %s: loaded %d rows in %.1fs\n", e.name, s.Rows, time.Since(start).Seconds())
	// As Strata's compaction settles its tree, a checkpoint moves the
	// WAL's pages into the database file, so that runs start without a
	// WAL to search.
	if _, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return 0, fmt.Errorf("checkpoint: %w", err)
	}
	return int64(s.Rows), nil
}
