package sqlstore

import (
	"context"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// Conflicted autocommit writes run again
//
// In an optimistic transaction (strata_txn_mode, locks.go), of two that
// write the same row, the one that commits second fails with 1213 and
// applies nothing. Inside a transaction
// that is the application's to handle (it must run the transaction again),
// as with InnoDB's deadlocks. A single autocommit INSERT, UPDATE, DELETE or
// REPLACE is its own transaction, and InnoDB would make it wait for the
// row instead of failing: UPDATE c SET n = n + 1 from several connections
// all succeed. So the front ends (the database/sql driver, the MySQL
// protocol server) run such a statement again, on a fresh snapshot, when
// its commit lost a conflict: nothing of the failed run was applied, and
// nothing of it reached the client (an OK result is sent only after the
// commit). Other statements (CALL, which may commit along the way; a
// multi-statement query, whose earlier results were sent) are not run
// again.
//
// Retried at once, writers of one hot row would mostly collide again: of n
// writers, one commits and n-1 retry, while new first runs keep
// committing under them. So a run after a conflict takes the store's
// autocommit writes alone (Store.turns, held shared by first runs and
// exclusively by a rerun): it waits for the first runs in progress, keeps
// new ones out, and then meets no other autocommit write of this process,
// which is the only one with the store open. It can still fail against a
// transaction's commit, hence a few attempts.
//
// A pessimistic statement waits for the rows it writes instead of
// conflicting; it can still be a deadlock's victim (1213 as well), and is
// then run again at once. It takes no turn: it may wait for a row lock a
// transaction holds while that transaction's next statement would need a
// turn behind a rerun's.

// A write planned for a table definition that a DDL statement it waited
// for then changed fails before it writes (errPlanChanged, mdl.go) and
// runs again, planned afresh, as MySQL prepares a statement again when its
// tables changed: autocommitting, or in a transaction whose snapshot shows
// the new definition and that has written nothing. So does a read, the
// transaction's first, before its first row (lockForRead), and an EXECUTE
// of a statement PREPAREd in SQL, which GMS binds again from its parsed
// text. A CALL is not run again whole (its earlier statements may have
// committed or returned rows): the statements of its body run again one
// by one (planRunner). Only another DDL statement on the table between
// the plan and the lock sends a statement round again; after planReruns it
// fails with 1412.

// planReruns is how many times a statement whose plan went stale runs
// again.
const planReruns = 4

// conflictReruns is how many times a conflicted autocommit write runs
// again before its 1213 is returned.
const conflictReruns = 8

// RunWrite runs run, the execution of query, and when query is a write
// (INSERT, UPDATE, DELETE, REPLACE) whose commit lost a write conflict and
// autocommitting reports that it ran as its own transaction, runs it again
// (see above), until it succeeds, fails otherwise, ctx ends, or the reruns
// are spent; any statement but a CALL that failed because its plan went
// stale (IsPlanChanged) runs again as well. run must send nothing to a
// client before it succeeds.
// autocommitting is asked only after a conflict; optimistic, whether the
// statement runs in an optimistic transaction, before the first run.
func (s *Store) RunWrite(ctx context.Context, query string, autocommitting, optimistic func() bool, run func() error) error {
	write := IsWrite(query)
	turns := write && optimistic()
	if turns {
		s.turns.RLock()
	}
	err := run()
	// A run again for a stale plan is a first run too: it holds the turn
	// shared, so that a conflict's rerun meets no other autocommit write.
	// A CALL is not run again whole (planRunner runs its statements
	// again), asked only when it failed so.
	for range planReruns {
		if !IsPlanChanged(err) || ctx.Err() != nil || !write && isCall(query) {
			break
		}
		err = run()
	}
	if turns {
		s.turns.RUnlock()
	}
	if !write || !IsConflict(err) || !autocommitting() {
		return err
	}
	if turns {
		s.turns.Lock()
		defer s.turns.Unlock()
	}
	for range conflictReruns {
		if ctx.Err() != nil {
			return err
		}
		if err = run(); !IsConflict(err) {
			return err
		}
	}
	return err
}

// IsConflict reports whether err is a lost write conflict, MySQL's 1213.
func IsConflict(err error) bool {
	return err != nil && MySQLError(err).Num == mysql.ERLockDeadlock
}

// isCall reports whether query is a CALL.
func isCall(query string) bool {
	first, _ := LeadingWords(query)
	return strings.EqualFold(first, "call")
}

// IsWrite reports whether query is an INSERT, UPDATE, DELETE or REPLACE.
func IsWrite(query string) bool {
	first, _ := LeadingWords(query)
	for _, w := range [...]string{"insert", "update", "delete", "replace"} {
		if strings.EqualFold(first, w) {
			return true
		}
	}
	return false
}

// replanned runs query, the start of a statement read as Rows, and again,
// planned afresh, while its first row fails because the plan went stale
// (lockForRead: the transaction's first table, whose metadata lock waited
// for a DDL statement that changed it). The first row is read here, before
// the caller sees the Rows (and their columns, which the new plan may
// change), only where that can happen: a read in a transaction that holds
// no metadata lock yet and may take a fresh snapshot; elsewhere this costs
// a few loads.
func (c *Conn) replanned(ctx context.Context, query func() (*Rows, error)) (*Rows, error) {
	for n := 0; ; n++ {
		r, err := query()
		if err != nil || n == planReruns || ctx.Err() != nil || !r.mayGoStale() || !r.peekStale() {
			return r, err
		}
	}
}

// mayGoStale reports whether the first row of r may fail with
// errPlanChanged: r reads rows in a transaction (autocommitting reads take
// no metadata lock) that has taken no metadata lock yet and does not keep
// a consistent snapshot.
func (r *Rows) mayGoStale() bool {
	return !r.ok && r.ctx != nil && firstRead(r.ctx)
}

// peekStale reads r's first row, kept for Next, and reports whether it
// failed because the plan went stale, closing r then.
func (r *Rows) peekStale() bool {
	row, err := r.advance()
	if err != nil && IsPlanChanged(err) {
		_ = r.Close()
		return true
	}
	r.peeked, r.peekedErr, r.hasPeeked = row, err, true
	return false
}

// planRunner runs the statements of stored procedure bodies (GMS's
// interpreter plans each as the CALL reaches it, through the analyzer's
// Runner): a write whose plan went stale waiting for its metadata lock
// (errPlanChanged: nothing of its transaction written yet) runs again
// planned afresh, as MySQL prepares a procedure's statement again when its
// tables changed, where the CALL as a whole cannot run again; so does a
// read that is its transaction's first (lockForRead). The statement's
// rows (a write's OK row) are read to the end here, as the interpreter
// reads them, and as MySQL materializes a cursor's; other statements go to
// the engine as they are.
type planRunner struct{ sql.StatementRunner }

// QueryWithBindings implements sql.StatementRunner.
func (r planRunner) QueryWithBindings(ctx *sql.Context, query string, parsed sqlparser.Statement, bindings map[string]sqlparser.Expr, qFlags *sql.QueryFlags) (sql.Schema, sql.RowIter, *sql.QueryFlags, error) {
	write := false
	switch parsed.(type) {
	case *sqlparser.Insert, *sqlparser.Update, *sqlparser.Delete:
		write = true
	case sqlparser.SelectStatement:
	default:
		return r.StatementRunner.QueryWithBindings(ctx, query, parsed, bindings, qFlags)
	}
	for n := 0; ; n++ {
		schema, iter, flags, err := r.StatementRunner.QueryWithBindings(ctx, query, parsed, bindings, qFlags)
		if err == nil && !write && !firstRead(ctx) {
			// The statement's transaction, in ctx once it started,
			// holds a table already or takes no locks.
			return schema, iter, flags, nil
		}
		var rows []sql.Row
		if err == nil {
			rows, err = sql.RowIterToRows(ctx, iter)
		}
		if err == nil {
			return schema, sql.RowsToRowIter(rows...), flags, nil
		}
		if n == planReruns || !IsPlanChanged(err) || ctx.Err() != nil {
			return nil, nil, nil, err
		}
	}
}

// firstRead reports whether a read run now in ctx may be its
// transaction's first use of a table, whose plan may go stale as it waits
// for its metadata lock (Rows.mayGoStale).
func firstRead(ctx *sql.Context) bool {
	t := txnOf(ctx)
	if t == nil || t.sess == nil || t.fixedSnapshot || t.mdl.epoch.Load() != 0 {
		return false
	}
	sess, ok := ctx.Session.(*Session)
	return ok && !sess.Autocommitting(ctx)
}
