package server

import (
	"context"
	"errors"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/strata-db/strata/sqlstore"
)

// wireErr returns the error a client gets: sqlstore.ServerError's number
// and SQLSTATE. The protocol handler turns engine errors into MySQL errors
// itself, giving every kind it does not know number 1105, before the
// server sees them; ServerError finds those kinds again by their message.
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
	werr := sqlstore.StatementError(query, wireErr(err))
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
