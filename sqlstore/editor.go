package sqlstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/shopspring/decimal"
	"github.com/strata-db/strata/sqlstore/codec"
)

var (
	_ sql.TableEditor         = (*editor)(nil)
	_ sql.RowInserter         = (*editor)(nil)
	_ sql.RowUpdater          = (*editor)(nil)
	_ sql.RowDeleter          = (*editor)(nil)
	_ sql.RowReplacer         = (*editor)(nil)
	_ sql.AutoIncrementSetter = (*editor)(nil)
)

// editor writes rows of one table into the session's transaction, keeping
// every secondary index in step and enforcing primary and unique keys: a
// duplicate is sql.NewUniqueKeyErr with the full existing row (REPLACE
// deletes that row and retries; ON DUPLICATE KEY UPDATE updates it). The
// checks read through the transaction's batch, so they see rows written
// earlier in the same statement and transaction.
//
// Statement boundaries: StatementBegin marks the transaction and
// DiscardChanges rolls back to the mark; for INSERT IGNORE GMS brackets
// every row, so a failing row is undone alone.
type editor struct {
	t   *Table
	def *tableDef
	tx  *txn
	err error // set when the context had no usable transaction at creation

	mark    txnMark
	markTx  *txn // the transaction mark belongs to
	marked  bool
	rewrite *rewrite // set for RewriteInserter and index builders (alter.go)

	// mdlTx is the transaction bind asked for the table's metadata lock
	// (mdl.go), mdlEpoch its txnMDL.epoch then, mdlErr the answer.
	mdlTx    *txn
	mdlEpoch uint64
	mdlErr   error

	keyBuf, valBuf, pkBuf, ixBuf, ix2Buf []byte
	oldKey, oldPK                        []byte // Update's old key, out of keyBuf's way

	// pf holds the duplicate-key reads of the statement's rows, read at
	// its first Insert (insertprefetch.go); nil when there are none.
	pf        *insertPrefetch
	pfSess    *Session
	pfStarted bool
}

func (t *Table) newEditor(ctx *sql.Context) *editor {
	e := &editor{t: t.full(), def: t.def}
	if e.err = e.bind(ctx); e.err == nil {
		// A statement that changed the table's definition (ALTER) writes
		// with the new one.
		if def, ok, err := t.db.readTableAgain(e.tx, t.def); err == nil && ok {
			e.def = def
		}
	}
	return e
}

// bind sets the transaction to write to: the context's, which may change
// under a long statement (a procedure called by a trigger commits).
func (e *editor) bind(ctx *sql.Context) error {
	if e.rewrite != nil && e.tx != nil {
		return nil
	}
	tx, err := e.t.store.writer(ctx)
	if err != nil {
		return err
	}
	if tx.readOnly && e.rewrite == nil {
		return sql.ErrReadOnlyTransaction.New()
	}
	e.tx = tx
	if tx != e.mdlTx || tx.mdl.epoch.Load() != e.mdlEpoch {
		// The table's metadata lock, once per transaction (mdl.go).
		e.mdlTx, e.mdlErr = tx, e.lockForWrite(ctx)
		e.mdlEpoch = tx.mdl.epoch.Load()
	}
	return e.mdlErr
}

// retryLock makes the next bind ask again for a metadata lock the
// transaction failed to get (a lock wait timeout, a deadlock victim's 1213
// with the transaction kept): each statement asks anew, as MySQL's do,
// while the rows of the statement that failed do not wait again. A plan
// made stale by a DDL statement keeps its error (errPlanChanged): asked
// again, the lock would be granted at once and the stale plan run.
func (e *editor) retryLock() {
	if e.mdlErr == nil {
		return
	}
	if n := MySQLError(e.mdlErr).Num; n == mysql.ERLockWaitTimeout || n == mysql.ERLockDeadlock {
		e.mdlTx = nil
	}
}

// StatementBegin implements sql.EditOpenerCloser.
func (e *editor) StatementBegin(ctx *sql.Context) {
	e.retryLock()
	if e.bind(ctx) == nil {
		e.openStatement()
	}
}

// openStatement opens the statement bracket in the transaction the editor
// is bound to.
func (e *editor) openStatement() {
	e.endMarked()
	e.mark, e.marked, e.markTx = e.tx.mark(), true, e.tx
	e.tx.mu.Lock()
	e.tx.editing++
	e.tx.mu.Unlock()
}

