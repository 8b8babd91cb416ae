package sqlstore

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"weak"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer/analyzererrors"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/strata-db/strata/mysqlcompat"
	"github.com/strata-db/strata/storage"
)

var (
	_ sql.Database                = (*Database)(nil)
	_ sql.TableCreator            = (*Database)(nil)
	_ sql.IndexedTableCreator     = (*Database)(nil)
	_ sql.TableDropper            = (*Database)(nil)
	_ sql.TableRenamer            = (*Database)(nil)
	_ sql.CollatedDatabase        = (*Database)(nil)
	_ sql.ViewDatabase            = (*Database)(nil)
	_ sql.TriggerDatabase         = (*Database)(nil)
	_ sql.StoredProcedureDatabase = (*Database)(nil)
	_ sql.EventDatabase           = (*Database)(nil)
	_ sql.SchemaValidator         = (*Database)(nil)
)

// Database is one database of a Store. It holds only its name: tables,
// views, triggers, procedures and events are catalog records read through
// the calling session's transaction at every call. It is safe for
// concurrent use.
type Database struct {
	store *Store
	name  string
}

// Name implements sql.Nameable.
func (d *Database) Name() string { return d.name }

func (d *Database) tableKey(name string) []byte { return catalogKey(kindTable, d.name, name) }

// readTable returns the definition of a table as t sees it.
func (d *Database) readTable(t *txn, name string) (*tableDef, bool, error) {
	v, ok, err := t.get(d.tableKey(name))
	if err != nil || !ok {
		return nil, false, err
	}
	def, err := d.store.defs.get(d.name, v)
	if err != nil {
		return nil, false, err
	}
	return def, true, nil
}

// readTableAgain is readTable of the table def was read as: the
// definition t reads now, def itself while its record is unchanged. A
// write asks at every statement (its editor, each AUTO_INCREMENT value)
// whether an ALTER of the same transaction changed the table; the key is
// def's own and the record's bytes are compared, neither made anew.
func (d *Database) readTableAgain(t *txn, def *tableDef) (*tableDef, bool, error) {
	if def.db != d.name || def.raw == "" {
		return d.readTable(t, def.name)
	}
	v, ok, err := t.get(def.record.start)
	if err != nil || !ok {
		return nil, false, err
	}
	if string(v) == def.raw {
		return def, true, nil
	}
	def, err = d.store.defs.get(d.name, v)
	if err != nil {
		return nil, false, err
	}
	return def, true, nil
}

// GetTableInsensitive implements sql.Database.
func (d *Database) GetTableInsensitive(ctx *sql.Context, name string) (sql.Table, bool, error) {
	t, release := d.store.view(ctx)
	defer release()
	def, ok, err := d.readTable(t, name)
	if err != nil || !ok {
		return nil, false, err
	}
	return tableOf(d, def), true, nil
}

// GetTableNames implements sql.Database.
func (d *Database) GetTableNames(ctx *sql.Context) ([]string, error) {
	t, release := d.store.view(ctx)
	defer release()
	return d.tableNames(t)
}

func (d *Database) tableNames(t *txn) ([]string, error) {
	var names []string
	err := scanCatalog(t, catalogKey(kindTable, d.name), func(_, v []byte) error {
		def, err := d.store.defs.get(d.name, v)
		if err != nil {
			return err
		}
		names = append(names, def.name)
		return nil
	})
	return names, err
}

// ValidateSchema implements sql.SchemaValidator: it rejects columns the
// store cannot persist before any DDL runs.
func (d *Database) ValidateSchema(sch sql.Schema) error {
	for _, c := range sch {
		if _, err := columnRecordOf(c); err != nil {
			return err
		}
	}
	if n := maxRowSize(sch); n > types.MaxRowLength {
		return analyzererrors.ErrInvalidRowLength.New(types.MaxRowLength, n)
	}
	return nil
}

