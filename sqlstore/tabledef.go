package sqlstore

import (
	"fmt"
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/strata-db/strata/sqlstore/codec"
)

// tableDef is a decoded table record: the schema and indexes in the form the
// read and write paths use. It is immutable once built and shared by every
// session that reads the same record bytes (defCache), so it holds no
// per-session or per-transaction state.
type tableDef struct {
	db  string
	rec *tableRecord // as stored; never modified (DDL clones it)

	id        uint64
	name      string
	schema    sql.Schema
	storage   sql.Schema // schema rows are encoded with (rowcodec.go)
	spatial   []int      // ordinals of spatial columns
	jsonCols  []int      // ordinals of JSON columns
	pkOrds    []int
	keyless   bool
	collation sql.CollationID

	primary    *indexDef   // the row index; no columns for a keyless table
	secondary  []*indexDef // in record order
	checks     []sql.CheckDefinition
	autoIncCol int // ordinal of the AUTO_INCREMENT column, or -1
	// record is the range of the table's catalog record, which a writing
	// transaction guards (txn.guardDef).
	record keyRange
	// raw is the record's bytes the definition was decoded from, set by
	// defCache (Database.readTableAgain).
	raw     string
	hasJSON bool
	// stale is set when the table's keys or values are of an older codec
	// key format than the one this version writes and differ from it (a
	// PAD SPACE string its primary key or an index keys, any CHAR column),
	// or of a newer one: it is refused until it is rebuilt (keyformat.go).
	stale bool
}

// indexDef is one index of a table.
type indexDef struct {
	id      uint32
	name    string // "PRIMARY" for the row index
	primary bool
	unique  bool
	cols    []int    // column ordinals in key order
	ext     []int    // cols, then the primary key columns not among them
	prefix  []uint16 // prefix lengths per column (0 = whole value); nil when none
	comment string
	// inKey[o], for a secondary index, is set when the index's entries
	// hold column o's value exactly: o is one of ext, its key decodes to
	// the stored value (codec.KeyRoundTrips), and the index cuts no
	// column to a prefix. A query that needs only such columns reads
	// its rows from the entries (covering.go).
	inKey []bool
}

// defCache maps (database, record bytes) to decoded definitions, so that the
// catalog read at every table reference costs one engine read and a map
// lookup, not a parse. Records are small and change only by DDL; the cache
// is cleared when it grows past defCacheMax entries.
type defCache struct {
	mu  sync.Mutex
	m   map[string]*tableDef
	buf []byte // a lookup's key, reused under mu
}

const defCacheMax = 4096

func (c *defCache) get(db string, raw []byte) (*tableDef, error) {
	c.mu.Lock()
	c.buf = append(append(append(c.buf[:0], db...), 0), raw...)
	d, ok := c.m[string(c.buf)]
	c.mu.Unlock()
	if ok {
		return d, nil
	}
	key := db + "\x00" + string(raw)
	var rec tableRecord
	if err := decodeRecord(raw, &rec, "table in "+db); err != nil {
		return nil, err
	}
	d, err := newTableDef(db, &rec)
	if err != nil {
		return nil, err
	}
	d.raw = key[len(db)+1:]
	c.mu.Lock()
	if c.m == nil || len(c.m) >= defCacheMax {
		c.m = make(map[string]*tableDef)
	}
	c.m[key] = d
	c.mu.Unlock()
	return d, nil
}

