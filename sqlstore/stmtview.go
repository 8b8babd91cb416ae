package sqlstore

// Statement views.
//
// A statement must not see its own writes while it reads the tables it
// writes: UPDATE t SET id = id + 10 would revisit moved rows, and a join
// that rescans its inner table for every outer row would see rows updated a
// moment before (GMS then counts them twice). GMS's own backend applies a
// statement's edits when the statement completes; this package does the
// same with two readers. The transaction takes every write at once,
// for point reads (uniqueness checks, the existing row of REPLACE and ON
// DUPLICATE KEY UPDATE, foreign key checks, the catalog) and for commit.
// Scans read the view instead: the transaction's writes up to the last
// statement boundary. Boundaries are the start of each statement
// (ValidateSession), the completion of each statement's edits
// (StatementComplete, which GMS also calls between the statements of a
// stored procedure and for every row of INSERT IGNORE) and the end of each
// DDL step. Boundaries are positions in the transaction's writes (write
// counts); the engine keeps the view (storage.Txn.AdvanceView), moving it
// forward lazily, when a scan starts and the view lags the last boundary,
// so transactions that never read after writing pay nothing for it. A
// cursor opened at an earlier boundary reads a private view of the writes
// up to it (storage.Txn.ViewAt), which never changes.

// endStatement records a statement boundary: scans made from now on see
// every write made so far.
func (t *txn) endStatement() {
	t.mu.Lock()
	t.boundary = t.tx.Count()
	t.mu.Unlock()
}
