// Package sqlrun is sqlbench's sql subcommand, which runs sysbench-style
// SQL workloads through database/sql against an embedded database (driver
// "strata"):
//
//	sqlbench sql -rows=1000000 -workloads=point_select,in_list:10,in_list:100 \
//	    -access=planned,naive -duration=10s -statistics
//
// It creates sysbench's table
//
//	sbtest(id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60), KEY k_idx(k))
//
// in -db (or a temporary directory removed at exit), loads -rows rows
// (load.go: multi-row INSERTs, a progress bar on a terminal), compacts
// the tree so that every run starts from the same settled shape, and runs
// each workload of -workloads (workload.go) in each access mode of
// -access, side by side, in -threads threads for -duration each, every
// thread on its own connection with prepared statements (runner.go).
// A -db that already holds the table with -rows rows is reused as it is.
//
// -engines runs the same workloads against other databases as well,
// interleaved with Strata's runs, and prints each engine's ratio to the
// first. The other engines come from the command that calls Run (an
// Engine each), so that their drivers are that command's dependencies,
// not Strata's: the module github.com/strata-db/strata/bench adds SQLite's
// two drivers,
//
//	cd bench && go run ./cmd/sqlitebench sql -engines=strata,sqlite_go,sqlite_cgo -duration=3s -repeat=3
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
package sqlrun

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"

	"github.com/strata-db/strata/cmd/sqlbench/internal/meter"
	_ "github.com/strata-db/strata/driver"
	"github.com/strata-db/strata/sqlstore/tikvstore"
)

// Engine is a database other than Strata that the workloads run against
// when -engines names it, through database/sql with prepared statements.
type Engine interface {
	// Name is the engine's name in -engines and in the report.
	Name() string
	// Description says what the engine is, for -engines's help.
	Description() string
	// Open opens the engine's database and makes sure it holds sbtest
	// with the ids 1 to s.Rows (s.TableRows), loading it (s.Load) when
	// it does not. It returns the database and the table's largest id.
	Open(ctx context.Context, s *Setup) (db *sql.DB, maxID int64, err error)
	// Statement returns a workload's statement as the engine takes it.
	Statement(text string) string
	// Settings is a line the report prints under its header about the
	// engine's settings; engines that return the same line print it once.
	Settings(s *Setup) string
}

// Setup is what an Engine opens its database with: the run's command line
// and where its notices go.
type Setup struct {
	// Dir is Strata's database folder; other engines keep their files
	// beside it, as Dir plus a suffix.
	Dir     string
	Rows    int       // rows of sbtest (-rows)
	Threads int       // client threads, each on its own connection (-threads)
	Sync    bool      // sync every commit (-sync)
	Cache   int64     // bytes of Strata's block cache (-cache_size or its default)
	Stderr  io.Writer // notices

	cfg      *sqlConfig
	progress io.Writer
}

// TableRows returns how many of the ids 1 to s.Rows db's sbtest holds and
// its largest id, or an error when there is no table.
func (s *Setup) TableRows(ctx context.Context, db *sql.DB) (n, maxID int64, err error) {
	return sqlTableRows(ctx, db, s.Rows)
}

// Load creates sbtest in db with ddl and loads the rows Strata's table
// gets, with the same multi-row INSERTs; label names the progress bar.
func (s *Setup) Load(ctx context.Context, db *sql.DB, label string, ddl []string) error {
	return sqlLoad(ctx, db, s.cfg, s.progress, label, ddl)
}

// Options are a command's additions to the subcommand.
type Options struct {
	// Command names the command in the usage line; default "sqlbench sql".
	Command string
	// Engines are the databases besides Strata that -engines accepts.
	Engines []Engine
	// Aliases are -engines names that stand for several engines.
	Aliases map[string][]string
}

// UsageError marks a bad command line: a command exits with status 2.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Run runs the subcommand with args (the arguments after its name):
// reports to standard output, notices to standard error, with a progress
// bar on standard error when it is a terminal, until the workloads end
// or an interrupt. A bad command line returns a UsageError, -h
// flag.ErrHelp.
func Run(args []string, opts Options) error {
	var progress io.Writer
	if meter.IsTerminal(os.Stderr) {
		progress = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return Main(ctx, args, os.Stdout, os.Stderr, progress, opts)
}

// Main runs the subcommand: reports to stdout, notices to stderr, progress
// bars to progress (nil for none).
func Main(ctx context.Context, args []string, stdout, stderr, progress io.Writer, opts Options) (err error) {
	cfg, err := parseSQLFlags(args, stdout, opts)
	if err != nil {
		return err
	}
	dir := cfg.dir
	if dir == "" {
		// A temporary folder holds the Strata database, and the other
		// engines' files beside it.
		tmp, err := os.MkdirTemp("", "sqlbench-sql-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = filepath.Join(tmp, "strata")
	}
	b := &sqlBench{cfg: cfg, dir: dir, store: cfg.store, stdout: stdout, stderr: stderr, progress: progress, others: map[string]*sql.DB{}}
	if cfg.store != "" {
		// The driver shares one store among the process's connections and
		// closes it with the last: keep one open for the run, so that a
		// mock cluster outlives the reopenings.
		keep, err := sql.Open("strata", cfg.store)
		if err == nil {
			err = keep.PingContext(ctx)
		}
		if err != nil {
			return fmt.Errorf("-store: %w", err)
		}
		defer keep.Close()
	}
	defer func() {
		for _, db := range b.others {
			if cerr := db.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}
	}()
	for _, e := range cfg.engines {
		var maxID int64
		if e == "strata" {
			if maxID, err = sqlPrepareTable(ctx, b.location(), cfg, stderr, progress); err != nil {
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
			if db, maxID, err = cfg.others[e].Open(ctx, b.setup()); err != nil {
				return fmt.Errorf("%s: %w", e, err)
			}
			b.others[e] = db
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

// setup returns what the other engines open their databases with.
func (b *sqlBench) setup() *Setup {
	c := b.cfg
	return &Setup{Dir: b.dir, Rows: c.rows, Threads: c.threads, Sync: c.sync, Cache: sqlBlockCache(c), Stderr: b.stderr,
		cfg: c, progress: b.progress}
}

// open opens the benchmark's database as b.db.
func (b *sqlBench) open() error {
	db, err := sql.Open("strata", sqlDSN(b.location(), b.cfg))
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

// location is where Strata's store is: the -store address or the folder.
func (b *sqlBench) location() string {
	if b.store != "" {
		return b.store
	}
	return b.dir
}

// sqlDSN is the data source name of the benchmark's database.
func sqlDSN(dir string, cfg *sqlConfig) string {
	if tikvstore.IsAddress(dir) {
		return withDB(dir)
	}
	dsn := fmt.Sprintf("%s?db=sbtest&sync=%t", dir, cfg.sync)
	if cfg.cacheSize > 0 {
		dsn += fmt.Sprintf("&cache=%d", cfg.cacheSize)
	}
	return dsn
}

// parseFlags parses the arguments with fs, which should use
// flag.ContinueOnError. A bad flag or a stray argument becomes a
// UsageError; -h returns flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return UsageError{err}
	}
	if fs.NArg() > 0 {
		return UsageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	return nil
}
