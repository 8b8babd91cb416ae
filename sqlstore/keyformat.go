package sqlstore

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/strata-db/strata/sqlstore/codec"
	"github.com/strata-db/strata/storage"
)

// Key formats of tables
//
// A table's keys are written in one codec key format (codec.KeyFormat),
// which its record names (tableRecord.KeyFormat; absent in records written
// before the field existed: codec.KeyFormatUnpadded). Strings under PAD
// SPACE collations and CHAR values are keyed, and CHAR values stored,
// otherwise in the current format than in the first one, so a table
// written in the first format whose primary key or an index keys such a
// column, or that holds a CHAR column at all, is stale: a lookup built now
// misses its rows, a unique check lets duplicates in, and its stored CHAR
// values keep trailing spaces. Reading such keys would give wrong results
// without an error. A table of a later format than this version writes is
// stale too: its keys may be of a kind this version does not know.
//
// So a stale table is refused. Database.GetTableInsensitive hands GMS a
// staleTable for it: its definition, so that SHOW CREATE TABLE, DESCRIBE,
// information_schema, DROP TABLE and RENAME TABLE work, and so do DROP
// INDEX and DROP PRIMARY KEY, which read no key (the way out of a rebuild
// that fails on rows colliding under the current comparison); and no
// access to its rows otherwise: every scan, index lookup and write, every
// DDL that would copy or index it, ANALYZE, and the foreign key checks and
// cascades of other tables' writes that reach it fail with MySQL's 1459.
// The plan templates, which know only *Table, never see it. CHECK TABLE
// reports it as MySQL does (an error row "Table upgrade required...").
//
// REPAIR TABLE t and ALTER TABLE t FORCE rebuild it (rebuildTable): every
// row is read from its stored value, which the format change left
// readable, and written through the editor into a fresh table ID in the
// current format; the old table's keys are deleted with one range deletion
// and the record, stamped with the current format, takes the new ID, all
// in one transaction of the rebuild's own: a crash leaves the old table or
// the new one. Rows that collide under the current comparison ('a' and
// 'a ' in a unique key of a PAD SPACE column) fail it with 1062 and change
// nothing. Both statements commit around themselves, as MySQL's do.
//
// A table of the first format that keys no such column and has no CHAR
// column is the same in both formats: opening the store (New) stamps its record with the
// current format (stampKeyFormats), as putTable stamps any record it
// writes of a table whose keys are current (stampUnchanged), so that an
// index added later, in the current format, is not taken for an old one.

// staleKeys reports whether a table whose keys are in format, defined as
// d, must be rebuilt before it is used.
func staleKeys(format int, d *tableDef) bool {
	switch {
	case format == codec.KeyFormat:
		return false
	case format > codec.KeyFormat:
		// Written by a later version, in keys this one may not know: a
		// rebuild writes them again in this version's format.
		return true
	}
	for _, c := range d.schema {
		if codec.ValueChangedSince(format, c.Type) {
			return true
		}
	}
	for _, o := range d.pkOrds {
		if codec.KeyChangedSince(format, d.schema[o].Type) {
			return true
		}
	}
	for _, ix := range d.secondary {
		for _, o := range ix.cols {
			if codec.KeyChangedSince(format, d.schema[o].Type) {
				return true
			}
		}
	}
	return false
}

// errTableNeedsUpgrade is MySQL's ER_TABLE_NEEDS_UPGRADE for table name.
func errTableNeedsUpgrade(name string) *mysql.SQLError {
	return mysql.NewSQLError(1459, mysql.SSUnknownSQLState, "Table upgrade required. Please do \"REPAIR TABLE `%s`\" or dump/reload to fix it!", name)
}

// tableOf returns what GetTableInsensitive hands GMS for def.
func tableOf(db *Database, def *tableDef) sql.Table {
	if def.stale {
		return &staleTable{db: db, def: def, sch: copySchema(def.schema)}
	}
	return newTable(db, def)
}

