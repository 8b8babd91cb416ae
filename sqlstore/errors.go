package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/strata-db/strata/storage"
)

// Sentinel errors. Every error of this package that is not one of GMS's own
// error kinds wraps one of them; test with errors.Is. MySQL error numbers
// are attached here and only here (toSQLError), at the edge where errors
// leave the package towards GMS and clients.
var (
	// ErrConflict is returned by a commit when another transaction committed
	// a write to one of the same keys (or dropped or rewrote a table this
	// one wrote to) after this transaction's snapshot. Nothing of the
	// transaction is applied; retry it. Clients see MySQL error 1213.
	ErrConflict = errors.New("sqlstore: write conflict with a concurrent transaction")

	// ErrClosed is returned by every call on a closed Store.
	ErrClosed = errors.New("sqlstore: store is closed")

	// ErrCorruptCatalog is returned when a catalog record cannot be decoded.
	ErrCorruptCatalog = errors.New("sqlstore: corrupt catalog record")

	// ErrUnsupported is returned for schema features the store cannot
	// persist (geometry columns, full-text and vector indexes, ...).
	ErrUnsupported = errors.New("sqlstore: unsupported")

	// ErrNoTransaction is returned when a call that needs the session's
	// transaction finds none (a context without a sqlstore session).
	ErrNoTransaction = errors.New("sqlstore: no transaction in this context")
)

// toSQLError turns the errors this package chooses a MySQL number for into
// *mysql.SQLError, which GMS and its server pass through unchanged. Every
// other error is returned as is: GMS maps its own error kinds itself.
func toSQLError(err error) error {
	if err == nil {
		return nil
	}
	var sqlErr *mysql.SQLError
	if errors.As(err, &sqlErr) {
		return err
	}
	switch {
	case errors.Is(err, ErrConflict), errors.Is(err, storage.ErrConflict):
		return mysql.NewSQLError(mysql.ERLockDeadlock, mysql.SSLockDeadlock,
			"Deadlock found when trying to get lock; try restarting transaction (%v)", err)
	}
	if se := lockSQLError(err); se != nil {
		return se
	}
	return err
}

// isGMSError reports whether err is one of GMS's error kinds that GMS
// itself maps to a MySQL number (it must then not be wrapped in a way that
// hides the kind; GMS matches kinds with errors.Is-like checks on the value).
func isGMSError(err error) bool {
	return sql.ErrPrimaryKeyViolation.Is(err) || sql.ErrUniqueKeyViolation.Is(err)
}

// wrapf wraps err with context unless it is a GMS error kind or an error
// that already carries a MySQL number, which must reach GMS unchanged.
func wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	var sqlErr *mysql.SQLError
	var uk sql.UniqueKeyError
	if errors.As(err, &sqlErr) || errors.As(err, &uk) || isGMSError(err) {
		return err
	}
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), err)
}

// MySQLError returns the error a MySQL client should see for err, with
// MySQL's error number and SQLSTATE: this package's own errors (a write
// conflict is 1213), a statement stopped by its context (KILL QUERY, a
// client gone) as 1317, GMS error kinds that GMS's own mapping
// (sql.CastSQLError) leaves as 1105 but MySQL numbers (errorKinds: a
// syntax error is 1064, an existing table 1050, a value out of range 1264,
// ...), and everything else as GMS maps it. The MySQL server and the
// database/sql driver use it; nil stays nil.
func MySQLError(err error) *mysql.SQLError {
	if err == nil {
		return nil
	}
	var se *mysql.SQLError
	if errors.As(err, &se) {
		return se
	}
	if errors.Is(err, ErrConflict) || errors.Is(err, storage.ErrConflict) {
		return toSQLError(err).(*mysql.SQLError)
	}
	if se := lockSQLError(err); se != nil {
		return se
	}
	if errors.Is(err, context.Canceled) {
		// Only a statement's own context is cancelled: by KILL QUERY or
		// KILL, a shutdown, or a client that hung up. MySQL reports all
		// of them so.
		return mysql.NewSQLError(mysql.ERQueryInterrupted, mysql.SSQueryInterrupted, "Query execution was interrupted")
	}
	inner := sql.UnwrapError(err)
	var wi sql.WrappedInsertError
	if errors.As(inner, &wi) {
		inner = wi.Cause
	}
	if se, ok := numberKind(inner, false); ok {
		return se
	}
	return sql.CastSQLError(err)
}