// endMarked ends the statement bracket StatementBegin opened.
func (e *editor) endMarked() {
	if !e.marked {
		return
	}
	e.marked = false
	e.markTx.mu.Lock()
	e.markTx.editing--
	e.markTx.mu.Unlock()
}

// DiscardChanges implements sql.EditOpenerCloser: it undoes the writes
// since StatementBegin (all of the statement's for DDL rewrites).
func (e *editor) DiscardChanges(ctx *sql.Context, errorEncountered error) error {
	if e.tx == nil {
		return nil
	}
	if e.rewrite != nil {
		e.rewrite.failed = true
		return e.tx.rollbackStatement()
	}
	if e.marked {
		e.endMarked()
		if e.markTx == e.tx {
			if e.pf != nil && e.tx.writeCount() != e.mark.count {
				e.pf = nil // the batch's reads may have counted on what is undone
			}
			return e.tx.rollbackTo(e.mark)
		}
	}
	return nil
}

// StatementComplete implements sql.EditOpenerCloser: a statement boundary,
// after which scans see the statement's writes.
func (e *editor) StatementComplete(ctx *sql.Context) error {
	e.endMarked()
	if e.mdlErr != nil {
		// The table's metadata lock failed (mdl.go): the statement
		// fails, though no row reached the editor.
		return e.mdlErr
	}
	if e.tx != nil {
		e.tx.endStatement()
	}
	return nil
}

// Close implements sql.Closer; a rewrite is installed here (alter.go).
func (e *editor) Close(ctx *sql.Context) error {
	e.endMarked()
	if e.rewrite != nil && e.tx != nil {
		return e.rewrite.finish(ctx, e)
	}
	return nil
}

// wrote records a change of the table's rows.
func (e *editor) wrote(rows, bytes int64) {
	if e.rewrite != nil {
		e.rewrite.rows += rows
		e.rewrite.bytes += bytes
		return
	}
	e.tx.wrote(e.def.id, rows, bytes)
	e.tx.guardDef(e.def)
}

// primaryKey returns the primary index key of a stored row.
func (e *editor) primaryKey(row sql.Row) ([]byte, error) {
	pk, err := e.def.appendPK(e.pkBuf[:0], row)
	e.pkBuf = pk
	if err != nil {
		return nil, err
	}
	e.keyBuf = appendIndexPrefix(e.keyBuf[:0], e.def.id, primaryIndexID)
	e.keyBuf = append(e.keyBuf, pk...)
	return e.keyBuf, nil
}

// getRow reads and decodes the row stored under a primary index key: in a
// pessimistic transaction the latest (the caller has locked the key).
func (e *editor) getRow(key []byte) (sql.Row, []byte, bool, error) {
	v, ok, err := e.tx.getRowValue(key)
	if err != nil || !ok {
		return nil, nil, false, err
	}
	row, err := e.def.decodeRow(v, nil, nil)
	if err != nil {
		return nil, nil, false, err
	}
	return row, v, true, nil
}

// checkLatest guards a pessimistic transaction's update or delete of a row
// its statement did not lock and read again (a statement a trigger or a
// procedure runs, whose text ctx does not hold): when the row's latest
// version (latest, decoded as stored) is not the transaction's snapshot
// version and not the row GMS computed from (old), the write would
// overwrite a commit the statement never saw, so it fails with a conflict
// (1213) instead.
func (e *editor) checkLatest(ctx *sql.Context, key, latest []byte, stored, old sql.Row) error {
	if e.tx.locker == nil {
		return nil
	}
	if _, ok := statementLock(ctx, e.tx); ok {
		return nil
	}
	snap, found, err := e.tx.get(key)
	if err != nil {
		return err
	}
	if found && bytes.Equal(snap, latest) {
		return nil
	}
	if rowsEqual(stored, old) {
		return nil
	}
	return toSQLError(fmt.Errorf("%w: table %s: a row changed by another transaction after this statement read it", ErrConflict, e.def.name))
}

// rowByPK reads the row whose primary key suffix is pk.
func (e *editor) rowByPK(pk []byte) (sql.Row, bool, error) {
	key := appendIndexPrefix(nil, e.def.id, primaryIndexID)
	key = append(key, pk...)
	row, _, ok, err := e.getRow(key)
	return row, ok, err
}

