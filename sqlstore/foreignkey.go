package sqlstore

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

var (
	_ sql.ForeignKeyTable  = (*Table)(nil)
	_ sql.ForeignKeyEditor = (*editor)(nil)
)

// Foreign keys are stored in the record of the table that declares them
// (the child), as GMS's own sql.ForeignKeyConstraint; GMS checks and
// cascades them through the tables' editors and index lookups. A table's
// referencing foreign keys are found by scanning the table records, which
// the definition cache makes cheap.

// CreateIndexForForeignKey implements sql.ForeignKeyTable.
func (t *Table) CreateIndexForForeignKey(ctx *sql.Context, idx sql.IndexDef) error {
	return t.CreateIndex(ctx, idx)
}

// GetDeclaredForeignKeys implements sql.ForeignKeyTable, sorted by name.
func (t *Table) GetDeclaredForeignKeys(ctx *sql.Context) ([]sql.ForeignKeyConstraint, error) {
	tx, release := t.store.view(ctx)
	defer release()
	def, ok, err := t.db.readTable(tx, t.def.name)
	if err != nil {
		return nil, err
	}
	if !ok {
		def = t.def
	}
	fks := append([]sql.ForeignKeyConstraint(nil), def.rec.ForeignKeys...)
	sort.Slice(fks, func(i, j int) bool { return fks[i].Name < fks[j].Name })
	return fks, nil
}

// GetReferencedForeignKeys implements sql.ForeignKeyTable: the foreign keys
// of any table that name this one as parent.
func (t *Table) GetReferencedForeignKeys(ctx *sql.Context) ([]sql.ForeignKeyConstraint, error) {
	tx, release := t.store.view(ctx)
	defer release()
	var out []sql.ForeignKeyConstraint
	err := t.store.forEachTable(tx, func(def *tableDef) error {
		for _, fk := range def.rec.ForeignKeys {
			if strings.EqualFold(fk.ParentTable, t.def.name) && strings.EqualFold(fk.ParentDatabase, t.def.db) {
				out = append(out, fk)
			}
		}
		return nil
	})
	return out, err
}

// forEachTable calls fn with every table of every database, as tx sees them.
func (s *Store) forEachTable(tx *txn, fn func(def *tableDef) error) error {
	return scanCatalog(tx, []byte{prefixCatalog, kindTable}, func(k, v []byte) error {
		_, db, err := decodeNamePart(k[2:])
		if err != nil {
			return err
		}
		def, err := s.defs.get(db, v)
		if err != nil {
			return err
		}
		return fn(def)
	})
}

// fkNameTaken reports whether a foreign key of that name exists in the
// database (names are unique per database), ignoring except.
func (t *Table) fkNameTaken(tx *txn, name, except string) (bool, error) {
	taken := false
	err := t.store.forEachTable(tx, func(def *tableDef) error {
		for _, fk := range def.rec.ForeignKeys {
			if strings.EqualFold(fk.Name, name) && !strings.EqualFold(fk.Name, except) && strings.EqualFold(fk.Database, t.def.db) {
				taken = true
			}
		}
		return nil
	})
	return taken, err
}

// AddForeignKey implements sql.ForeignKeyTable.
func (t *Table) AddForeignKey(ctx *sql.Context, fk sql.ForeignKeyConstraint) error {
	tx, err := t.store.writer(ctx)
	if err != nil {
		return err
	}
	if taken, err := t.fkNameTaken(tx, fk.Name, ""); err != nil {
		return err
	} else if taken {
		return sql.ErrForeignKeyDuplicateName.New(fk.Name)
	}
	return t.updateRecord(ctx, func(rec *tableRecord) error {
		rec.ForeignKeys = append(rec.ForeignKeys, fk)
		return nil
	})
}

// DropForeignKey implements sql.ForeignKeyTable.
func (t *Table) DropForeignKey(ctx *sql.Context, name string) error {
	return t.updateRecord(ctx, func(rec *tableRecord) error {
		for i, fk := range rec.ForeignKeys {
			if strings.EqualFold(fk.Name, name) {
				rec.ForeignKeys = append(rec.ForeignKeys[:i], rec.ForeignKeys[i+1:]...)
				return nil
			}
		}
		return sql.ErrForeignKeyNotFound.New(name, rec.Name)
	})
}

// UpdateForeignKey implements sql.ForeignKeyTable.
func (t *Table) UpdateForeignKey(ctx *sql.Context, name string, fk sql.ForeignKeyConstraint) error {
	tx, err := t.store.writer(ctx)
	if err != nil {
		return err
	}
	if !strings.EqualFold(name, fk.Name) {
		if taken, err := t.fkNameTaken(tx, fk.Name, name); err != nil {
			return err
		} else if taken {
			return sql.ErrForeignKeyDuplicateName.New(fk.Name)
		}
	}
	return t.updateRecord(ctx, func(rec *tableRecord) error {
		for i, old := range rec.ForeignKeys {
			if strings.EqualFold(old.Name, name) {
				rec.ForeignKeys[i] = fk
				return nil
			}
		}
		rec.ForeignKeys = append(rec.ForeignKeys, fk)
		return nil
	})
}