var (
	_ sql.Table                    = (*staleTable)(nil)
	_ sql.PrimaryKeyTable          = (*staleTable)(nil)
	_ sql.CommentedTable           = (*staleTable)(nil)
	_ sql.Databaseable             = (*staleTable)(nil)
	_ sql.CheckTable               = (*staleTable)(nil)
	_ sql.IndexAddressableTable    = (*staleTable)(nil)
	_ sql.InsertableTable          = (*staleTable)(nil)
	_ sql.UpdatableTable           = (*staleTable)(nil)
	_ sql.DeletableTable           = (*staleTable)(nil)
	_ sql.ReplaceableTable         = (*staleTable)(nil)
	_ sql.TruncateableTable        = (*staleTable)(nil)
	_ sql.IndexAlterableTable      = (*staleTable)(nil)
	_ sql.AlterableTable           = (*staleTable)(nil)
	_ sql.ForeignKeyTable          = (*staleTable)(nil)
	_ sql.PrimaryKeyAlterableTable = (*staleTable)(nil)
	_ sql.AutoIncrementTable       = (*staleTable)(nil)
	_ sql.ForeignKeyEditor         = (*staleFKEditor)(nil)
	_ sql.IndexedTable             = (*staleIndexedTable)(nil)
)

// staleTable is a table whose keys are of an older format: its definition
// and no access to its rows (see above).
type staleTable struct {
	db  *Database
	def *tableDef
	sch sql.Schema
}

func (t *staleTable) err() error { return errTableNeedsUpgrade(t.def.name) }

// Name implements sql.Nameable.
func (t *staleTable) Name() string { return t.def.name }

// String implements fmt.Stringer.
func (t *staleTable) String() string { return t.def.name }

// Database implements sql.Databaseable.
func (t *staleTable) Database() string { return t.def.db }

// Schema implements sql.Table.
func (t *staleTable) Schema() sql.Schema { return t.sch }

// Collation implements sql.Table.
func (t *staleTable) Collation() sql.CollationID { return t.def.collation }

// Comment implements sql.CommentedTable.
func (t *staleTable) Comment() string { return t.def.rec.Comment }

// PrimaryKeySchema implements sql.PrimaryKeyTable.
func (t *staleTable) PrimaryKeySchema() sql.PrimaryKeySchema {
	return sql.NewPrimaryKeySchema(t.sch, t.def.pkOrds...)
}

// GetChecks implements sql.CheckTable.
func (t *staleTable) GetChecks(*sql.Context) ([]sql.CheckDefinition, error) {
	return append([]sql.CheckDefinition(nil), t.def.checks...), nil
}

// Partitions implements sql.Table: refused.
func (t *staleTable) Partitions(*sql.Context) (sql.PartitionIter, error) { return nil, t.err() }

// PartitionRows implements sql.Table: refused.
func (t *staleTable) PartitionRows(*sql.Context, sql.Partition) (sql.RowIter, error) {
	return nil, t.err()
}

// GetIndexes implements sql.IndexAddressable, for SHOW INDEX and SHOW
// CREATE TABLE.
func (t *staleTable) GetIndexes(*sql.Context) ([]sql.Index, error) {
	d := t.def
	var out []sql.Index
	if !d.keyless {
		out = append(out, &Index{t: d, ix: d.primary})
	}
	sec := make([]sql.Index, 0, len(d.secondary))
	for _, ix := range d.secondary {
		sec = append(sec, &Index{t: d, ix: ix})
	}
	sort.Slice(sec, func(i, j int) bool { return sec[i].ID() < sec[j].ID() })
	return append(out, sec...), nil
}

// PreciseMatch implements sql.IndexAddressable.
func (t *staleTable) PreciseMatch() bool { return true }

// IndexedAccess implements sql.IndexAddressable: a table whose lookups
// are refused.
func (t *staleTable) IndexedAccess(*sql.Context, sql.IndexLookup) sql.IndexedTable {
	return &staleIndexedTable{t}
}

// Inserter implements sql.InsertableTable: every write is refused.
func (t *staleTable) Inserter(*sql.Context) sql.RowInserter { return staleEditor{t.err()} }