// Insert implements sql.RowInserter.
func (e *editor) Insert(ctx *sql.Context, row sql.Row) error {
	if err := e.bind(ctx); err != nil {
		return err
	}
	if len(row) != len(e.def.schema) {
		return fmt.Errorf("sqlstore: insert into %s: row of %d values for %d columns", e.def.name, len(row), len(e.def.schema))
	}
	if err := e.def.checkFinite(row); err != nil {
		return err
	}
	if e.def.keyless {
		return e.insertKeyless(ctx, row)
	}
	if !e.pfStarted {
		e.pfStarted = true
		e.startPrefetch(ctx)
	}
	if e.pf != nil {
		e.pf.next++
	}
	key, err := e.primaryKey(row)
	if err != nil {
		return err
	}
	if err := e.tx.lockRowKey(ctx, key); err != nil {
		return err
	}
	if existing, found, err := e.insertedRow(key); err != nil {
		return err
	} else if found {
		return sql.NewUniqueKeyErr(dupEntry(ctx, e.def, e.def.primary, row), true, existing)
	}
	if err := e.checkUnique(ctx, row, nil); err != nil {
		return err
	}
	if err := e.put(row, e.pkBuf, key); err != nil {
		return err
	}
	if e.pf != nil {
		e.pf.count = e.tx.writeCount()
	}
	return nil
}

// insertedRow reads the row stored under the primary index key of a row
// being inserted, from the statement's batch of reads when it answers.
func (e *editor) insertedRow(key []byte) (sql.Row, bool, error) {
	v, found, ok := e.prefetched(0, key)
	if !ok {
		row, _, found, err := e.getRow(key)
		return row, found, err
	}
	if !found {
		return nil, false, nil
	}
	row, err := e.def.decodeRow(v, nil, nil)
	if err != nil {
		return nil, false, err
	}
	return row, true, nil
}

// checkFinite fails for a NaN or an infinity in row. GMS converts the
// strings 'nan' and 'inf' into DOUBLE and FLOAT, which MySQL refuses; stored,
// NaN made comparisons and SUM nonsense and could not enter an index.
func (d *tableDef) checkFinite(row sql.Row) error {
	for i, v := range row {
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case float32:
			f = float64(x)
		default:
			continue
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return sql.ErrValueOutOfRange.New(v, d.schema[i].Name)
		}
	}
	return nil
}

// checkUnique checks row against the unique indexes; self is the primary
// key suffix of the row being updated (its own entries do not collide).
func (e *editor) checkUnique(ctx *sql.Context, row sql.Row, self []byte) error {
	for _, ix := range e.def.secondary {
		if !ix.unique {
			continue
		}
		key, val, err := e.def.indexEntry(e.ixBuf[:0], ix, row, []byte{})
		e.ixBuf = key
		if err != nil {
			return err
		}
		j := -1
		if self == nil {
			j = e.pf.prefetchIndex(ix)
		}
		if val == nil { // a NULL column: never collides
			if j >= 0 {
				e.prefetched(j, nil) // drops the batch if it foresaw a key
			}
			continue
		}
		if err := e.tx.lockRowKey(ctx, key); err != nil {
			return err
		}
		pk, found, ok := e.prefetched(j, key)
		if j < 0 || !ok {
			if pk, found, err = e.tx.getRowValue(key); err != nil {
				return err
			}
		}
		if !found || (self != nil && bytes.Equal(pk, self)) {
			continue
		}
		existing, ok, err := e.rowByPK(pk)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: table %s unique index %s: entry without a row", ErrCorruptCatalog, e.def.name, ix.name)
		}
		return sql.NewUniqueKeyErr(dupEntry(ctx, e.def, ix, row), false, existing)
	}
	return nil
}

// put writes a row under key (its primary key suffix is pk) and its index
// entries.
func (e *editor) put(row sql.Row, pk, key []byte) error {
	val, err := e.def.encodeRow(e.valBuf[:0], row)
	e.valBuf = val
	if err != nil {
		return fmt.Errorf("sqlstore: insert into %s: %w", e.def.name, err)
	}
	if err := e.tx.set(key, val); err != nil {
		return err
	}
	pk = append([]byte(nil), pk...)
	for _, ix := range e.def.secondary {
		k, v, err := e.def.indexEntry(e.ixBuf[:0], ix, row, pk)
		e.ixBuf = k
		if err != nil {
			return err
		}
		if err := e.tx.set(k, v); err != nil {
			return err
		}
	}
	e.wrote(1, int64(len(key)+len(val)))
	return nil
}

