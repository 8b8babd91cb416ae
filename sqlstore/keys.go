package sqlstore

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/strata-db/strata/sqlstore/codec"
)

// The key layout. All SQL data lives in one engine keyspace; the first byte
// says what a key holds. Part of the on-disk format; never change a value.
//
//	catalog     0x01 kind name-part*                 -> record (catalog.go)
//	row         0x02 uvarint(tableID) uvarint(1) pk  -> codec row value
//	non-unique  0x02 uvarint(tableID) uvarint(indexID) cols pk -> empty
//	unique      0x02 uvarint(tableID) uvarint(indexID) cols    -> pk
//
// tableID and indexID are codec.AppendUvarintAscending varints, so a table's
// keys, and each index's keys within it, are contiguous and ordered by ID.
// pk is the memcomparable encoding (codec.AppendKey, ascending) of the
// primary key columns in key order; for a keyless table it is a hidden row
// ID, and index 0 is a hash index over the rows (editor.go). cols is the memcomparable encoding of the index
// columns, each cut to its prefix length first. A unique index entry whose
// columns hold a NULL takes the non-unique form (NULLs never collide), so a
// reader tells the two forms apart by whether bytes follow the columns.
//
// Name parts of catalog keys are lower-cased (names are case-insensitive)
// and written with codec.AppendKey as binary strings: escaped and
// terminated, so a database's tables are exactly the keys that start with
// its part.
const (
	prefixCatalog byte = 0x01
	prefixData    byte = 0x02
)

// Catalog kinds: the byte after prefixCatalog. Part of the on-disk format.
const (
	kindMeta      byte = 'M' // store metadata: format version, ID allocators
	kindDatabase  byte = 'D' // database name -> databaseRecord
	kindTable     byte = 'T' // database, table -> tableRecord
	kindView      byte = 'V' // database, view -> viewRecord
	kindTrigger   byte = 'G' // database, trigger -> triggerRecord
	kindProcedure byte = 'P' // database, procedure -> procedureRecord
	kindEvent     byte = 'E' // database, event -> eventRecord
	kindAutoInc   byte = 'A' // uvarint(tableID) -> 8-byte big-endian next value
)

// primaryIndexID is the index ID of every table's primary (row) index;
// secondary indexes get IDs from 2 up, never reused within a table.
const primaryIndexID = 1

// Meta key names (after prefixCatalog kindMeta).
const (
	metaFormat  = "format"  // the store format version, one byte
	metaTableID = "tableid" // 8-byte big-endian high-water mark of table IDs
	metaRowID   = "rowid"   // 8-byte big-endian high-water mark of hidden row IDs
)

// storeFormat is the version of the key layout and record formats; Open
// refuses a store written with another.
const storeFormat byte = 1

// appendNamePart appends one case-insensitive name part of a catalog key.
func appendNamePart(dst []byte, name string) []byte {
	out, err := codec.AppendKey(dst, types.LongBlob, []byte(strings.ToLower(name)), codec.Asc)
	if err != nil {
		// Binary strings always encode; keep the key well-formed regardless.
		return append(dst, strings.ToLower(name)...)
	}
	return out
}

// catalogKey returns the catalog key of kind with the given name parts.
func catalogKey(kind byte, parts ...string) []byte {
	k := make([]byte, 0, 32)
	k = append(k, prefixCatalog, kind)
	for _, p := range parts {
		k = appendNamePart(k, p)
	}
	return k
}

// metaKey returns the key of a store metadata entry.
func metaKey(name string) []byte {
	return append([]byte{prefixCatalog, kindMeta}, name...)
}

// autoIncKey returns the key of a table's persisted auto-increment counter.
func autoIncKey(tableID uint64) []byte {
	return codec.AppendUvarintAscending([]byte{prefixCatalog, kindAutoInc}, tableID)
}

// appendTablePrefix appends the prefix of every key of table id.
func appendTablePrefix(dst []byte, id uint64) []byte {
	dst = append(dst, prefixData)
	return codec.AppendUvarintAscending(dst, id)
}

