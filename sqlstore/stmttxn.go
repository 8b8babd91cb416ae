package sqlstore

import (
	"github.com/dolthub/go-mysql-server/sql"
)

// The transaction a statement reads and writes through: the one GMS put in
// the statement's context, or, where there is none, one started for the
// purpose.

// startStatement does what GMS does at the start of a statement before it
// builds the statement's iterators, for the plans Strata runs itself
// (kept templates, direct reads and writes): the session's checks
// (Session.ValidateSession), the transaction begun when the context has
// none, the previous statement's warnings cleared.
func startStatement(ctx *sql.Context) error {
	if err := ctx.Session.ValidateSession(ctx); err != nil {
		return err
	}
	if ctx.GetTransaction() == nil {
		if ts, ok := ctx.Session.(sql.TransactionSession); ok {
			tx, err := ts.StartTransaction(ctx, sql.ReadWrite)
			if err != nil {
				return err
			}
			ctx.SetTransaction(tx)
		}
	}
	ctx.ClearWarnings()
	return nil
}

// view returns the transaction to read through: the session's, or a
// read-only one of the latest state (released by the returned func) for
// contexts without one.
func (s *Store) view(ctx *sql.Context) (*txn, func()) {
	if t := txnOf(ctx); t != nil && t.store == s && !t.isDone() {
		return t, func() {}
	}
	t := s.beginTxn(true)
	return t, t.rollback
}

// writer returns the session's transaction for a write. When the context
// holds none, or a finished one (a stored procedure called from a trigger
// commits in the middle of the calling statement, as GMS does), it starts
// one, as GMS does at the start of a statement.
func (s *Store) writer(ctx *sql.Context) (*txn, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	t := txnOf(ctx)
	if t == nil || t.isDone() {
		if t != nil {
			// Rolled back by its statement's deadlock, or for a table
			// changed after its snapshot (mdl.go): the statement ends
			// with it.
			if err := t.endedErr(); err != nil {
				return nil, err
			}
		}
		sess, ok := ctx.Session.(*Session)
		if !ok || sess.store != s {
			return nil, ErrNoTransaction
		}
		tx, err := sess.StartTransaction(ctx, sql.ReadWrite)
		if err != nil {
			return nil, err
		}
		ctx.SetTransaction(tx)
		t = tx.(*txn)
	}
	if t.store != s {
		return nil, ErrNoTransaction
	}
	if err := t.checkWritable(); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *txn) isDone() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.done
}
