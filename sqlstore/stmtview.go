package sqlstore

import (
	"fmt"

	"github.com/strata-db/strata/kv"
)

// Statement views.
//
// A statement must not see its own writes while it reads the tables it
// writes: UPDATE t SET id = id + 10 would revisit moved rows, and a join
// that rescans its inner table for every outer row would see rows updated a
// moment before (GMS then counts them twice). GMS's own backend applies a
// statement's edits when the statement completes; this package does the
// same with two batches. The transaction's batch takes every write at once,
// for point reads (uniqueness checks, the existing row of REPLACE and ON
// DUPLICATE KEY UPDATE, foreign key checks, the catalog) and for commit.
// Scans read the view instead: the transaction's writes up to the last
// statement boundary. Boundaries are the start of each statement
// (ValidateSession), the completion of each statement's edits
// (StatementComplete, which GMS also calls between the statements of a
// stored procedure and for every row of INSERT IGNORE) and the end of each
// DDL step. Writes are logged (ops: the offset of each write's entry in the
// transaction's batch, which the batch reads back with CopyEntry, so the log
// holds no copy of a key or value) and copied into the view lazily, when a
// scan starts and the view lags the last boundary, so transactions that
// never read after writing pay nothing for it.

// endStatement records a statement boundary: scans made from now on see
// every write made so far.
func (t *txn) endStatement() {
	t.mu.Lock()
	t.boundary = len(t.ops)
	t.mu.Unlock()
}

// viewAtLocked returns a batch of the writes before boundary at (nil when
// there are none), built from the log. REQUIRES: t.mu held.
func (t *txn) viewAtLocked(at int) (*kv.Batch, error) {
	if at == 0 {
		return nil, nil
	}
	if t.oldView != nil && t.oldViewAt == at {
		return t.oldView, nil
	}
	b := t.store.db.NewIndexedBatch()
	if err := t.applyOps(b, t.ops[:at]); err != nil {
		return nil, err
	}
	t.oldView, t.oldViewAt = b, at
	return b, nil
}

// applyOps adds to b the writes of t's batch at offsets ops.
func (t *txn) applyOps(b *kv.Batch, ops []int) error {
	for _, off := range ops {
		if err := t.batch.CopyEntry(b, off); err != nil {
			return fmt.Errorf("sqlstore: statement view: %w", err)
		}
	}
	return nil
}

// syncViewLocked brings the view up to the last boundary and returns the
// batch scans read (nil: the snapshot alone). REQUIRES: t.mu held.
func (t *txn) syncViewLocked() (*kv.Batch, error) {
	if t.boundary == 0 && t.view == nil {
		return nil, nil
	}
	if t.view == nil {
		t.view = t.store.db.NewIndexedBatch()
	}
	if err := t.applyOps(t.view, t.ops[t.synced:t.boundary]); err != nil {
		return nil, err
	}
	t.synced = t.boundary
	return t.view, nil
}