// CreateTable implements sql.TableCreator.
func (d *Database) CreateTable(ctx *sql.Context, name string, sch sql.PrimaryKeySchema, collation sql.CollationID, comment string) error {
	t, err := d.store.writer(ctx)
	if err != nil {
		return err
	}
	if _, ok, err := d.readTable(t, name); err != nil {
		return err
	} else if ok {
		return sql.ErrTableAlreadyExists.New(name)
	}
	if collation == sql.Collation_Unspecified {
		collation = d.GetCollation(ctx)
	}
	id, err := d.store.tableIDs.alloc()
	if err != nil {
		return err
	}
	rec, err := recordOfSchema(id, name, sch, collation, comment)
	if err != nil {
		return err
	}
	if err := d.putTable(t, rec); err != nil {
		return err
	}
	t.tableCreated(id)
	d.store.counters.newTable(id)
	dbKey := catalogKey(kindDatabase, d.name)
	t.addCheck(func(r storage.Reader) error {
		if _, err := r.Get(dbKey, nil); err != nil {
			return fmt.Errorf("%w: database %s was dropped while table %s was created", ErrConflict, d.name, name)
		}
		return nil
	})
	return nil
}

// CreateIndexedTable implements sql.IndexedTableCreator, which GMS uses
// for tables declared with PRIMARY KEY (...): a primary key over a prefix of
// a string column is refused (MySQL allows it; the store keys rows by whole
// values), anything else is CreateTable. GMS passes no table comment here.
func (d *Database) CreateIndexedTable(ctx *sql.Context, name string, sch sql.PrimaryKeySchema, idx sql.IndexDef, collation sql.CollationID) error {
	for _, c := range idx.Columns {
		o := sch.Schema.IndexOfColName(c.Name)
		if o < 0 {
			return sql.ErrColumnNotFound.New(c.Name)
		}
		if col := sch.Schema[o]; col.PrimaryKey && c.Length > 0 && types.IsText(col.Type) {
			return sql.ErrUnsupportedIndexPrefix.New(col.Name)
		}
	}
	return d.CreateTable(ctx, name, sch, collation, "")
}

// putTable writes a table record under its name. The commit then fails if
// another transaction writes the table's rows after this one's snapshot:
// the rows this one read to build an index, check a constraint or copy the
// table would miss them.
func (d *Database) putTable(t *txn, rec *tableRecord) error {
	if err := stampUnchanged(t, d.name, rec); err != nil {
		return err
	}
	b, err := encodeRecord(rec)
	if err != nil {
		return err
	}
	t.guard(tableSpan(rec.ID))
	return t.setCatalog(d.tableKey(rec.Name), b)
}

// DropTable implements sql.TableDropper.
func (d *Database) DropTable(ctx *sql.Context, name string) error {
	t, err := d.store.writer(ctx)
	if err != nil {
		return err
	}
	if _, err := d.lockByName(ctx, t, name, mdlExclusive, ddlAlone(ctx)); err != nil {
		return err
	}
	return d.dropTable(t, name)
}

func (d *Database) dropTable(t *txn, name string) error {
	def, ok, err := d.readTable(t, name)
	if err != nil {
		return err
	}
	if !ok {
		return sql.ErrTableNotFound.New(name)
	}
	if err := t.delCatalog(d.tableKey(name)); err != nil {
		return err
	}
	start, end := tableSpan(def.id)
	if err := t.deleteRange(start, end); err != nil {
		return err
	}
	t.tableDropped(def.id)
	id := def.id
	t.afterCommit(func() { d.store.autoinc.forget(id) })
	return nil
}

// RenameTable implements sql.TableRenamer. The table keeps its ID, so its
// rows and indexes stay where they are.
func (d *Database) RenameTable(ctx *sql.Context, oldName, newName string) error {
	if err := d.checkRenameQualifiers(ctx, oldName, newName); err != nil {
		return err
	}
	t, err := d.store.writer(ctx)
	if err != nil {
		return err
	}
	def, err := d.lockByName(ctx, t, oldName, mdlExclusive, ddlAlone(ctx))
	if err != nil {
		return err
	}
	if def == nil {
		return sql.ErrTableNotFound.New(oldName)
	}
	if !strings.EqualFold(oldName, newName) {
		if _, exists, err := d.readTable(t, newName); err != nil {
			return err
		} else if exists {
			return sql.ErrTableAlreadyExists.New(newName)
		}
	}
	rec := def.rec.clone()
	rec.Name = newName
	if err := t.delCatalog(d.tableKey(oldName)); err != nil {
		return err
	}
	return d.putTable(t, rec)
}

