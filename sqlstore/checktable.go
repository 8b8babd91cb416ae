package sqlstore

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// CHECK TABLE
//
// vitess does not parse CHECK TABLE (GMS answers 1064). The parser wrapper
// (callParser with checkTableCall) reads the statement itself, `CHECK TABLE[S] t [, t]
// [QUICK | FAST | MEDIUM | EXTENDED | CHANGED | FOR UPGRADE]`, and hands
// GMS the call of a procedure of the store's, strata_check_table, with the
// table names as its argument. Every option checks the same way.
//
// For each table, at one snapshot: every row is decoded, and for every
// secondary index the entry the row should have is looked up and compared
// with its value (a unique entry holds the row's primary key); each index
// is then counted, and holds as many entries as the table has rows, so no
// index has an entry without a row. The scans read every block of the
// table's key range that is not in the block cache from the engine's files,
// which verifies it against its checksum (a cached block was verified when
// it was loaded), without filling the cache; a checksum that does not
// match is reported. The result is MySQL's: one row per
// table, Table, Op (check), Msg_type and Msg_text, with `status OK`, or a
// Warning per problem found and then `error Corrupt`; a table that does
// not exist gives MySQL's Error and `status Operation failed`.

// checkTableProcedure is CALL strata_check_table(names) over s: names is
// checkTableNames' encoding of the tables.
func checkTableProcedure(s *Store) sql.ExternalStoredProcedureDetails {
	col := func(name string) *sql.Column {
		return &sql.Column{Name: name, Type: types.LongText, Source: "strata_check_table"}
	}
	return sql.ExternalStoredProcedureDetails{
		Name:   "strata_check_table",
		Schema: sql.Schema{col("Table"), col("Op"), col("Msg_type"), col("Msg_text")},
		Function: func(ctx *sql.Context, names string) (sql.RowIter, error) {
			var rows []sql.Row
			for _, n := range strings.Split(names, "\n") {
				db, table, ok := strings.Cut(n, "\t")
				if !ok {
					continue
				}
				if db == "" {
					db = ctx.GetCurrentDatabase()
				}
				for _, m := range s.checkTable(ctx, db, table) {
					rows = append(rows, sql.Row{db + "." + table, "check", m[0], m[1]})
				}
			}
			return sql.RowsToRowIter(rows...), nil
		},
		ReadOnly: true,
	}
}

// checkTable checks one table and returns its messages (type, text).
func (s *Store) checkTable(ctx *sql.Context, db, table string) [][2]string {
	t := s.beginTxn(true)
	defer t.rollback()
	v, ok, err := t.get(catalogKey(kindTable, db, table))
	if err == nil && !ok {
		// Names are case-insensitive: find the stored spelling.
		v, ok, err = findTableRecord(t, db, table)
	}
	if err != nil {
		return [][2]string{{"Error", err.Error()}, {"status", "Operation failed"}}
	}
	if !ok {
		return [][2]string{{"Error", fmt.Sprintf("Table '%s.%s' doesn't exist", db, table)}, {"status", "Operation failed"}}
	}
	d, err := s.defs.get(db, v)
	if err != nil {
		return [][2]string{{"Error", err.Error()}, {"status", "Operation failed"}}
	}
	if d.stale {
		// Its keys are of an older format (keyformat.go), which the
		// comparison below would take for missing entries.
		return [][2]string{{"error", errTableNeedsUpgrade(d.name).Message}}
	}
	problems, err := checkTableData(ctx, t, d)
	if err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) == 0 {
		return [][2]string{{"status", "OK"}}
	}
	out := make([][2]string, 0, len(problems)+1)
	for _, p := range problems {
		out = append(out, [2]string{"Warning", p})
	}
	return append(out, [2]string{"error", "Corrupt"})
}

// findTableRecord returns the catalog record of table in db, whatever the
// letter case of its name.
func findTableRecord(t *txn, db, table string) ([]byte, bool, error) {
	var found []byte
	err := scanCatalog(t, catalogKey(kindTable, db), func(k, v []byte) error {
		var rec tableRecord
		if err := decodeRecord(v, &rec, "table"); err != nil {
			return err
		}
		if found == nil && strings.EqualFold(rec.Name, table) {
			found = append([]byte(nil), v...)
		}
		return nil
	})
	return found, found != nil, err
}

