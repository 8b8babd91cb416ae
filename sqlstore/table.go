package sqlstore

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/strata-db/strata/planner"
	"github.com/strata-db/strata/storage"
)

var (
	_ sql.Table                 = (*Table)(nil)
	_ sql.PrimaryKeyTable       = (*Table)(nil)
	_ sql.CommentedTable        = (*Table)(nil)
	_ sql.TemporaryTable        = (*Table)(nil)
	_ sql.Databaseable          = (*Table)(nil)
	_ sql.ProjectedTable        = (*Table)(nil)
	_ sql.IndexAddressableTable = (*Table)(nil)
	_ sql.StatisticsTable       = (*Table)(nil)
	_ sql.InsertableTable       = (*Table)(nil)
	_ sql.UpdatableTable        = (*Table)(nil)
	_ sql.DeletableTable        = (*Table)(nil)
	_ sql.ReplaceableTable      = (*Table)(nil)
	_ sql.TruncateableTable     = (*Table)(nil)
	_ sql.AutoIncrementTable    = (*Table)(nil)
	_ sql.CheckTable            = (*Table)(nil)
	_ sql.IndexedTable          = (*indexedTable)(nil)
)

// Table is a view of one table as of the statement that resolved it: an
// immutable definition, an optional projection, and the store. All reads
// and writes go through the calling session's transaction, found in the
// context at each call, so one Table value may serve several statements
// and sessions. DDL methods re-read the definition through the transaction
// before changing it.
type Table struct {
	store *Store
	db    *Database
	def   *tableDef

	proj      []int    // projected column ordinals; nil: all columns
	projNames []string // as GMS gave them
	sch       sql.Schema
	// readsCurrent makes scans read everything the transaction wrote, the
	// running statement's writes included (foreign key checks); otherwise
	// they read the statement view (stmtview.go).
	readsCurrent bool
	// planPinned marks the table of a prepared plan reused across
	// statements (prepared.go): its lookups first check that the
	// statement's transaction reads the catalog at planVersion, since the
	// definition and the plan were made from that catalog.
	planPinned  bool
	planVersion uint64
}

func newTable(db *Database, def *tableDef) *Table {
	return &Table{store: db.store, db: db, def: def, sch: copySchema(def.schema)}
}

// copySchema copies a schema's columns. GMS modifies the columns Schema
// returns in place (ALTER ... SET DEFAULT), and definitions are shared by
// every session, so each Table hands out its own copy.
func copySchema(sch sql.Schema) sql.Schema {
	out := make(sql.Schema, len(sch))
	for i, c := range sch {
		cc := *c
		out[i] = &cc
	}
	return out
}

// Name implements sql.Nameable.
func (t *Table) Name() string { return t.def.name }

// String implements fmt.Stringer.
func (t *Table) String() string { return t.def.name }

// Database implements sql.Databaseable.
func (t *Table) Database() string { return t.def.db }

// Schema implements sql.Table: the projected columns when projected.
func (t *Table) Schema() sql.Schema { return t.sch }

// Collation implements sql.Table.
func (t *Table) Collation() sql.CollationID { return t.def.collation }

// Comment implements sql.CommentedTable.
func (t *Table) Comment() string { return t.def.rec.Comment }

// IsTemporary implements sql.TemporaryTable.
func (t *Table) IsTemporary() bool { return false }

// PrimaryKeySchema implements sql.PrimaryKeyTable.
func (t *Table) PrimaryKeySchema() sql.PrimaryKeySchema {
	return sql.NewPrimaryKeySchema(copySchema(t.def.schema), t.def.pkOrds...)
}

// GetChecks implements sql.CheckTable.
func (t *Table) GetChecks(ctx *sql.Context) ([]sql.CheckDefinition, error) {
	return append([]sql.CheckDefinition(nil), t.liveDef(ctx).checks...), nil
}

// WithProjections implements sql.ProjectedTable. A table with a virtual
// generated column is never projected: GMS computes those columns in a
// wrapper whose expressions index the table's full rows.
func (t *Table) WithProjections(colNames []string) sql.Table {
	if len(colNames) == 0 && colNames == nil || hasVirtual(t.def.schema) {
		nt := *t
		nt.proj, nt.projNames, nt.sch = nil, nil, copySchema(t.def.schema)
		return &nt
	}
	nt := *t
	nt.proj = make([]int, 0, len(colNames))
	nt.sch = make(sql.Schema, 0, len(colNames))
	for _, name := range colNames {
		o := t.def.schema.IndexOfColName(name)
		if o < 0 {
			// Unknown names cannot come from GMS's pruning; keep everything.
			nt.proj, nt.sch = nil, copySchema(t.def.schema)
			break
		}
		nt.proj = append(nt.proj, o)
		c := *t.def.schema[o]
		nt.sch = append(nt.sch, &c)
	}
	nt.projNames = colNames
	return &nt
}