// newTableDef builds the definition of rec, a table of database db.
func newTableDef(db string, rec *tableRecord) (*tableDef, error) {
	coll, err := parseCollation(rec.Collation)
	if err != nil {
		return nil, err
	}
	d := &tableDef{
		db: db, rec: rec, id: rec.ID, name: rec.Name,
		collation: coll, autoIncCol: -1,
		pkOrds: append([]int(nil), rec.PK...),
	}
	key := catalogKey(kindTable, db, rec.Name)
	d.record = keyRange{start: key, end: append(key[:len(key):len(key)], 0)}
	inPK := make(map[int]bool, len(rec.PK))
	for _, o := range rec.PK {
		if o < 0 || o >= len(rec.Columns) {
			return nil, fmt.Errorf("%w: table %s: primary key ordinal %d of %d columns", ErrCorruptCatalog, rec.Name, o, len(rec.Columns))
		}
		inPK[o] = true
	}
	d.schema = make(sql.Schema, len(rec.Columns))
	for i, cr := range rec.Columns {
		typ, err := parseType(cr.Type)
		if err != nil {
			return nil, fmt.Errorf("%w: table %s column %s: type %q: %v", ErrCorruptCatalog, rec.Name, cr.Name, cr.Type, err)
		}
		col := &sql.Column{
			Name:           cr.Name,
			Type:           typ,
			Nullable:       cr.Nullable,
			AutoIncrement:  cr.AutoIncrement,
			Source:         rec.Name,
			DatabaseSource: db,
			PrimaryKey:     inPK[i],
			Comment:        cr.Comment,
			Extra:          cr.Extra,
			Virtual:        cr.Virtual,
		}
		if cr.Default != nil {
			col.Default = sql.NewUnresolvedColumnDefaultValue(*cr.Default)
		}
		if cr.OnUpdate != nil {
			col.OnUpdate = sql.NewUnresolvedColumnDefaultValue(*cr.OnUpdate)
		}
		if cr.Generated != nil {
			col.Generated = sql.NewUnresolvedColumnDefaultValue(*cr.Generated)
			if col.Extra == "" {
				// What SHOW COLUMNS and information_schema.COLUMNS say of a
				// generated column in MySQL; dump tools leave such columns
				// out of their INSERTs by it.
				col.Extra = "STORED GENERATED"
				if col.Virtual {
					col.Extra = "VIRTUAL GENERATED"
				}
			}
		}
		if cr.AutoIncrement && d.autoIncCol < 0 {
			d.autoIncCol = i
		}
		if types.IsJSON(typ) {
			d.hasJSON = true
			d.jsonCols = append(d.jsonCols, i)
		}
		d.schema[i] = col
	}
	d.storage, d.spatial = storageSchema(d.schema)
	d.keyless = len(rec.PK) == 0
	d.primary = &indexDef{id: primaryIndexID, name: "PRIMARY", primary: true, unique: true, cols: d.pkOrds}
	for _, ir := range rec.Indexes {
		if ir.Vector {
			continue
		}
		ix := &indexDef{id: ir.ID, name: ir.Name, unique: ir.Unique, comment: ir.Comment}
		for _, ic := range ir.Columns {
			o := rec.columnIndex(ic.Name)
			if o < 0 {
				return nil, fmt.Errorf("%w: table %s index %s: no column %s", ErrCorruptCatalog, rec.Name, ir.Name, ic.Name)
			}
			ix.cols = append(ix.cols, o)
			if ic.Length != 0 && ix.prefix == nil {
				ix.prefix = make([]uint16, len(ir.Columns))
			}
		}
		if ix.prefix != nil {
			for j, ic := range ir.Columns {
				ix.prefix[j] = ic.Length
			}
		}
		d.secondary = append(d.secondary, ix)
	}
	d.primary.ext = d.pkOrds
	for _, ix := range d.secondary {
		ix.ext = append([]int(nil), ix.cols...)
		for _, o := range d.pkOrds {
			if !containsInt(ix.cols, o) {
				ix.ext = append(ix.ext, o)
			}
		}
		ix.inKey = make([]bool, len(d.schema))
		if ix.prefix == nil {
			for _, o := range ix.ext {
				ix.inKey[o] = codec.KeyRoundTrips(d.schema[o].Type)
			}
		}
	}
	for _, c := range rec.Checks {
		d.checks = append(d.checks, sql.CheckDefinition{Name: c.Name, CheckExpression: c.Expr, Enforced: c.Enforced})
	}
	d.stale = staleKeys(rec.KeyFormat, d)
	return d, nil
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// pkSchema returns the table's schema with its primary key ordinals.
func (d *tableDef) pkSchema() sql.PrimaryKeySchema {
	return sql.NewPrimaryKeySchema(d.schema, d.pkOrds...)
}

// index returns the named index (PRIMARY included), or nil.
func (d *tableDef) index(name string) *indexDef {
	if strings.EqualFold(name, "PRIMARY") && !d.keyless {
		return d.primary
	}
	for _, ix := range d.secondary {
		if strings.EqualFold(ix.name, name) {
			return ix
		}
	}
	return nil
}

// uniqueIndexes returns the unique secondary indexes.
func (d *tableDef) uniqueIndexes() []*indexDef {
	var out []*indexDef
	for _, ix := range d.secondary {
		if ix.unique {
			out = append(out, ix)
		}
	}
	return out
}

// recordOfSchema builds a table record from a GMS schema.
func recordOfSchema(id uint64, name string, sch sql.PrimaryKeySchema, coll sql.CollationID, comment string) (*tableRecord, error) {
	rec := &tableRecord{
		Format: recordFormat, ID: id, Name: name,
		Collation: collationName(coll), Comment: comment,
		NextIndexID: primaryIndexID + 1, KeyFormat: codec.KeyFormat,
	}
	for _, c := range sch.Schema {
		cr, err := columnRecordOf(c)
		if err != nil {
			return nil, err
		}
		rec.Columns = append(rec.Columns, cr)
	}
	rec.PK = append([]int(nil), sch.PkOrdinals...)
	if len(rec.PK) == 0 {
		// Callers sometimes leave PkOrdinals empty and mark columns instead.
		for i, c := range sch.Schema {
			if c.PrimaryKey {
				rec.PK = append(rec.PK, i)
			}
		}
	}
	for _, o := range rec.PK {
		rec.Columns[o].Nullable = false
	}
	return rec, nil
}