// maxProblems bounds the problems one check reports.
const maxProblems = 20

// checkTableData compares every row of d with its index entries and counts
// the entries of every index (see above). It returns the problems found;
// the error is one of reading (a checksum that does not match among them).
func checkTableData(ctx *sql.Context, t *txn, d *tableDef) ([]string, error) {
	var problems []string
	report := func(format string, args ...any) {
		if len(problems) < maxProblems {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	prefix := appendIndexPrefix(nil, d.id, primaryIndexID)
	it, err := t.newTunedIter(prefix, prefixEnd(prefix), false, -1, iterTuning{dontFill: true})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var rows int64
	row := make(sql.Row, len(d.schema))
	var key []byte
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			return problems, err
		}
		rows++
		pk := bytes.Clone(it.Key()[len(prefix):])
		r, err := d.decodeRow(it.Value(), row, nil)
		if err != nil {
			report("Row %s of the primary index does not decode: %v", keyText(pk), err)
			continue
		}
		for _, ix := range d.secondary {
			var want []byte
			key, want, err = d.indexEntry(key[:0], ix, r, pk)
			if err != nil {
				report("Row %s: its entry of index '%s' cannot be made: %v", keyText(pk), ix.name, err)
				continue
			}
			got, found, err := t.get(key)
			if err != nil {
				return problems, err
			}
			switch {
			case !found:
				report("Index '%s' lacks the entry of row %s", ix.name, keyText(pk))
			case !bytes.Equal(got, want):
				report("Index '%s' entry of row %s names another row", ix.name, keyText(pk))
			}
		}
	}
	if err := it.Error(); err != nil {
		return problems, err
	}
	for _, ix := range d.secondary {
		n, err := countKeys(t, appendIndexPrefix(nil, d.id, ix.id))
		if err != nil {
			return problems, err
		}
		if n != rows {
			report("Index '%s' contains %d entries, should be %d.", ix.name, n, rows)
		}
	}
	return problems, nil
}

// countKeys counts the keys under prefix, reading their blocks from the
// files.
func countKeys(t *txn, prefix []byte) (int64, error) {
	it, err := t.newTunedIter(prefix, prefixEnd(prefix), false, -1, iterTuning{dontFill: true})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n, it.Error()
}

// keyText shows a primary key suffix in a message.
func keyText(pk []byte) string { return fmt.Sprintf("0x%x", pk) }

// callParser hides statements vitess does not parse from the parser it
// wraps: call turns each into the CALL of the store's procedure that runs
// it (CHECK TABLE, REPAIR TABLE, ALTER TABLE ... FORCE); everything else
// goes through unchanged.
type callParser struct {
	sql.Parser
	call func(query string) (string, bool)
}

// ParseSimple implements sql.Parser.
func (p callParser) ParseSimple(query string) (ast.Statement, error) {
	if q, ok := p.call(query); ok {
		return p.Parser.ParseSimple(q)
	}
	return p.Parser.ParseSimple(query)
}

// Parse implements sql.Parser.
func (p callParser) Parse(ctx *sql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	if q, ok := p.call(query); ok {
		stmt, _, _, err := p.Parser.Parse(ctx, q, false)
		return stmt, query, "", err
	}
	return p.Parser.Parse(ctx, query, multi)
}

// ParseWithOptions implements sql.Parser.
func (p callParser) ParseWithOptions(ctx context.Context, query string, delimiter rune, multi bool, options ast.ParserOptions) (ast.Statement, string, string, error) {
	if q, ok := p.call(query); ok {
		stmt, _, _, err := p.Parser.ParseWithOptions(ctx, q, delimiter, false, options)
		return stmt, query, "", err
	}
	return p.Parser.ParseWithOptions(ctx, query, delimiter, multi, options)
}

// ParseOneWithOptions implements sql.Parser.
func (p callParser) ParseOneWithOptions(ctx context.Context, query string, options ast.ParserOptions) (ast.Statement, int, error) {
	if q, ok := p.call(query); ok {
		stmt, _, err := p.Parser.ParseOneWithOptions(ctx, q, options)
		return stmt, len(query), err
	}
	return p.Parser.ParseOneWithOptions(ctx, query, options)
}