// hasVirtual reports whether a schema has a virtual generated column.
func hasVirtual(sch sql.Schema) bool {
	for _, c := range sch {
		if c.Virtual {
			return true
		}
	}
	return false
}

// Projections implements sql.ProjectedTable.
func (t *Table) Projections() []string { return t.projNames }

// full returns the table without its projection (editors work on full rows).
func (t *Table) full() *Table {
	if t.proj == nil {
		return t
	}
	nt := *t
	nt.proj, nt.projNames, nt.sch = nil, nil, copySchema(t.def.schema)
	return &nt
}

// Partitions implements sql.Table.
func (t *Table) Partitions(ctx *sql.Context) (sql.PartitionIter, error) {
	return &partitionIter{p: scanPartition{at: viewBoundary(ctx)}}, nil
}

// viewBoundary returns the statement view boundary of ctx's transaction,
// or -1.
func viewBoundary(ctx *sql.Context) int {
	if t := txnOf(ctx); t != nil {
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.boundary
	}
	return -1
}

// PartitionRows implements sql.Table.
func (t *Table) PartitionRows(ctx *sql.Context, p sql.Partition) (sql.RowIter, error) {
	switch p := p.(type) {
	case scanPartition:
		if c := alterConversionOf(ctx, t.def); c != nil {
			it, err := t.newRowIterAt(ctx, nil, p.at)
			if err != nil {
				return nil, err
			}
			return &convertingIter{RowIter: it, c: c}, nil
		}
		return t.newRowIterAt(ctx, nil, p.at)
	case *lookupPartition:
		return t.newRowIterAt(ctx, p.plan, p.at)
	}
	return nil, fmt.Errorf("sqlstore: table %s: partition of type %T", t.def.name, p)
}