// StatementError returns err as the statement query should report it,
// where that depends on the statement: DROP TABLE of a table that does not
// exist fails with 1051 (Unknown table), not GMS's 1146 (table not found);
// ALTER TABLE that makes a column holding NULLs NOT NULL fails with 1138
// (Invalid use of NULL value), not the 1048 an INSERT of NULL gets.
// err may be GMS's error or the protocol handler's numbered one.
func StatementError(query string, err error) error {
	if err == nil {
		return nil
	}
	if isNullIntoNotNull(err) {
		if first, _ := LeadingWords(query); strings.EqualFold(first, "alter") {
			return mysql.NewSQLError(mysql.ERInvalidUseOfNull, "22004", "Invalid use of NULL value")
		}
		return err
	}
	if name, ok := missingDatabase(err); ok {
		// DROP DATABASE of a database that does not exist: 1008.
		if first, second := LeadingWords(query); strings.EqualFold(first, "drop") &&
			(strings.EqualFold(second, "database") || strings.EqualFold(second, "schema")) {
			return mysql.NewSQLError(mysql.ERDbDropExists, mysql.SSUnknownSQLState, "Can't drop database '%s'; database doesn't exist", name)
		}
		return err
	}
	name, ok := "", false
	var se *mysql.SQLError
	switch {
	case sql.ErrTableNotFound.Is(err):
		name, ok = strings.CutPrefix(err.Error(), "table not found: ")
	case errors.As(err, &se) && se.Num == mysql.ERNoSuchTable:
		// GMS's words, or MySQL's as errorKinds gives them.
		if name, ok = strings.CutPrefix(se.Message, "table not found: "); !ok {
			if rest, found := strings.CutPrefix(se.Message, "Table '"); found {
				name, ok = strings.CutSuffix(rest, "' doesn't exist")
			}
		}
	}
	if !ok {
		return err
	}
	first, second := LeadingWords(query)
	if !strings.EqualFold(first, "drop") || !(strings.EqualFold(second, "table") || strings.EqualFold(second, "tables") || strings.EqualFold(second, "temporary")) {
		return err
	}
	return mysql.NewSQLError(mysql.ERBadTable, "42S02", "Unknown table '%s'", name)
}

// isNullIntoNotNull reports whether err is the failure to store NULL in a
// NOT NULL column, as GMS raises it or as the protocol handler numbered it.
func isNullIntoNotNull(err error) bool {
	if sql.ErrInsertIntoNonNullableProvidedNull.Is(err) {
		return true
	}
	var se *mysql.SQLError
	return errors.As(err, &se) && se.Num == mysql.ERBadNullError
}

// missingDatabase returns the name of the database err says does not
// exist, as GMS raises it or numbered 1049 with GMS's or MySQL's words.
func missingDatabase(err error) (string, bool) {
	if sql.ErrDatabaseNotFound.Is(err) {
		return strings.CutPrefix(err.Error(), "database not found: ")
	}
	var se *mysql.SQLError
	if !errors.As(err, &se) || se.Num != mysql.ERBadDb {
		return "", false
	}
	if name, ok := strings.CutPrefix(se.Message, "database not found: "); ok {
		return name, true
	}
	name, ok := strings.CutPrefix(se.Message, "Unknown database '")
	if !ok {
		return "", false
	}
	name, _, ok = strings.Cut(name, "'")
	return name, ok
}
