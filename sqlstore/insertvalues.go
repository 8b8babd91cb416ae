package sqlstore

import (
	"context"
	"reflect"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// The VALUES of a multi-row INSERT, read without the parser.
//
// A stream of INSERT INTO t (cols) VALUES (...),(...),... statements, as
// a dump or an ORM sends them, spent a sixth of its CPU in vitess's
// parser, a generated LALR parser that builds each literal through the
// grammar's semantic actions, with an allocation or more per token, and
// more in collecting that garbage. The tuples of
// such a statement are literals and commas, which a small reader of our
// own turns into the same syntax tree at a fraction of the cost.
//
// parseInsertValues does so for a text that is one INSERT whose VALUES
// are tuples of literals to the end of the text: integers (with a minus
// sign written against them), decimals and floats, single-quoted strings
// (with vitess's escapes; never followed by another string, which MySQL
// would join to it), NULL, TRUE and FALSE. Anything else (comments,
// expressions, DEFAULT, hexadecimal and bit literals, character set
// introducers, double-quoted strings, ON DUPLICATE KEY UPDATE, a second
// statement) makes it give up, and the text goes to the parser as before.
//
// Only the tuples are read here. The text up to the end of the first tuple
// (the INSERT, its options, the table, the column list) is parsed by the
// engine's parser as any statement is, and the tree is accepted only when
// it is a plain INSERT ... VALUES whose one row is what this reader made
// of the first tuple: the reader's tuples then follow that row. Binding,
// analysis and execution are GMS's as for a parsed statement, so
// conversions, strict mode, warnings, auto-increment, duplicate keys,
// triggers, foreign keys, CHECK constraints and generated columns are
// what they are for the same text parsed; TestInsertValuesMatchesParser
// and FuzzInsertValues hold the tree to the parser's.

// minFastRows is the fewest tuples for which the reader is worth it: a
// one-row INSERT is parsed in full (and, short, kept parsed by the plan
// cache).
const minFastRows = 2

// insertValuesParser is the engine's parser with parseInsertValues in
// front: every statement text the engine parses (Conn.Exec's, the
// binder's for a query handed over unparsed, the MySQL server's
// handler's) passes through it. It reads nothing when the session's
// strata_plan_reuse is off, so that such a session parses every statement
// as GMS alone would.
type insertValuesParser struct{ sql.Parser }

// Parse implements sql.Parser.
func (p insertValuesParser) Parse(ctx *sql.Context, query string, multi bool) (sqlparser.Statement, string, string, error) {
	if fastInsert(ctx, query) {
		if st, one, ok := parseInsertValues(query, func(prefix string) (sqlparser.Statement, string, error) {
			st, _, rest, err := p.Parser.Parse(ctx, prefix, true)
			return st, rest, err
		}); ok {
			return st, one, "", nil
		}
	}
	return p.Parser.Parse(ctx, query, multi)
}

// ParseWithOptions implements sql.Parser.
func (p insertValuesParser) ParseWithOptions(ctx context.Context, query string, delimiter rune, multi bool, options sqlparser.ParserOptions) (sqlparser.Statement, string, string, error) {
	if sctx, ok := ctx.(*sql.Context); ok && delimiter == ';' && fastInsert(sctx, query) {
		if st, one, ok := parseInsertValues(query, func(prefix string) (sqlparser.Statement, string, error) {
			st, _, rest, err := p.Parser.ParseWithOptions(ctx, prefix, delimiter, true, options)
			return st, rest, err
		}); ok {
			return st, one, "", nil
		}
	}
	return p.Parser.ParseWithOptions(ctx, query, delimiter, multi, options)
}

// fastInsert reports whether parseInsertValues may read query in ctx: an
// INSERT, in a session of this store with plan reuse on, whose backslashes
// are escapes.
func fastInsert(ctx *sql.Context, query string) bool {
	if _, ours := ctx.Session.(*Session); !ours || len(query) < len("INSERT INTO t VALUES (1),(2)") {
		return false
	}
	first, _ := LeadingWords(query)
	if !strings.EqualFold(first, "insert") || !planReuse(ctx) {
		return false
	}
	// Under NO_BACKSLASH_ESCAPES a backslash is an ordinary character,
	// which the reader would take for an escape.
	return strings.IndexByte(query, '\\') < 0 || !sql.LoadSqlMode(ctx).ModeEnabled("NO_BACKSLASH_ESCAPES")
}

// parseInsertValues returns the statement tree of query, a text starting
// with INSERT, and the statement's text as the parser gives it (spaces and
// trailing semicolons trimmed); ok is false when the fast path does not
// read it, and the caller parses it. parse parses the text up to the end
// of the first tuple with the engine's parser, returning the rest of the
// text it did not read.
func parseInsertValues(query string, parse func(prefix string) (stmt sqlparser.Statement, rest string, err error)) (stmt sqlparser.Statement, one string, ok bool) {
	start := valuesStart(query)
	if start < 0 {
		return nil, "", false
	}
	var lx valuesLexer
	if !lx.read(query, start) || lx.tuples < minFastRows {
		return nil, "", false
	}
	parsed, rest, err := parse(query[:lx.firstEnd])
	if err != nil || rest != "" {
		return nil, "", false
	}
	ins, isInsert := parsed.(*sqlparser.Insert)
	if !isInsert || ins.With != nil || len(ins.OnDup) > 0 || len(ins.Returning) > 0 {
		return nil, "", false
	}
	av, isValues := ins.Rows.(*sqlparser.AliasedValues)
	if !isValues || !av.As.IsEmpty() || len(av.Columns) > 0 || len(av.Values) != 1 {
		return nil, "", false
	}
	rows := lx.build(query)
	if !reflect.DeepEqual(av.Values[0], rows[0]) {
		return nil, "", false
	}
	av.Values = rows
	return ins, sql.RemoveSpaceAndDelimiter(query, ';'), true
}

// valuesStart returns the index in query of the first tuple after its
// first VALUES (or VALUE) keyword, or -1: strings, quoted identifiers and
// comments before it are skipped, so that a VALUES inside them is not
// taken for it.
func valuesStart(query string) int {
	q := query
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := quoteEnd(q, i)
			if j >= len(q) {
				return -1
			}
			i = j + 1
		case c == '/' && i+1 < len(q) && q[i+1] == '*' && (i+2 >= len(q) || q[i+2] != '!'):
			end := indexFrom(q, i+2, "*/")
			if end < 0 {
				return -1
			}
			i = end + 2
		case c == '/' && i+1 < len(q) && q[i+1] == '*',
			c == '#' || ((c == '-' || c == '/') && i+1 < len(q) && q[i+1] == c):
			return -1 // executable and line comments: left to the parser
		case c == 0 || c == ';':
			return -1
		case wordByte(c):
			j := i + 1
			for j < len(q) && wordByte(q[j]) {
				j++
			}
			w := q[i:j]
			if (strings.EqualFold(w, "values") || strings.EqualFold(w, "value")) && (i == 0 || q[i-1] != '@') {
				k := skipBlanks(q, j)
				if k < len(q) && q[k] == '(' {
					return k
				}
			}
			i = j
		default:
			i++
		}
	}
	return -1
}