// Updater implements sql.UpdatableTable.
func (t *staleTable) Updater(*sql.Context) sql.RowUpdater { return staleEditor{t.err()} }

// Deleter implements sql.DeletableTable.
func (t *staleTable) Deleter(*sql.Context) sql.RowDeleter { return staleEditor{t.err()} }

// Replacer implements sql.ReplaceableTable.
func (t *staleTable) Replacer(*sql.Context) sql.RowReplacer { return staleEditor{t.err()} }

// PeekNextAutoIncrementValue implements sql.AutoIncrementGetter, for SHOW
// CREATE TABLE: the counter is the table's metadata.
func (t *staleTable) PeekNextAutoIncrementValue(*sql.Context) (uint64, error) {
	return t.db.store.autoinc.peek(t.def.id)
}

// GetNextAutoIncrementValue implements sql.AutoIncrementTable: an insert,
// refused.
func (t *staleTable) GetNextAutoIncrementValue(*sql.Context, any) (uint64, error) {
	return 0, t.err()
}

// AutoIncrementSetter implements sql.AutoIncrementTable: refused.
func (t *staleTable) AutoIncrementSetter(*sql.Context) sql.AutoIncrementSetter {
	return staleEditor{t.err()}
}

// Truncate implements sql.TruncateableTable: refused.
func (t *staleTable) Truncate(*sql.Context) (int, error) { return 0, t.err() }

// CreateIndex implements sql.IndexAlterableTable: refused, as every
// schema change that reads or copies the rows.
func (t *staleTable) CreateIndex(*sql.Context, sql.IndexDef) error { return t.err() }

// DropIndex implements sql.IndexAlterableTable. A secondary index goes
// with its keys, which are never read (a range deletion); PRIMARY is
// DropPrimaryKey. Either way out of a rebuild that rows colliding under
// the current comparison fail.
func (t *staleTable) DropIndex(ctx *sql.Context, name string) error {
	return newTable(t.db, t.def).DropIndex(ctx, name)
}

// DropPrimaryKey implements sql.PrimaryKeyAlterableTable: the rows are
// copied by a full scan, which reads no key, into a keyless table written
// in the current format.
func (t *staleTable) DropPrimaryKey(ctx *sql.Context) error {
	return newTable(t.db, t.def).DropPrimaryKey(ctx)
}

// CreatePrimaryKey implements sql.PrimaryKeyAlterableTable: refused.
func (t *staleTable) CreatePrimaryKey(*sql.Context, []sql.IndexColumn) error { return t.err() }

// RenameIndex implements sql.IndexAlterableTable: refused.
func (t *staleTable) RenameIndex(*sql.Context, string, string) error { return t.err() }

// AddColumn implements sql.AlterableTable: refused.
func (t *staleTable) AddColumn(*sql.Context, *sql.Column, *sql.ColumnOrder) error { return t.err() }

// DropColumn implements sql.AlterableTable: refused.
func (t *staleTable) DropColumn(*sql.Context, string) error { return t.err() }

// ModifyColumn implements sql.AlterableTable: refused.
func (t *staleTable) ModifyColumn(*sql.Context, string, *sql.Column, *sql.ColumnOrder) error {
	return t.err()
}

// CreateIndexForForeignKey implements sql.ForeignKeyTable: refused.
func (t *staleTable) CreateIndexForForeignKey(*sql.Context, sql.IndexDef) error { return t.err() }

// AddForeignKey implements sql.ForeignKeyTable: refused (GMS checks the
// rows first).
func (t *staleTable) AddForeignKey(*sql.Context, sql.ForeignKeyConstraint) error { return t.err() }

// GetDeclaredForeignKeys implements sql.ForeignKeyTable, for SHOW CREATE
// TABLE and the checks of the parents' writes.
func (t *staleTable) GetDeclaredForeignKeys(ctx *sql.Context) ([]sql.ForeignKeyConstraint, error) {
	return newTable(t.db, t.def).GetDeclaredForeignKeys(ctx)
}