// checkTableCall returns the CALL that runs query when query is one CHECK
// TABLE statement (an optional ';' after it, nothing else).
func checkTableCall(query string) (string, bool) {
	names, ok := parseCheckTable(query)
	if !ok {
		return "", false
	}
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(n[0])
		b.WriteByte('\t')
		b.WriteString(n[1])
	}
	return "CALL strata_check_table(" + sqlStringLiteral(b.String()) + ")", true
}

// sqlStringLiteral quotes s as a SQL string literal.
func sqlStringLiteral(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\t", `\t`, "\x00", `\0`)
	return "'" + r.Replace(s) + "'"
}

// parseCheckTable reads `CHECK TABLE[S] name [, name ...] [options] [;]`
// and returns the names as (database, table), the database empty when not
// given. Anything else is not ok.
func parseCheckTable(query string) ([][2]string, bool) {
	l := lexer{s: query}
	if !l.word("check") || !(l.word("table") || l.word("tables")) {
		return nil, false
	}
	var names [][2]string
	for {
		first, ok := l.ident()
		if !ok {
			return nil, false
		}
		name := [2]string{"", first}
		if l.punct('.') {
			second, ok := l.ident()
			if !ok {
				return nil, false
			}
			name = [2]string{first, second}
		}
		names = append(names, name)
		if !l.punct(',') {
			break
		}
	}
	for _, opt := range []string{"quick", "fast", "medium", "extended", "changed"} {
		for l.word(opt) {
		}
	}
	if l.word("for") && !l.word("upgrade") {
		return nil, false
	}
	l.punct(';')
	l.space()
	return names, l.i == len(l.s)
}

// lexer reads the words, identifiers and punctuation of a short statement,
// skipping white space and comments.
type lexer struct {
	s string
	i int
}

func (l *lexer) space() {
	for l.i < len(l.s) {
		switch {
		case l.s[l.i] == ' ' || l.s[l.i] == '\t' || l.s[l.i] == '\n' || l.s[l.i] == '\r':
			l.i++
		case strings.HasPrefix(l.s[l.i:], "/*"):
			end := strings.Index(l.s[l.i+2:], "*/")
			if end < 0 {
				l.i = len(l.s)
				return
			}
			l.i += end + 4
		case strings.HasPrefix(l.s[l.i:], "-- ") || strings.HasPrefix(l.s[l.i:], "#"):
			end := strings.IndexByte(l.s[l.i:], '\n')
			if end < 0 {
				l.i = len(l.s)
				return
			}
			l.i += end + 1
		default:
			return
		}
	}
}

// word consumes the keyword w (any case) when it comes next.
func (l *lexer) word(w string) bool {
	l.space()
	j := l.i + len(w)
	if j > len(l.s) || !strings.EqualFold(l.s[l.i:j], w) || (j < len(l.s) && isWordByte(l.s[j])) {
		return false
	}
	l.i = j
	return true
}

// punct consumes the character c when it comes next.
func (l *lexer) punct(c byte) bool {
	l.space()
	if l.i < len(l.s) && l.s[l.i] == c {
		l.i++
		return true
	}
	return false
}

// ident consumes an identifier, plain or quoted with backticks.
func (l *lexer) ident() (string, bool) {
	l.space()
	if l.i >= len(l.s) {
		return "", false
	}
	if l.s[l.i] == '`' {
		var b strings.Builder
		for j := l.i + 1; j < len(l.s); j++ {
			if l.s[j] != '`' {
				b.WriteByte(l.s[j])
				continue
			}
			if j+1 < len(l.s) && l.s[j+1] == '`' {
				b.WriteByte('`')
				j++
				continue
			}
			l.i = j + 1
			return b.String(), b.Len() > 0
		}
		return "", false
	}
	j := l.i
	for j < len(l.s) && (isWordByte(l.s[j]) || l.s[j] == '$' || l.s[j] >= 0x80) {
		j++
	}
	if j == l.i {
		return "", false
	}
	id := l.s[l.i:j]
	l.i = j
	return id, true
}
