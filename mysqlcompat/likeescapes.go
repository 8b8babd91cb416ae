package mysqlcompat

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Escapes in LIKE patterns
//
// MySQL's string literals keep the backslash of \_ and \%: 'a\_b' is the
// four characters a\_b, so that 'a\_%' as a LIKE pattern matches a literal
// underscore. The tokenizer GMS's parser uses decodes \_ to _ and \% to %,
// so 'axb' LIKE 'a\_%' was true and 'axb' LIKE 'a\%b' too, by scan and by
// the index range of the prefix alike. The engine's parser wrapper
// (typedliterals.go) parses instead the text keepWildcardEscapes returns:
// in its quoted strings \_ and \% are written \\_ and \\%, which the
// tokenizer decodes to the two characters MySQL keeps. The text is
// rewritten, not the parsed statement, so that no literal has to be found
// again by its value (a string in an executable comment, an alias or a
// separator took another's backslash), and so that the bodies of
// procedures, triggers, events and views, which GMS cuts from the parsed
// text and parses again later without the wrapper, carry the rewritten
// strings: SHOW CREATE shows them as \\_, which MySQL reads as the same
// value. Under NO_BACKSLASH_ESCAPES a backslash is an ordinary character,
// which the tokenizer has no mode for: every backslash of a string is
// doubled.
//
// A pattern ending in its escape character matches that character in
// MySQL ('a\' LIKE 'a\' is true, 'a' LIKE 'a\' false); GMS's matcher
// failed with 1105 (invalid string). likeTrailingEscape (a value rule,
// textValues) doubles such a trailing escape, in a literal pattern before
// the prefix range is read from it, and in other patterns as they are
// evaluated (likePattern). An empty ESCAPE is the backslash
// (defaultEmptyEscapes).
//
// Targets GMS v0.20.0 with its vitess (token.go Scan, scanString,
// sqltypes.SQLDecodeMap; expression/like.go ConstructLikeMatcher). Without
// it, TestValueSemanticsSpec (testdata/value_semantics) fails.

// keepWildcardEscapes returns query with a backslash added before each
// \_ and \% of its quoted strings (before every backslash of them when
// noEscapes, NO_BACKSLASH_ESCAPES), and the offsets in the returned text
// of the backslashes added, in order. Quotes and comments are read as
// GMS's tokenizer reads them: " quotes an identifier under ANSI_QUOTES,
// --, // and # comment to the end of the line, /* */ is a comment and /*!
// */ is read as text. A query without a backslash is returned as it is,
// with no allocation.
func keepWildcardEscapes(query string, ansiQuotes, noEscapes bool) (string, []int) {
	if strings.IndexByte(query, '\\') < 0 {
		return query, nil
	}
	var b []byte
	var added []int
	done := 0 // query[:done] is in b
	add := func(at int) {
		if b == nil {
			b = make([]byte, 0, len(query)+8)
		}
		b = append(b, query[done:at]...)
		added = append(added, len(b))
		b = append(b, '\\')
		done = at
	}
	n := len(query)
	toEOL := func(i int) int {
		if j := strings.IndexByte(query[i:], '\n'); j >= 0 {
			return i + j + 1
		}
		return n
	}
	for i := 0; i < n; {
		c := query[i]
		var next byte
		if i+1 < n {
			next = query[i+1]
		}
		switch {
		case c == '\'' || c == '"' && !ansiQuotes:
			i++
		str:
			for i < n {
				switch query[i] {
				case '\\':
					if noEscapes {
						add(i)
						i++
						continue
					}
					if i+1 < n && (query[i+1] == '_' || query[i+1] == '%') {
						add(i)
					}
					i += 2
				case c:
					i++
					if i < n && query[i] == c {
						i++
						continue
					}
					break str
				default:
					i++
				}
			}
		case c == '`' || c == '"':
			i++
			for i < n {
				if query[i] == c {
					i++
					if i < n && query[i] == c {
						i++
						continue
					}
					break
				}
				i++
			}
		case c == '#', c == '-' && next == '-', c == '/' && next == '/':
			i = toEOL(i)
		case c == '/' && next == '*' && (i+2 >= n || query[i+2] != '!'):
			if j := strings.Index(query[i+2:], "*/"); j >= 0 {
				i += 2 + j + 2
			} else {
				i = n
			}
		default:
			i++
		}
	}
	if b == nil {
		return query, nil
	}
	b = append(b, query[done:]...)
	return string(b), added
}

// originalOffset is the offset in the original text of off, an offset in
// the text keepWildcardEscapes returned with added.
func originalOffset(off int, added []int) int {
	return off - sort.SearchInts(added, off)
}

// bindableWildcardEscapes returns text, the statement of a stored body,
// with each \_ and \% of its string literals written \\_ and \\%: the
// value MySQL reads from the first (a backslash and the wildcard), which
// GMS's package parser, that parses stored bodies again to bind them and
// which keepWildcardEscapes does not reach, reads only from the second.
// It is text itself when no literal changes.
func bindableWildcardEscapes(text string) string {
	if !hasWildcardEscapes(text) {
		return text
	}
	out, _ := keepWildcardEscapes(text, false, false)
	return out
}

// hasWildcardEscapes reports whether text may hold a string literal that
// bindableWildcardEscapes changes.
func hasWildcardEscapes(text string) bool {
	return strings.Contains(text, `\_`) || strings.Contains(text, `\%`)
}

