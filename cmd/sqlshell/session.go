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

	"github.com/strata-db/strata/sqlstore"
)

// session runs statements for the shell: one connection over the store,
// so USE, variables and transactions carry from one statement to the
// next. It is used by one goroutine.
type session struct {
	conn *sqlstore.Conn
}

func newSession(e *sqlstore.Engine) *session {
	return &session{conn: e.NewConn()}
}

// result is the outcome of one statement, with every value as text.
type result struct {
	cols     []string
	numeric  []bool           // right-align the column
	rows     [][]*string      // nil is NULL
	ok       *sqlstore.Result // set for statements that return no rows
	warnings uint16
	elapsed  time.Duration
}

// run executes one statement to the end and returns its rows; the
// statement is cancelled when ctx is.
func (s *session) run(ctx context.Context, q string) (*result, error) {
	start := time.Now()
	rows, err := s.conn.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	res := &result{}
	cols := rows.Columns()
	for _, c := range cols {
		res.cols = append(res.cols, c.Name)
		res.numeric = append(res.numeric, c.Numeric)
	}
	for {
		row, err := rows.NextText()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			_ = rows.Close()
			return nil, err
		}
		out := make([]*string, len(row))
		for i, v := range row {
			out[i] = text(cols[i], v)
		}
		res.rows = append(res.rows, out)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	r := rows.Result()
	if len(cols) == 0 {
		res.ok = &r
	}
	res.warnings = r.Warnings
	res.elapsed = time.Since(start)
	return res, nil
}

// close ends the session: an open transaction is rolled back.
func (s *session) close() { _ = s.conn.Close() }

// text formats a value of column c as the mysql client shows it, from its
// text b (nil for NULL): binary values that are not printable UTF-8 are
// shown in hex (0x...).
func text(c sqlstore.Column, b []byte) *string {
	if b == nil {
		return nil
	}
	if c.Binary && !printable(b) {
		s := "0x" + strings.ToUpper(hex.EncodeToString(b))
		return &s
	}
	s := string(b)
	return &s
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
