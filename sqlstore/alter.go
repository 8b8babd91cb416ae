package sqlstore

import (
	"fmt"
	"io"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/strata-db/strata/sqlstore/codec"
)

var (
	_ sql.AlterableTable           = (*Table)(nil)
	_ sql.RewritableTable          = (*Table)(nil)
	_ sql.IndexAlterableTable      = (*Table)(nil)
	_ sql.IndexBuildingTable       = (*Table)(nil)
	_ sql.PrimaryKeyAlterableTable = (*Table)(nil)
	_ sql.CheckAlterableTable      = (*Table)(nil)
)

// Schema changes.
//
// A change that keeps the stored row layout (renaming a column, a new
// default or comment, appending a nullable column with no default, which old
// rows decode as NULL, adding, dropping or renaming an index or a check)
// rewrites the table record only. Any other change (a new column type,
// column order, dropped column, primary key) rewrites the table: its rows
// are copied into a fresh table ID and the old ID's keys are deleted with
// one range deletion, all in the session's transaction, so that the new
// table appears atomically at commit. GMS drives most rewrites itself
// (RewritableTable: it streams converted rows into RewriteInserter); the
// methods GMS calls when it does not (DropColumn, ModifyColumn,
// CreatePrimaryKey, DropPrimaryKey) rewrite on their own the same way.
// When a column's type changes, the rows GMS reads for its copy give that
// column already converted as MySQL converts it (alterconvert.go).

// current returns the table's definition as the transaction sees it now.
func (t *Table) current(tx *txn) (*tableDef, error) {
	def, ok, err := t.db.readTable(tx, t.def.name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, sql.ErrTableNotFound.New(t.def.name)
	}
	return def, nil
}

// updateRecord applies change to a clone of the table's current record and
// writes it; the rows are untouched.
func (t *Table) updateRecord(ctx *sql.Context, change func(rec *tableRecord) error) error {
	tx, err := t.ddlWriter(ctx, mdlExclusive)
	if err != nil {
		return err
	}
	def, err := t.current(tx)
	if err != nil {
		return err
	}
	rec := def.rec.clone()
	if err := change(rec); err != nil {
		return err
	}
	if _, err := newTableDef(t.db.name, rec); err != nil {
		return err
	}
	return t.db.putTable(tx, rec)
}

// ShouldRewriteTable implements sql.RewritableTable: true whenever the
// stored row layout or the primary key changes.
func (t *Table) ShouldRewriteTable(ctx *sql.Context, oldSchema, newSchema sql.PrimaryKeySchema, oldColumn, newColumn *sql.Column) bool {
	return layoutChanges(oldSchema, newSchema, oldColumn, newColumn)
}

