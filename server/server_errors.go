package server

import (
	"context"
	"errors"
	"unicode/utf8"

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
	return capped(se)
}

// maxErrMessage is the longest error message MySQL sends (its
// MYSQL_ERRMSG_SIZE, less the terminating byte). Without the bound a
// statement naming a 1 MB identifier came back as a 1 MB error packet.
const maxErrMessage = 511

// capped returns err with its message cut to maxErrMessage bytes, at a
// character boundary, when it is a MySQL error with a longer one.
func capped(err error) error {
	if err == nil {
		return nil // before errors.As, whose target escapes
	}
	var se *mysql.SQLError
	if !errors.As(err, &se) || len(se.Message) <= maxErrMessage {
		return err
	}
	cut := maxErrMessage
	for cut > 0 && !utf8.RuneStart(se.Message[cut]) {
		cut--
	}
	return mysql.NewSQLError(se.Num, se.State, "%s", se.Message[:cut])
}

// worded returns err as the session of c words it where the words need
// the catalog (a foreign key violation names the constraint's columns):
// before wireErr, whose message rewrites lose what the lookup needs.
func (h *handler) worded(c *mysql.Conn, err error) error {
	if err == nil {
		return nil
	}
	if sess := h.sessionOf(c); sess != nil {
		return sess.ForeignKeyError(err)
	}
	return err
}

// queryErr is wireErr for the error of the statement text query, or of its
// first statement when first is set (COM_QUERY with multi-statements: the
// engine runs one statement per call). A syntax error also comes
// numbered 1105, and its message, the parser's own, has no fixed form to
// recognise; so the text of a failed statement is parsed again, with the
// connection's sql_mode, and a text that does not parse failed with
// MySQL's 1064. Only failing statements pay for the second parse.
func (h *handler) queryErr(c *mysql.Conn, query string, first bool, err error) error {
	if err == nil {
		return nil // no error to wrap: before errors.As, whose target escapes
	}
	werr := capped(sqlstore.StatementError(query, wireErr(h.worded(c, err))))
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
	return mysql.NewSQLError(mysql.ERParseError, mysql.SSClientError, "%s", se.Message) // se is capped already
}
