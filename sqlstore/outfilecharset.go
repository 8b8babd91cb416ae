package sqlstore

import "strings"

// SELECT ... INTO OUTFILE ... CHARACTER SET binary
//
// GMS refuses any CHARACTER SET clause of INTO OUTFILE ("unsupported
// feature: CHARSET in INTO OUTFILE"), and mariadb-dump --tab and mysqldump
// --tab always send CHARACTER SET binary (in a versioned comment,
// /*!50138 ... */, which the parser reads as code). binary asks that the
// values be written as they are, without conversion, which is what GMS
// does without the clause; so the parser wrapper blanks that clause (and
// only with binary) before vitess reads the statement. Other character
// sets are still refused.

// hideOutfileBinaryCharset returns query with CHARACTER SET binary (or
// CHARSET binary) after INTO OUTFILE replaced by spaces, outside string
// literals, quoted names and comments (a versioned comment /*!...*/ is
// code). A query without OUTFILE is returned as it is, without allocating.
func hideOutfileBinaryCharset(query string) string {
	if !containsFold(query, "outfile") || !containsFold(query, "binary") {
		return query
	}
	b := []byte(query)
	var words []string // the words since OUTFILE
	var starts []int
	seenOutfile := false
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(b, i)
			words, starts = words[:0], starts[:0]
			continue
		case c == '/' && i+1 < len(b) && b[i+1] == '*' && !(i+2 < len(b) && b[i+2] == '!'):
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				return string(b)
			}
			i += 2 + end + 2
			continue
		case isWordByte(c):
			start := i
			for i < len(b) && isWordByte(b[i]) {
				i++
			}
			w := query[start:i]
			if strings.EqualFold(w, "outfile") {
				seenOutfile = true
				words, starts = words[:0], starts[:0]
				continue
			}
			if !seenOutfile {
				continue
			}
			words, starts = append(words, w), append(starts, start)
			n := len(words)
			if strings.EqualFold(w, "binary") && n >= 2 {
				switch {
				case strings.EqualFold(words[n-2], "charset"):
					spaces(b, starts[n-2], i)
				case n >= 3 && strings.EqualFold(words[n-2], "set") && strings.EqualFold(words[n-3], "character"):
					spaces(b, starts[n-3], i)
				}
			}
			continue
		}
		i++
	}
	return string(b)
}

// spaces replaces b[i:j] with spaces.
func spaces(b []byte, i, j int) {
	for k := i; k < j; k++ {
		b[k] = ' '
	}
}