// skipBlanks returns the index of the first byte at or after i that is not
// one of the blanks vitess's tokenizer skips.
func skipBlanks(q string, i int) int {
	for i < len(q) && (q[i] == ' ' || q[i] == '\t' || q[i] == '\n' || q[i] == '\r') {
		i++
	}
	return i
}

// literal kinds the lexer reads.
const (
	litInt      uint8 = iota // an integer: the digits, with a sign
	litFloat                 // a decimal or float: its text
	litNegFloat              // -<float>: a unary minus over it
	litString                // a string: its value, unescaped
	litNull
	litTrue
	litFalse
)

// valueToken is one literal the lexer read: its kind and, for numbers and
// strings, its bytes in the lexer's buffer.
type valueToken struct {
	kind       uint8
	start, end int32
}

// valuesLexer reads the tuples of a VALUES clause. Its tokens and buffer
// are the statement's: the tree build makes points into the buffer.
type valuesLexer struct {
	toks     []valueToken
	widths   []int32 // the number of values of each tuple
	buf      []byte  // unescaped strings and number texts, back to back
	tuples   int
	firstEnd int // the index in the text after the first tuple
}

// read reads the tuples at q[i:], to the end of q (blanks and semicolons
// may follow), false when q holds anything else.
func (lx *valuesLexer) read(q string, i int) bool {
	lx.toks = make([]valueToken, 0, 64)
	lx.buf = make([]byte, 0, len(q)-i)
	for {
		// At '(' of a tuple.
		i++
		n := 0
		for {
			i = skipBlanks(q, i)
			var ok bool
			if i, ok = lx.value(q, i); !ok {
				return false
			}
			n++
			i = skipBlanks(q, i)
			if i >= len(q) {
				return false
			}
			if q[i] == ')' {
				i++
				break
			}
			if q[i] != ',' {
				return false
			}
			i++
		}
		lx.widths = append(lx.widths, int32(n))
		lx.tuples++
		if lx.tuples == 1 {
			lx.firstEnd = i
		}
		i = skipBlanks(q, i)
		if i >= len(q) {
			return true
		}
		switch q[i] {
		case ',':
			i = skipBlanks(q, i+1)
			if i >= len(q) || q[i] != '(' {
				return false
			}
		case ';':
			for ; i < len(q); i++ {
				if c := q[i]; c != ';' && c != ' ' && c != '\t' && c != '\n' && c != '\r' {
					return false
				}
			}
			return true
		default:
			return false
		}
	}
}

