package mysqlcompat

import (
	"context"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Typed date and time literals
//
// DATE 'str', TIME 'str' and TIMESTAMP 'str' are literals of type DATE,
// TIME and DATETIME in MySQL: DATE '2024-1-2' is 2024-01-02, DATE
// '2024-01-02' + INTERVAL 1 DAY is the DATE 2024-01-03, and DATE '2024-1-2'
// = '2024-01-02' compares dates. The parser GMS uses drops the keyword and
// keeps the string, so GMS compared and added strings.
//
// typedLiteralParser wraps an engine's parser (install.go): for a
// statement whose text has such a literal, it finds the literals with the
// parser's tokenizer and gives each the CAST to its type, CAST('2024-1-2'
// AS DATE), in the parsed statement. Column names are read from the text,
// so they stay as written. A string of the same text elsewhere in the
// statement is told apart by its order, as the tokens and the walk of the
// statement meet the strings in the same order; where they may not (a
// statement with a WITH), a text that is a typed literal in one place and
// a plain string in another keeps GMS's string in both.
//
// The same wrapper parses the text with the \_ and \% of its strings
// written so that they keep their backslash (likeescapes.go).
//
// Targets GMS v0.20.0 with its vitess (sql.y: DATE STRING, TIME STRING,
// TIMESTAMP STRING are NewStrVal). Without it, TestTimeTextSpec
// (testdata/time_text) fails.
type typedLiteralParser struct{ sql.Parser }

func (p typedLiteralParser) ParseSimple(query string) (ast.Statement, error) {
	query, _ = keepWildcardEscapes(query, false, false)
	st, err := p.Parser.ParseSimple(query)
	if err == nil {
		typeLiterals(query, st)
		defaultEmptyEscapes(query, st)
	}
	return st, err
}

// Parse returns as the statement's text the text it parsed, with its
// wildcard escapes rewritten (likeescapes.go), as GMS cuts the bodies of
// stored programs and views from it by the positions in the statement; the
// rest is the caller's text, not rewritten, to be parsed again.
func (p typedLiteralParser) Parse(ctx *sql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	text, added := p.escapes(ctx, query, nil)
	st, q, rest, err := p.Parser.Parse(ctx, text, multi)
	if err == nil {
		typeLiterals(q, st)
		defaultEmptyEscapes(q, st)
	}
	return st, q, originalRest(query, text, rest, added), err
}

func (p typedLiteralParser) ParseWithOptions(ctx context.Context, query string, delimiter rune, multi bool, options ast.ParserOptions) (ast.Statement, string, string, error) {
	text, added := p.escapes(ctx, query, &options)
	st, q, rest, err := p.Parser.ParseWithOptions(ctx, text, delimiter, multi, options)
	if err == nil {
		typeLiterals(q, st)
		defaultEmptyEscapes(q, st)
	}
	return st, q, originalRest(query, text, rest, added), err
}

func (p typedLiteralParser) ParseOneWithOptions(ctx context.Context, query string, options ast.ParserOptions) (ast.Statement, int, error) {
	text, added := p.escapes(ctx, query, &options)
	st, n, err := p.Parser.ParseOneWithOptions(ctx, text, options)
	if err == nil {
		end := len(text)
		if n > 0 && n < end {
			end = n
		}
		typeLiterals(text[:end], st)
		defaultEmptyEscapes(text[:end], st)
	}
	return st, originalOffset(n, added), err
}

// escapes is keepWildcardEscapes under the session's sql_mode (and
// options' ANSI_QUOTES, when given), read only for a text with a
// backslash.
func (typedLiteralParser) escapes(ctx context.Context, query string, options *ast.ParserOptions) (string, []int) {
	if strings.IndexByte(query, '\\') < 0 {
		return query, nil
	}
	ansiQuotes, noEscapes := false, false
	if sctx, ok := ctx.(*sql.Context); ok && sctx != nil && sctx.Session != nil {
		mode := sql.LoadSqlMode(sctx)
		ansiQuotes, noEscapes = mode.AnsiQuotes(), mode.ModeEnabled("NO_BACKSLASH_ESCAPES")
	}
	if options != nil {
		ansiQuotes = options.AnsiQuotes
	}
	if noEscapes && definesStored(query) {
		// A stored definition's text is kept as parsed, its strings
		// written for backslash escapes; GMS parses a view's again in
		// the reading session's mode, where doubling its backslashes
		// once more would change its values and its positions.
		noEscapes = false
	}
	return keepWildcardEscapes(query, ansiQuotes, noEscapes)
}

// definesStored reports whether query, after blanks and comments, begins
// with CREATE or ALTER: a statement that may store a text GMS parses
// again (a view, procedure, trigger or event).
func definesStored(query string) bool {
	for i := 0; i < len(query); {
		switch c := query[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '(':
			i++
		case c == '#' || strings.HasPrefix(query[i:], "--"):
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				return false
			}
			i += j + 1
		case strings.HasPrefix(query[i:], "/*") && !strings.HasPrefix(query[i:], "/*!"):
			j := strings.Index(query[i+2:], "*/")
			if j < 0 {
				return false
			}
			i += 2 + j + 2
		default:
			w := query[i:]
			return len(w) >= 6 && strings.EqualFold(w[:6], "create") || len(w) >= 5 && strings.EqualFold(w[:5], "alter")
		}
	}
	return false
}