// GetReferencedForeignKeys implements sql.ForeignKeyTable.
func (t *staleTable) GetReferencedForeignKeys(ctx *sql.Context) ([]sql.ForeignKeyConstraint, error) {
	return newTable(t.db, t.def).GetReferencedForeignKeys(ctx)
}

// DropForeignKey implements sql.ForeignKeyTable: the record changes, the
// keys do not.
func (t *staleTable) DropForeignKey(ctx *sql.Context, name string) error {
	return newTable(t.db, t.def).DropForeignKey(ctx, name)
}

// UpdateForeignKey implements sql.ForeignKeyTable (a parent renamed): the
// record changes, the keys do not.
func (t *staleTable) UpdateForeignKey(ctx *sql.Context, name string, fk sql.ForeignKeyConstraint) error {
	return newTable(t.db, t.def).UpdateForeignKey(ctx, name, fk)
}

// GetForeignKeyEditor implements sql.ForeignKeyTable: the checks and
// cascades of a related table's writes that reach a stale table fail with
// 1459, as its own writes do.
func (t *staleTable) GetForeignKeyEditor(*sql.Context) sql.ForeignKeyEditor {
	return staleFKEditor{staleEditor{t.err()}, t}
}

// staleFKEditor is a stale table's foreign key editor.
type staleFKEditor struct {
	staleEditor
	t *staleTable
}

// IndexedAccess implements sql.IndexAddressable: lookups are refused.
func (e staleFKEditor) IndexedAccess(ctx *sql.Context, lookup sql.IndexLookup) sql.IndexedTable {
	return e.t.IndexedAccess(ctx, lookup)
}

// GetIndexes implements sql.IndexAddressable.
func (e staleFKEditor) GetIndexes(ctx *sql.Context) ([]sql.Index, error) { return e.t.GetIndexes(ctx) }

// PreciseMatch implements sql.IndexAddressable.
func (e staleFKEditor) PreciseMatch() bool { return true }

// staleIndexedTable is a stale table read through an index: refused.
type staleIndexedTable struct{ *staleTable }

// LookupPartitions implements sql.IndexedTable.
func (t *staleIndexedTable) LookupPartitions(*sql.Context, sql.IndexLookup) (sql.PartitionIter, error) {
	return nil, t.err()
}

// staleEditor refuses every row.
type staleEditor struct{ err error }

func (e staleEditor) StatementBegin(*sql.Context)                      {}
func (e staleEditor) DiscardChanges(*sql.Context, error) error         { return nil }
func (e staleEditor) StatementComplete(*sql.Context) error             { return nil }
func (e staleEditor) Close(*sql.Context) error                         { return nil }
func (e staleEditor) Insert(*sql.Context, sql.Row) error               { return e.err }
func (e staleEditor) Update(*sql.Context, sql.Row, sql.Row) error      { return e.err }
func (e staleEditor) Delete(*sql.Context, sql.Row) error               { return e.err }
func (e staleEditor) SetAutoIncrementValue(*sql.Context, uint64) error { return e.err }
func (e staleEditor) AcquireAutoIncrementLock(*sql.Context) (func(), error) {
	return nil, e.err
}

// stampUnchanged stamps rec, a record of database db that t is about to
// write, with the current key format when it is of an older one and its
// keys are those of the current format: when the table it describes is not
// stale (a DDL statement made it so: DROP INDEX of the one index that made
// it stale), or when the record it replaces, of the same table ID, was not
// (an index added to it now is written in the current format). Otherwise
// an index added in the current format would make the table look stale.
func stampUnchanged(t *txn, db string, rec *tableRecord) error {
	if rec.KeyFormat >= codec.KeyFormat {
		return nil
	}
	if d, err := newTableDef(db, rec); err == nil && !d.stale {
		rec.KeyFormat = codec.KeyFormat
		return nil
	}
	v, ok, err := t.get(catalogKey(kindTable, db, rec.Name))
	if err != nil || !ok {
		return err
	}
	if old, err := t.store.defs.get(db, v); err == nil && old.id == rec.ID && !old.stale {
		rec.KeyFormat = codec.KeyFormat
	}
	return nil
}

