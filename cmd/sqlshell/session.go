package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	sqle "github.com/dolthub/go-mysql-server"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/strata-db/strata/sqlstore"
)

// session runs statements for the shell: one engine session over the
// store, so USE, variables and transactions carry from one statement to
// the next. It is used by one goroutine.
type session struct {
	engine *sqle.Engine
	sess   *sqlstore.Session
}

func newSession(st *sqlstore.Store, e *sqle.Engine, db string) *session {
	s := &session{engine: e, sess: st.NewSession(nil)}
	if db != "" {
		s.sess.SetCurrentDatabase(db)
	}
	return s
}

// result is the outcome of one statement, with every value as text.
type result struct {
	cols     []string
	numeric  []bool          // right-align the column
	rows     [][]*string     // nil is NULL
	ok       *types.OkResult // set for statements that return no rows
	warnings uint16
	elapsed  time.Duration
}

// run executes one statement to the end and returns its rows; the
// statement is cancelled when ctx is.
func (s *session) run(ctx context.Context, q string) (*result, error) {
	start := time.Now()
	sctx := s.sess.NewStatementContext(ctx, s.engine, q)
	schema, iter, err := sqlstore.Query(sctx, s.engine, q, nil, nil)
	if err != nil {
		return nil, err
	}
	res := &result{}
	isOK := types.IsOkResultSchema(schema)
	if !isOK {
		for _, c := range schema {
			res.cols = append(res.cols, c.Name)
			res.numeric = append(res.numeric, types.IsNumber(c.Type))
		}
	}
	for {
		row, err := iter.Next(sctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.abort(sctx)
			_ = iter.Close(sctx)
			return nil, err
		}
		if isOK {
			if len(row) == 1 {
				if ok, is := row[0].(types.OkResult); is {
					res.ok = &ok
				}
			}
			continue
		}
		out := make([]*string, len(row))
		for i, v := range row {
			if out[i], err = text(sctx, schema[i].Type, v); err != nil {
				s.abort(sctx)
				_ = iter.Close(sctx)
				return nil, err
			}
		}
		res.rows = append(res.rows, out)
	}
	if err := iter.Close(sctx); err != nil {
		return nil, err
	}
	if isOK && res.ok == nil {
		res.ok = &types.OkResult{}
	}
	res.warnings = s.sess.WarningCount()
	res.elapsed = time.Since(start)
	return res, nil
}

// abort rolls back a failed autocommit statement before its iterator is
// closed (sqlstore.Session.AbortStatement).
func (s *session) abort(sctx *gsql.Context) { s.sess.AbortStatement(sctx) }

// close ends the session: an open transaction is rolled back.
func (s *session) close() {
	s.sess.SessionEnd()
	s.engine.CloseSession(s.sess.ID())
}

// text formats a value as the mysql client shows it; nil for NULL. Binary
// values that are not printable UTF-8 are shown in hex (0x...).
func text(ctx *gsql.Context, t gsql.Type, v any) (*string, error) {
	if v == nil {
		return nil, nil
	}
	sv, err := t.SQL(ctx, nil, v)
	if err != nil {
		return nil, fmt.Errorf("formatting a %s value: %w", t, err)
	}
	if sv.IsNull() {
		return nil, nil
	}
	b := sv.Raw()
	switch t.Type() {
	case query.Type_BINARY, query.Type_VARBINARY, query.Type_BLOB, query.Type_BIT, query.Type_GEOMETRY:
		if !printable(b) {
			s := "0x" + strings.ToUpper(hex.EncodeToString(b))
			return &s, nil
		}
	}
	s := string(b)
	return &s, nil
}

func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' {
			return false
		}
	}
	return true
}

// errorLine formats err as the mysql client does: ERROR 1146 (42S02): ...
// with " at line N" when line > 0. The number is the one the server sends
// (a statement interrupted with Ctrl-C is 1317, as KILL QUERY is there).
func errorLine(err error, line int) string {
	se := sqlstore.ServerError(err)
	at := ""
	if line > 0 {
		at = fmt.Sprintf(" at line %d", line)
	}
	return fmt.Sprintf("ERROR %d (%s)%s: %s", se.Num, se.State, at, se.Message)
}