func layoutChanges(oldSchema, newSchema sql.PrimaryKeySchema, oldColumn, newColumn *sql.Column) bool {
	o, n := oldSchema.Schema, newSchema.Schema
	if !equalInts(oldSchema.PkOrdinals, newSchema.PkOrdinals) {
		return true
	}
	if len(n) == len(o)+1 && oldColumn == nil && newColumn != nil {
		// An appended column keeps the layout of the columns before it.
		if !strings.EqualFold(n[len(n)-1].Name, newColumn.Name) {
			return true
		}
		n = n[:len(o)]
	}
	if len(o) != len(n) {
		return true
	}
	for i := range o {
		if !o[i].Type.Equals(n[i].Type) {
			return true
		}
		if !strings.EqualFold(o[i].Name, n[i].Name) &&
			!(oldColumn != nil && newColumn != nil && strings.EqualFold(o[i].Name, oldColumn.Name) && strings.EqualFold(n[i].Name, newColumn.Name)) {
			return true
		}
	}
	return false
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// rewrite is the state of a table rewrite: rows go into a fresh table ID
// through an editor, and finish installs the new record.
type rewrite struct {
	db     *Database
	old    *tableDef
	newRec *tableRecord
	rows   int64
	bytes  int64
	failed bool
	done   bool
}

// newRewrite starts a rewrite of def into newRec (whose ID it sets).
func (t *Table) newRewrite(tx *txn, def *tableDef, newRec *tableRecord) (*editor, error) {
	id, err := t.store.tableIDs.alloc()
	if err != nil {
		return nil, err
	}
	newRec.ID = id
	newRec.KeyFormat = codec.KeyFormat // every key is written anew (keyformat.go)
	newDef, err := newTableDef(t.db.name, newRec)
	if err != nil {
		return nil, err
	}
	t.store.counters.newTable(id)
	// The statement changes the schema from its first row on: its writes
	// are not bounded by MaxTxnBytes, and a failure part-way undoes them.
	tx.mu.Lock()
	tx.stmtDDL = true
	tx.mu.Unlock()
	e := &editor{t: t.full(), def: newDef, tx: tx}
	e.rewrite = &rewrite{db: t.db, old: def, newRec: newRec}
	return e, nil
}

// finish installs a rewritten table: its record under the table's name
// with the new ID, the old rows deleted, the auto-increment counter moved.
func (r *rewrite) finish(ctx *sql.Context, e *editor) error {
	if r.failed || r.done {
		return nil
	}
	r.done = true
	s := r.db.store
	next, err := s.autoinc.peek(r.old.id)
	if err != nil {
		return err
	}
	if err := r.db.replaceTable(e.tx, r.old, r.newRec); err != nil {
		return err
	}
	e.tx.wrote(r.newRec.ID, r.rows, r.bytes)
	e.tx.endStatement()
	if next > 1 {
		return s.autoinc.set(r.newRec.ID, next)
	}
	return nil
}

// replaceTable installs newRec, whose ID is fresh, in place of old.
func (d *Database) replaceTable(tx *txn, old *tableDef, newRec *tableRecord) error {
	if !strings.EqualFold(old.name, newRec.Name) {
		if err := tx.delCatalog(d.tableKey(old.name)); err != nil {
			return err
		}
	}
	if err := d.putTable(tx, newRec); err != nil {
		return err
	}
	start, end := tableSpan(old.id)
	if err := tx.deleteRange(start, end); err != nil {
		return err
	}
	tx.guard(start, end) // rows written since the copy's snapshot would be lost
	tx.tableDropped(old.id)
	tx.tableCreated(newRec.ID)
	d.store.counters.newTable(newRec.ID)
	oldID := old.id
	tx.afterCommit(func() { d.store.autoinc.forget(oldID) })
	return nil
}

// freshID gives a cloned record a new table ID (TRUNCATE).
func (t *Table) freshID(rec *tableRecord) error {
	id, err := t.store.tableIDs.alloc()
	if err != nil {
		return err
	}
	rec.ID = id
	return nil
}

// RewriteInserter implements sql.RewritableTable.
func (t *Table) RewriteInserter(ctx *sql.Context, oldSchema, newSchema sql.PrimaryKeySchema, oldColumn, newColumn *sql.Column, idxCols []sql.IndexColumn) (sql.RowInserter, error) {
	tx, err := t.ddlWriter(ctx, mdlExclusive)
	if err != nil {
		return nil, err
	}
	def, err := t.current(tx)
	if err != nil {
		return nil, err
	}
	if len(oldSchema.PkOrdinals) > 0 && len(newSchema.PkOrdinals) == 0 {
		if err := sql.ValidatePrimaryKeyDrop(ctx, newTable(t.db, def), oldSchema); err != nil {
			return nil, err
		}
	}
	for _, c := range idxCols {
		o := newSchema.Schema.IndexOfColName(c.Name)
		if o < 0 {
			return nil, sql.ErrColumnNotFound.New(c.Name)
		}
		if col := newSchema.Schema[o]; col.PrimaryKey && c.Length > 0 && types.IsText(col.Type) {
			return nil, sql.ErrUnsupportedIndexPrefix.New(col.Name)
		}
	}
	rec := def.rec.clone()
	rec.Columns = rec.Columns[:0]
	for _, c := range newSchema.Schema {
		cr, err := columnRecordOf(c)
		if err != nil {
			return nil, err
		}
		rec.Columns = append(rec.Columns, cr)
	}
	rec.PK = append([]int(nil), newSchema.PkOrdinals...)
	for _, o := range rec.PK {
		rec.Columns[o].Nullable = false
	}
	if oldColumn != nil && newColumn != nil && !strings.EqualFold(oldColumn.Name, newColumn.Name) {
		renameIndexColumns(rec, oldColumn.Name, newColumn.Name)
	}
	pruneIndexes(rec)
	tx.convertColumn(ctx, def, oldColumn, newColumn)
	return t.newRewrite(tx, def, rec)
}

// renameIndexColumns follows a column rename in the index definitions.
func renameIndexColumns(rec *tableRecord, from, to string) {
	for i := range rec.Indexes {
		for j := range rec.Indexes[i].Columns {
			if strings.EqualFold(rec.Indexes[i].Columns[j].Name, from) {
				rec.Indexes[i].Columns[j].Name = to
			}
		}
	}
}

// pruneIndexes removes dropped columns from indexes, and indexes left with
// no column, as MySQL does.
func pruneIndexes(rec *tableRecord) {
	out := rec.Indexes[:0]
	for _, ix := range rec.Indexes {
		cols := ix.Columns[:0]
		for _, c := range ix.Columns {
			if rec.columnIndex(c.Name) >= 0 {
				cols = append(cols, c)
			}
		}
		ix.Columns = cols
		if len(cols) > 0 {
			out = append(out, ix)
		}
	}
	rec.Indexes = out
}

// rewriteRows copies every row of def through transform into a rewrite to
// newRec, for the schema changes GMS leaves to the table.
func (t *Table) rewriteRows(ctx *sql.Context, tx *txn, def *tableDef, newRec *tableRecord, transform func(sql.Row) (sql.Row, error)) error {
	e, err := t.newRewrite(tx, def, newRec)
	if err != nil {
		return err
	}
	src := newTable(t.db, def)
	it, err := src.newRowIter(ctx, nil)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		_ = it.Close(ctx)
		_ = tx.rollbackStatement() // the whole statement fails
		return err
	}
	for {
		row, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(err)
		}
		if row, err = transform(row); err != nil {
			return fail(err)
		}
		if err := e.Insert(ctx, row); err != nil {
			return fail(err)
		}
	}
	if err := it.Close(ctx); err != nil {
		return fail(err)
	}
	if err := e.Close(ctx); err != nil {
		return fail(err)
	}
	return nil
}

