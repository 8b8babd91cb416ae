package mysqlcompat

import (
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
// the index range of the prefix alike. keepWildcardEscapes (called by the
// engine's parser wrapper, typedliterals.go) reads the statement's string
// literals from its text and gives back the backslash to those that had
// one, in the parsed statement, matched by order as typeLiterals matches
// typed literals.
//
// A pattern ending in its escape character matches that character in
// MySQL ('a\' LIKE 'a\' is true, 'a' LIKE 'a\' false); GMS's matcher
// failed with 1105 (invalid string). likeTrailingEscape (a value rule,
// textValues) doubles such a trailing escape, in a literal pattern before
// the prefix range is read from it, and in other patterns as they are
// evaluated (likePattern). An empty ESCAPE is the backslash
// (defaultEmptyEscapes).
//
// Targets GMS v0.20.0 with its vitess (token.go scanString,
// sqltypes.SQLDecodeMap; expression/like.go ConstructLikeMatcher). Without
// it, TestValueSemanticsSpec (testdata/value_semantics) fails.

// keepWildcardEscapes gives the string literals of st, whose text is
// query, written with \_ or \% their backslashes back.
func keepWildcardEscapes(query string, st ast.Statement) {
	if st == nil || !strings.Contains(query, `\_`) && !strings.Contains(query, `\%`) {
		return
	}
	// The decoded value of each string token, in order, with MySQL's
	// value where the two differ.
	type str struct{ val, mysql string }
	var strs map[string][]str
	changed, reordered := false, false
	tkn := ast.NewStringTokenizer(query)
	for {
		id, val := tkn.Scan()
		if id == 0 || id == ast.LEX_ERROR {
			break
		}
		if id == ast.WITH {
			reordered = true
		}
		if id != ast.STRING {
			continue
		}
		// The token's text lies between the position before it (less the
		// one character the tokenizer reads ahead) and after it.
		lo, hi := tkn.OldPosition-1, tkn.Position
		lo = max(lo, 0)
		hi = min(hi, len(query))
		m, plain, ok := mysqlStringValue(query[lo:hi])
		if !ok || plain != string(val) {
			// Not the text of this token: keep the tokenizer's value.
			m = string(val)
		}
		if strs == nil {
			strs = make(map[string][]str)
		}
		strs[string(val)] = append(strs[string(val)], str{val: string(val), mysql: m})
		changed = changed || m != string(val)
	}
	if !changed {
		return
	}
	// As in typeLiterals: around a WITH the walk may meet the strings out
	// of the text's order, so a value written both ways keeps GMS's.
	for val, q := range strs {
		if !reordered {
			break
		}
		for _, x := range q[1:] {
			if x.mysql != q[0].mysql {
				delete(strs, val)
				break
			}
		}
	}
	_ = walkSQL(func(n ast.SQLNode) (bool, error) {
		v, ok := n.(*ast.SQLVal)
		if !ok || v == nil || v.Type != ast.StrVal {
			return true, nil
		}
		q := strs[string(v.Val)]
		if len(q) == 0 {
			return true, nil
		}
		strs[string(v.Val)] = q[1:]
		if q[0].mysql != q[0].val {
			v.Val = []byte(q[0].mysql)
		}
		return true, nil
	}, st)
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
	var b strings.Builder
	last := 0
	tkn := ast.NewStringTokenizer(text)
	for {
		id, val := tkn.Scan()
		if id == 0 || id == ast.LEX_ERROR {
			break
		}
		if id != ast.STRING {
			continue
		}
		lo, hi := max(tkn.OldPosition-1, last), min(tkn.Position, len(text))
		if lo >= hi {
			continue
		}
		if _, plain, ok := mysqlStringValue(text[lo:hi]); !ok || plain != string(val) {
			continue // not the text of this token: left as it is
		}
		for i := lo; i+1 < hi; i++ {
			if text[i] != '\\' {
				continue
			}
			if c := text[i+1]; c == '_' || c == '%' {
				b.WriteString(text[last : i+1])
				b.WriteByte('\\')
				last = i + 1
			}
			i++ // the escaped character
		}
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
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

// mysqlStringValue decodes text, one string token (quoted strings, which
// follow each other with only white space between them, after optional
// white space) as MySQL does, \_ and \% keeping their backslash, and as
// the tokenizer does (plain). ok is false when text is not such a token.
func mysqlStringValue(text string) (mysql, plain string, ok bool) {
	var b, p strings.Builder
	i, n := 0, 0
	for {
		for i < len(text) && strings.IndexByte(" \t\n\r\f\v", text[i]) >= 0 {
			i++
		}
		if i == len(text) || text[i] != '\'' && text[i] != '"' {
			return b.String(), p.String(), n > 0
		}
		delim := text[i]
		i++
		closed := false
		for i < len(text) && !closed {
			c := text[i]
			switch {
			case c == '\\' && i+1 < len(text):
				e := text[i+1]
				i += 2
				if e == '_' || e == '%' {
					b.WriteByte('\\')
				}
				d := e
				switch e {
				case '0':
					d = 0
				case 'b':
					d = '\b'
				case 'n':
					d = '\n'
				case 'r':
					d = '\r'
				case 't':
					d = '\t'
				case 'Z':
					d = 26
				}
				b.WriteByte(d)
				p.WriteByte(d)
			case c == delim && i+1 < len(text) && text[i+1] == delim:
				b.WriteByte(delim)
				p.WriteByte(delim)
				i += 2
			case c == delim:
				i++
				closed = true
			default:
				b.WriteByte(c)
				p.WriteByte(c)
				i++
			}
		}
		if !closed {
			return "", "", false
		}
		n++
	}
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
