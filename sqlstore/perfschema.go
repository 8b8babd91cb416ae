package sqlstore

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// performance_schema
//
// The provider answers for a database performance_schema holding the two
// tables a DBA joins to see who waits for whom on row locks, as in MySQL 8:
// data_lock_waits (one row per waiting lock request and lock it waits for)
// and data_locks (the locks those rows name: the waiting requests and the
// locks blocking them, with the table, index and key values of the row).
// Locks no one waits for are not listed. The database is not among
// AllDatabases (SHOW DATABASES, information_schema), which GMS's suites
// compare whole, and it cannot be created, dropped or written.

// perfSchemaName is the database's name.
const perfSchemaName = "performance_schema"

// perfSchema is the performance_schema database.
type perfSchema struct{ store *Store }

var _ sql.Database = perfSchema{}

func (perfSchema) Name() string { return perfSchemaName }

func (d perfSchema) GetTableInsensitive(ctx *sql.Context, name string) (sql.Table, bool, error) {
	switch strings.ToLower(name) {
	case "data_lock_waits":
		return &perfTable{store: d.store, name: "data_lock_waits", schema: dataLockWaitsSchema, rows: dataLockWaitsRows}, true, nil
	case "data_locks":
		return &perfTable{store: d.store, name: "data_locks", schema: dataLocksSchema, rows: dataLocksRows}, true, nil
	case "metadata_locks":
		return &metadataLocksTable{perfTable{store: d.store, name: "metadata_locks", schema: metadataLocksSchema}}, true, nil
	}
	return nil, false, nil
}

func (perfSchema) GetTableNames(*sql.Context) ([]string, error) {
	return []string{"data_lock_waits", "data_locks", "metadata_locks"}, nil
}

// perfSchema is a sql.ViewDatabase without views: the server's privileged
// provider wraps every database in one that asks for the views of each
// table it resolves, and fails the query when the database cannot answer.
var _ sql.ViewDatabase = perfSchema{}

func (perfSchema) GetViewDefinition(*sql.Context, string) (sql.ViewDefinition, bool, error) {
	return sql.ViewDefinition{}, false, nil
}

func (perfSchema) AllViews(*sql.Context) ([]sql.ViewDefinition, error) { return nil, nil }

// CreateView refuses as MySQL does for any object in performance_schema:
// access denied (1044), whoever asks.
func (perfSchema) CreateView(ctx *sql.Context, _, _, _ string) error {
	return perfSchemaDenied(ctx)
}

func (perfSchema) DropView(ctx *sql.Context, _ string) error { return perfSchemaDenied(ctx) }

func perfSchemaDenied(ctx *sql.Context) error {
	user := "''@''"
	if ctx != nil && ctx.Session != nil {
		c := ctx.Session.Client()
		user = fmt.Sprintf("'%s'@'%s'", c.User, c.Address)
	}
	return sql.ErrDatabaseAccessDeniedForUser.New(user, perfSchemaName)
}

// perfTable is a table of performance_schema, computed when read.
type perfTable struct {
	store  *Store
	name   string
	schema sql.Schema
	rows   func(ctx *sql.Context, waits []LockWait) []sql.Row
}

var _ sql.Table = (*perfTable)(nil)

func (t *perfTable) Name() string               { return t.name }
func (t *perfTable) String() string             { return perfSchemaName + "." + t.name }
func (t *perfTable) Schema() sql.Schema         { return t.schema }
func (t *perfTable) Collation() sql.CollationID { return sql.Collation_Default }
func (t *perfTable) Partitions(*sql.Context) (sql.PartitionIter, error) {
	return sql.PartitionsToPartitionIter(perfPartition{}), nil
}

func (t *perfTable) PartitionRows(ctx *sql.Context, _ sql.Partition) (sql.RowIter, error) {
	waits, err := t.store.LockWaits(ctx)
	if err != nil {
		return nil, err
	}
	return sql.RowsToRowIter(t.rows(ctx, waits)...), nil
}

type perfPartition struct{}

func (perfPartition) Key() []byte { return nil }

func perfColumns(table string, cols ...any) sql.Schema {
	s := make(sql.Schema, 0, len(cols)/2)
	for i := 0; i < len(cols); i += 2 {
		s = append(s, &sql.Column{Name: cols[i].(string), Type: cols[i+1].(sql.Type), Source: table, DatabaseSource: perfSchemaName, Nullable: true})
	}
	return s
}