// value reads the literal at q[i:] and returns the index after it.
func (lx *valuesLexer) value(q string, i int) (int, bool) {
	if i >= len(q) {
		return i, false
	}
	c := q[i]
	switch {
	case c == '\'':
		return lx.str(q, i)
	case c == '-' && i+1 < len(q) && isDigit(q[i+1]):
		end, float, ok := number(q, i+1)
		if !ok {
			return i, false
		}
		if float {
			lx.add(litNegFloat, q[i+1:end])
		} else {
			lx.add(litInt, q[i:end])
		}
		return end, true
	case isDigit(c):
		end, float, ok := number(q, i)
		if !ok {
			return i, false
		}
		kind := litInt
		if float {
			kind = litFloat
		}
		lx.add(kind, q[i:end])
		return end, true
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		j := i + 1
		for j < len(q) && wordByte(q[j]) {
			j++
		}
		var kind uint8
		switch w := q[i:j]; {
		case strings.EqualFold(w, "null"):
			kind = litNull
		case strings.EqualFold(w, "true"):
			kind = litTrue
		case strings.EqualFold(w, "false"):
			kind = litFalse
		default:
			return i, false
		}
		lx.toks = append(lx.toks, valueToken{kind: kind})
		return j, true
	}
	return i, false
}

// add appends a token whose bytes are s.
func (lx *valuesLexer) add(kind uint8, s string) {
	start := len(lx.buf)
	lx.buf = append(lx.buf, s...)
	lx.toks = append(lx.toks, valueToken{kind: kind, start: int32(start), end: int32(len(lx.buf))})
}

// number reads the number at q[i] (a digit): digits, then optionally a
// fraction and an exponent, each with digits; float reports either. A
// hexadecimal literal (0x), a number without digits after its point or
// exponent, and one followed by a letter are not read.
func number(q string, i int) (end int, float, ok bool) {
	j := i
	for j < len(q) && isDigit(q[j]) {
		j++
	}
	if j < len(q) && q[j] == '.' {
		k := j + 1
		for k < len(q) && isDigit(q[k]) {
			k++
		}
		if k == j+1 {
			return j, false, false
		}
		j, float = k, true
	}
	if j < len(q) && (q[j] == 'e' || q[j] == 'E') {
		k := j + 1
		if k < len(q) && (q[k] == '+' || q[k] == '-') {
			k++
		}
		d := k
		for k < len(q) && isDigit(q[k]) {
			k++
		}
		if k == d {
			return j, false, false
		}
		j, float = k, true
	}
	if j < len(q) && (wordByte(q[j]) || q[j] == '.') {
		return j, false, false // 0x1f, 1a (an identifier), 1.2.3
	}
	return j, float, true
}

