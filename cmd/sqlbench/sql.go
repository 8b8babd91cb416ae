package main

// The sql subcommand runs sysbench-style SQL workloads through database/sql
// against an embedded database (driver "strata"):
//
//	sqlbench sql -rows=1000000 -workloads=point_select,in_list:10,in_list:100 \
//	    -access=planned,naive -duration=10s -statistics
//
// It creates sysbench's table
//
//	sbtest(id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60), KEY k_idx(k))
//
// in -db (or a temporary directory removed at exit), loads -rows rows
// (sql_load.go: multi-row INSERTs, a progress bar on a terminal), compacts
// the tree so that every run starts from the same settled shape, and runs
// each workload of -workloads (sql_workload.go) in each access mode of
// -access, side by side, in -threads threads for -duration each, every
// thread on its own connection with prepared statements (sql_runner.go).
// A -db that already holds the table with -rows rows is reused as it is.
//
// -engines runs the same workloads against SQLite as well (sql_sqlite.go),
// interleaved with Strata's runs, and prints each engine's ratio to the
// first:
//
//	sqlbench sql -engines=strata,sqlite_go,sqlite_cgo -duration=3s -repeat=3
//
// Access modes are the planner's (package planner): planned chooses Get,
// MultiGet, readahead and MultiScan per lookup; naive reads every lookup
// with a plain iterator per range and a Get per fetched row, the baseline.
// A connection selects one with SET strata_access. Both reuse the plan of a
// prepared statement across executions where the store can
// (sqlstore.PreparedSelect); replan is planned with every execution
// planned in full by the SQL engine (SET strata_plan_reuse = OFF), to
// measure what that reuse saves.
//
// Each workload prints queries per second and the mean, p95 and p99
// latency; with two modes, the ratio of the first to the second. -repeat
// runs the modes in turn several times and reports the medians, which a
// shared machine needs. With
// -statistics it also prints the engine counters per query (the
// difference of the database-wide counters over the run, divided by the
// queries) and the access plan of the last query. -cold drops the OS page
// cache of the database's tables before every query (not timed), so that
// reads come from the disk, and reopens the database before every run, so
// that each run starts with an empty block cache: otherwise the mode that
// runs second would find blocks the first one read. Within a run the block
// cache keeps what the run reads, at its default size.

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"

	_ "github.com/strata-db/strata/driver"
)

func init() {
	register("sql", "sysbench-style SQL workloads over database/sql: point selects, IN lists, ranges, writes", runSQL)
}

func runSQL(args []string) error {
	var progress io.Writer
	if isTerminal(os.Stderr) {
		progress = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return sqlMain(ctx, args, os.Stdout, os.Stderr, progress)
}

// sqlMain runs the sql subcommand: reports to stdout, notices to stderr,
// progress bars to progress (nil for none).
func sqlMain(ctx context.Context, args []string, stdout, stderr, progress io.Writer) (err error) {
	cfg, err := parseSQLFlags(args, stdout)
	if err != nil {
		return err
	}
	dir := cfg.dir
	if dir == "" {
		// A temporary folder holds the Strata database, and the SQLite
		// files beside it (sqlitePath).
		tmp, err := os.MkdirTemp("", "sqlbench-sql-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = filepath.Join(tmp, "strata")
	}
	b := &sqlBench{cfg: cfg, dir: dir, stdout: stdout, stderr: stderr, progress: progress, sqlite: map[string]*sql.DB{}}
	defer func() {
		for _, db := range b.sqlite {
			if cerr := db.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}
	}()
	for _, e := range cfg.engines {
		var maxID int64
		if e == "strata" {
			if maxID, err = sqlPrepareTable(ctx, dir, cfg, stderr, progress); err != nil {
				return err
			}
			if err := b.open(); err != nil {
				return err
			}
			defer func() {
				if cerr := b.db.Close(); cerr != nil && err == nil {
					err = cerr
				}
			}()
		} else {
			var db *sql.DB
			if db, maxID, err = sqliteOpen(ctx, sqliteEngines[e], dir, cfg, stderr, progress); err != nil {
				return err
			}
			b.sqlite[e] = db
		}
		// insert takes ids above every engine's largest, so that each
		// inserts a new row whichever engine takes it.
		b.nextID = max(b.nextID, maxID)
	}
	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	return b.runAll(ctx)
}

// open opens the benchmark's database as b.db.
func (b *sqlBench) open() error {
	db, err := sql.Open("strata", sqlDSN(b.dir, b.cfg))
	if err != nil {
		return err
	}
	db.SetMaxIdleConns(b.cfg.threads + 2)
	b.db = db
	return nil
}

// reopen closes the database and opens it again: the store, its block
// cache and its table cache start empty.
func (b *sqlBench) reopen() error {
	if err := b.db.Close(); err != nil {
		return err
	}
	return b.open()
}

// sqlDSN is the data source name of the benchmark's database.
func sqlDSN(dir string, cfg *sqlConfig) string {
	dsn := fmt.Sprintf("%s?db=sbtest&sync=%t", dir, cfg.sync)
	if cfg.cacheSize > 0 {
		dsn += fmt.Sprintf("&cache=%d", cfg.cacheSize)
	}
	return dsn
}
