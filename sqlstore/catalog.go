package sqlstore

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Catalog records.
//
// Every catalog entry (keys.go) holds one JSON object with a "format" field,
// recordFormat for everything written by this version. JSON keeps the records
// readable with a hex dump and lets fields be added without a new format:
// decoders ignore unknown fields, and absent fields take their zero value.
// A record with another format is ErrCorruptCatalog.
//
// A table record stores what GMS needs to rebuild the table's sql.Schema:
// each column's type as SQL text (sql.Type.String(), parsed back with
// planbuilder.ParseColumnTypeString), its default, ON UPDATE and generated
// expressions as SQL text (handed back to GMS as unresolved defaults, which
// its planner resolves), nullability, auto-increment, comment and extra; the
// primary key as column ordinals in key order (empty: keyless); the
// secondary indexes with their IDs, column names, prefix lengths and
// uniqueness; CHECK constraints as SQL text; the table collation and
// comment; the next index ID to hand out; and the format of the table's
// keys (keyFormat: codec.KeyFormat for every table this version creates or
// rebuilds; absent in records written before it existed, which is
// codec.KeyFormatUnpadded; keyformat.go).
//
// Records change only through a transaction's batch, so that the several
// backend calls of one DDL statement (CREATE TABLE, then CreateIndex for
// each index, then CreateCheck ...) commit together or not at all.
const recordFormat = 1

type databaseRecord struct {
	Format    int    `json:"format"`
	Name      string `json:"name"`
	Collation string `json:"collation,omitempty"`
}

type tableRecord struct {
	Format    int            `json:"format"`
	ID        uint64         `json:"id"`
	Name      string         `json:"name"`
	Collation string         `json:"collation,omitempty"`
	Comment   string         `json:"comment,omitempty"`
	Columns   []columnRecord `json:"columns"`
	PK        []int          `json:"pk,omitempty"`
	Indexes   []indexRecord  `json:"indexes,omitempty"`
	Checks    []checkRecord  `json:"checks,omitempty"`
	// ForeignKeys are the foreign keys this table declares (as child), in
	// GMS's own form; GMS enforces them.
	ForeignKeys []sql.ForeignKeyConstraint `json:"foreignKeys,omitempty"`
	NextIndexID uint32                     `json:"nextIndexID"`
	// KeyFormat is the codec key format the table's primary and secondary
	// keys were written in. It covers the indexes too: an index is added
	// to a table in the table's format (a table that needs a rebuild takes
	// no index).
	KeyFormat int `json:"keyFormat,omitempty"`
}

type columnRecord struct {
	Name          string  `json:"name"`
	Type          string  `json:"type"`
	Nullable      bool    `json:"nullable,omitempty"`
	Default       *string `json:"default,omitempty"`
	OnUpdate      *string `json:"onUpdate,omitempty"`
	Generated     *string `json:"generated,omitempty"`
	Virtual       bool    `json:"virtual,omitempty"`
	AutoIncrement bool    `json:"autoIncrement,omitempty"`
	Comment       string  `json:"comment,omitempty"`
	Extra         string  `json:"extra,omitempty"`
}

type indexRecord struct {
	ID      uint32              `json:"id"`
	Name    string              `json:"name"`
	Columns []indexColumnRecord `json:"columns"`
	Unique  bool                `json:"unique,omitempty"`
	Comment string              `json:"comment,omitempty"`
	// Vector marks a VECTOR index: declared only. It keeps no entries and
	// is not offered to the planner, so queries scan and sort instead.
	Vector bool `json:"vector,omitempty"`
}

type indexColumnRecord struct {
	Name   string `json:"name"`
	Length uint16 `json:"length,omitempty"`
}

type checkRecord struct {
	Name     string `json:"name"`
	Expr     string `json:"expr"`
	Enforced bool   `json:"enforced"`
}

// definitionRecord holds a view, trigger, stored procedure or event: GMS
// stores and parses their SQL text itself; Def is GMS's own struct.
type definitionRecord[T any] struct {
	Format int `json:"format"`
	// Seq orders triggers by creation (they fire in that order).
	Seq uint64 `json:"seq,omitempty"`
	Def T      `json:"def"`
}

func encodeRecord(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: encoding catalog record: %w", err)
	}
	return b, nil
}

// decodeRecord decodes a catalog record of any kind into v, which must have a
// Format field; what names the entry in errors.
func decodeRecord(b []byte, v any, what string) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCorruptCatalog, what, err)
	}
	var f struct {
		Format int `json:"format"`
	}
	_ = json.Unmarshal(b, &f)
	if f.Format != recordFormat {
		return fmt.Errorf("%w: %s: format %d, want %d", ErrCorruptCatalog, what, f.Format, recordFormat)
	}
	return nil
}