// GetIndexes implements sql.IndexAddressable: PRIMARY first (for tables
// with a primary key), then the secondary indexes by name. It reads the
// table's current definition, so that indexes created earlier in the same
// statement (CREATE TABLE with several indexes) are listed.
func (t *Table) GetIndexes(ctx *sql.Context) ([]sql.Index, error) {
	d := t.liveDef(ctx)
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

// liveDef returns the table's definition as the session's transaction sees
// it now, or the one the table was resolved with when it is gone or has
// another ID (a rewrite in progress).
func (t *Table) liveDef(ctx *sql.Context) *tableDef {
	tx, release := t.store.view(ctx)
	defer release()
	def, ok, err := t.db.readTable(tx, t.def.name)
	if err != nil || !ok || def.id != t.def.id {
		return t.def
	}
	return def
}

// PreciseMatch implements sql.IndexAddressable: lookups return exactly the
// rows in their ranges (lookup.go checks what the key order cannot).
func (t *Table) PreciseMatch() bool { return true }

// IndexedAccess implements sql.IndexAddressable.
func (t *Table) IndexedAccess(ctx *sql.Context, lookup sql.IndexLookup) sql.IndexedTable {
	// The table and its counter in one allocation: one per execution of a
	// kept plan.
	x := &struct {
		it      indexedTable
		lookups atomic.Int64
	}{it: indexedTable{Table: t, lookup: lookup, opts: t.store.accessOptions(ctx), mutable: explaining(ctx) && t.store.readerMutable(ctx, !t.readsCurrent)}}
	x.it.lookups = &x.lookups
	return &x.it
}

// indexedTable is a table read through an index lookup. GMS calls
// LookupPartitions with the lookup to run (for lookup joins, a new one per
// outer row), which may differ from the one IndexedAccess got.
type indexedTable struct {
	*Table
	lookup sql.IndexLookup
	// opts are the planner options of the statement that made it, and
	// mutable whether that statement's reader can change under it
	// (planner.Hints.Mutable): what EXPLAIN, which describes the table
	// without a context, plans with. Only an EXPLAIN asks (it is false
	// otherwise), so that executions do not pay for it.
	opts    planner.Options
	mutable bool
	// lookups counts LookupPartitions calls: a lookup join makes one per
	// outer row, a static lookup one per execution, so the second and
	// later ones are probes (planner.Hints.Probe).
	lookups *atomic.Int64
}

// LookupPartitions implements sql.IndexedTable: it encodes the lookup into
// spans now, because GMS reuses the lookup's ranges for the next one, and
// prepares the planner's input (access.go); the plan is chosen when the row
// iterator is made, once its reader is known.
func (it *indexedTable) LookupPartitions(ctx *sql.Context, lookup sql.IndexLookup) (sql.PartitionIter, error) {
	if it.planPinned {
		if v, ok := txnOf(ctx).catalogVersion(); !ok || v != it.planVersion {
			return nil, errStalePlan
		}
	}
	lp, err := it.plan(ctx, lookup, it.lookups.Add(1) > 1)
	if err != nil {
		return nil, err
	}
	if it.readsCurrent && !pessimistic(ctx) {
		it.guardForeignKey(ctx, lp) // a pessimistic check locks instead (locks.go)
	}
	// The iterator and its partition in one allocation: one per execution.
	x := &struct {
		it partitionIter
		p  lookupPartition
	}{p: lookupPartition{plan: lp, at: viewBoundary(ctx)}}
	x.it.p = &x.p
	return &x.it, nil
}

// plan encodes a lookup and prepares the planner's input for it.
func (it *indexedTable) plan(ctx *sql.Context, lookup sql.IndexLookup, probe bool) (*lookupPlan, error) {
	idx, ok := lookup.Index.(*Index)
	if !ok {
		return nil, fmt.Errorf("sqlstore: table %s: lookup on index %T", it.def.name, lookup.Index)
	}
	ix := it.def.index(idx.ix.name)
	if ix == nil || ix.id != idx.ix.id {
		return nil, sql.ErrIndexNotFound.New(idx.ix.name)
	}
	lp, err := encodeLookup(ctx, it.def, ix, lookup)
	if err != nil {
		return nil, err
	}
	lp.probe = lp.probe || probe
	if !lp.probe && !it.store.counters.hasEstimate(it.def.id) {
		// The planner's estimates start from the table's row count: after
		// Open, an approximation from the engine until a RowCount counts.
		if err := it.approximateCount(); err != nil {
			return nil, err
		}
	}
	covered := false
	if !ix.primary {
		_, covered = it.Table.coveredColumns(ix, lp.spans)
	}
	it.store.planLookup(ctx, it.def, lp, covered, &it.opts)
	return lp, nil
}

// WithProjections keeps the lookup.
func (it *indexedTable) WithProjections(colNames []string) sql.Table {
	nt := *it
	nt.Table = it.Table.WithProjections(colNames).(*Table)
	return &nt
}

// RowCount implements sql.StatisticsTable: exact when the store's counter
// is known to match the transaction's snapshot (stats.go), counting the
// transaction's own changes.
//
// A count that fails to read the table (a damaged block) is reported as an
// inexact zero, not as the error: GMS's costing drops that error and then
// uses the statistics it did not get. The query's own read of the table
// reports the damage.
func (t *Table) RowCount(ctx *sql.Context) (uint64, bool, error) {
	rows, _, exact, err := t.count(ctx)
	if err != nil {
		return 0, false, nil
	}
	if rows < 0 {
		rows = 0
	}
	return uint64(rows), exact, nil
}

// DataLength implements sql.StatisticsTable: the row count times the
// largest size a row of the schema can take, the estimate GMS's own backend
// and SHOW TABLE STATUS use.
func (t *Table) DataLength(ctx *sql.Context) (uint64, error) {
	rows, _, _, err := t.count(ctx)
	if err != nil || rows < 0 {
		rows = 0 // as in RowCount
	}
	return uint64(rows) * uint64(rowSizeEstimate(t.def.schema)), nil
}

// rowSizeEstimate is the size of a row by its column types.
func rowSizeEstimate(sch sql.Schema) int64 {
	var n int64
	for _, col := range sch {
		switch ct := col.Type.(type) {
		case sql.NumberType:
			n += 8
		case sql.StringType:
			n += ct.MaxByteLength()
		case types.BitType:
			n++
		case sql.DatetimeType:
			n += 8
		case sql.DecimalType:
			n += int64(ct.MaximumScale())
		case sql.EnumType:
			n += 2
		case types.JsonType:
			n += 20
		case sql.NullType:
			n++
		case types.TimeType:
			n += 16
		case sql.YearType:
			n += 8
		}
	}
	return n
}

// maxRowSize is the size InnoDB's row-size limit (types.MaxRowLength)
// counts for a schema: TEXT and BLOB columns count 16 bytes, as they live
// off the row.
func maxRowSize(sch sql.Schema) int64 {
	var n int64
	for _, col := range sch {
		switch ct := col.Type.(type) {
		case sql.NumberType:
			n += 8
		case sql.StringType:
			if types.IsTextBlob(ct) {
				n += 16
			} else {
				n += ct.MaxByteLength()
			}
		case types.BitType:
			n += 8
		case sql.DatetimeType:
			n += 8
		case sql.DecimalType:
			n += int64(ct.MaximumScale())
		case sql.EnumType:
			n += 2
		case types.JsonType:
			n += 20
		case sql.NullType:
			n++
		case types.TimeType:
			n += 16
		case sql.YearType:
			n += 8
		}
	}
	return n
}

func (t *Table) count(ctx *sql.Context) (rows, bytes int64, exact bool, err error) {
	tx, release := t.store.view(ctx)
	defer release()
	if err := t.lockForRead(ctx, tx); err != nil { // mdl.go
		return 0, 0, false, err
	}
	id := t.def.id
	seq := tx.tx.StartVersion()
	rows, bytes, exact = t.store.counters.committed(id, seq)
	if !exact && !t.store.counters.isKnown(id) {
		// First use since Open: count the snapshot's rows once.
		n, b, err := t.countSnapshot(tx)
		if err != nil {
			return 0, 0, false, err
		}
		t.store.counters.establish(id, seq, n, b)
		rows, bytes, exact = t.store.counters.committed(id, seq)
		if !exact {
			rows, bytes, exact = n, b, true
		}
	}
	dr, db := tx.rowDelta(id)
	return rows + dr, bytes + db, exact, nil
}

// approximateCount sets the table's row counter, when it has no value yet,
// to the engine's estimate of the primary index from table properties and
// index blocks: no scan, so that the first lookup after Open does not read
// the whole table to plan itself.
func (t *Table) approximateCount() error {
	prefix := appendIndexPrefix(nil, t.def.id, primaryIndexID)
	if t.store.sizes == nil {
		return nil
	}
	keys, bytes, err := t.store.sizes.EstimateRange(prefix, prefixEnd(prefix))
	if errors.Is(err, storage.ErrNoEstimate) {
		// The engine cannot tell now: the table's size stays unknown.
		return nil
	}
	if err != nil {
		return wrapf(err, "sqlstore: estimating the size of %s", t.def.name)
	}
	t.store.counters.approximate(t.def.id, keys, bytes)
	return nil
}

// countSnapshot counts the committed rows a transaction's snapshot sees.
func (t *Table) countSnapshot(tx *txn) (rows, bytes int64, err error) {
	prefix := appendIndexPrefix(nil, t.def.id, primaryIndexID)
	it, err := tx.tx.Snapshot().NewIter(&storage.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return 0, 0, wrapf(err, "sqlstore: counting %s", t.def.name)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		rows++
		bytes += int64(len(it.Key()) + len(it.Value()))
	}
	return rows, bytes, wrapf(it.Error(), "sqlstore: counting %s", t.def.name)
}

// Inserter implements sql.InsertableTable.
func (t *Table) Inserter(ctx *sql.Context) sql.RowInserter { return t.newEditor(ctx) }

// Updater implements sql.UpdatableTable.
func (t *Table) Updater(ctx *sql.Context) sql.RowUpdater { return t.newEditor(ctx) }

// Deleter implements sql.DeletableTable.
func (t *Table) Deleter(ctx *sql.Context) sql.RowDeleter { return t.newEditor(ctx) }

// Replacer implements sql.ReplaceableTable.
func (t *Table) Replacer(ctx *sql.Context) sql.RowReplacer { return t.newEditor(ctx) }

// AutoIncrementSetter implements sql.AutoIncrementTable.
func (t *Table) AutoIncrementSetter(ctx *sql.Context) sql.AutoIncrementSetter {
	return t.newEditor(ctx)
}

// PeekNextAutoIncrementValue implements sql.AutoIncrementGetter.
func (t *Table) PeekNextAutoIncrementValue(ctx *sql.Context) (uint64, error) {
	return t.store.autoinc.peek(t.currentID(ctx))
}

// GetNextAutoIncrementValue implements sql.AutoIncrementTable: a value for a
// row that has none (insertVal nil), or the bump past an explicit one.
func (t *Table) GetNextAutoIncrementValue(ctx *sql.Context, insertVal interface{}) (uint64, error) {
	id := t.currentID(ctx)
	if insertVal == nil {
		return t.store.autoinc.next(id, 0, false)
	}
	v, err := toUint64(ctx, insertVal)
	if err != nil {
		return 0, err
	}
	return t.store.autoinc.next(id, v, true)
}

// currentID returns the table's ID as the session's transaction sees it:
// a table rewritten earlier in the statement (ALTER, TRUNCATE) has a new ID.
func (t *Table) currentID(ctx *sql.Context) uint64 {
	tx, release := t.store.view(ctx)
	defer release()
	if def, ok, err := t.db.readTableAgain(tx, t.def); err == nil && ok {
		return def.id
	}
	return t.def.id
}

// Truncate implements sql.TruncateableTable: the table gets a new ID and
// its old rows are deleted with one range deletion.
func (t *Table) Truncate(ctx *sql.Context) (int, error) {
	tx, err := t.store.writer(ctx)
	if err != nil {
		return 0, err
	}
	if err := t.lockForTruncate(ctx, tx); err != nil {
		return 0, err
	}
	def, ok, err := t.db.readTable(tx, t.def.name)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, sql.ErrTableNotFound.New(t.def.name)
	}
	if !isTruncateStatement(ctx.Query()) {
		// GMS runs DELETE FROM t without WHERE through Truncate too, but
		// that is DML: it must stay inside the transaction (and roll back
		// with it), so the rows are deleted, not the table replaced.
		return t.deleteAllRows(tx, def)
	}
	n, err := t.countVisible(tx, def)
	if err != nil {
		return 0, err
	}
	rec := def.rec.clone()
	if err := t.freshID(rec); err != nil {
		return 0, err
	}
	m := tx.mark()
	if err := t.db.replaceTable(tx, def, rec); err != nil {
		_ = tx.rollbackTo(m)
		return 0, err
	}
	return int(n), nil
}

