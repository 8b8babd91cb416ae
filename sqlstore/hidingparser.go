package sqlstore

import (
	"context"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// hidingParser is a sql.Parser that hands the parser it wraps the query
// with some words hidden at the same length (hide: behind a comment or
// spaces), and hands back the texts that parser returns (the statement,
// the rest of a multi-statement query) as slices of the original, so that
// the statement's text keeps what was hidden. The locking clauses vitess
// refuses (lockclause.go) and INTO OUTFILE's CHARACTER SET binary
// (outfilecharset.go) are hidden so. hide returns a query it leaves alone
// as it is, without allocating.
type hidingParser struct {
	sql.Parser
	hide func(query string) string
}

// ParseSimple implements sql.Parser.
func (p hidingParser) ParseSimple(query string) (ast.Statement, error) {
	return p.Parser.ParseSimple(p.hide(query))
}

// Parse implements sql.Parser.
func (p hidingParser) Parse(ctx *sql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	h := p.hide(query)
	st, q, rest, err := p.Parser.Parse(ctx, h, multi)
	if h != query {
		q, rest = sameSpan(query, h, q), sameSpan(query, h, rest)
	}
	return st, q, rest, err
}

// ParseWithOptions implements sql.Parser.
func (p hidingParser) ParseWithOptions(ctx context.Context, query string, delimiter rune, multi bool, options ast.ParserOptions) (ast.Statement, string, string, error) {
	h := p.hide(query)
	st, q, rest, err := p.Parser.ParseWithOptions(ctx, h, delimiter, multi, options)
	if h != query {
		q, rest = sameSpan(query, h, q), sameSpan(query, h, rest)
	}
	return st, q, rest, err
}

// ParseOneWithOptions implements sql.Parser. Positions are the same in
// both texts.
func (p hidingParser) ParseOneWithOptions(ctx context.Context, query string, options ast.ParserOptions) (ast.Statement, int, error) {
	return p.Parser.ParseOneWithOptions(ctx, p.hide(query), options)
}