// AddColumn implements sql.AlterableTable. GMS calls it only for layouts
// ShouldRewriteTable keeps: the column is appended and old rows read it as
// NULL.
func (t *Table) AddColumn(ctx *sql.Context, column *sql.Column, order *sql.ColumnOrder) error {
	cr, err := columnRecordOf(column)
	if err != nil {
		return err
	}
	tx, err := t.ddlWriter(ctx, mdlExclusive)
	if err != nil {
		return err
	}
	def, err := t.current(tx)
	if err != nil {
		return err
	}
	if def.rec.columnIndex(column.Name) >= 0 {
		return sql.ErrDuplicateColumn.New(column.Name)
	}
	pos := len(def.rec.Columns)
	if order != nil {
		if order.First {
			pos = 0
		} else if order.AfterColumn != "" {
			i := def.rec.columnIndex(order.AfterColumn)
			if i < 0 {
				return sql.ErrTableColumnNotFound.New(def.name, order.AfterColumn)
			}
			pos = i + 1
		}
	}
	rec := def.rec.clone()
	if pos == len(rec.Columns) && column.Nullable && column.Default == nil && !column.AutoIncrement && column.Generated == nil {
		rec.Columns = append(rec.Columns, cr)
		return t.db.putTable(tx, rec)
	}
	// Anything else changes the layout of stored rows: rewrite them.
	rec.Columns = append(rec.Columns[:pos], append([]columnRecord{cr}, rec.Columns[pos:]...)...)
	for i, o := range rec.PK {
		if o >= pos {
			rec.PK[i] = o + 1
		}
	}
	return t.rewriteRows(ctx, tx, def, rec, func(r sql.Row) (sql.Row, error) {
		out := make(sql.Row, 0, len(r)+1)
		out = append(out, r[:pos]...)
		out = append(out, nil)
		return append(out, r[pos:]...), nil
	})
}