// isTruncateStatement reports whether query is a TRUNCATE statement (as
// opposed to a DELETE without WHERE, which GMS also runs as a truncation).
func isTruncateStatement(query string) bool {
	first, _ := LeadingWords(query)
	return strings.EqualFold(first, "truncate")
}

// deleteAllRows deletes every row and index entry of a table inside the
// transaction, recording the row-count change, and returns the rows
// deleted.
func (t *Table) deleteAllRows(tx *txn, def *tableDef) (int, error) {
	prefix := appendIndexPrefix(nil, def.id, primaryIndexID)
	it, err := tx.newIter(prefix, prefixEnd(prefix))
	if err != nil {
		return 0, err
	}
	var rows, bytes int64
	for ok := it.First(); ok; ok = it.Next() {
		rows++
		bytes += int64(len(it.Key()) + len(it.Value()))
	}
	err = it.Error()
	it.Close()
	if err != nil {
		return 0, err
	}
	all := appendTablePrefix(nil, def.id)
	if err := tx.deleteRange(all, prefixEnd(all)); err != nil {
		return 0, err
	}
	// One range deletion stands for the rows counted above: a row another
	// transaction writes meanwhile must fail the commit, as a deleted row
	// rewritten by another does, not vanish with them.
	tx.guard(all, prefixEnd(all))
	tx.guardDef(def)
	tx.wrote(def.id, -rows, -bytes)
	return int(rows), nil
}