// stampKeyFormats stamps with the current key format the records of the
// first format whose tables are not stale (see above), in one
// transaction; stale tables keep their record until they are rebuilt.
func (s *Store) stampKeyFormats() error {
	t := s.beginTxn(false)
	defer t.rollback()
	type stamp struct{ key, value []byte }
	var stamps []stamp
	err := scanCatalog(t, catalogKey(kindTable), func(k, v []byte) error {
		var rec tableRecord
		if err := decodeRecord(v, &rec, "table"); err != nil {
			return err
		}
		if rec.KeyFormat >= codec.KeyFormat {
			return nil
		}
		_, db, err := decodeNamePart(k[2:])
		if err != nil {
			return err
		}
		d, err := newTableDef(db, &rec)
		if err != nil {
			return err
		}
		if d.stale {
			return nil
		}
		rec.KeyFormat = codec.KeyFormat
		b, err := encodeRecord(&rec)
		if err != nil {
			return err
		}
		stamps = append(stamps, stamp{append([]byte(nil), k...), b})
		return nil
	})
	if err != nil || len(stamps) == 0 {
		return err
	}
	for _, st := range stamps {
		if err := t.setCatalog(st.key, st.value); err != nil {
			return err
		}
	}
	err = t.commit()
	if errors.Is(err, ErrConflict) || errors.Is(err, storage.ErrConflict) {
		// Another process sharing the catalog changed it meanwhile (and
		// stamped it, if it runs this version): its next Open stamps
		// what is left.
		return nil
	}
	return wrapf(err, "sqlstore: stamping the key format of %d tables", len(stamps))
}

// rebuildTable rebuilds table name of database db in the current key
// format (see above), in a transaction of its own that it commits.
func (s *Store) rebuildTable(ctx *sql.Context, db, name string) error {
	if db == "" {
		db = ctx.GetCurrentDatabase()
	}
	if db == "" {
		return sql.ErrNoDatabaseSelected.New()
	}
	sdb, err := s.provider.Database(ctx, db)
	if err != nil {
		return err
	}
	d, ok := sdb.(*Database)
	if !ok {
		return fmt.Errorf("sqlstore: %s.%s is not a table of the store", db, name)
	}
	tx := s.beginTxn(false)
	defer tx.rollback()
	def, ok, err := d.readTable(tx, name)
	if err != nil {
		return err
	}
	if !ok {
		return sql.ErrTableNotFound.New(name)
	}
	rec := def.rec.clone()
	rec.KeyFormat = codec.KeyFormat
	e, err := newTable(d, def).newRewrite(tx, def, rec)
	if err != nil {
		return err
	}
	prefix := appendIndexPrefix(nil, def.id, primaryIndexID)
	it, err := tx.newIter(prefix, prefixEnd(prefix))
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			_ = it.Close()
			return err
		}
		// The stored values are read as they were written: the key
		// format changed no value but CHAR's, which the editor trims.
		row, err := def.decodeRow(it.Value(), nil, nil)
		if err != nil {
			_ = it.Close()
			return wrapf(err, "sqlstore: rebuilding %s", def.name)
		}
		if err := e.Insert(ctx, row); err != nil {
			_ = it.Close()
			return err
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return wrapf(err, "sqlstore: rebuilding %s", def.name)
	}
	if err := e.Close(ctx); err != nil {
		return err
	}
	return toSQLError(tx.commit())
}

// repairTableProcedure is CALL strata_repair_table(names), what REPAIR
// TABLE runs (callParser with repairCall): names is checkTableNames' encoding of the
// tables. A stale table is rebuilt; any other is left as it is, with
// InnoDB's note.
func repairTableProcedure(s *Store) sql.ExternalStoredProcedureDetails {
	col := func(name string) *sql.Column {
		return &sql.Column{Name: name, Type: types.LongText, Source: "strata_repair_table"}
	}
	return sql.ExternalStoredProcedureDetails{
		Name:   "strata_repair_table",
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
				for _, m := range s.repairTable(ctx, db, table) {
					rows = append(rows, sql.Row{db + "." + table, "repair", m[0], m[1]})
				}
			}
			return sql.RowsToRowIter(rows...), nil
		},
	}
}