// DropColumn implements sql.AlterableTable.
func (t *Table) DropColumn(ctx *sql.Context, columnName string) error {
	tx, err := t.ddlWriter(ctx, mdlExclusive)
	if err != nil {
		return err
	}
	def, err := t.current(tx)
	if err != nil {
		return err
	}
	pos := def.rec.columnIndex(columnName)
	if pos < 0 {
		return sql.ErrTableColumnNotFound.New(def.name, columnName)
	}
	rec := def.rec.clone()
	rec.Columns = append(rec.Columns[:pos], rec.Columns[pos+1:]...)
	pk := rec.PK[:0]
	for _, o := range rec.PK {
		switch {
		case o == pos:
		case o > pos:
			pk = append(pk, o-1)
		default:
			pk = append(pk, o)
		}
	}
	rec.PK = pk
	pruneIndexes(rec)
	return t.rewriteRows(ctx, tx, def, rec, func(r sql.Row) (sql.Row, error) {
		out := make(sql.Row, 0, len(r)-1)
		out = append(out, r[:pos]...)
		return append(out, r[pos+1:]...), nil
	})
}

// ModifyColumn implements sql.AlterableTable: renames and attribute changes
// rewrite the record; a new type or position rewrites the rows, converting
// values to the new type.
func (t *Table) ModifyColumn(ctx *sql.Context, columnName string, column *sql.Column, order *sql.ColumnOrder) error {
	cr, err := columnRecordOf(column)
	if err != nil {
		return err
	}
	tx, err := t.ddlWriter(ctx, mdlExclusive)
	if err != nil {
		return err
	}
	def, err := t.current(tx)
	if err != nil {
		return err
	}
	pos := def.rec.columnIndex(columnName)
	if pos < 0 {
		return sql.ErrTableColumnNotFound.New(def.name, columnName)
	}
	if other := def.rec.columnIndex(column.Name); other >= 0 && other != pos {
		return sql.ErrDuplicateColumn.New(column.Name)
	}
	rec := def.rec.clone()
	if def.schema[pos].PrimaryKey {
		cr.Nullable = false
	}
	rec.Columns[pos] = cr
	if !strings.EqualFold(columnName, column.Name) {
		renameIndexColumns(rec, columnName, column.Name)
	}
	newPos := pos
	if order != nil {
		if order.First {
			newPos = 0
		} else if order.AfterColumn != "" {
			a := rec.columnIndex(order.AfterColumn)
			if a < 0 {
				return sql.ErrTableColumnNotFound.New(def.name, order.AfterColumn)
			}
			newPos = a + 1
			if a >= pos {
				newPos = a
			}
		}
	}
	if newPos == pos && def.schema[pos].Type.Equals(mustType(cr.Type)) {
		if err := t.db.putTable(tx, rec); err != nil {
			return err
		}
		if column.AutoIncrement && !def.schema[pos].AutoIncrement {
			return t.seedAutoIncrement(ctx, tx, def, pos)
		}
		return nil
	}
	// Move the column and convert its values.
	perm := make([]int, len(rec.Columns)) // new ordinal -> old ordinal
	{
		order := make([]int, 0, len(rec.Columns))
		for i := range rec.Columns {
			if i != pos {
				order = append(order, i)
			}
		}
		order = append(order[:newPos], append([]int{pos}, order[newPos:]...)...)
		copy(perm, order)
	}
	cols := make([]columnRecord, len(rec.Columns))
	for n, o := range perm {
		cols[n] = rec.Columns[o]
	}
	rec.Columns = cols
	inv := make([]int, len(perm))
	for n, o := range perm {
		inv[o] = n
	}
	for i, o := range rec.PK {
		rec.PK[i] = inv[o]
	}
	typ := column.Type
	return t.rewriteRows(ctx, tx, def, rec, func(r sql.Row) (sql.Row, error) {
		out := make(sql.Row, len(r))
		for n, o := range perm {
			out[n] = r[o]
		}
		if v := out[newPos]; v != nil {
			cv, _, err := typ.Convert(ctx, v)
			if err != nil {
				return nil, err
			}
			out[newPos] = cv
		} else if !column.Nullable {
			return nil, sql.ErrInsertIntoNonNullableProvidedNull.New(column.Name)
		}
		return out, nil
	})
}

