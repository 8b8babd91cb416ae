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

// coveredColumns reports whether a lookup of secondary index ix over spans
// needs only what ix's entries hold, and returns the set (by ordinal) of
// the columns such a read decodes: the projection's and those of the
// residual checks; nil when there are none (COUNT(*)), and entries need no
// decoding. A table with a virtual column is never projected
// (WithProjections), so never covered. ix must not be the primary index.
func (t *Table) coveredColumns(ix *indexDef, spans []span) (need []bool, covered bool) {
	if t.proj == nil {
		return nil, false
	}
	mark := func(o int) bool {
		if !ix.inKey[o] {
			return false
		}
		if need == nil {
			need = make([]bool, len(t.def.schema))
		}
		need[o] = true
		return true
	}
	for _, o := range t.proj {
		if !mark(o) {
			return nil, false
		}
	}
	for i := range spans {
		for _, r := range spans[i].residual {
			if !mark(ix.ext[r]) {
				return nil, false
			}
		}
	}
	return need, true
}

// decodeIndexEntry decodes the columns of need that an entry of ix holds
// into full, a row of d.schema (its other columns are left as they are).
// suffix is the entry's key after the index prefix, value its value.
func (d *tableDef) decodeIndexEntry(ix *indexDef, need []bool, suffix, value []byte, full sql.Row) error {
	rest, err := d.decodeKeyCols(ix, ix.cols, need, suffix, full)
	if err != nil {
		return err
	}
	for _, o := range d.pkOrds {
		if need[o] {
			_, err = d.decodeKeyCols(ix, d.pkOrds, need, primaryKeyOf(rest, value), full)
			return err
		}
	}
	return nil
}

// decodeKeyCols decodes the keys of columns cols from the front of b into
// full, skipping those not in need, and returns what follows.
func (d *tableDef) decodeKeyCols(ix *indexDef, cols []int, need []bool, b []byte, full sql.Row) ([]byte, error) {
	for _, o := range cols {
		var err error
		if need[o] {
			b, full[o], err = codec.DecodeKey(b, d.schema[o].Type, codec.Asc)
		} else {
			b, err = codec.SkipKey(b, d.schema[o].Type, codec.Asc)
		}
		if err != nil {
			return b, fmt.Errorf("sqlstore: table %s: index %s entry: column %s: %w", d.name, ix.name, d.schema[o].Name, err)
		}
	}
	return b, nil
}

// decodeCovered returns the row of an entry of a covering index (suffix
// and value as for decodeIndexEntry) in the table's projection, after the
// span's residual checks; false when a check fails. need is
// coveredColumns; scratch holds the decoded columns between calls.
func (t *Table) decodeCovered(ctx *sql.Context, suffix, value []byte, sp *span, ix *indexDef, need []bool, scratch *sql.Row) (sql.Row, bool, error) {
	if need == nil {
		return sql.Row{}, true, nil
	}
	d := t.def
	full := *scratch
	if len(full) != len(d.schema) {
		full = make(sql.Row, len(d.schema))
		*scratch = full
	}
	if err := d.decodeIndexEntry(ix, need, suffix, value, full); err != nil {
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