var (
	varchar64  = types.MustCreateStringWithDefaults(sqltypes.VarChar, 64)
	varchar128 = types.MustCreateStringWithDefaults(sqltypes.VarChar, 128)
	varchar512 = types.MustCreateStringWithDefaults(sqltypes.VarChar, 512)

	dataLockWaitsSchema = perfColumns("data_lock_waits",
		"ENGINE", varchar64,
		"REQUESTING_ENGINE_LOCK_ID", varchar128,
		"REQUESTING_ENGINE_TRANSACTION_ID", types.Uint64,
		"REQUESTING_THREAD_ID", types.Uint64,
		"REQUESTING_EVENT_ID", types.Uint64,
		"REQUESTING_OBJECT_INSTANCE_BEGIN", types.Uint64,
		"BLOCKING_ENGINE_LOCK_ID", varchar128,
		"BLOCKING_ENGINE_TRANSACTION_ID", types.Uint64,
		"BLOCKING_THREAD_ID", types.Uint64,
		"BLOCKING_EVENT_ID", types.Uint64,
		"BLOCKING_OBJECT_INSTANCE_BEGIN", types.Uint64,
	)
	dataLocksSchema = perfColumns("data_locks",
		"ENGINE", varchar64,
		"ENGINE_LOCK_ID", varchar128,
		"ENGINE_TRANSACTION_ID", types.Uint64,
		"THREAD_ID", types.Uint64,
		"EVENT_ID", types.Uint64,
		"OBJECT_SCHEMA", varchar64,
		"OBJECT_NAME", varchar64,
		"PARTITION_NAME", varchar64,
		"SUBPARTITION_NAME", varchar64,
		"INDEX_NAME", varchar64,
		"OBJECT_INSTANCE_BEGIN", types.Uint64,
		"LOCK_TYPE", varchar64,
		"LOCK_MODE", varchar64,
		"LOCK_STATUS", varchar64,
		"LOCK_DATA", varchar512,
	)
)

// lockIDs returns the ENGINE_LOCK_IDs of a wait's two locks: the
// transaction and the row, which is what tells two locks apart here.
func lockIDs(w LockWait) (waiting, blocking string) {
	row := w.Table + ":" + w.Index + ":" + w.Key
	return fmt.Sprintf("%d:%s", w.WaitingTxn, row), fmt.Sprintf("%d:%s", w.BlockingTxn, row)
}

// threadID is a connection's thread ID as performance_schema numbers
// them: the connection ID (nil without a connection).
func threadID(conn uint32) any {
	if conn == 0 {
		return nil
	}
	return uint64(conn)
}

func dataLockWaitsRows(_ *sql.Context, waits []LockWait) []sql.Row {
	rows := make([]sql.Row, 0, len(waits))
	for _, w := range waits {
		req, blk := lockIDs(w)
		rows = append(rows, sql.Row{"STRATA", req, w.WaitingTxn, threadID(w.WaitingConnection), uint64(0), uint64(0),
			blk, w.BlockingTxn, threadID(w.BlockingConnection), uint64(0), uint64(0)})
	}
	return rows
}

func dataLocksRows(_ *sql.Context, waits []LockWait) []sql.Row {
	rows := make([]sql.Row, 0, 2*len(waits))
	seen := make(map[string]bool, 2*len(waits))
	add := func(id string, txn uint64, conn uint32, w LockWait, mode, status string) {
		if seen[id] {
			return
		}
		seen[id] = true
		schema, table, _ := strings.Cut(w.Table, ".")
		rows = append(rows, sql.Row{"STRATA", id, txn, threadID(conn), uint64(0), nullIfEmpty(schema), nullIfEmpty(table), nil, nil,
			nullIfEmpty(w.Index), uint64(0), "RECORD", mode + ",REC_NOT_GAP", status, w.Key})
	}
	for _, w := range waits {
		req, blk := lockIDs(w)
		add(req, w.WaitingTxn, w.WaitingConnection, w, w.WaitingMode, "WAITING")
		status := "GRANTED"
		if w.BlockingWaits {
			status = "WAITING"
		}
		add(blk, w.BlockingTxn, w.BlockingConnection, w, w.BlockingMode, status)
	}
	return rows
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