func mustType(s string) sql.Type {
	t, err := parseType(s)
	if err != nil {
		return types.Null
	}
	return t
}

// CreatePrimaryKey implements sql.PrimaryKeyAlterableTable.
func (t *Table) CreatePrimaryKey(ctx *sql.Context, columns []sql.IndexColumn) error {
	tx, err := t.ddlWriter(ctx, mdlExclusive)
	if err != nil {
		return err
	}
	def, err := t.current(tx)
	if err != nil {
		return err
	}
	if !def.keyless {
		return sql.ErrMultiplePrimaryKeysDefined.New()
	}
	rec := def.rec.clone()
	rec.PK = nil
	for _, c := range columns {
		o := rec.columnIndex(c.Name)
		if o < 0 {
			return sql.ErrKeyColumnDoesNotExist.New(c.Name)
		}
		rec.PK = append(rec.PK, o)
		rec.Columns[o].Nullable = false
	}
	pk := rec.PK
	return t.rewriteRows(ctx, tx, def, rec, func(r sql.Row) (sql.Row, error) {
		for _, o := range pk {
			if r[o] == nil {
				return nil, sql.ErrInsertIntoNonNullableProvidedNull.New(rec.Columns[o].Name)
			}
		}
		return r, nil
	})
}

// DropPrimaryKey implements sql.PrimaryKeyAlterableTable.
func (t *Table) DropPrimaryKey(ctx *sql.Context) error {
	tx, err := t.ddlWriter(ctx, mdlExclusive)
	if err != nil {
		return err
	}
	def, err := t.current(tx)
	if err != nil {
		return err
	}
	if def.keyless {
		return sql.ErrCantDropFieldOrKey.New("PRIMARY")
	}
	rec := def.rec.clone()
	rec.PK = nil
	return t.rewriteRows(ctx, tx, def, rec, func(r sql.Row) (sql.Row, error) { return r, nil })
}

// CreateIndex implements sql.IndexAlterableTable: it writes the index's
// definition and its entries for the existing rows, checking uniqueness.
func (t *Table) CreateIndex(ctx *sql.Context, idx sql.IndexDef) error {
	if idx.IsSpatial() || idx.IsFullText() {
		return fmt.Errorf("%w: spatial and full-text indexes", ErrUnsupported)
	}
	tx, err := t.ddlWriter(ctx, mdlSharedNoWrite) // writers wait, readers go on (mdl.go)
	if err != nil {
		return err
	}
	def, err := t.current(tx)
	if err != nil {
		return err
	}
	name := idx.Name
	if name == "" {
		name = generateIndexName(def, idx.Columns)
	}
	if strings.EqualFold(name, "PRIMARY") || def.rec.indexPos(name) >= 0 {
		return sql.ErrDuplicateKey.New(name)
	}
	id := def.rec.NextIndexID
	if !idx.IsVector() {
		if id, err = t.bulkIndexID(tx, def); err != nil {
			return err
		}
	}
	ir := indexRecord{ID: id, Name: name, Unique: idx.IsUnique(), Comment: idx.Comment, Vector: idx.IsVector()}
	for _, c := range idx.Columns {
		o := def.rec.columnIndex(c.Name)
		if o < 0 {
			return sql.ErrKeyColumnDoesNotExist.New(c.Name)
		}
		if types.IsJSON(def.schema[o].Type) && !ir.Vector {
			return sql.ErrJSONIndex.New(c.Name)
		}
		ir.Columns = append(ir.Columns, indexColumnRecord{Name: def.rec.Columns[o].Name, Length: uint16(c.Length)})
	}
	if duplicatesIndex(def.rec, ir) {
		if sess, ok := ctx.Session.(*Session); ok {
			sess.noteDuplicateIndex(name)
		}
	}
	rec := def.rec.clone()
	rec.Indexes = append(rec.Indexes, ir)
	rec.NextIndexID = id + 1
	newDef, err := newTableDef(t.db.name, rec)
	if err != nil {
		return err
	}
	if err := t.db.putTable(tx, rec); err != nil {
		return err
	}
	if ir.Vector {
		return nil
	}
	if err := t.buildIndex(ctx, tx, newDef, newDef.index(name)); err != nil {
		// The statement fails: undo all of it, not only this index (an
		// ALTER may have added others before).
		_ = tx.rollbackStatement()
		tx.dropLoaded()
		return err
	}
	return nil
}

