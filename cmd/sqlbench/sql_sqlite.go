package main

// SQLite beside Strata (-engines): the same workloads, through database/sql
// with prepared statements, against sbtest in a SQLite file of its own per
// driver, loaded with the same rows by the same multi-row INSERTs.
//
// Two drivers: sqlite_cgo is github.com/mattn/go-sqlite3 (SQLite's C
// source through cgo; without cgo its stub refuses to open, and the engine
// is refused at start), sqlite_go is modernc.org/sqlite (SQLite translated
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
	"io"
	"net/url"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3" // database/sql driver "sqlite3"
	_ "modernc.org/sqlite"          // database/sql driver "sqlite"
)

// sqliteEngine is one SQLite driver.
type sqliteEngine struct {
	name   string // as -engines names it
	driver string // database/sql driver name
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
var sqliteEngines = map[string]sqliteEngine{
	"sqlite_cgo": {name: "sqlite_cgo", driver: "sqlite3", dsn: func(path string, p sqlitePragmas) string {
		v := url.Values{}
		v.Set("_journal_mode", "WAL")
		v.Set("_synchronous", p.synchronous)
		v.Set("_cache_size", fmt.Sprint(-p.cacheKiB))
		v.Set("_busy_timeout", fmt.Sprint(sqliteBusyTimeoutMS))
		v.Set("_txlock", "immediate")
		return "file:" + path + "?" + v.Encode()
	}},
	"sqlite_go": {name: "sqlite_go", driver: "sqlite", dsn: func(path string, p sqlitePragmas) string {
		v := url.Values{}
		v.Add("_pragma", "journal_mode(WAL)")
		v.Add("_pragma", "synchronous("+p.synchronous+")")
		v.Add("_pragma", fmt.Sprintf("cache_size(%d)", -p.cacheKiB))
		v.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", sqliteBusyTimeoutMS))
		v.Set("_txlock", "immediate")
		return "file:" + path + "?" + v.Encode()
	}},
}

// sqliteDDL creates sbtest as sqlLoad's Strata table: INTEGER PRIMARY KEY
// makes id the rowid, the key the table's B-tree is ordered by, as the
// primary key orders Strata's rows.
var sqliteDDL = []string{
	"DROP TABLE IF EXISTS sbtest",
	"CREATE TABLE sbtest (id INTEGER PRIMARY KEY, k INTEGER NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '')",
	"CREATE INDEX k_idx ON sbtest (k)",
}

// sqliteStatement returns a workload's statement as SQLite takes it:
// SQLite has no FOR UPDATE, and its IMMEDIATE transactions hold the write
// lock from BEGIN on instead.
func sqliteStatement(text string) string {
	return strings.TrimSuffix(text, " FOR UPDATE")
}

// sqlitePath is the file of engine e beside the Strata database in dir.
func sqlitePath(dir, engine string) string {
	return strings.TrimRight(dir, "/") + "." + engine
}

// sqlitePragmasFor returns the connection settings that match cfg's
// durability and block cache.
func sqlitePragmasFor(cfg *sqlConfig) sqlitePragmas {
	p := sqlitePragmas{synchronous: "NORMAL", cacheKiB: sqlBlockCache(cfg) >> 10}
	if cfg.sync {
		p.synchronous = "FULL"
	}
	return p
}

// sqliteOpen opens engine e's database beside dir and makes sure it holds
// sbtest with the ids 1 to cfg.rows, loading it when it does not. It
// returns the database and the table's largest id.
func sqliteOpen(ctx context.Context, e sqliteEngine, dir string, cfg *sqlConfig, stderr, progress io.Writer) (*sql.DB, int64, error) {
	path := sqlitePath(dir, e.name)
	db, err := sql.Open(e.driver, e.dsn(path, sqlitePragmasFor(cfg)))
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", e.name, err)
	}
	db.SetMaxIdleConns(cfg.threads + 2)
	maxID, err := sqlitePrepareTable(ctx, db, e, path, cfg, stderr, progress)
	if err != nil {
		_ = db.Close()
		return nil, 0, fmt.Errorf("%s: %w", e.name, err)
	}
	return db, maxID, nil
}

func sqlitePrepareTable(ctx context.Context, db *sql.DB, e sqliteEngine, path string, cfg *sqlConfig, stderr, progress io.Writer) (int64, error) {
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return 0, err
	}
	if !strings.EqualFold(mode, "wal") {
		return 0, fmt.Errorf("journal_mode is %q, want wal", mode)
	}
	n, maxID, err := sqlTableRows(ctx, db, cfg.rows)
	if err == nil && n == int64(cfg.rows) {
		fmt.Fprintf(stderr, "... %s: reusing sbtest in %s (ids 1 to %d, largest %d)\n", e.name, path, n, maxID)
		return maxID, nil
	}
	start := time.Now()
	if err := sqlLoad(ctx, db, cfg, progress, e.name, sqliteDDL); err != nil {
		return 0, err
	}
	fmt.Fprintf(stderr, "... %s: loaded %d rows in %.1fs\n", e.name, cfg.rows, time.Since(start).Seconds())
	// As Strata's compaction settles its tree, a checkpoint moves the
	// WAL's pages into the database file, so that runs start without a
	// WAL to search.
	if _, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return 0, fmt.Errorf("checkpoint: %w", err)
	}
	return int64(cfg.rows), nil
}