// appendIndexPrefix appends the prefix of every key of one index of table id.
func appendIndexPrefix(dst []byte, id uint64, indexID uint32) []byte {
	dst = appendTablePrefix(dst, id)
	return codec.AppendUvarintAscending(dst, uint64(indexID))
}

// tableSpan returns the key range [start, end) holding all of a table's keys.
func tableSpan(id uint64) (start, end []byte) {
	start = appendTablePrefix(nil, id)
	return start, codec.PrefixSuccessor(nil, start)
}

// prefixEnd returns the exclusive end of the keys starting with prefix.
func prefixEnd(prefix []byte) []byte {
	return codec.PrefixSuccessor(nil, prefix)
}

// Row and index keys of a table. The appenders take the caller's buffer and
// return it extended, so that an editor reuses one buffer per key kind.

// appendPK appends the memcomparable primary key of row (a full row of
// d.schema). For a keyless table there is no key in the row; callers use
// the hidden key instead (keyless.go).
func (d *tableDef) appendPK(dst []byte, row []any) ([]byte, error) {
	for _, o := range d.pkOrds {
		var err error
		if dst, err = codec.AppendKey(dst, d.schema[o].Type, row[o], codec.Asc); err != nil {
			return dst, fmt.Errorf("sqlstore: primary key column %s: %w", d.schema[o].Name, err)
		}
	}
	return dst, nil
}

// appendIndexCols appends the encoded columns of index ix for row, each cut
// to its prefix length, and reports whether one of them is NULL.
func (d *tableDef) appendIndexCols(dst []byte, ix *indexDef, row []any) ([]byte, bool, error) {
	hasNull := false
	for i, o := range ix.cols {
		v := row[o]
		if v == nil {
			hasNull = true
		} else if ix.prefix != nil && ix.prefix[i] > 0 {
			v = prefixOf(v, int(ix.prefix[i]))
		}
		var err error
		if dst, err = codec.AppendKey(dst, d.schema[o].Type, v, codec.Asc); err != nil {
			return dst, false, fmt.Errorf("sqlstore: index %s column %s: %w", ix.name, d.schema[o].Name, err)
		}
	}
	return dst, hasNull, nil
}

// prefixOf cuts a string to n characters or a byte string to n bytes, as
// MySQL's index prefixes do.
func prefixOf(v any, n int) any {
	switch s := v.(type) {
	case string:
		if len(s) <= n {
			return s
		}
		i := 0
		for pos := range s {
			if i == n {
				return s[:pos]
			}
			i++
		}
		return s
	case []byte:
		if len(s) > n {
			return s[:n]
		}
	}
	return v
}

// indexEntry appends to dst the key of row's entry in secondary index ix,
// given the row's primary key suffix pk, and returns it with the entry's
// value: pk for the unique form, empty for the non-unique form.
func (d *tableDef) indexEntry(dst []byte, ix *indexDef, row []any, pk []byte) (key, value []byte, err error) {
	dst = appendIndexPrefix(dst, d.id, ix.id)
	dst, hasNull, err := d.appendIndexCols(dst, ix, row)
	if err != nil {
		return dst, nil, err
	}
	if ix.unique && !hasNull {
		return dst, pk, nil
	}
	return append(dst, pk...), nil, nil
}

// splitIndexKey returns the primary key suffix of a secondary index entry
// (the bytes after the index columns of key, which starts after the index
// prefix), or value for the unique form.
func (d *tableDef) splitIndexKey(ix *indexDef, suffix, value []byte) ([]byte, error) {
	rest := suffix
	for _, o := range ix.cols {
		var err error
		if rest, err = codec.SkipKey(rest, d.schema[o].Type, codec.Asc); err != nil {
			return nil, fmt.Errorf("sqlstore: index %s entry: %w", ix.name, err)
		}
	}
	return primaryKeyOf(rest, value), nil
}

// primaryKeyOf returns the primary key suffix of a secondary index entry,
// given the bytes of its key after the index columns (rest) and its value:
// the unique form keeps the key in the value.
func primaryKeyOf(rest, value []byte) []byte {
	if len(rest) == 0 {
		return value
	}
	return rest
}
