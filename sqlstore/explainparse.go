package sqlstore

import (
	"context"
	"errors"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// EXPLAIN's formats
//
// vitess parses EXPLAIN [FORMAT=name] and EXPLAIN ANALYZE, and GMS plans
// them as a DescribeQuery whose options say only "tabular or a plan tree,
// analyze, debug": GMS's tabular form is a placeholder row, FORMAT=JSON
// does not parse (JSON is a keyword to vitess), FORMAT=TRADITIONAL is
// refused, and EXPLAIN ANALYZE FORMAT=TREE does not parse. explainParser
// hides what vitess refuses behind text of the same length and leaves the
// statement as GMS takes it; the format the statement asked for is read
// again from its text when it runs (explainHeadOf), as MySQL names them:
//
//	EXPLAIN, FORMAT=TRADITIONAL    one row per table access (explaintab.go)
//	FORMAT=TREE, EXPLAIN ANALYZE   MySQL 8's iterator tree (explaintree.go)
//	FORMAT=JSON                    MySQL's query_block document
//	FORMAT=DEBUG, EXPLAIN PLAN     GMS's own plan, with Strata's access paths
//
// A JSON explain is planned as a plan (one text column); a traditional one
// as GMS's tabular node, whose schema is MySQL's.

// explainHead is what the words at the start of a statement's text say
// about an EXPLAIN.
type explainHead struct {
	ok      bool   // the text starts with EXPLAIN, DESCRIBE or DESC
	analyze bool   // EXPLAIN ANALYZE
	plan    bool   // EXPLAIN PLAN (GMS's)
	format  string // the FORMAT= name, lower case; "" when none
	// formatAt and formatEnd delimit the format's name in the text, and
	// treeAt and treeEnd a FORMAT=TREE after ANALYZE (0, 0 when none).
	formatAt, formatEnd int
	treeAt, treeEnd     int
}

// explainHeadOf reads the words that begin an EXPLAIN: the verb, then
// EXTENDED, ANALYZE, FORMAT = name and PLAN, skipping comments. It
// allocates only for an EXPLAIN's format name.
func explainHeadOf(q string) explainHead {
	var h explainHead
	i := 0
	word := func() (string, int) {
		i = skipSpaceAndComments(q, i)
		start := i
		for i < len(q) && isWordByte(q[i]) {
			i++
		}
		return q[start:i], start
	}
	w, _ := word()
	if !strings.EqualFold(w, "explain") && !strings.EqualFold(w, "describe") && !strings.EqualFold(w, "desc") {
		return h
	}
	h.ok = true
	for {
		save := i
		w, at := word()
		switch {
		case strings.EqualFold(w, "extended"):
			continue
		case strings.EqualFold(w, "analyze"):
			h.analyze = true
			continue
		case strings.EqualFold(w, "plan"):
			h.plan = true
			return h
		case strings.EqualFold(w, "format"):
			j := skipSpaceAndComments(q, i)
			if j >= len(q) || q[j] != '=' {
				i = save
				return h
			}
			i = j + 1
			name, nameAt := word()
			h.format = strings.ToLower(name)
			if h.analyze {
				h.treeAt, h.treeEnd = at, i
			}
			h.formatAt, h.formatEnd = nameAt, i
			continue
		}
		i = save
		return h
	}
}

// skipSpaceAndComments returns the position of the first byte at or after
// i that is neither white space nor inside a comment.
func skipSpaceAndComments(q string, i int) int {
	for i < len(q) {
		switch {
		case q[i] == ' ' || q[i] == '\t' || q[i] == '\r' || q[i] == '\n':
			i++
		case strings.HasPrefix(q[i:], "/*"):
			end := strings.Index(q[i+2:], "*/")
			if end < 0 {
				return len(q)
			}
			i += end + 4
		case strings.HasPrefix(q[i:], "-- ") || q[i] == '#':
			end := strings.IndexByte(q[i:], '\n')
			if end < 0 {
				return len(q)
			}
			i += end + 1
		default:
			return i
		}
	}
	return i
}

// jsonStandIn is what FORMAT=JSON's name becomes for vitess: a name of the
// same length that is not a keyword.
const jsonStandIn = "JSN_"

// hideExplainFormat returns q with what vitess refuses in an EXPLAIN's
// head replaced by text of the same length: the name JSON, and FORMAT=TREE
// after ANALYZE (a comment). Any other text is returned as it is.
func hideExplainFormat(q string) string {
	// Every statement passes here: only one that begins with E or D is
	// read further.
	if i := skipSpaceAndComments(q, 0); i >= len(q) || q[i]|0x20 != 'e' && q[i]|0x20 != 'd' {
		return q
	}
	h := explainHeadOf(q)
	if !h.ok {
		return q
	}
	switch {
	case h.analyze && h.format == "tree" && h.treeEnd-h.treeAt >= 4:
		return q[:h.treeAt] + "/*" + strings.Repeat(" ", h.treeEnd-h.treeAt-4) + "*/" + q[h.treeEnd:]
	case !h.analyze && h.format == "json":
		return q[:h.formatAt] + jsonStandIn + q[h.formatEnd:]
	}
	return q
}

// explainParser is a sql.Parser that takes MySQL's EXPLAIN formats (see
// above).
type explainParser struct{ sql.Parser }

func (p explainParser) ParseSimple(query string) (ast.Statement, error) {
	h := hideExplainFormat(query)
	st, err := p.Parser.ParseSimple(h)
	return fixExplain(st), explainParseErr(query, h, err)
}

func (p explainParser) Parse(ctx *sql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	h := hideExplainFormat(query)
	st, q, rest, err := p.Parser.Parse(ctx, h, multi)
	if h != query {
		q, rest = sameSpan(query, h, q), sameSpan(query, h, rest)
	}
	return fixExplain(st), q, rest, explainParseErr(query, h, err)
}

func (p explainParser) ParseWithOptions(ctx context.Context, query string, delimiter rune, multi bool, options ast.ParserOptions) (ast.Statement, string, string, error) {
	h := hideExplainFormat(query)
	st, q, rest, err := p.Parser.ParseWithOptions(ctx, h, delimiter, multi, options)
	if h != query {
		q, rest = sameSpan(query, h, q), sameSpan(query, h, rest)
	}
	return fixExplain(st), q, rest, explainParseErr(query, h, err)
}

func (p explainParser) ParseOneWithOptions(ctx context.Context, query string, options ast.ParserOptions) (ast.Statement, int, error) {
	h := hideExplainFormat(query)
	st, n, err := p.Parser.ParseOneWithOptions(ctx, h, options)
	return fixExplain(st), n, explainParseErr(query, h, err)
}

// explainParseErr returns err as it reads for the user's text: a syntax
// error vitess reports near the stand-in of FORMAT=JSON (EXPLAIN
// FORMAT=JSON with no statement after it) names the word the user wrote.
// The error's text is all GMS keeps of it (sql.ErrSyntaxError).
func explainParseErr(query, hidden string, err error) error {
	if err == nil || hidden == query {
		return err
	}
	msg := err.Error()
	near := "near '" + jsonStandIn + "'"
	i := strings.Index(hidden, jsonStandIn)
	if i < 0 || !strings.Contains(msg, near) {
		return err
	}
	return errors.New(strings.Replace(msg, near, "near '"+query[i:i+len(jsonStandIn)]+"'", 1))
}

// fixExplain makes an EXPLAIN's format one GMS plans: TRADITIONAL its
// tabular node, JSON a plan with one text column.
func fixExplain(st ast.Statement) ast.Statement {
	ex, ok := st.(*ast.Explain)
	if !ok {
		return st
	}
	switch {
	case strings.EqualFold(ex.ExplainFormat, "traditional"):
		ex.ExplainFormat = ""
	case ex.ExplainFormat == jsonStandIn:
		ex.ExplainFormat = ""
		ex.Plan = true
	}
	return st
}
