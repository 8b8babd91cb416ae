package main

import (
	"errors"

	"github.com/strata-db/strata/cmd/sqlbench/sqlrun"
)

// The sql subcommand is package sqlrun with Strata alone: the module
// github.com/strata-db/strata/bench runs it beside SQLite.
func init() {
	register("sql", "sysbench-style SQL workloads over database/sql: point selects, IN lists, ranges, writes", runSQL)
}

func runSQL(args []string) error {
	err := sqlrun.Run(args, sqlrun.Options{})
	if ue, ok := errors.AsType[sqlrun.UsageError](err); ok {
		return usageError{ue.Err}
	}
	return err
}
