package mysqlcompat

import (
	"strings"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// LIKE prefixes under utf8mb4_0900_bin
//
// keepLikes keeps every LIKE from GMS's rewrite into a range, so GMS's
// costing no longer sees a range for one. Under utf8mb4_0900_bin (the
// default collation), which orders by code point and does not pad, the
// strings that begin with a prefix p are exactly those from p up to, and
// not including, p with its last code point incremented; boundLikes adds
// those two comparisons beside each LIKE 'p...' conjunct of a WHERE over
// such a column, so GMS can cost an index range for it and still check the
// LIKE. Other collations have no such string bounds (a PAD SPACE string
// such as 'p\t' sorts below p); sqlstore reads their range in key space
// (sqlstore/likeprefix.go).
func boundLikes(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		f, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		conj := expression.SplitConjunction(f.Expression)
		var out []sql.Expression
		for _, c := range conj {
			out = append(out, c)
			if k, ok := c.(*keptLike); ok && k.lo != nil {
				continue // bounded when the scope was met before
			}
			l, ok := KeptLike(c)
			if !ok {
				continue
			}
			gf, ok := l.LeftChild.(*expression.GetField)
			if !ok {
				continue
			}
			st, ok := gf.Type().(sql.StringType)
			if !ok || st.Collation() != sql.Collation_utf8mb4_0900_bin {
				continue
			}
			p, ok := LikePrefix(l)
			if !ok || p == "" {
				continue
			}
			lit := func(s string) sql.Expression { return expression.NewLiteral(s, l.RightChild.Type()) }
			k := &keptLike{Like: l, lo: expression.NewGreaterThanOrEqual(gf, lit(p))}
			if hi, ok := codePointSuccessor(p); ok {
				k.hi = expression.NewLessThan(gf, lit(hi))
			}
			if onlyPrefix(l, p) && k.hi != nil {
				// LIKE 'p%' is exactly the bounds: they replace it,
				// and the range GMS reads leaves nothing to check.
				out[len(out)-1] = k.lo
			} else {
				out[len(out)-1] = k
				out = append(out, k.lo)
			}
			if k.hi != nil {
				out = append(out, k.hi)
			}
		}
		if len(out) == len(conj) {
			return n, transform.SameTree, nil
		}
		nf, err := f.WithExpressions(expression.JoinAnd(out...))
		if err != nil {
			return nil, transform.SameTree, err
		}
		return nf, transform.NewTree, nil
	})
}

// onlyPrefix reports whether l's pattern is its prefix p and one
// trailing %, written without escapes (so that p is the pattern's own
// text).
func onlyPrefix(l *expression.Like, p string) bool {
	pattern := l.RightChild.(*expression.Literal).Value().(string)
	return pattern == p+"%" && !strings.ContainsAny(p, "%_\\") && (l.Escape == nil || !strings.Contains(pattern, escapeOf(l)))
}

// escapeOf returns l's escape character, which is a literal string of one
// rune when LikePrefix found a prefix.
func escapeOf(l *expression.Like) string {
	return l.Escape.(*expression.Literal).Value().(string)
}

// codePointSuccessor returns the least string above every string that
// begins with p in code point order: p's last code point below U+10FFFF
// incremented (past the surrogates), what follows it dropped; ok is false
// when there is none.
func codePointSuccessor(p string) (string, bool) {
	r := []rune(p)
	for i := len(r) - 1; i >= 0; i-- {
		if r[i] < utf8.MaxRune {
			next := r[i] + 1
			if next >= 0xD800 && next <= 0xDFFF {
				next = 0xE000
			}
			return string(r[:i]) + string(next), true
		}
	}
	return "", false
}

// LikePrefix returns the literal prefix of a LIKE's pattern: the runes
// before its first wildcard, escapes resolved; ok is false when the
// pattern or its escape is not a literal string, or not valid UTF-8 (which
// LIKE refuses).
func LikePrefix(l *expression.Like) (string, bool) {
	lit, ok := l.RightChild.(*expression.Literal)
	if !ok {
		return "", false
	}
	pattern, ok := lit.Value().(string)
	if !ok || !utf8.ValidString(pattern) {
		return "", false
	}
	escape := '\\'
	if l.Escape != nil {
		el, ok := l.Escape.(*expression.Literal)
		if !ok {
			return "", false
		}
		es, ok := el.Value().(string)
		if !ok || utf8.RuneCountInString(es) != 1 {
			return "", false
		}
		escape, _ = utf8.DecodeRuneInString(es)
	}
	var b strings.Builder
	for i := 0; i < len(pattern); {
		r, n := utf8.DecodeRuneInString(pattern[i:])
		i += n
		switch {
		case r == escape:
			if i == len(pattern) {
				return b.String(), true // a trailing escape: stop short
			}
			r, n = utf8.DecodeRuneInString(pattern[i:])
			i += n
		case r == '%' || r == '_':
			return b.String(), true
		}
		b.WriteRune(r)
	}
	return b.String(), true
}