// generateIndexName names an unnamed index after its first column, as
// MySQL does (a, a_2, a_3, ...).
func generateIndexName(def *tableDef, cols []sql.IndexColumn) string {
	base := "idx"
	if len(cols) > 0 {
		base = cols[0].Name
	}
	name := base
	for i := 2; def.rec.indexPos(name) >= 0 || strings.EqualFold(name, "PRIMARY"); i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	return name
}

// ShouldBuildIndex implements sql.IndexBuildingTable: CreateIndex builds
// the index itself.
func (t *Table) ShouldBuildIndex(*sql.Context, sql.IndexDef) (bool, error) { return false, nil }

// BuildIndex implements sql.IndexBuildingTable. GMS calls it for unique
// indexes even when ShouldBuildIndex says no; CreateIndex has built the
// index already, so the rows GMS streams are ignored.
func (t *Table) BuildIndex(*sql.Context, sql.IndexDef) (sql.RowInserter, error) {
	return nopInserter{}, nil
}

type nopInserter struct{}

func (nopInserter) StatementBegin(*sql.Context)              {}
func (nopInserter) DiscardChanges(*sql.Context, error) error { return nil }
func (nopInserter) StatementComplete(*sql.Context) error     { return nil }
func (nopInserter) Insert(*sql.Context, sql.Row) error       { return nil }
func (nopInserter) Close(*sql.Context) error                 { return nil }

// DropIndex implements sql.IndexAlterableTable.
func (t *Table) DropIndex(ctx *sql.Context, name string) error {
	if strings.EqualFold(name, "PRIMARY") {
		return t.DropPrimaryKey(ctx)
	}
	tx, err := t.ddlWriter(ctx, mdlExclusive)
	if err != nil {
		return err
	}
	def, err := t.current(tx)
	if err != nil {
		return err
	}
	pos := def.rec.indexPos(name)
	if pos < 0 {
		return sql.ErrIndexNotFound.New(name)
	}
	rec := def.rec.clone()
	rec.Indexes = append(rec.Indexes[:pos], rec.Indexes[pos+1:]...)
	if err := t.db.putTable(tx, rec); err != nil {
		return err
	}
	ix := def.index(name)
	if ix == nil {
		return nil // a declared-only (vector) index has no entries
	}
	start := appendIndexPrefix(nil, def.id, ix.id)
	return tx.deleteRange(start, prefixEnd(start))
}

// RenameIndex implements sql.IndexAlterableTable.
func (t *Table) RenameIndex(ctx *sql.Context, from, to string) error {
	return t.updateRecord(ctx, func(rec *tableRecord) error {
		i := rec.indexPos(from)
		if i < 0 {
			return sql.ErrIndexNotFound.New(from)
		}
		if j := rec.indexPos(to); j >= 0 && j != i {
			return sql.ErrDuplicateKey.New(to)
		}
		rec.Indexes[i].Name = to
		return nil
	})
}