// remove deletes a stored row (given as stored) and its index entries.
func (e *editor) remove(row sql.Row, pk, key []byte, size int) error {
	if err := e.tx.del(key); err != nil {
		return err
	}
	for _, ix := range e.def.secondary {
		k, _, err := e.def.indexEntry(e.ixBuf[:0], ix, row, pk)
		e.ixBuf = k
		if err != nil {
			return err
		}
		if err := e.tx.del(k); err != nil {
			return err
		}
	}
	e.wrote(-1, -int64(len(key)+size))
	return nil
}

// Delete implements sql.RowDeleter. Deleting a row that is not there is not
// an error (GMS may hand the same row twice, from a join).
func (e *editor) Delete(ctx *sql.Context, row sql.Row) error {
	if err := e.bind(ctx); err != nil {
		return err
	}
	if e.def.keyless {
		return e.deleteKeyless(ctx, row)
	}
	key, err := e.primaryKey(row)
	if err != nil {
		return err
	}
	if err := e.tx.lockRowKey(ctx, key); err != nil {
		return err
	}
	stored, v, found, err := e.getRow(key)
	if err != nil || !found {
		return err
	}
	if err := e.checkLatest(ctx, key, v, stored, row); err != nil {
		return err
	}
	return e.remove(stored, append([]byte(nil), e.pkBuf...), append([]byte(nil), key...), len(v))
}

// Update implements sql.RowUpdater. A changed primary key moves the row:
// the new key is checked like an insert.
func (e *editor) Update(ctx *sql.Context, old, new sql.Row) error {
	if err := e.bind(ctx); err != nil {
		return err
	}
	if err := e.def.checkFinite(new); err != nil {
		return err
	}
	if e.def.keyless {
		return e.updateKeyless(ctx, old, new)
	}
	oldKey, err := e.primaryKey(old)
	if err != nil {
		return err
	}
	// primaryKey(new) reuses keyBuf and pkBuf: the old key is kept in
	// buffers of its own.
	e.oldKey = append(e.oldKey[:0], oldKey...)
	e.oldPK = append(e.oldPK[:0], e.pkBuf...)
	oldKey, oldPK := e.oldKey, e.oldPK
	if err := e.tx.lockRowKey(ctx, oldKey); err != nil {
		return err
	}
	stored, v, found, err := e.getRow(oldKey)
	if err != nil {
		return err
	}
	if found {
		if err := e.checkLatest(ctx, oldKey, v, stored, old); err != nil {
			return err
		}
	}
	return e.updateAt(ctx, stored, found, len(v), oldKey, oldPK, new)
}

// updateStored is Update of a row the statement has just locked and read
// itself (writedirect.go), with the editor bound: stored is the row as
// stored under key (its value had size bytes), the row GMS would have
// handed to Update.
func (e *editor) updateStored(ctx *sql.Context, stored, new sql.Row, key []byte, size int) error {
	if err := e.def.checkFinite(new); err != nil {
		return err
	}
	return e.updateAt(ctx, stored, true, size, key, key[indexPrefixLen(e.def.id, primaryIndexID):], new)
}

// updateAt writes new in place of the row under oldKey (primary key
// suffix oldPK): stored as it is stored there (size bytes), if found. Its
// buffers are not keyBuf or pkBuf.
func (e *editor) updateAt(ctx *sql.Context, stored sql.Row, found bool, size int, oldKey, oldPK []byte, new sql.Row) error {
	newKey, err := e.primaryKey(new)
	if err != nil {
		return err
	}
	moved := !bytes.Equal(oldKey, newKey)
	if moved {
		newKey = append([]byte(nil), newKey...)
		newPK := append([]byte(nil), e.pkBuf...)
		if err := e.tx.lockRowKey(ctx, newKey); err != nil {
			return err
		}
		if existing, _, dup, err := e.getRow(newKey); err != nil {
			return err
		} else if dup {
			return sql.NewUniqueKeyErr(dupEntry(ctx, e.def, e.def.primary, new), true, existing)
		}
		if err := e.checkUnique(ctx, new, oldPK); err != nil {
			return err
		}
		if found {
			if err := e.remove(stored, oldPK, oldKey, size); err != nil {
				return err
			}
		}
		return e.put(new, newPK, newKey)
	}
	if err := e.checkUnique(ctx, new, oldPK); err != nil {
		return err
	}
	if found {
		return e.replace(stored, new, oldPK, oldKey, size)
	}
	return e.put(new, oldPK, oldKey)
}

