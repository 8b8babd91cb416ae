package sqlstore

import (
	"context"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
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
// the new definition and that has written nothing. Only another DDL
// statement on the table between the plan and the lock sends it round
// again; after planReruns it fails with 1412.

// planReruns is how many times a write whose plan went stale runs again.
const planReruns = 4

// conflictReruns is how many times a conflicted autocommit write runs
// again before its 1213 is returned.
const conflictReruns = 8

// RunWrite runs run, the execution of query, and when query is a write
// (INSERT, UPDATE, DELETE, REPLACE) whose commit lost a write conflict and
// autocommitting reports that it ran as its own transaction, runs it again
// (see above), until it succeeds, fails otherwise, ctx ends, or the reruns
// are spent. run must send nothing to a client before it succeeds.
// autocommitting is asked only after a conflict; optimistic, whether the
// statement runs in an optimistic transaction, before the first run.
func (s *Store) RunWrite(ctx context.Context, query string, autocommitting, optimistic func() bool, run func() error) error {
	if !IsWrite(query) {
		return run()
	}
	turns := optimistic()
	if turns {
		s.turns.RLock()
	}
	err := run()
	// A run again for a stale plan is a first run too: it holds the turn
	// shared, so that a conflict's rerun meets no other autocommit write.
	for range planReruns {
		if !IsPlanChanged(err) || ctx.Err() != nil {
			break
		}
		err = run()
	}
	if turns {
		s.turns.RUnlock()
	}
	if !IsConflict(err) || !autocommitting() {
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