// CreateCheck implements sql.CheckAlterableTable.
func (t *Table) CreateCheck(ctx *sql.Context, check *sql.CheckDefinition) error {
	return t.updateRecord(ctx, func(rec *tableRecord) error {
		name := check.Name
		if name == "" {
			name = fmt.Sprintf("%s_chk_%d", strings.ToLower(rec.Name), len(rec.Checks)+1)
		}
		for _, c := range rec.Checks {
			if strings.EqualFold(c.Name, name) {
				return mysql.NewSQLError(3822, mysql.SSUnknownSQLState, "Duplicate check constraint name '%s'.", name) // ER_CHECK_CONSTRAINT_DUP_NAME
			}
		}
		rec.Checks = append(rec.Checks, checkRecord{Name: name, Expr: check.CheckExpression, Enforced: check.Enforced})
		return nil
	})
}

// DropCheck implements sql.CheckAlterableTable.
func (t *Table) DropCheck(ctx *sql.Context, name string) error {
	return t.updateRecord(ctx, func(rec *tableRecord) error {
		for i, c := range rec.Checks {
			if strings.EqualFold(c.Name, name) {
				rec.Checks = append(rec.Checks[:i], rec.Checks[i+1:]...)
				return nil
			}
		}
		return sql.ErrUnknownConstraint.New(name)
	})
}

// decodeStored decodes a stored row with its table's full schema.
func decodeStored(def *tableDef, value []byte) (sql.Row, error) {
	return def.decodeRow(value, nil, nil)
}

var _ sql.CollationAlterableTable = (*Table)(nil)

// ModifyDefaultCollation implements sql.CollationAlterableTable: the
// collation of columns created later; existing columns keep theirs.
func (t *Table) ModifyDefaultCollation(ctx *sql.Context, collation sql.CollationID) error {
	return t.updateRecord(ctx, func(rec *tableRecord) error {
		rec.Collation = collationName(collation)
		return nil
	})
}

// ModifyStoredCollation implements sql.CollationAlterableTable: every
// collated column takes the collation, and the table is rewritten since
// index keys are encoded by collation.
func (t *Table) ModifyStoredCollation(ctx *sql.Context, collation sql.CollationID) error {
	tx, err := t.ddlWriter(ctx, mdlExclusive)
	if err != nil {
		return err
	}
	def, err := t.current(tx)
	if err != nil {
		return err
	}
	rec := def.rec.clone()
	rec.Collation = collationName(collation)
	for i, c := range def.schema {
		tc, ok := c.Type.(sql.TypeWithCollation)
		if !ok {
			continue
		}
		nt, err := tc.WithNewCollation(collation)
		if err != nil {
			return err
		}
		rec.Columns[i].Type = typeText(nt)
	}
	return t.rewriteRows(ctx, tx, def, rec, func(r sql.Row) (sql.Row, error) { return r, nil })
}

// seedAutoIncrement sets a table's counter past the largest value of its
// column at ordinal pos (a column that just became AUTO_INCREMENT).
func (t *Table) seedAutoIncrement(ctx *sql.Context, tx *txn, def *tableDef, pos int) error {
	hi, err := t.largestValue(ctx, def, pos)
	if err != nil {
		return err
	}
	next, err := t.store.autoinc.peek(def.id)
	if err != nil {
		return err
	}
	if hi+1 > next {
		return t.store.autoinc.set(def.id, hi+1)
	}
	return nil
}

// largestValue returns the largest non-negative integer in the column at
// ordinal pos of the table's rows, 0 when there is none.
func (t *Table) largestValue(ctx *sql.Context, def *tableDef, pos int) (uint64, error) {
	src := newTable(t.db, def)
	it, err := src.newRowIter(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer it.Close(ctx)
	var hi uint64
	for {
		row, err := it.Next(ctx)
		if err == io.EOF {
			return hi, nil
		}
		if err != nil {
			return 0, err
		}
		if row[pos] == nil {
			continue
		}
		if v, err := toUint64(ctx, row[pos]); err == nil && v > hi {
			hi = v
		}
	}
}