// replace writes row new over the stored row under the same key (its
// primary key suffix is pk; the stored value had size bytes), rewriting
// only the index entries that change: an UPDATE of columns no index holds
// writes one key, and its commit checks one.
func (e *editor) replace(stored, new sql.Row, pk, key []byte, size int) error {
	val, err := e.def.encodeRow(e.valBuf[:0], new)
	e.valBuf = val
	if err != nil {
		return fmt.Errorf("sqlstore: update %s: %w", e.def.name, err)
	}
	if err := e.tx.set(key, val); err != nil {
		return err
	}
	for _, ix := range e.def.secondary {
		oldK, _, err := e.def.indexEntry(e.ixBuf[:0], ix, stored, pk)
		e.ixBuf = oldK
		if err != nil {
			return err
		}
		newK, newV, err := e.def.indexEntry(e.ix2Buf[:0], ix, new, pk)
		e.ix2Buf = newK
		if err != nil {
			return err
		}
		if bytes.Equal(oldK, newK) {
			continue // the same key, and so the same value
		}
		if err := e.tx.del(oldK); err != nil {
			return err
		}
		if err := e.tx.set(newK, newV); err != nil {
			return err
		}
	}
	e.wrote(0, int64(len(val)-size))
	return nil
}

// Keyless tables. A keyless row's key is a hidden row ID from the store's
// allocator (uvarint), so rows scan in insertion order as in MySQL;
// duplicates are separate rows. A hidden hash index (keylessHashIndexID:
// an 8-byte hash of the row, JSON columns left out since their text form is
// not canonical, then the row ID; empty value) leads a delete by value to
// the rows that may be equal, and the first equal one is removed.

// keylessHashIndexID is the index ID of a keyless table's hash index; part
// of the on-disk format.
const keylessHashIndexID = 0

func (e *editor) hiddenHash(row sql.Row) (uint64, error) {
	h := row
	if e.def.hasJSON {
		h = append(sql.Row(nil), row...)
		for i, c := range e.def.schema {
			if types.IsJSON(c.Type) {
				h[i] = nil
			}
		}
	}
	b, err := e.def.encodeRow(e.valBuf[:0], h)
	e.valBuf = b
	if err != nil {
		return 0, fmt.Errorf("sqlstore: table %s: %w", e.def.name, err)
	}
	return xxhash.Sum64(b), nil
}

// hashKey appends the hash index key of a keyless row.
func (e *editor) hashKey(dst []byte, hash uint64, pk []byte) []byte {
	dst = appendIndexPrefix(dst, e.def.id, keylessHashIndexID)
	dst = binary.BigEndian.AppendUint64(dst, hash)
	return append(dst, pk...)
}

func (e *editor) insertKeyless(ctx *sql.Context, row sql.Row) error {
	h, err := e.hiddenHash(row)
	if err != nil {
		return err
	}
	if err := e.checkUnique(ctx, row, nil); err != nil {
		return err
	}
	id, err := e.t.store.rowIDs.alloc()
	if err != nil {
		return err
	}
	pk := codec.AppendUvarintAscending(nil, id)
	key := appendIndexPrefix(nil, e.def.id, primaryIndexID)
	key = append(key, pk...)
	if err := e.put(row, pk, key); err != nil {
		return err
	}
	return e.tx.set(e.hashKey(nil, h, pk), nil)
}

func (e *editor) deleteKeyless(ctx *sql.Context, row sql.Row) error {
	_, err := e.removeKeyless(ctx, row)
	return err
}

// updateKeyless replaces a stored row equal to old by new under the same
// row ID, as InnoDB keeps a row's hidden ID: a transaction waiting to lock
// the row finds it again under its ID. Without such a row it inserts new.
func (e *editor) updateKeyless(ctx *sql.Context, old, new sql.Row) error {
	pk, err := e.removeKeyless(ctx, old)
	if err != nil {
		return err
	}
	if pk == nil {
		return e.insertKeyless(ctx, new)
	}
	h, err := e.hiddenHash(new)
	if err != nil {
		return err
	}
	if err := e.checkUnique(ctx, new, nil); err != nil {
		return err
	}
	key := appendIndexPrefix(nil, e.def.id, primaryIndexID)
	key = append(key, pk...)
	if err := e.put(new, pk, key); err != nil {
		return err
	}
	return e.tx.set(e.hashKey(nil, h, pk), nil)
}

