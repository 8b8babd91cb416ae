package main

import (
	"context"
	"errors"
	"regexp"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
	goerrors "gopkg.in/src-d/go-errors.v1"

	"github.com/strata-db/strata/sqlstore"
)

// The protocol handler turns engine errors into MySQL errors itself,
// before the server sees them, and gives every error kind it does not know
// number 1105. These are the kinds sqlstore.ServerError numbers, found
// again by their message.
var wireKinds = []struct {
	re    *regexp.Regexp
	num   int
	state string
}{
	{kindRE(gsql.ErrPrivilegeCheckFailed), 1142, "42000"},
	{kindRE(gsql.ErrTableAccessDeniedForUser), 1142, "42000"},
	{kindRE(gsql.ErrDatabaseAccessDeniedForUser), 1044, "42000"},
	{kindRE(gsql.ErrSecureFilePriv), 1290, "HY000"},
	{kindRE(gsql.ErrTableAlreadyExists), mysql.ERTableExists, "42S01"},
	{kindRE(gsql.ErrInvalidDatabaseName), mysql.ERWrongDbName, "42000"},
	{kindRE(gsql.ErrInsertIntoNonNullableDefaultNullColumn), mysql.ERNoDefaultForField, "HY000"},
	{kindRE(types.ErrLengthBeyondLimit), mysql.ERDataTooLong, "22001"},
	{kindRE(gsql.ErrValueOutOfRange), mysql.ERWarnDataOutOfRange, "22003"},
	{kindRE(types.ErrConvertToDecimalLimit), mysql.ERWarnDataOutOfRange, "22003"},
	{kindRE(gsql.ErrColumnNotFound), mysql.ERBadFieldError, "42S22"},
	{kindRE(gsql.ErrTableColumnNotFound), mysql.ERBadFieldError, "42S22"},
	{kindRE(gsql.ErrCheckConstraintViolated), 3819, "HY000"},
}

// kindRE matches the messages of an error kind.
func kindRE(k *goerrors.Kind) *regexp.Regexp {
	parts := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`).Split(k.Message, -1)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// wireErr returns the error a client gets: sqlstore.ServerError's number
// and SQLSTATE, also for the errors the protocol handler already numbered
// 1105.
func wireErr(err error) error {
	if err == nil {
		return nil
	}
	se := sqlstore.ServerError(err)
	if se.Num == mysql.ERUnknownError && se.Message == context.Canceled.Error() {
		// The protocol handler passes a statement's cancelled context
		// on as this bare text, and it cancels that context only to
		// stop the statement (KILL QUERY, shutdown, a client gone):
		// sqlstore.ServerError's 1317 for context.Canceled.
		return sqlstore.ServerError(context.Canceled)
	}
	if se.Num == mysql.ERUnknownError {
		for _, k := range wireKinds {
			if k.re.MatchString(se.Message) {
				return mysql.NewSQLError(k.num, k.state, "%s", se.Message)
			}
		}
	}
	return se
}

// queryErr is wireErr for the error of the statement text query, or of its
// first statement when first is set (COM_QUERY with multi-statements: the
// engine runs one statement per call). A syntax error also comes
// numbered 1105, and its message, the parser's own, has no fixed form to
// recognise; so the text of a failed statement is parsed again, with the
// connection's sql_mode, and a text that does not parse failed with
// MySQL's 1064. Only failing statements pay for the second parse.
func (h *handler) queryErr(c *mysql.Conn, query string, first bool, err error) error {
	werr := wireErr(err)
	var se *mysql.SQLError
	if werr == nil || !errors.As(werr, &se) || se.Num != mysql.ERUnknownError || h.parser == nil {
		return werr
	}
	opts, oerr := h.Handler.ParserOptionsForConnection(c)
	if oerr != nil {
		return werr
	}
	_, _, _, perr := h.parser.ParseWithOptions(context.Background(), query, ';', first, opts)
	if perr == nil || errors.Is(perr, sqlparser.ErrEmpty) {
		return werr
	}
	return mysql.NewSQLError(mysql.ERParseError, mysql.SSClientError, "%s", se.Message)
}