// countVisible counts the rows the transaction sees in a table.
func (t *Table) countVisible(tx *txn, def *tableDef) (int64, error) {
	prefix := appendIndexPrefix(nil, def.id, primaryIndexID)
	it, err := tx.newIter(prefix, prefixEnd(prefix))
	if err != nil {
		return 0, err
	}
	defer it.Close()
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n, it.Error()
}

// Index is a sql.Index over one of a table's indexes.
type Index struct {
	t  *tableDef
	ix *indexDef
}

var (
	_ sql.Index         = (*Index)(nil)
	_ sql.OrderedIndex  = (*Index)(nil)
	_ sql.ExtendedIndex = (*Index)(nil)
)

// ID implements sql.Index: "PRIMARY" for the primary key.
func (i *Index) ID() string { return i.ix.name }

// Database implements sql.Index.
func (i *Index) Database() string { return i.t.db }

// Table implements sql.Index.
func (i *Index) Table() string { return i.t.name }

// Expressions implements sql.Index: "table.column" in key order.
func (i *Index) Expressions() []string {
	out := make([]string, len(i.ix.cols))
	for j, o := range i.ix.cols {
		out[j] = i.t.name + "." + i.t.schema[o].Name
	}
	return out
}

// IsUnique implements sql.Index.
func (i *Index) IsUnique() bool { return i.ix.unique }

