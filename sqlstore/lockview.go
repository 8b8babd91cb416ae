package sqlstore

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/strata-db/strata/sqlstore/codec"
	"github.com/strata-db/strata/storage"
)

// Who waits for whom
//
// CALL strata_lock_waits() lists the lock waits of the store's pessimistic
// transactions, one row per waiting transaction and transaction it waits
// for, as MySQL's performance_schema.data_lock_waits (joined with
// data_locks) shows them: the waiting and the blocking connection, the
// modes, how long the wait has lasted, and the row: its table, index and
// key values. The engine lists the waits (storage.LockInspector) by
// transaction; the store maps transactions to connections through the
// registry of its open pessimistic transactions.

// lockRegistry maps the Locker.LockID of open pessimistic transactions to
// them. Every pessimistic transaction that locks enters it and leaves it,
// and only a report of lock waits reads it: a map under a mutex, which
// allocates nothing once grown, where a sync.Map allocated an entry per
// transaction.
type lockRegistry struct {
	mu sync.Mutex
	m  map[uint64]*txn
}

func (r *lockRegistry) add(id uint64, t *txn) {
	r.mu.Lock()
	if r.m == nil {
		r.m = make(map[uint64]*txn)
	}
	r.m[id] = t
	r.mu.Unlock()
}

func (r *lockRegistry) remove(id uint64) {
	r.mu.Lock()
	delete(r.m, id)
	r.mu.Unlock()
}

// connection returns the connection (session) ID of the transaction id, 0
// if it is not open or has no session.
func (r *lockRegistry) connection(id uint64) uint32 {
	r.mu.Lock()
	t := r.m[id]
	r.mu.Unlock()
	if t != nil && t.sess != nil {
		return t.sess.ID()
	}
	return 0
}

// LockWait is one row of Store.LockWaits.
type LockWait struct {
	// WaitingConnection and BlockingConnection are session (connection)
	// IDs, 0 for a transaction without a session.
	WaitingConnection, BlockingConnection uint32
	// WaitingTxn and BlockingTxn are the transactions' lock IDs
	// (storage.Locker.LockID).
	WaitingTxn, BlockingTxn uint64
	// WaitingMode and BlockingMode are "X" or "S"; BlockingWaits is set
	// when the blocker's request waits ahead of this one, not granted.
	WaitingMode, BlockingMode string
	BlockingWaits             bool
	Waited                    time.Duration
	// Table ("db.table"), Index and Key (the index key's column values,
	// joined by '-') name the row; Table is empty for a key outside the
	// tables.
	Table, Index, Key string
}

