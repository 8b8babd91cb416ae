// Command sqlitebench runs sqlbench's SQL workloads (package
// github.com/strata-db/strata/cmd/sqlbench/sqlrun) against Strata and
// SQLite side by side, in the same process and the same run, and prints
// each engine's ratio to the first:
//
//	sqlitebench sql -engines=strata,sqlite_go,sqlite_cgo -duration=3s -repeat=3
//
// The flags are sqlbench sql's; -engines adds sqlite_go
// (modernc.org/sqlite, SQLite translated to Go), sqlite_cgo
// (github.com/mattn/go-sqlite3, which needs cgo) and sqlite (both). It
// lives in a module of its own so that Strata's module does not depend on
// SQLite.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/strata-db/strata/cmd/sqlbench/sqlrun"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// options adds the SQLite engines to the sql subcommand.
func options() sqlrun.Options {
	opts := sqlrun.Options{Command: "sqlitebench sql", Aliases: map[string][]string{"sqlite": {"sqlite_go", "sqlite_cgo"}}}
	for _, e := range sqliteEngines {
		opts.Engines = append(opts.Engines, e)
	}
	return opts
}

// run runs the command and returns its exit code: 0 on success or help,
// 1 when the benchmark fails, 2 on a usage error.
func run(args []string, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "sql" {
		fmt.Fprintln(stderr, "usage: sqlitebench sql [flags]\n\nRun 'sqlitebench sql -h' for the flags.")
		return 2
	}
	err := sqlrun.Run(args[1:], options())
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	}
	fmt.Fprintf(stderr, "sqlitebench sql: %v\n", err)
	if _, ok := errors.AsType[sqlrun.UsageError](err); ok {
		return 2
	}
	return 1
}