// IsSpatial implements sql.Index.
func (i *Index) IsSpatial() bool { return false }

// IsFullText implements sql.Index.
func (i *Index) IsFullText() bool { return false }

// IsVector implements sql.Index.
func (i *Index) IsVector() bool { return false }

// Comment implements sql.Index.
func (i *Index) Comment() string { return i.ix.comment }

// IndexType implements sql.Index.
func (i *Index) IndexType() string { return "BTREE" }

// IsGenerated implements sql.Index.
func (i *Index) IsGenerated() bool { return false }

// ColumnExpressionTypes implements sql.Index.
func (i *Index) ColumnExpressionTypes() []sql.ColumnExpressionType {
	out := make([]sql.ColumnExpressionType, len(i.ix.cols))
	for j, o := range i.ix.cols {
		out[j] = sql.ColumnExpressionType{Expression: i.t.name + "." + i.t.schema[o].Name, Type: i.t.schema[o].Type}
	}
	return out
}

// ExtendedExpressions implements sql.ExtendedIndex: the index columns
// followed by the primary key columns that are not among them, which is
// what a secondary index entry is ordered by.
func (i *Index) ExtendedExpressions() []string {
	cets := i.ExtendedColumnExpressionTypes()
	out := make([]string, len(cets))
	for j, c := range cets {
		out[j] = c.Expression
	}
	return out
}

// ExtendedColumnExpressionTypes implements sql.ExtendedIndex.
func (i *Index) ExtendedColumnExpressionTypes() []sql.ColumnExpressionType {
	out := i.ColumnExpressionTypes()
	in := make(map[int]bool, len(i.ix.cols))
	for _, o := range i.ix.cols {
		in[o] = true
	}
	for _, o := range i.t.pkOrds {
		if !in[o] {
			out = append(out, sql.ColumnExpressionType{Expression: i.t.name + "." + i.t.schema[o].Name, Type: i.t.schema[o].Type})
		}
	}
	return out
}

// CanSupport implements sql.Index.
func (i *Index) CanSupport(*sql.Context, ...sql.Range) bool { return true }

// CanSupportOrderBy implements sql.Index (vector ordering only).
func (i *Index) CanSupportOrderBy(sql.Expression) bool { return false }

// PrefixLengths implements sql.Index: nil when no column has a prefix.
func (i *Index) PrefixLengths() []uint16 {
	if i.ix.prefix == nil {
		return nil
	}
	return append([]uint16(nil), i.ix.prefix...)
}

// Order implements sql.OrderedIndex. An index with a prefix-length column
// is ordered by the prefixes only (values that share one are in primary
// key order), so it gives no order GMS could use in place of a sort: GMS
// trusts an ascending index to order every one of its columns.
func (i *Index) Order() sql.IndexOrder {
	if i.ix.prefix != nil {
		return sql.IndexOrderNone
	}
	return sql.IndexOrderAsc
}

// Reversible implements sql.OrderedIndex.
func (i *Index) Reversible() bool { return true }

// String describes the index.
func (i *Index) String() string {
	return fmt.Sprintf("%s(%s)", i.ix.name, strings.Join(i.Expressions(), ","))
}

// toUint64 converts an explicit auto-increment value.
func toUint64(ctx *sql.Context, v any) (uint64, error) {
	cv, _, err := types.Uint64.Convert(ctx, v)
	if err != nil {
		return 0, err
	}
	u, ok := cv.(uint64)
	if !ok {
		return 0, fmt.Errorf("sqlstore: auto-increment value %v of type %T", v, v)
	}
	return u, nil
}