// repairTable repairs one table and returns its messages (type, text).
func (s *Store) repairTable(ctx *sql.Context, db, table string) [][2]string {
	failed := func(err error) [][2]string {
		msg := err.Error()
		if se := MySQLError(err); se != nil {
			msg = se.Message
		}
		return [][2]string{{"Error", msg}, {"status", "Operation failed"}}
	}
	t := s.beginTxn(true)
	v, ok, err := t.get(catalogKey(kindTable, db, table))
	if err == nil && !ok {
		v, ok, err = findTableRecord(t, db, table)
	}
	t.rollback()
	if err != nil {
		return failed(err)
	}
	if !ok {
		return failed(sql.ErrTableNotFound.New(db + "." + table))
	}
	d, err := s.defs.get(db, v)
	if err != nil {
		return failed(err)
	}
	if !d.stale {
		return [][2]string{{"note", "The storage engine for the table doesn't support repair"}}
	}
	if err := s.rebuildTable(ctx, db, d.name); err != nil {
		return failed(err)
	}
	return [][2]string{{"status", "OK"}}
}

// rebuildTableProcedure is CALL strata_rebuild_table(names), what ALTER
// TABLE t FORCE runs (callParser with repairCall): it rebuilds the table, stale or not,
// and answers OK as an ALTER does.
func rebuildTableProcedure(s *Store) sql.ExternalStoredProcedureDetails {
	return sql.ExternalStoredProcedureDetails{
		Name: "strata_rebuild_table",
		Function: func(ctx *sql.Context, names string) (sql.RowIter, error) {
			db, table, _ := strings.Cut(names, "\t")
			if err := s.rebuildTable(ctx, db, table); err != nil {
				return nil, err
			}
			return sql.RowsToRowIter(), nil
		},
	}
}

// rebuildCall reports whether c is the CALL that REPAIR TABLE or ALTER
// TABLE ... FORCE runs: MySQL commits around both, so the session's
// transaction, whose snapshot is older than the rebuild's commit, ends
// with the statement (correctCommitFlags).
func rebuildCall(c *plan.Call) bool {
	return strings.EqualFold(c.Name, "strata_repair_table") || strings.EqualFold(c.Name, "strata_rebuild_table")
}

// repairCall returns the CALL that runs query when query is one REPAIR
// [NO_WRITE_TO_BINLOG | LOCAL] TABLE t [, t] [QUICK] [EXTENDED] [USE_FRM]
// or one ALTER TABLE t FORCE (an optional ';' after it, nothing else).
func repairCall(query string) (string, bool) {
	l := lexer{s: query}
	var proc string
	var names [][2]string
	switch {
	case l.word("repair"):
		if !l.word("no_write_to_binlog") {
			l.word("local")
		}
		if !l.word("table") && !l.word("tables") {
			return "", false
		}
		for {
			n, ok := l.tableName()
			if !ok {
				return "", false
			}
			names = append(names, n)
			if !l.punct(',') {
				break
			}
		}
		for _, opt := range []string{"quick", "extended", "use_frm"} {
			l.word(opt)
		}
		proc = "strata_repair_table"
	case l.word("alter"):
		if !l.word("table") {
			return "", false
		}
		n, ok := l.tableName()
		if !ok || !l.word("force") {
			return "", false
		}
		names = append(names, n)
		proc = "strata_rebuild_table"
	default:
		return "", false
	}
	l.punct(';')
	l.space()
	if l.i != len(l.s) {
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
	return "CALL " + proc + "(" + sqlStringLiteral(b.String()) + ")", true
}

// tableName consumes a table name, [database.]table, and returns it as
// (database, table), the database empty when not given.
func (l *lexer) tableName() ([2]string, bool) {
	first, ok := l.ident()
	if !ok {
		return [2]string{}, false
	}
	if !l.punct('.') {
		return [2]string{"", first}, true
	}
	second, ok := l.ident()
	return [2]string{first, second}, ok
}
