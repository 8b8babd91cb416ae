package sqlstore

import "strings"

// Locking clauses GMS's parser does not take
//
// vitess parses FOR UPDATE, FOR UPDATE SKIP LOCKED and LOCK IN SHARE MODE,
// and GMS drops them; it refuses MySQL 8's FOR SHARE, NOWAIT and SKIP
// LOCKED after FOR SHARE. hideLockClauses hides those words from the
// parser behind a comment of the same length (a hidingParser), and the
// texts the parser returns are slices of the original, so the statement's
// text still holds them:
// statementLock (locks.go) reads the locking mode from it, as it does for
// the clauses vitess parses.

// sameSpan returns the part of orig at the place sub has in hidden, which
// is orig with some words hidden at the same length; sub itself when it is
// not part of hidden.
func sameSpan(orig, hidden, sub string) string {
	if sub == "" {
		return sub
	}
	if i := strings.Index(hidden, sub); i >= 0 {
		return orig[i : i+len(sub)]
	}
	return sub
}

// hideLockClauses returns query with FOR SHARE, and NOWAIT and SKIP LOCKED
// after FOR UPDATE or FOR SHARE, replaced by comments of the same length,
// outside string literals, quoted names and comments. A query without
// NOWAIT or FOR SHARE is returned as it is, without allocating.
func hideLockClauses(query string) string {
	if !containsFold(query, "nowait") && !containsFold(query, "for share") {
		return query
	}
	b := []byte(query)
	prev, prevEnd := "", 0 // the last word and where it ended
	prev2 := ""            // the word before it
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(b, i)
			prev2, prev = prev, ""
			continue
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				return string(b)
			}
			i += 2 + end + 2
			continue
		case c == '#' || c == '-' && i+2 < len(b) && b[i+1] == '-' && (b[i+2] == ' ' || b[i+2] == '\t'):
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				return string(b)
			}
			i += end + 1
			continue
		case isWordByte(c):
			start := i
			for i < len(b) && isWordByte(b[i]) {
				i++
			}
			w := query[start:i]
			switch {
			case strings.EqualFold(w, "share") && strings.EqualFold(prev, "for"):
				blank(b, prevEnd-3, i)
			case strings.EqualFold(w, "nowait") && (strings.EqualFold(prev, "update") || strings.EqualFold(prev, "share")):
				blank(b, start, i)
			case strings.EqualFold(w, "locked") && strings.EqualFold(prev, "skip") &&
				(strings.EqualFold(prev2, "update") || strings.EqualFold(prev2, "share")):
				blank(b, prevEnd-4, i)
				// SKIP LOCKED ends the clause: what follows is not after UPDATE.
				prev2, prev, prevEnd = "", "", i
				continue
			}
			if !(strings.EqualFold(w, "share") && strings.EqualFold(prev, "for")) {
				prev2, prev, prevEnd = prev, w, i
			} else {
				// FOR SHARE reads as SHARE for what may follow it.
				prev2, prev, prevEnd = "", "share", i
			}
			continue
		default:
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				prev2, prev = prev, ""
			}
		}
		i++
	}
	return string(b)
}

// blank replaces b[i:j] (at least 4 bytes) with a comment.
func blank(b []byte, i, j int) {
	b[i], b[i+1] = '/', '*'
	for k := i + 2; k < j-2; k++ {
		b[k] = ' '
	}
	b[j-2], b[j-1] = '*', '/'
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

// skipQuoted returns the index after the quoted text starting at b[i]: its
// quote character ends it unless doubled, or escaped with a backslash in a
// string literal.
func skipQuoted(b []byte, i int) int {
	q := b[i]
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			if q != '`' {
				i++
			}
		case q:
			if i+1 < len(b) && b[i+1] == q {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(b)
}