// str reads the single-quoted string at q[i], unescaped as the engine's
// parser unescapes it: a backslash takes the next byte, mapped by
// sqltypes.SQLDecodeMap (\n, \t, \0, ...) or as it is, except \% and \_,
// which keep their backslash as in MySQL; a doubled quote is one quote. A
// NUL byte, which ends the tokenizer's input, and another string after it
// (joined to it) are not read.
func (lx *valuesLexer) str(q string, i int) (int, bool) {
	start := len(lx.buf)
	j := i + 1
	for {
		k := j
		for k < len(q) && q[k] != '\'' && q[k] != '\\' && q[k] != 0 {
			k++
		}
		lx.buf = append(lx.buf, q[j:k]...)
		if k >= len(q) || q[k] == 0 {
			return i, false
		}
		if q[k] == '\\' {
			if k+1 >= len(q) || q[k+1] == 0 {
				return i, false
			}
			ch := q[k+1]
			if ch == '%' || ch == '_' {
				// MySQL keeps the backslash of \% and \_, as the
				// engine's parser does (mysqlcompat/likeescapes.go).
				lx.buf = append(lx.buf, '\\')
			}
			if d := sqltypes.SQLDecodeMap[ch]; d != sqltypes.DontEscape {
				ch = d
			}
			lx.buf = append(lx.buf, ch)
			j = k + 2
			continue
		}
		// A quote: doubled, or the end.
		if k+1 < len(q) && q[k+1] == '\'' {
			lx.buf = append(lx.buf, '\'')
			j = k + 2
			continue
		}
		j = k + 1
		break
	}
	if k := skipBlanks(q, j); k < len(q) && (q[k] == '\'' || q[k] == '"') {
		return i, false
	}
	lx.toks = append(lx.toks, valueToken{kind: litString, start: int32(start), end: int32(len(lx.buf))})
	return j, true
}

// build returns the tuples read as the parser's tree: the values of all
// tuples in one slice, and their literals in another, so that the tree
// takes a few allocations whatever its size.
func (lx *valuesLexer) build(q string) sqlparser.Values {
	vals := make([]sqlparser.SQLVal, 0, len(lx.toks))
	exprs := make([]sqlparser.Expr, len(lx.toks))
	for i, t := range lx.toks {
		b := lx.buf[t.start:t.end:t.end]
		switch t.kind {
		case litInt:
			vals = append(vals, sqlparser.SQLVal{Type: sqlparser.IntVal, Val: b})
			exprs[i] = &vals[len(vals)-1]
		case litFloat:
			vals = append(vals, sqlparser.SQLVal{Type: sqlparser.FloatVal, Val: b})
			exprs[i] = &vals[len(vals)-1]
		case litNegFloat:
			exprs[i] = &sqlparser.UnaryExpr{Operator: sqlparser.UMinusStr, Expr: sqlparser.NewFloatVal(b)}
		case litString:
			if len(b) == 0 {
				b = nil // as the tokenizer gives an empty string
			}
			vals = append(vals, sqlparser.SQLVal{Type: sqlparser.StrVal, Val: b})
			exprs[i] = &vals[len(vals)-1]
		case litNull:
			exprs[i] = &sqlparser.NullVal{}
		case litTrue:
			exprs[i] = sqlparser.BoolVal(true)
		case litFalse:
			exprs[i] = sqlparser.BoolVal(false)
		}
	}
	rows := make(sqlparser.Values, len(lx.widths))
	at := 0
	for r, w := range lx.widths {
		rows[r] = sqlparser.ValTuple(exprs[at : at+int(w) : at+int(w)])
		at += int(w)
	}
	return rows
}