// defaultEmptyEscapes drops the empty ESCAPE of st's LIKEs, which is the
// backslash in MySQL; GMS's LIKE indexed the escape's first rune and
// panicked (1105).
func defaultEmptyEscapes(query string, st ast.Statement) {
	if st == nil || !containsFold(query, "escape") {
		return
	}
	_ = walkSQL(func(n ast.SQLNode) (bool, error) {
		if c, ok := n.(*ast.ComparisonExpr); ok && c != nil {
			if v, ok := c.Escape.(*ast.SQLVal); ok && v.Type == ast.StrVal && len(v.Val) == 0 {
				c.Escape = nil
			}
		}
		return true, nil
	}, st)
}

// likeTrailingEscape doubles the trailing escape character of e's pattern,
// e a LIKE: in the literal, or as the pattern is evaluated.
func likeTrailingEscape(_ *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	var l *expression.Like
	switch x := e.(type) {
	case *expression.Like:
		l = x
	case *keptLike:
		l = x.Like
	default:
		return e, transform.SameTree, nil
	}
	if _, ok := l.RightChild.(*likePattern); ok {
		return e, transform.SameTree, nil
	}
	var escape sql.Expression
	if l.Escape != nil {
		escape = l.Escape
		if lit, ok := escape.(*expression.Literal); ok {
			s, ok := lit.Value().(string)
			if ok && utf8.RuneCountInString(s) > 1 {
				// MySQL refuses it as it prepares the statement;
				// GMS failed as it matched, with 1105.
				return nil, transform.SameTree, errEscapeArguments()
			}
			if !ok || utf8.RuneCountInString(s) != 1 {
				// One GMS refuses: its answer stands.
				return e, transform.SameTree, nil
			}
		}
	}
	var pattern sql.Expression
	if lit, ok := l.RightChild.(*expression.Literal); ok {
		s, ok := lit.Value().(string)
		if !ok {
			return e, transform.SameTree, nil
		}
		esc := `\`
		if escape != nil {
			el, ok := escape.(*expression.Literal)
			if !ok {
				pattern = &likePattern{pattern: l.RightChild, escape: escape}
			} else {
				esc = el.Value().(string)
			}
		}
		if pattern == nil {
			d, ok := withTrailingEscape(s, esc)
			if !ok {
				return e, transform.SameTree, nil
			}
			pattern = expression.NewLiteral(d, lit.Type())
		}
	} else {
		pattern = &likePattern{pattern: l.RightChild, escape: escape}
	}
	ne, err := e.WithChildren(l.LeftChild, pattern)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return ne, transform.NewTree, nil
}

// errEscapeArguments is MySQL's error for an ESCAPE of more than one
// character.
func errEscapeArguments() error {
	return mysql.NewSQLError(mysql.ERWrongArguments, mysql.SSUnknownSQLState, "Incorrect arguments to ESCAPE")
}

// withTrailingEscape returns pattern with its trailing escape character
// doubled, so that GMS's matcher takes it literally as MySQL does; ok is
// false when pattern does not end in an unescaped escape character.
func withTrailingEscape(pattern, escape string) (string, bool) {
	if escape == "" || !strings.HasSuffix(pattern, escape) {
		return pattern, false
	}
	for i := 0; i < len(pattern); {
		if strings.HasPrefix(pattern[i:], escape) {
			i += len(escape)
			if i == len(pattern) {
				return pattern + escape, true
			}
		}
		_, n := utf8.DecodeRuneInString(pattern[i:])
		i += n
	}
	return pattern, false
}

// likePattern is a LIKE's pattern that is not a literal: its value with a
// trailing escape character doubled (withTrailingEscape). escape is the
// LIKE's ESCAPE, nil for the backslash.
type likePattern struct {
	pattern, escape sql.Expression
}

var _ sql.CollationCoercible = (*likePattern)(nil)

func (p *likePattern) Resolved() bool      { return p.pattern.Resolved() }
func (p *likePattern) IsNullable() bool    { return p.pattern.IsNullable() }
func (p *likePattern) Type() sql.Type      { return p.pattern.Type() }
func (p *likePattern) String() string      { return p.pattern.String() }
func (p *likePattern) DebugString() string { return sql.DebugString(p.pattern) }

func (p *likePattern) Children() []sql.Expression { return []sql.Expression{p.pattern} }

func (p *likePattern) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, p.pattern)
}

func (p *likePattern) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(p, len(children), 1)
	}
	return &likePattern{pattern: children[0], escape: p.escape}, nil
}

// Eval implements sql.Expression.
func (p *likePattern) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := p.pattern.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	s, ok := v.(string)
	if !ok {
		if v, err = sql.UnwrapAny(ctx, v); err != nil {
			return nil, err
		}
		if v, _, err = types.LongText.Convert(ctx, v); err != nil {
			return nil, err
		}
		if s, ok = v.(string); !ok {
			return v, nil
		}
	}
	esc := `\`
	if p.escape != nil {
		ev, err := p.escape.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if es, ok := ev.(string); ok && utf8.RuneCountInString(es) == 1 {
			esc = es
		} else if ev != nil {
			return s, nil
		}
	}
	d, _ := withTrailingEscape(s, esc)
	return d, nil
}