// GetCollation implements sql.CollatedDatabase.
func (d *Database) GetCollation(ctx *sql.Context) sql.CollationID {
	t, release := d.store.view(ctx)
	defer release()
	rec, ok, err := readDatabase(t, d.name)
	if err != nil || !ok {
		return sql.Collation_Default
	}
	c, err := parseCollation(rec.Collation)
	if err != nil {
		return sql.Collation_Default
	}
	return c
}

// SetCollation implements sql.CollatedDatabase.
func (d *Database) SetCollation(ctx *sql.Context, collation sql.CollationID) error {
	t, err := d.store.writer(ctx)
	if err != nil {
		return err
	}
	rec, ok, err := readDatabase(t, d.name)
	if err != nil {
		return err
	}
	if !ok {
		return sql.ErrDatabaseNotFound.New(d.name)
	}
	rec.Collation = collationName(collation)
	b, err := encodeRecord(rec)
	if err != nil {
		return err
	}
	return t.setCatalog(catalogKey(kindDatabase, d.name), b)
}

// Definitions: views, triggers, stored procedures and events are stored as
// GMS's own structs (definitionRecord) under their kind.

func getDefinition[T any](d *Database, t *txn, kind byte, name string) (T, bool, error) {
	var zero T
	v, ok, err := t.get(catalogKey(kind, d.name, name))
	if err != nil || !ok {
		return zero, false, err
	}
	var rec definitionRecord[T]
	if err := decodeRecord(v, &rec, fmt.Sprintf("definition %c %s.%s", kind, d.name, name)); err != nil {
		return zero, false, err
	}
	return rec.Def, true, nil
}

func allDefinitions[T any](d *Database, t *txn, kind byte) ([]T, error) {
	recs, err := allDefinitionRecords[T](d, t, kind)
	out := make([]T, len(recs))
	for i, r := range recs {
		out[i] = r.Def
	}
	return out, err
}