// removeKeyless deletes the first stored row equal to row, with its index
// and hash entries, and returns its row ID key (nil when there is none).
func (e *editor) removeKeyless(ctx *sql.Context, row sql.Row) ([]byte, error) {
	h, err := e.hiddenHash(row)
	if err != nil {
		return nil, err
	}
	prefix := e.hashKey(nil, h, nil)
	it, err := e.tx.newHashIter(prefix, prefixEnd(prefix))
	if err != nil {
		return nil, err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		pk := append([]byte(nil), it.Key()[len(prefix):]...)
		key := appendIndexPrefix(nil, e.def.id, primaryIndexID)
		key = append(key, pk...)
		if err := e.tx.lockRowKey(ctx, key); err != nil {
			return nil, err
		}
		stored, v, found, err := e.getRow(key)
		if err != nil {
			return nil, err
		}
		if !found || !rowsEqual(stored, row) {
			continue
		}
		hk := append([]byte(nil), it.Key()...)
		if err := it.Close(); err != nil {
			return nil, err
		}
		if err := e.remove(stored, pk, key, len(v)); err != nil {
			return nil, err
		}
		return pk, e.tx.del(hk)
	}
	return nil, it.Error()
}

// rowsEqual reports whether two rows hold the same values exactly (not
// collation-equal: a keyless delete must remove a copy of that very row).
func rowsEqual(a, b sql.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !valuesEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

func valuesEqual(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch x := a.(type) {
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case decimal.Decimal:
		y, ok := b.(decimal.Decimal)
		return ok && x.Equal(y) && x.Exponent() == y.Exponent()
	case sql.JSONWrapper:
		c, err := types.JSON.Compare(context.Background(), a, b)
		return err == nil && c == 0
	}
	if aw, ok := a.(sql.AnyWrapper); ok {
		if u, err := aw.UnwrapAny(context.Background()); err == nil {
			return valuesEqual(u, b)
		}
	}
	if bw, ok := b.(sql.AnyWrapper); ok {
		if u, err := bw.UnwrapAny(context.Background()); err == nil {
			return valuesEqual(a, u)
		}
	}
	return comparableEqual(a, b)
}

// comparableEqual is a == b, false for uncomparable dynamic types.
func comparableEqual(a, b any) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return a == b
}

// SetAutoIncrementValue implements sql.AutoIncrementSetter. As in InnoDB, a
// value at or below the column's largest value sets the counter just past
// it instead: the next insert would otherwise collide with an existing row.
// TRUNCATE resets the counter to 1 after emptying the table, while the
// statement still reads its old rows.
func (e *editor) SetAutoIncrementValue(ctx *sql.Context, v uint64) error {
	if err := e.bind(ctx); err != nil {
		return err
	}
	if pos := e.def.autoIncCol; pos >= 0 && !isTruncateStatement(ctx.Query()) {
		hi, err := e.t.largestValue(ctx, e.def, pos)
		if err != nil {
			return err
		}
		v = max(v, hi+1)
	}
	return e.t.store.autoinc.set(e.def.id, v)
}

// AcquireAutoIncrementLock implements sql.AutoIncrementSetter; counters
// have their own locks.
func (e *editor) AcquireAutoIncrementLock(ctx *sql.Context) (func(), error) {
	return func() {}, nil
}

// dupEntry describes, for a duplicate-key error, the entry of row in index
// ix as MySQL's error 1062 does after "Duplicate entry ": the key's values
// as text, joined by '-' and cut to 64 characters, and the key named
// table.index:
//
//	'7-abc' for key 't.uk'
//
// GMS puts it after its own words ("duplicate unique key given: "), and
// the MySQL error (dupEntryMessage) after MySQL's.
func dupEntry(ctx *sql.Context, def *tableDef, ix *indexDef, row sql.Row) string {
	var b strings.Builder
	for i, o := range ix.cols {
		if i > 0 {
			b.WriteByte('-')
		}
		v, err := def.schema[o].Type.SQL(ctx, nil, row[o])
		if err != nil {
			fmt.Fprintf(&b, "%v", row[o])
			continue
		}
		b.WriteString(v.ToString())
	}
	entry := b.String()
	if n := 0; utf8.RuneCountInString(entry) > 64 {
		for i := range entry {
			if n == 64 {
				entry = entry[:i]
				break
			}
			n++
		}
	}
	return fmt.Sprintf("'%s' for key '%s.%s'", entry, def.name, ix.name)
}
