package sqlstore

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/strata-db/strata/sqlstore/codec"
)

// Covering indexes. An entry of a secondary index holds the index's
// columns and the row's primary key (keys.go, indexEntry). A lookup whose
// query needs no other column (the table's projection, and the columns of
// the spans' residual checks) reads its rows from the entries and fetches
// nothing by primary key: SELECT id FROM t WHERE k IN (...), or
// SELECT COUNT(*) FROM t WHERE k BETWEEN ... AND ..., whose projection is
// empty. Only columns whose keys give back their values exactly qualify
// (indexDef.inKey): no strings, floats or prefix-cut columns.

// covers reports whether a lookup of ix over spans needs only what ix's
// entries hold.
func (t *Table) covers(ix *indexDef, spans []span) bool {
	if ix.primary {
		return true
	}
	if t.proj == nil {
		return false
	}
	for _, o := range t.proj {
		if !ix.inKey[o] {
			return false
		}
	}
	for i := range spans {
		for _, r := range spans[i].residual {
			if !ix.inKey[ix.ext[r]] {
				return false
			}
		}
	}
	return true
}

// decodeIndexEntry decodes the columns an entry of ix holds into full, a
// row of d.schema (its other columns are left as they are). suffix is the
// entry's key after the index prefix, value its value.
func (d *tableDef) decodeIndexEntry(ix *indexDef, suffix, value []byte, full sql.Row) error {
	rest, err := d.decodeKeyCols(ix, ix.cols, suffix, full)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		rest = value // the unique form: the primary key is the value
	}
	_, err = d.decodeKeyCols(ix, d.pkOrds, rest, full)
	return err
}

// decodeKeyCols decodes the keys of columns cols from the front of b into
// full, skipping those ix does not hold exactly, and returns what follows.
func (d *tableDef) decodeKeyCols(ix *indexDef, cols []int, b []byte, full sql.Row) ([]byte, error) {
	for _, o := range cols {
		var err error
		if !ix.inKey[o] {
			b, err = codec.SkipKey(b, d.schema[o].Type, codec.Asc)
		} else {
			b, full[o], err = codec.DecodeKey(b, d.schema[o].Type, codec.Asc)
		}
		if err != nil {
			return b, fmt.Errorf("sqlstore: table %s: index %s entry: column %s: %w", d.name, ix.name, d.schema[o].Name, err)
		}
	}
	return b, nil
}

// decodeCovered returns the row of an entry of a covering index (suffix
// and value as for decodeIndexEntry) in the table's projection, after the
// span's residual checks; false when a check fails. scratch holds the
// decoded columns between calls.
func (t *Table) decodeCovered(ctx *sql.Context, suffix, value []byte, sp *span, ix *indexDef, scratch *sql.Row) (sql.Row, bool, error) {
	d := t.def
	full := *scratch
	if len(full) != len(d.schema) {
		full = make(sql.Row, len(d.schema))
		*scratch = full
	}
	if err := d.decodeIndexEntry(ix, suffix, value, full); err != nil {
		return nil, false, err
	}
	if sp != nil && len(sp.residual) > 0 {
		if ok, err := sp.matches(ctx, d, ix, full); err != nil || !ok {
			return nil, false, err
		}
	}
	out := make(sql.Row, len(t.proj))
	for i, o := range t.proj {
		out[i] = full[o]
	}
	return out, true, nil
}