// allDefinitionRecords returns the records of a kind, in creation order.
func allDefinitionRecords[T any](d *Database, t *txn, kind byte) ([]definitionRecord[T], error) {
	var out []definitionRecord[T]
	err := scanCatalog(t, catalogKey(kind, d.name), func(_, v []byte) error {
		var rec definitionRecord[T]
		if err := decodeRecord(v, &rec, fmt.Sprintf("definition %c in %s", kind, d.name)); err != nil {
			return err
		}
		out = append(out, rec)
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, err
}

func putDefinition[T any](d *Database, t *txn, kind byte, name string, def T) error {
	return putDefinitionSeq(d, t, kind, name, def, 0)
}

func putDefinitionSeq[T any](d *Database, t *txn, kind byte, name string, def T, seq uint64) error {
	b, err := encodeRecord(&definitionRecord[T]{Format: recordFormat, Seq: seq, Def: def})
	if err != nil {
		return err
	}
	return t.setCatalog(catalogKey(kind, d.name, name), b)
}

// CreateView implements sql.ViewDatabase.
func (d *Database) CreateView(ctx *sql.Context, name string, selectStatement, createViewStmt string) error {
	t, err := d.store.writer(ctx)
	if err != nil {
		return err
	}
	if _, ok, err := getDefinition[sql.ViewDefinition](d, t, kindView, name); err != nil {
		return err
	} else if ok {
		return sql.ErrExistingView.New(d.name, name)
	}
	return putDefinition(d, t, kindView, name, sql.ViewDefinition{
		Name:                name,
		TextDefinition:      selectStatement,
		CreateViewStatement: createViewStmt,
		SqlMode:             sql.LoadSqlMode(ctx).String(),
	})
}

// DropView implements sql.ViewDatabase.
func (d *Database) DropView(ctx *sql.Context, name string) error {
	t, err := d.store.writer(ctx)
	if err != nil {
		return err
	}
	if _, ok, err := getDefinition[sql.ViewDefinition](d, t, kindView, name); err != nil {
		return err
	} else if !ok {
		return sql.ErrViewDoesNotExist.New(d.name, name)
	}
	return t.delCatalog(catalogKey(kindView, d.name, name))
}

// GetViewDefinition implements sql.ViewDatabase.
func (d *Database) GetViewDefinition(ctx *sql.Context, name string) (sql.ViewDefinition, bool, error) {
	t, release := d.store.view(ctx)
	defer release()
	return getDefinition[sql.ViewDefinition](d, t, kindView, name)
}

// AllViews implements sql.ViewDatabase.
func (d *Database) AllViews(ctx *sql.Context) ([]sql.ViewDefinition, error) {
	t, release := d.store.view(ctx)
	defer release()
	return allDefinitions[sql.ViewDefinition](d, t, kindView)
}

// GetTriggers implements sql.TriggerDatabase, in creation order.
func (d *Database) GetTriggers(ctx *sql.Context) ([]sql.TriggerDefinition, error) {
	t, release := d.store.view(ctx)
	defer release()
	// GMS asks at every write it plans; the decoded definitions are kept
	// in the catalog cache while the catalog this transaction reads is the
	// latest.
	v, current := t.catalogVersion()
	prefix := catalogKey(kindTrigger, d.name)
	defs, ok := []sql.TriggerDefinition(nil), false
	if current {
		defs, ok = d.store.catalog.triggersOf(prefix, t.tx.StartVersion())
	}
	if !ok {
		var err error
		if defs, err = allDefinitions[sql.TriggerDefinition](d, t, kindTrigger); err != nil {
			return nil, err
		}
		if current {
			d.store.catalog.addTriggers(prefix, defs, t.tx.StartVersion(), v)
		}
	}
	if len(defs) == 0 {
		return nil, nil
	}
	// GMS binds the texts with its own parser: values for generated
	// columns rewritten in them as the engine's parser does, kept while
	// the catalog this transaction reads is the latest.
	var at mysqlcompat.CatalogVersion
	if current {
		// A weak pointer: the process's cache must not keep a closed
		// store alive.
		at = mysqlcompat.CatalogVersion{Owner: weak.Make(d.store), Version: v}
	}
	return mysqlcompat.BindableTriggers(ctx, d, defs, at), nil
}

// CreateTrigger implements sql.TriggerDatabase.
func (d *Database) CreateTrigger(ctx *sql.Context, def sql.TriggerDefinition) error {
	t, err := d.store.writer(ctx)
	if err != nil {
		return err
	}
	// Triggers fire in creation order, which the clock cannot tell
	// reliably: number them.
	recs, err := allDefinitionRecords[sql.TriggerDefinition](d, t, kindTrigger)
	if err != nil {
		return err
	}
	seq := uint64(1)
	if len(recs) > 0 {
		seq = recs[len(recs)-1].Seq + 1
	}
	return putDefinitionSeq(d, t, kindTrigger, def.Name, def, seq)
}

// DropTrigger implements sql.TriggerDatabase.
func (d *Database) DropTrigger(ctx *sql.Context, name string) error {
	t, err := d.store.writer(ctx)
	if err != nil {
		return err
	}
	if _, ok, err := getDefinition[sql.TriggerDefinition](d, t, kindTrigger, name); err != nil {
		return err
	} else if !ok {
		return sql.ErrTriggerDoesNotExist.New(name)
	}
	return t.delCatalog(catalogKey(kindTrigger, d.name, name))
}

// GetStoredProcedure implements sql.StoredProcedureDatabase.
func (d *Database) GetStoredProcedure(ctx *sql.Context, name string) (sql.StoredProcedureDetails, bool, error) {
	t, release := d.store.view(ctx)
	defer release()
	def, ok, err := getDefinition[sql.StoredProcedureDetails](d, t, kindProcedure, name)
	if err != nil || !ok {
		return def, ok, err
	}
	// Only CALL reads one procedure: GMS binds the text with its own
	// parser, values for generated columns rewritten in it as the engine's
	// parser does.
	return mysqlcompat.BindableProcedure(ctx, d, def), true, nil
}

// GetStoredProcedures implements sql.StoredProcedureDatabase.
func (d *Database) GetStoredProcedures(ctx *sql.Context) ([]sql.StoredProcedureDetails, error) {
	t, release := d.store.view(ctx)
	defer release()
	return allDefinitions[sql.StoredProcedureDetails](d, t, kindProcedure)
}

// SaveStoredProcedure implements sql.StoredProcedureDatabase.
func (d *Database) SaveStoredProcedure(ctx *sql.Context, spd sql.StoredProcedureDetails) error {
	t, err := d.store.writer(ctx)
	if err != nil {
		return err
	}
	if _, ok, err := getDefinition[sql.StoredProcedureDetails](d, t, kindProcedure, spd.Name); err != nil {
		return err
	} else if ok {
		return sql.ErrStoredProcedureAlreadyExists.New(spd.Name)
	}
	return putDefinition(d, t, kindProcedure, spd.Name, spd)
}

// DropStoredProcedure implements sql.StoredProcedureDatabase.
func (d *Database) DropStoredProcedure(ctx *sql.Context, name string) error {
	t, err := d.store.writer(ctx)
	if err != nil {
		return err
	}
	if _, ok, err := getDefinition[sql.StoredProcedureDetails](d, t, kindProcedure, name); err != nil {
		return err
	} else if !ok {
		return sql.ErrStoredProcedureDoesNotExist.New(name)
	}
	return t.delCatalog(catalogKey(kindProcedure, d.name, name))
}

// GetEvent implements sql.EventDatabase.
func (d *Database) GetEvent(ctx *sql.Context, name string) (sql.EventDefinition, bool, error) {
	t, release := d.store.view(ctx)
	defer release()
	return getDefinition[sql.EventDefinition](d, t, kindEvent, name)
}

// GetEvents implements sql.EventDatabase.
func (d *Database) GetEvents(ctx *sql.Context) ([]sql.EventDefinition, interface{}, error) {
	t, release := d.store.view(ctx)
	defer release()
	evs, err := allDefinitions[sql.EventDefinition](d, t, kindEvent)
	return evs, nil, err
}

// SaveEvent implements sql.EventDatabase.
func (d *Database) SaveEvent(ctx *sql.Context, ev sql.EventDefinition) (bool, error) {
	t, err := d.store.writer(ctx)
	if err != nil {
		return false, err
	}
	if _, ok, err := getDefinition[sql.EventDefinition](d, t, kindEvent, ev.Name); err != nil {
		return false, err
	} else if ok {
		return false, sql.ErrEventAlreadyExists.New(ev.Name)
	}
	return ev.Status == sql.EventStatus_Enable.String(), putDefinition(d, t, kindEvent, ev.Name, ev)
}

// DropEvent implements sql.EventDatabase.
func (d *Database) DropEvent(ctx *sql.Context, name string) error {
	t, err := d.store.writer(ctx)
	if err != nil {
		return err
	}
	if _, ok, err := getDefinition[sql.EventDefinition](d, t, kindEvent, name); err != nil {
		return err
	} else if !ok {
		return sql.ErrEventDoesNotExist.New(name)
	}
	return t.delCatalog(catalogKey(kindEvent, d.name, name))
}

// UpdateEvent implements sql.EventDatabase.
func (d *Database) UpdateEvent(ctx *sql.Context, originalName string, ev sql.EventDefinition) (bool, error) {
	t, err := d.store.writer(ctx)
	if err != nil {
		return false, err
	}
	if _, ok, err := getDefinition[sql.EventDefinition](d, t, kindEvent, originalName); err != nil {
		return false, err
	} else if !ok {
		return false, sql.ErrEventDoesNotExist.New(originalName)
	}
	if !strings.EqualFold(originalName, ev.Name) {
		if _, ok, err := getDefinition[sql.EventDefinition](d, t, kindEvent, ev.Name); err != nil {
			return false, err
		} else if ok {
			return false, sql.ErrEventAlreadyExists.New(ev.Name)
		}
	}
	if err := t.delCatalog(catalogKey(kindEvent, d.name, originalName)); err != nil {
		return false, err
	}
	return ev.Status == sql.EventStatus_Enable.String(), putDefinition(d, t, kindEvent, ev.Name, ev)
}

// UpdateLastExecuted implements sql.EventDatabase.
func (d *Database) UpdateLastExecuted(ctx *sql.Context, name string, lastExecuted time.Time) error {
	t, err := d.store.writer(ctx)
	if err != nil {
		return err
	}
	ev, ok, err := getDefinition[sql.EventDefinition](d, t, kindEvent, name)
	if err != nil {
		return err
	}
	if !ok {
		return sql.ErrEventDoesNotExist.New(name)
	}
	ev.LastExecuted = lastExecuted
	return putDefinition(d, t, kindEvent, name, ev)
}

// NeedsToReloadEvents implements sql.EventDatabase.
func (d *Database) NeedsToReloadEvents(ctx *sql.Context, token interface{}) (bool, error) {
	return false, nil
}
