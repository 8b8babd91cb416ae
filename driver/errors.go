package driver

import "errors"

// Sentinel errors. Errors from SQL statements are *mysql.SQLError values
// (package github.com/dolthub/vitess/go/mysql) carrying MySQL's error number
// and SQLSTATE, as a MySQL server would send them.
var (
	// ErrBadDSN is returned by Open and OpenConnector for a data source
	// name that does not parse or has unknown options.
	ErrBadDSN = errors.New("strata: bad data source name")

	// ErrOptionsMismatch is returned when a folder that this process has
	// already opened is opened again with a different sync or cache option:
	// one store serves every connector of a folder, with the first one's.
	ErrOptionsMismatch = errors.New("strata: store already open with other options")

	// ErrIsolation is returned by BeginTx for an isolation level other
	// than the default, REPEATABLE READ or SNAPSHOT: transactions read one
	// snapshot and check write conflicts at commit.
	ErrIsolation = errors.New("strata: unsupported isolation level")

	// ErrClosed is returned by calls on a closed connection or statement.
	ErrClosed = errors.New("strata: connection is closed")
)