// GetForeignKeyEditor implements sql.ForeignKeyTable.
func (t *Table) GetForeignKeyEditor(ctx *sql.Context) sql.ForeignKeyEditor {
	return t.newEditor(ctx)
}

// IndexedAccess implements sql.IndexAddressable for GMS's foreign key
// checks, which read through the editor: the reads go through the same
// transaction and see the statement's writes so far.
func (e *editor) IndexedAccess(ctx *sql.Context, lookup sql.IndexLookup) sql.IndexedTable {
	t := newTable(e.t.db, e.def)
	t.readsCurrent = true
	return t.IndexedAccess(ctx, lookup)
}

// guardForeignKey makes the transaction's commit fail if another one
// writes in the ranges of a foreign key check after its snapshot. GMS
// checks a key at the snapshot: that a child's parent exists, that a
// parent being deleted or changed has no children. Without the guard two
// transactions could each pass their check and together commit a child
// without a parent; MySQL's shared lock on the parent row makes one of
// them wait, here one fails with 1213.
func (it *indexedTable) guardForeignKey(ctx *sql.Context, lp *lookupPlan) {
	if tx := txnOf(ctx); tx != nil {
		tx.guardSpans(it.def, lp.ix, lp.spans)
	}
}

// GetIndexes implements sql.IndexAddressable.
func (e *editor) GetIndexes(ctx *sql.Context) ([]sql.Index, error) {
	return newTable(e.t.db, e.def).GetIndexes(ctx)
}

// PreciseMatch implements sql.IndexAddressable.
func (e *editor) PreciseMatch() bool { return true }

// GMS's messages for a foreign key violation name the constraint, the
// child and the parent table only; MySQL's name the child's database and
// give the constraint as SHOW CREATE TABLE would. So the constraint is
// looked up by those names and the message made from its definition.
var (
	fkChildRE  = kindCaptureRE(sql.ErrForeignKeyChildViolation)
	fkParentRE = kindCaptureRE(sql.ErrForeignKeyParentViolation)
)

// foreignKeyError returns err as MySQL's 1452 (a child row without
// parent) or 1451 (a parent row with children) when it is GMS's foreign
// key violation, raw or already numbered by the protocol handler; ok is
// false for any other error. The constraint is read in ctx's transaction,
// or with ctx nil in a read view of the latest catalog.
func (s *Store) foreignKeyError(ctx *sql.Context, err error) (*mysql.SQLError, bool) {
	msg := err.Error()
	var se *mysql.SQLError
	if errors.As(err, &se) {
		if se.Num != mysql.ErNoReferencedRow2 && se.Num != mysql.ERRowIsReferenced2 && se.Num != mysql.ERUnknownError {
			return nil, false
		}
		msg = se.Message
	}
	v, ok := parseFKViolation(msg)
	if !ok {
		return nil, false
	}
	return v.error(s.findForeignKey(ctx, v.name, v.table, v.parent))
}

// fkViolation is what GMS's message of a foreign key violation names.
type fkViolation struct {
	num                 int // MySQL's: 1452 or 1451
	name, table, parent string
}

// parseFKViolation reads GMS's message of a foreign key violation.
func parseFKViolation(msg string) (fkViolation, bool) {
	num, m := mysql.ErNoReferencedRow2, fkChildRE.FindStringSubmatch(msg)
	if m == nil {
		num, m = mysql.ERRowIsReferenced2, fkParentRE.FindStringSubmatch(msg)
	}
	if m == nil {
		return fkViolation{}, false
	}
	return fkViolation{num: num, name: m[1], table: m[2], parent: m[3]}, true
}

// error is MySQL's error of violation v of fk; false when fk is nil.
func (v fkViolation) error(fk *sql.ForeignKeyConstraint) (*mysql.SQLError, bool) {
	if fk == nil {
		return nil, false
	}
	return mysql.NewSQLError(v.num, "23000", "%s", foreignKeyMessage(fk, v.num == mysql.ERRowIsReferenced2)), true
}

// findForeignKey returns the foreign key of that name, child and parent
// table, read in ctx's transaction (with ctx nil, a read view of the
// latest catalog); nil when there is none, or several: the same names in
// two databases, where the message cannot tell which one failed (the
// statement may write either, whatever the current database), and GMS's
// words are kept.
func (s *Store) findForeignKey(ctx *sql.Context, name, table, parent string) *sql.ForeignKeyConstraint {
	if ctx == nil {
		ctx = sql.NewEmptyContext()
	}
	var found *sql.ForeignKeyConstraint
	matches := 0
	tx, release := s.view(ctx)
	defer release()
	_ = s.forEachTable(tx, func(def *tableDef) error {
		for i := range def.rec.ForeignKeys {
			fk := &def.rec.ForeignKeys[i]
			if fk.Name == name && fk.Table == table && fk.ParentTable == parent {
				found = fk
				matches++
			}
		}
		return nil
	})
	if matches != 1 {
		return nil
	}
	return found
}