// LockWaits returns the lock waits of the store's transactions, nil when
// the engine cannot list them.
func (s *Store) LockWaits(ctx *sql.Context) ([]LockWait, error) {
	li, ok := s.engine.(storage.LockInspector)
	if !ok {
		return nil, nil
	}
	ws := li.LockWaits()
	if len(ws) == 0 {
		return nil, nil
	}
	defs, err := s.tablesByID(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([]LockWait, 0, len(ws))
	for _, w := range ws {
		lw := LockWait{
			WaitingTxn:         w.Waiter,
			BlockingTxn:        w.Blocker,
			WaitingConnection:  s.locks.connection(w.Waiter),
			BlockingConnection: s.locks.connection(w.Blocker),
			WaitingMode:        modeName(w.Mode),
			BlockingMode:       modeName(w.BlockerMode),
			BlockingWaits:      w.BlockerWaits,
			Waited:             now.Sub(w.Since),
		}
		lw.Table, lw.Index, lw.Key = describeKey(ctx, defs, w.Key)
		out = append(out, lw)
	}
	return out, nil
}

func modeName(m storage.LockMode) string {
	if m == storage.LockShared {
		return "S"
	}
	return "X"
}

// tablesByID returns the definitions of every table of every database by
// table ID, as the latest committed catalog has them.
func (s *Store) tablesByID(ctx *sql.Context) (map[uint64]*tableDef, error) {
	t := s.beginTxn(true)
	defer t.rollback()
	out := make(map[uint64]*tableDef)
	var dbs []string
	err := scanCatalog(t, catalogKey(kindDatabase), func(_, v []byte) error {
		var rec databaseRecord
		if err := decodeRecord(v, &rec, "database"); err != nil {
			return err
		}
		dbs = append(dbs, rec.Name)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, db := range dbs {
		err := scanCatalog(t, catalogKey(kindTable, db), func(_, v []byte) error {
			def, err := s.defs.get(db, v)
			if err != nil {
				return err
			}
			out[def.id] = def
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// describeKey names the row or unique key of a data key: its table, index
// and the index's column values. A key it cannot decode is shown in hex.
func describeKey(ctx *sql.Context, defs map[uint64]*tableDef, key []byte) (table, index, values string) {
	hex := fmt.Sprintf("%x", key)
	if len(key) == 0 || key[0] != prefixData {
		return "", "", hex
	}
	rest, id, err := codec.DecodeUvarintAscending(key[1:])
	if err != nil {
		return "", "", hex
	}
	d, ok := defs[id]
	if !ok {
		return "", "", hex
	}
	table = d.db + "." + d.name
	rest, ixID, err := codec.DecodeUvarintAscending(rest)
	if err != nil {
		return table, "", hex
	}
	var ix *indexDef
	if uint32(ixID) == primaryIndexID {
		ix = d.primary
	} else {
		for _, x := range d.secondary {
			if uint64(x.id) == ixID {
				ix = x
			}
		}
	}
	if ix == nil {
		return table, "", hex
	}
	if len(ix.cols) == 0 { // a keyless table's hidden row ID
		if _, rowID, err := codec.DecodeUvarintAscending(rest); err == nil {
			return table, ix.name, fmt.Sprintf("row %d", rowID)
		}
		return table, ix.name, hex
	}
	full := make(sql.Row, len(d.schema))
	need := make([]bool, len(d.schema))
	for _, o := range ix.cols {
		need[o] = true
	}
	if _, err := d.decodeKeyCols(ix, ix.cols, need, rest, full); err != nil {
		return table, ix.name, hex
	}
	var b strings.Builder
	for i, o := range ix.cols {
		if i > 0 {
			b.WriteByte('-')
		}
		v, err := d.schema[o].Type.SQL(ctx, nil, full[o])
		if err != nil {
			fmt.Fprintf(&b, "%v", full[o])
			continue
		}
		b.WriteString(v.ToString())
	}
	return table, ix.name, b.String()
}

// lockWaitsProcedure is CALL strata_lock_waits() over s.
func lockWaitsProcedure(s *Store) sql.ExternalStoredProcedureDetails {
	col := func(name string, typ sql.Type) *sql.Column {
		return &sql.Column{Name: name, Type: typ, Source: "strata_lock_waits"}
	}
	text := types.LongText
	return sql.ExternalStoredProcedureDetails{
		Name: "strata_lock_waits",
		Schema: sql.Schema{
			col("waiting_connection", types.Uint32), col("waiting_mode", text),
			col("blocking_connection", types.Uint32), col("blocking_mode", text), col("blocking_waits", types.Boolean),
			col("wait_seconds", types.Float64), col("table", text), col("index", text), col("key", text),
		},
		Function: func(ctx *sql.Context) (sql.RowIter, error) {
			ws, err := s.LockWaits(ctx)
			if err != nil {
				return nil, err
			}
			rows := make([]sql.Row, len(ws))
			for i, w := range ws {
				rows[i] = sql.Row{w.WaitingConnection, w.WaitingMode, w.BlockingConnection, w.BlockingMode,
					w.BlockingWaits, w.Waited.Seconds(), w.Table, w.Index, w.Key}
			}
			return sql.RowsToRowIter(rows...), nil
		},
		ReadOnly: true,
	}
}

// nameConflict returns a lost write conflict whose key the engine reported
// (storage.ConflictError) as this package's ErrConflict naming the row's
// table, index and key values instead of the key's bytes; err itself for
// another error or a key outside the tables.
func (s *Store) nameConflict(err error) error {
	var ce *storage.ConflictError
	if !errors.As(err, &ce) || len(ce.Key) == 0 {
		return err
	}
	ctx := sql.NewEmptyContext()
	defs, derr := s.tablesByID(ctx)
	if derr != nil {
		return err
	}
	table, index, key := describeKey(ctx, defs, ce.Key)
	if table == "" || index == "" {
		return err
	}
	if ce.End != nil {
		return fmt.Errorf("%w: rows of table %s read by this transaction (index %s, from key '%s') were changed", ErrConflict, table, index, key)
	}
	return fmt.Errorf("%w: table %s, index %s, key '%s'", ErrConflict, table, index, key)
}

// What a waiting statement shows in the process list
//
// MySQL's process list (SHOW PROCESSLIST, information_schema.PROCESSLIST)
// shows a statement waiting for a metadata lock in State "Waiting for
// table metadata lock"; one waiting for a row lock shows the stage it
// waits in: "updating" for UPDATE and DELETE, "update" for INSERT and
// REPLACE, "executing" for a locking read. The store knows who waits from
// its lock tables (the metadata locks' queues, the engine's row-lock
// waits), so nothing is recorded on the statement's path: the process
// list asks when it is read.

// Process list states of a waiting statement.
const (
	StateWaitingMetadataLock = "Waiting for table metadata lock"
	stateUpdating            = "updating"
	stateUpdate              = "update"
	stateExecuting           = "executing"
)

// Wait is what a connection's statement waits for.
type Wait uint8

const (
	// WaitMetadataLock is a wait for a table's metadata lock (mdl.go).
	WaitMetadataLock Wait = iota + 1
	// WaitRowLock is a wait for a row lock of another transaction.
	WaitRowLock
)

// State returns the process list State of a statement, query, that waits
// as w says.
func (w Wait) State(query string) string {
	if w == WaitMetadataLock {
		return StateWaitingMetadataLock
	}
	first, _ := LeadingWords(query)
	switch {
	case strings.EqualFold(first, "update"), strings.EqualFold(first, "delete"):
		return stateUpdating
	case strings.EqualFold(first, "insert"), strings.EqualFold(first, "replace"):
		return stateUpdate
	}
	return stateExecuting
}

// Waits returns the connections whose statement waits now for a lock, by
// connection ID; a metadata lock wait wins over a row lock wait (a
// statement waits for one thing at a time, but the two views are read
// one after the other).
func (s *Store) Waits() map[uint32]Wait {
	var out map[uint32]Wait
	add := func(conn uint32, w Wait) {
		if conn == 0 {
			return
		}
		if out == nil {
			out = make(map[uint32]Wait)
		}
		if out[conn] != WaitMetadataLock {
			out[conn] = w
		}
	}
	if li, ok := s.engine.(storage.LockInspector); ok {
		for _, w := range li.LockWaits() {
			add(s.locks.connection(w.Waiter), WaitRowLock)
		}
	}
	for _, r := range s.mdl.rows() {
		if !r.granted && r.sess != nil {
			add(r.sess.ID(), WaitMetadataLock)
		}
	}
	return out
}