// clone returns a deep copy of the record, for copy-on-write DDL.
func (r *tableRecord) clone() *tableRecord {
	c := *r
	c.Columns = append([]columnRecord(nil), r.Columns...)
	c.PK = append([]int(nil), r.PK...)
	c.Indexes = make([]indexRecord, len(r.Indexes))
	for i, ix := range r.Indexes {
		ix.Columns = append([]indexColumnRecord(nil), ix.Columns...)
		c.Indexes[i] = ix
	}
	c.Checks = append([]checkRecord(nil), r.Checks...)
	c.ForeignKeys = make([]sql.ForeignKeyConstraint, len(r.ForeignKeys))
	for i, fk := range r.ForeignKeys {
		fk.Columns = append([]string(nil), fk.Columns...)
		fk.ParentColumns = append([]string(nil), fk.ParentColumns...)
		c.ForeignKeys[i] = fk
	}
	return &c
}

// columnIndex returns the ordinal of the named column, or -1.
func (r *tableRecord) columnIndex(name string) int {
	for i, c := range r.Columns {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// indexPos returns the position in Indexes of the named index, or -1.
func (r *tableRecord) indexPos(name string) int {
	for i, ix := range r.Indexes {
		if strings.EqualFold(ix.Name, name) {
			return i
		}
	}
	return -1
}

// columnRecordOf describes a GMS column for the catalog.
func columnRecordOf(c *sql.Column) (columnRecord, error) {
	rec := columnRecord{
		Name:          c.Name,
		Type:          typeText(c.Type),
		Nullable:      c.Nullable,
		Default:       defaultText(c.Default),
		OnUpdate:      defaultText(c.OnUpdate),
		Generated:     defaultText(c.Generated),
		Virtual:       c.Virtual,
		AutoIncrement: c.AutoIncrement,
		Comment:       c.Comment,
		Extra:         c.Extra,
	}
	if _, err := parseType(rec.Type); err != nil {
		return columnRecord{}, fmt.Errorf("sqlstore: column %s: type %q does not parse back: %w", c.Name, rec.Type, err)
	}
	return rec, nil
}

// typeText returns a column type as SQL text that parses back to the same
// type: collated types always name their character set and collation
// (sql.Type.String leaves out the defaults, which would parse back as
// unspecified).
func typeText(t sql.Type) string {
	if tc, ok := t.(sql.TypeWithCollation); ok {
		return tc.StringWithTableCollation(sql.Collation_Unspecified)
	}
	if sc, ok := t.(sql.SpatialColumnType); ok {
		if srid, defined := sc.GetSpatialTypeSRID(); defined {
			return fmt.Sprintf("%s SRID %d", t.String(), srid)
		}
	}
	return t.String()
}

// defaultText returns the SQL text of a default, ON UPDATE or generated
// expression, as GMS's planner parses it back, or nil for none.
func defaultText(d *sql.ColumnDefaultValue) *string {
	if d == nil || d.Expr == nil {
		return nil
	}
	if u, ok := d.Expr.(*sql.UnresolvedColumnDefault); ok {
		s := u.ExprString
		return &s
	}
	if u, ok := d.Expr.(sql.UnresolvedColumnDefault); ok {
		s := u.ExprString
		return &s
	}
	if lit, ok := d.Expr.(*expression.Literal); ok && d.Literal {
		if s, ok := literalText(lit.Value()); ok {
			return &s
		}
	}
	s := d.String()
	return &s
}

// literalText writes the literal values whose GMS String() is not SQL.
func literalText(v any) (string, bool) {
	switch v := v.(type) {
	case time.Time:
		return "'" + v.Format("2006-01-02 15:04:05.999999") + "'", true
	case types.Timespan:
		return "'" + v.String() + "'", true
	case bool:
		if v {
			return "1", true
		}
		return "0", true
	}
	return "", false
}

// typeCache maps type strings to parsed types; sql.Type values are
// immutable, so one parse serves every table.
var typeCache sync.Map // string -> sql.Type

func parseType(s string) (sql.Type, error) {
	if t, ok := typeCache.Load(s); ok {
		return t.(sql.Type), nil
	}
	t, err := planbuilder.ParseColumnTypeString(s)
	if err != nil {
		return nil, err
	}
	typeCache.Store(s, t)
	return t, nil
}

// collationName returns the name stored for a collation.
func collationName(c sql.CollationID) string {
	if c == sql.Collation_Unspecified {
		return ""
	}
	return c.Name()
}

// parseCollation returns the collation named name; empty means the default.
func parseCollation(name string) (sql.CollationID, error) {
	if name == "" {
		return sql.Collation_Default, nil
	}
	c, err := sql.ParseCollation("", name, false)
	if err != nil {
		return sql.Collation_Default, fmt.Errorf("%w: collation %q: %v", ErrCorruptCatalog, name, err)
	}
	return c, nil
}