// wordForeignKeyError returns err as foreignKeyError words it, for a
// statement of ctx's session.
func wordForeignKeyError(ctx *sql.Context, err error) error {
	if s, ok := ctx.Session.(*Session); ok {
		return s.wordForeignKey(ctx, err)
	}
	return err
}

// ForeignKeyError returns err as MySQL words it when it is a foreign key
// violation of a statement of the session, for callers that get the
// error without the statement's context (the protocol handler's).
func (s *Session) ForeignKeyError(err error) error {
	return s.wordForeignKey(nil, err)
}

// wordForeignKey returns err as foreignKeyError words it, the constraint
// read in ctx (nil: the latest catalog).
func (s *Session) wordForeignKey(ctx *sql.Context, err error) error {
	if err == nil {
		return nil
	}
	if se, ok := s.store.foreignKeyError(ctx, err); ok {
		return se
	}
	return err
}

// foreignKeyWarning is foreignKeyError for the warning of code and msg
// that IGNORE made of a violation of the running statement (Session.Warn),
// each constraint looked up once per statement (fkWords).
func (s *Session) foreignKeyWarning(code int, msg string) (*mysql.SQLError, bool) {
	if code != mysql.ErNoReferencedRow2 && code != mysql.ERRowIsReferenced2 && code != mysql.ERUnknownError {
		return nil, false
	}
	v, ok := parseFKViolation(msg)
	if !ok {
		return nil, false
	}
	return v.error(s.fkWords.find(s.store, v))
}

// fkWords keeps, for the running statement, the foreign keys its ignored
// violations were worded from: an INSERT IGNORE warns once for each row it
// skips, and each lookup is a scan of the catalog in a read view of its
// own (on a remote store, a round trip). The statement's catalog is the
// one its first lookup read, as its plan's is the one it was planned
// with; the next statement starts empty (reset, from
// Session.ValidateSession).
type fkWords struct {
	used    atomic.Bool // entries may be non-empty: reset has work
	mu      sync.Mutex
	entries []fkWord
	lookups int // catalog lookups made (tests)
}

// fkWord is a lookup's answer: fk nil when no single constraint matched.
type fkWord struct {
	name, table, parent string
	fk                  *sql.ForeignKeyConstraint
}

// find returns the foreign key of violation v, looked up in store once
// per statement.
func (w *fkWords) find(store *Store, v fkViolation) *sql.ForeignKeyConstraint {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.entries {
		if e.name == v.name && e.table == v.table && e.parent == v.parent {
			return e.fk
		}
	}
	fk := store.findForeignKey(nil, v.name, v.table, v.parent)
	w.lookups++
	w.entries = append(w.entries, fkWord{name: v.name, table: v.table, parent: v.parent, fk: fk})
	w.used.Store(true)
	return fk
}

// reset empties the cache for a new statement; a load when it is empty.
func (w *fkWords) reset() {
	if !w.used.Load() {
		return
	}
	w.mu.Lock()
	clear(w.entries)
	w.entries = w.entries[:0]
	w.used.Store(false)
	w.mu.Unlock()
}

// foreignKeyMessage is MySQL's message for a violation of fk (InnoDB's):
// the constraint as SHOW CREATE TABLE shows it, the parent's database
// only when it is not the child's, RESTRICT (the default) unsaid.
func foreignKeyMessage(fk *sql.ForeignKeyConstraint, parentRow bool) string {
	var b strings.Builder
	if parentRow {
		b.WriteString("Cannot delete or update a parent row")
	} else {
		b.WriteString("Cannot add or update a child row")
	}
	fmt.Fprintf(&b, ": a foreign key constraint fails (%s.%s, CONSTRAINT %s FOREIGN KEY (",
		QuoteIdent(fk.Database), QuoteIdent(fk.Table), QuoteIdent(fk.Name))
	identList(&b, fk.Columns)
	b.WriteString(") REFERENCES ")
	if !strings.EqualFold(fk.ParentDatabase, fk.Database) {
		b.WriteString(QuoteIdent(fk.ParentDatabase))
		b.WriteByte('.')
	}
	b.WriteString(QuoteIdent(fk.ParentTable))
	b.WriteString(" (")
	identList(&b, fk.ParentColumns)
	b.WriteByte(')')
	for _, a := range [...]struct {
		on     string
		action sql.ForeignKeyReferentialAction
	}{{"DELETE", fk.OnDelete}, {"UPDATE", fk.OnUpdate}} {
		switch a.action {
		case sql.ForeignKeyReferentialAction_Cascade, sql.ForeignKeyReferentialAction_SetNull, sql.ForeignKeyReferentialAction_NoAction:
			fmt.Fprintf(&b, " ON %s %s", a.on, a.action)
		}
	}
	b.WriteByte(')')
	return b.String()
}

func identList(b *strings.Builder, names []string) {
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(QuoteIdent(n))
	}
}