// originalRest is the part of query that rest, a suffix of text (query
// rewritten with added), stands for.
func originalRest(query, text, rest string, added []int) string {
	if len(added) == 0 || len(rest) > len(text) {
		return rest
	}
	return query[min(originalOffset(len(text)-len(rest), added), len(query)):]
}

// typeLiterals gives the typed literals of st, whose text is query, their
// CASTs.
func typeLiterals(query string, st ast.Statement) {
	if st == nil || !containsFold(query, "date") && !containsFold(query, "time") {
		return
	}
	// The strings of the text in order; the typed ones with their type.
	type str struct {
		val, typ string
	}
	var strs map[string][]str
	typed, reordered := false, false
	tkn := ast.NewStringTokenizer(query)
	prev := 0
	for {
		id, val := tkn.Scan()
		if id == 0 || id == ast.LEX_ERROR {
			break
		}
		if id == ast.COMMENT {
			continue
		}
		if id == ast.WITH {
			reordered = true
		}
		if id == ast.STRING {
			var typ string
			switch prev {
			case ast.DATE:
				typ = "date"
			case ast.TIME:
				typ = "time"
			case ast.TIMESTAMP:
				typ = "datetime"
			}
			if strs == nil {
				strs = make(map[string][]str)
			}
			strs[string(val)] = append(strs[string(val)], str{val: string(val), typ: typ})
			typed = typed || typ != ""
		}
		prev = id
	}
	if !typed {
		return
	}
	// The walk below (walkSQL, which also reaches a set operation's WITH,
	// ORDER BY and LIMIT) meets the strings in the text's order, except
	// around a WITH (vitess walks a DML statement's WITH last): there a
	// text that is typed in one place and not (or otherwise) in another is
	// left a string everywhere, never a CAST on the wrong one.
	for val, q := range strs {
		if !reordered {
			break
		}
		for _, x := range q[1:] {
			if x.typ != q[0].typ {
				delete(strs, val)
				break
			}
		}
	}
	// NAME_CONST takes literals only: its arguments keep their strings.
	var keep map[*ast.SQLVal]bool
	_ = walkSQL(func(n ast.SQLNode) (bool, error) {
		f, ok := n.(*ast.FuncExpr)
		if !ok || f == nil || !f.Name.EqualString("name_const") {
			return true, nil
		}
		_ = walkSQL(func(n ast.SQLNode) (bool, error) {
			if v, ok := n.(*ast.SQLVal); ok && v != nil {
				if keep == nil {
					keep = make(map[*ast.SQLVal]bool)
				}
				keep[v] = true
			}
			return true, nil
		}, f.Exprs)
		return false, nil
	}, st)
	// The statement's strings in the same order: the typed ones.
	casts := make(map[*ast.SQLVal]ast.Expr)
	_ = walkSQL(func(n ast.SQLNode) (bool, error) {
		v, ok := n.(*ast.SQLVal)
		if !ok || v == nil || v.Type != ast.StrVal {
			return true, nil
		}
		q := strs[string(v.Val)]
		if len(q) == 0 {
			return true, nil
		}
		s := q[0]
		strs[string(v.Val)] = q[1:]
		if s.typ != "" && !keep[v] {
			// A copy in the CAST: once v is replaced, no walk meets it
			// again.
			lit := *v
			casts[v] = &ast.ConvertExpr{Name: "CAST", Expr: &lit, Type: literalType(s.typ, s.val)}
		}
		return true, nil
	}, st)
	if len(casts) == 0 {
		return
	}
	replace := func(e ast.Expr) ast.Expr {
		if e == nil {
			return nil
		}
		for v, c := range casts {
			e = ast.ReplaceExpr(e, v, c)
		}
		return e
	}
	replaceAll := func(es []ast.Expr) {
		for i := range es {
			es[i] = replace(es[i])
		}
	}
	_ = walkSQL(func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.AliasedExpr:
			if n != nil {
				n.Expr = replace(n.Expr)
			}
		case *ast.Where:
			if n != nil {
				n.Expr = replace(n.Expr)
			}
		case *ast.Order:
			if n != nil {
				n.Expr = replace(n.Expr)
			}
		case *ast.JoinTableExpr:
			if n != nil {
				n.Condition.On = replace(n.Condition.On)
			}
		case *ast.AssignmentExpr:
			if n != nil {
				n.Expr = replace(n.Expr)
			}
		case ast.GroupBy:
			replaceAll(n)
		case ast.ValTuple:
			replaceAll(n)
		case ast.Exprs:
			replaceAll(n)
		}
		return true, nil
	}, st)
}

// literalType is the CAST type of a typed literal of type typ (date, time
// or datetime) whose text is val: with as many fractional digits as it
// has, as MySQL types it.
func literalType(typ, val string) *ast.ConvertType {
	t := &ast.ConvertType{Type: typ}
	if typ == "date" {
		return t
	}
	frac := 0
	for i := len(val) - 1; i >= 0; i-- {
		if val[i] == '.' {
			frac = len(val) - 1 - i
			break
		}
		if val[i] < '0' || val[i] > '9' {
			break
		}
	}
	if frac > 6 {
		frac = 6
	}
	if frac > 0 {
		t.Length = ast.NewIntVal([]byte{byte('0' + frac)})
	}
	return t
}
