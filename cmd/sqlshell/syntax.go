package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/strata-db/strata/sqlstore"
)

// The parser reports a syntax error with the statement's byte offset just
// past the token it could not take, and that token's text when it has one
// (operators and punctuation have none): "syntax error at position 46
// near 'price'".
var syntaxPosition = regexp.MustCompile(`^(.*?) at position (\d+)(?: near '(.*)')?$`)

// nearLimit is how much of the statement from the error point a message
// shows, as MySQL's.
const nearLimit = 80

// syntaxErr is a syntax error placed inside its statement.
type syntaxErr struct {
	num    int
	state  string
	reason string // the parser's, when it is not plain "syntax error"
	near   string // the statement's text from the error point
	line   int    // the error point's line in the statement, from 1
	col    int    // its column, from 1, in characters
	src    string // the statement's line holding the error point
}

// syntaxError reports whether err is a syntax error in stmt that names a
// position, and places it.
func syntaxError(err error, stmt string) (syntaxErr, bool) {
	se := sqlstore.ServerError(err)
	if se == nil || se.Num != 1064 || stmt == "" {
		return syntaxErr{}, false
	}
	m := syntaxPosition.FindStringSubmatch(se.Message)
	if m == nil {
		return syntaxErr{}, false
	}
	pos, convErr := strconv.Atoi(m[2])
	if convErr != nil {
		return syntaxErr{}, false
	}
	at := errorPoint(stmt, pos, m[3])
	out := syntaxErr{num: se.Num, state: se.State}
	if m[1] != "syntax error" {
		out.reason = m[1]
	}
	out.near = stmt[at:]
	if utf8.RuneCountInString(out.near) > nearLimit {
		out.near = string([]rune(out.near)[:nearLimit])
	}
	before := stmt[:at]
	out.line = strings.Count(before, "\n") + 1
	lineStart := strings.LastIndexByte(before, '\n') + 1
	out.col = utf8.RuneCountInString(stmt[lineStart:at]) + 1
	src := stmt[lineStart:]
	if i := strings.IndexByte(src, '\n'); i >= 0 {
		src = src[:i]
	}
	out.src = src
	return out, true
}

// errorPoint returns the byte offset where the token the parser could not
// take starts: pos is one past the byte after it, near its text if any.
func errorPoint(stmt string, pos int, near string) int {
	end := min(max(pos-1, 0), len(stmt))
	if near != "" && end >= len(near) && strings.EqualFold(stmt[end-len(near):end], near) {
		return end - len(near)
	}
	// An operator or punctuation: back over it.
	start := end
	for start > 0 && strings.IndexByte("<>=!|&+-*/%^~,;()", stmt[start-1]) >= 0 {
		start--
	}
	if start < end {
		return start
	}
	// The end of the statement, or a quoted token: back over white space
	// to the last token.
	for start > 0 && (stmt[start-1] == ' ' || stmt[start-1] == '\n' || stmt[start-1] == '\t') {
		start--
	}
	if near != "" {
		if i := strings.LastIndex(strings.ToLower(stmt[:start]), strings.ToLower(near)); i >= 0 {
			return i
		}
	}
	return start
}

// message formats the error as the mysql client prints MySQL's:
// ERROR 1064 (42000) at line N: ... near '...' at line L, with the column
// added; atLine is the script line the statement starts on, 0 for none.
func (e syntaxErr) message(atLine int) string {
	at := ""
	if atLine > 0 {
		at = fmt.Sprintf(" at line %d", atLine)
	}
	reason := ""
	if e.reason != "" {
		reason = " (" + e.reason + ")"
	}
	return fmt.Sprintf("ERROR %d (%s)%s: You have an error in your SQL syntax%s near '%s' at line %d, column %d",
		e.num, e.state, at, reason, e.near, e.line, e.col)
}

// caret returns the statement's line with the error and a caret under
// the error point, for a terminal.
func (e syntaxErr) caret() string {
	prefix := e.src
	if n := e.col - 1; n <= utf8.RuneCountInString(prefix) {
		prefix = string([]rune(prefix)[:n])
	}
	var b strings.Builder
	b.WriteString(e.src)
	b.WriteByte('\n')
	for _, r := range prefix {
		if r == '\t' {
			b.WriteByte('\t') // a tab reaches the same column above and below
			continue
		}
		b.WriteString(strings.Repeat(" ", displayWidth(string(r))))
	}
	b.WriteByte('^')
	return b.String()
}
