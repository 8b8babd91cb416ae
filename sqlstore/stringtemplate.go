package sqlstore

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// String keys of plan templates. A PreparedSelect whose predicate is one
// equality, c = ?, and whose argument is a string, keeps a template when c
// is a character column (CHAR, VARCHAR, TEXT: not binary, ENUM or SET)
// that begins an index: the plan GMS made for one string, with the lookup
// of the next execution built from its own string as GMS's index builder
// builds it (the string converted to the column's type, one closed range
// of that value). GMS's choice of plan depends on the string only through
// that conversion: a string the column's type refuses (longer than the
// column, not in its character set) makes no range and a scan, and is
// left to GMS here too. Comparison and conversion follow the literal's
// collation, the connection's: the template is used only under the
// collation it was learned with. A LIKE is no such predicate: its range
// is planned from the pattern. A PreparedWrite's UPDATE or DELETE by
// WHERE c = ? keeps its template for a string argument likewise, when c
// is a character column that is the whole of a unique index
// (writetemplate.go).

// stringPoint returns the argument of a predicate that is one equality
// with a string argument.
func (p *PreparedSelect) stringPoint(args map[string]any) (string, bool) {
	arg, ok := p.equality()
	if !ok {
		return "", false
	}
	s, ok := args[arg].(string)
	return s, ok
}

// stringArgs reports whether the plan cache may run texts of p's shape
// with a string as the argument: p is a single equality, and no execution
// found its column not to be a character column.
func (p *PreparedSelect) stringArgs() bool {
	_, ok := p.equality()
	return ok && !p.notText
}

// equality returns the placeholder of a predicate that is one equality,
// c = ? (a >= and a <= of one argument), false for any other.
func (p *PreparedSelect) equality() (arg string, ok bool) {
	if len(p.terms) != 1 || len(p.terms[0]) != 2 || p.nargs != 1 {
		return "", false
	}
	lo, hi := p.terms[0][0], p.terms[0][1]
	if lo.op != ">=" || hi.op != "<=" || lo.arg != hi.arg {
		return "", false
	}
	return lo.arg, true
}

// stringLookup returns the lookup of c = s on template t; false when the
// column's type refuses s (GMS then plans no lookup on it), or s ends in a
// space, which the comparison under a PAD SPACE collation drops before
// GMS plans (mysqlcompat's trimPaddedLiterals): a plan made from another
// literal than the text's.
func (p *PreparedSelect) stringLookup(ctx *sql.Context, t *planTemplate, s string) (sql.IndexLookup, bool) {
	ranges, ok := stringRanges(ctx, t.typ, s)
	if !ok {
		return sql.IndexLookup{}, false
	}
	return sql.IndexLookup{Index: t.index, Ranges: ranges, IsReverse: t.reverse}, true
}

// stringRanges returns the range GMS's index builder makes of c = s for a
// character key of promoted type typ: false where stringLookup says.
// Write templates take it too (writetemplate.go).
func stringRanges(ctx *sql.Context, typ sql.Type, s string) (sql.MySQLRangeCollection, bool) {
	k, ok := stringKey(ctx, typ, s)
	if !ok {
		return nil, false
	}
	return sql.MySQLRangeCollection{{sql.ClosedRangeColumnExpr(k, k, typ)}}, true
}

// stringKey returns s as the key of stringRanges' range, false where
// stringLookup says.
func stringKey(ctx *sql.Context, typ sql.Type, s string) (any, bool) {
	if len(s) > 0 && s[len(s)-1] == ' ' {
		return nil, false
	}
	return convertKey(ctx, typ, s)
}

// textKey reports whether typ, the type of a template's lookup column, is
// a character type whose string keys a template may take.
func textKey(typ sql.Type) bool {
	return types.IsTextOnly(typ)
}

// textColumn reports whether the predicate's column in the table plan n
// reads is a character column, and remembers when it is not.
func (p *PreparedSelect) textColumn(n sql.Node) bool {
	if !textColumnOf(n, p.col) {
		p.notText = true
		return false
	}
	return true
}

// textColumnOf reports whether column col of the first table plan n reads
// is a character column.
func textColumnOf(n sql.Node, col string) bool {
	var tbl *Table
	transform.Inspect(n, func(c sql.Node) bool {
		if tn, ok := c.(sql.TableNode); ok && tbl == nil {
			tbl, _ = tn.UnderlyingTable().(*Table)
		}
		return tbl == nil
	})
	o := -1
	if tbl != nil {
		o = tbl.def.schema.IndexOfColName(col)
	}
	return o >= 0 && textKey(tbl.def.schema[o].Type)
}

// convertKey returns s converted to typ, the promoted (TEXT) type of a
// character key, as typ.Convert returns it: false when Convert fails.
// A valid UTF-8 string no longer than the type converts to itself (GMS's
// ConvertToBytes copies it, and checks the character set only of invalid
// UTF-8); that is answered without Convert's four allocations.
func convertKey(ctx *sql.Context, typ sql.Type, s string) (any, bool) {
	if sameString(typ, s) { // insertdirect.go
		return s, true
	}
	k, _, err := typ.Convert(ctx, s)
	return k, err == nil && k != nil
}
