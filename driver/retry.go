package driver

import (
	"context"
	"errors"
	"strings"

	"github.com/dolthub/vitess/go/mysql"

	"github.com/strata-db/strata/sqlstore"
)

// Conflicted autocommit writes run again
//
// Transactions are optimistic: of two that write the same row, the one that
// commits second fails with 1213 and applies nothing. Inside a transaction
// that is the application's to handle (it must run the transaction again),
// as with InnoDB's deadlocks. A single autocommit INSERT, UPDATE, DELETE or
// REPLACE is its own transaction, and InnoDB would make it wait for the
// row instead of failing: UPDATE c SET n = n + 1 from several connections
// all succeed. So the driver runs such a statement again, on a fresh
// snapshot, when its commit lost a conflict: nothing of the failed run was
// applied. Other statements (CALL, which may commit along the way) are not
// run again.
//
// Retried at once, writers of one hot row would mostly collide again: of n
// writers, one commits and n-1 retry, while new first runs keep
// committing under them. So a run after a conflict takes the store's
// autocommit writes alone (shared.turns, held shared by first runs and
// exclusively by a rerun): it waits for the first runs in progress, keeps
// new ones out, and then meets no other commit of this process, which is
// the only one with the store open. It can still fail against a
// transaction's commit, hence a few attempts.

// conflictRetries is how many times a conflicted autocommit write runs
// again before its 1213 is returned.
const conflictRetries = 8

// retryConflicts runs run, and again while it fails with a write conflict,
// when query is a write (INSERT, UPDATE, DELETE, REPLACE) that the
// connection runs in autocommit mode.
func (c *Conn) retryConflicts(ctx context.Context, query string, run func() (*Result, error)) (*Result, error) {
	if !isWrite(query) {
		return run()
	}
	c.sh.turns.RLock()
	res, err := run()
	c.sh.turns.RUnlock()
	// A failed statement leaves the session's mode as it was: whether it
	// ran on its own is asked only now, off the common path.
	if !isConflict(err) || !c.autocommitting(ctx) {
		return res, err
	}
	c.sh.turns.Lock()
	defer c.sh.turns.Unlock()
	for range conflictRetries {
		if ctx.Err() != nil {
			return res, err
		}
		if res, err = run(); !isConflict(err) {
			return res, err
		}
	}
	return res, err
}

// isConflict reports whether err is a lost write conflict, MySQL's 1213.
func isConflict(err error) bool {
	var se *mysql.SQLError
	return errors.As(err, &se) && se.Num == mysql.ERLockDeadlock
}

// autocommitting reports whether a statement run now commits on its own.
func (c *Conn) autocommitting(ctx context.Context) bool {
	sctx := c.newContext(ctx, "")
	if sctx.GetIgnoreAutoCommit() {
		return false
	}
	on, err := isAutocommit(sctx)
	return err == nil && on
}

// isWrite reports whether query is an INSERT, UPDATE, DELETE or REPLACE.
func isWrite(query string) bool {
	first, _ := sqlstore.LeadingWords(query)
	for _, w := range [...]string{"insert", "update", "delete", "replace"} {
		if strings.EqualFold(first, w) {
			return true
		}
	}
	return false
}
