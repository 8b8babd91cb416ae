package sqlstore

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
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

// triggerFlags returns the query flags for rowexec.FinalizeIters of a
// plan run without GMS's QueryWithBindings (kept plans and templates):
// QFlagTrigger when the plan fires triggers, else none. Under it GMS puts
// a savepoint before the statement and rolls back to it when the
// statement fails, which is what undoes the writes of a failed statement
// made outside the table editor whose iterator saw the error: an AFTER
// trigger's failure is seen above the triggering statement's editor,
// which would otherwise complete its statement with its row written.
// Binding sets the flag as it applies the triggers; a kept plan reads them
// from its plan once, when it is kept (a trigger created or dropped later
// is DDL, which makes the plan stale).
func triggerFlags(n sql.Node) *sql.QueryFlags {
	if !firesTriggers(n) {
		return nil
	}
	flags := new(sql.QueryFlags)
	flags.Set(sql.QFlagTrigger)
	return flags
}

// firesTriggers reports whether the plan n runs a trigger: an AFTER
// trigger's executor is above the statement, a BEFORE trigger's in its
// source (an INSERT's, which is not among its children) or child. It
// follows the single child of the nodes of a kept write's plan by their
// fields and sql.UnaryNode, which allocates nothing (Children makes a
// slice), and other nodes through Children.
func firesTriggers(n sql.Node) bool {
	for n != nil {
		switch x := n.(type) {
		case *plan.TriggerExecutor:
			return true
		case *plan.InsertInto:
			n = x.Source
			continue
		case *plan.Update:
			n = x.Child
			continue
		case *plan.DeleteFrom:
			if x.HasExplicitTargets() {
				break
			}
			n = x.Child
			continue
		case *plan.UpdateSource:
			n = x.Child
			continue
		case *plan.Project:
			n = x.Child
			continue
		case *plan.Filter:
			n = x.Child
			continue
		case *plan.Limit:
			n = x.Child
			continue
		case *plan.Sort:
			n = x.Child
			continue
		case *plan.TopN:
			n = x.Child
			continue
		case *plan.GroupBy:
			n = x.Child
			continue
		case *plan.TableAlias:
			n = x.Child
			continue
		case *plan.JoinNode:
			if firesTriggers(x.Left()) {
				return true
			}
			n = x.Right()
			continue
		case *plan.ResolvedTable, *plan.IndexedTableAccess, *plan.Values:
			return false
		case sql.UnaryNode:
			n = x.Child()
			continue
		}
		for _, c := range n.Children() {
			if firesTriggers(c) {
				return true
			}
		}
		return false
	}
	return false
}
