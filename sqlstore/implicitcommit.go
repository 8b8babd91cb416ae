package sqlstore

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// Implicit commits after a statement
//
// MySQL commits the open transaction around the statements its manual lists
// under "Statements That Cause an Implicit Commit" (DDL, account
// management, LOCK TABLES, ANALYZE TABLE, ...) and around no other. The
// session commits before such a statement (Session.ValidateSession); GMS
// commits after it, in the TransactionCommittingIter FinalizeIters puts
// around every result, when the planbuilder set QFlagDDL, QFlagAlterTable
// or QFlagDBDDL on the statement's query flags.
//
// GMS sets those flags whenever it binds a CREATE statement, its own or a
// stored one: the CREATE VIEW of every view a query reads (SELECT, SHOW
// CREATE VIEW, SHOW FIELDS, DESCRIBE, a subquery of an UPDATE), and the
// statement a PREPARE or EXECUTE names. Such a statement committed the
// transaction it ran in, so a later ROLLBACK undid nothing and other
// sessions saw the writes early; mariadb-dump --single-transaction, which
// reads views between SAVEPOINT and ROLLBACK TO SAVEPOINT, failed with
// "SAVEPOINT sp does not exist". GMS also leaves the flags off statements
// MySQL does commit for (CREATE USER, GRANT, LOCK TABLES, ANALYZE TABLE),
// whose own transaction then stayed open with autocommit off.
//
// So the flags are set again from what the statement itself is, at the end
// of its analysis: the rule that tracks the process, the last one every
// statement's analysis runs, first calls correctCommitFlags. Store.Configure
// wraps GMS's rule in the engine's own batch (mysqlcompat.WrapRule), so no rule
// name is formatted for it and other engines are
// left alone. A rule that runs again for a nested analysis (a trigger or
// procedure body) runs before the outer one, which has the last word.
//
// Two kinds of statement keep GMS's flags: those GMS skips the analyzer for
// (PREPARE and DEALLOCATE), and the simple INSERT, UPDATE and DELETE
// statements GMS analyzes with its own fixed batches; these read no view,
// so binding them sets no DDL flag. A PREPARE keeps its transaction out of
// the commit instead, in the engine's exec builder, as does a CALL, whose
// body GMS runs outside the caller's transaction (nestedtxn.go).
//
// Targets GMS v0.20.0. Without it, TestImplicitCommitSpec
// (testdata/implicit_commit) fails.

// correctCommitFlagsRule is correctCommitFlags as a rule, which
// Store.Configure runs just before GMS tracks the process.
func correctCommitFlagsRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	correctCommitFlags(ctx, n, qFlags)
	return n, transform.SameTree, nil
}

// commitFlags are the query flags after which GMS commits.
var commitFlags = sql.NewFastIntSet(sql.QFlagDDL, sql.QFlagAlterTable, sql.QFlagDBDDL)

// correctCommitFlags sets qFlags to commit after n exactly when MySQL
// commits around the statement n runs: a DDL statement keeps the flags
// GMS gave it (none for CREATE TEMPORARY TABLE), an account, lock or
// table maintenance statement gains QFlagDDL, and any other statement
// loses them; a CALL commits when its procedure holds DDL (callCommits).
// A statement whose text is one the session commits before
// (implicitCommit) keeps them too, so that a DDL node missing from
// schemaChange still commits.
func correctCommitFlags(ctx *sql.Context, n sql.Node, qFlags *sql.QueryFlags) {
	if qFlags == nil {
		return
	}
	if c, ok := n.(*plan.Call); ok {
		if callCommits(c) || rebuildCall(c) {
			qFlags.Set(sql.QFlagDDL)
		} else {
			clearCommitFlags(qFlags)
		}
		return
	}
	switch {
	case schemaChange(n):
	case commitsAround(n):
		qFlags.Set(sql.QFlagDDL)
	case qFlags.Flags.Intersects(commitFlags) && !implicitCommit(ctx.Query()):
		clearCommitFlags(qFlags)
	}
}

// clearCommitFlags takes the commit flags off qFlags.
func clearCommitFlags(qFlags *sql.QueryFlags) {
	qFlags.Unset(sql.QFlagDDL)
	qFlags.Unset(sql.QFlagAlterTable)
	qFlags.Unset(sql.QFlagDBDDL)
}

// callCommits reports whether the procedure c calls runs a statement MySQL
// commits around (GMS gives a CALL no commit flags). MySQL commits before
// and after that statement; here the statement commits after itself, in
// the caller's transaction (nestedtxn.go), but the session's commit before
// it does not see it (implicitCommit reads the CALL's text), so the CALL
// commits after it as well, and the session is left in autocommit mode.
func callCommits(c *plan.Call) bool {
	if c.Procedure == nil {
		return false
	}
	for _, op := range c.Procedure.Ops {
		if op == nil {
			continue
		}
		switch s := op.PrimaryData.(type) {
		case *sqlparser.DDL:
			if !s.Temporary {
				return true
			}
		case *sqlparser.AlterTable, *sqlparser.DBDDL:
			return true
		}
	}
	return false
}

// schemaChange reports whether n runs a statement that changes a
// database, table, view, index, trigger, procedure or event: the nodes of
// the statements GMS flags as DDL itself.
func schemaChange(n sql.Node) bool {
	if plan.IsDDLNode(n) {
		return true
	}
	switch n.(type) {
	case *plan.AlterAutoIncrement, *plan.AlterDefaultSet, *plan.AlterDefaultDrop,
		*plan.AlterTableCollation, *plan.DropConstraint, *plan.RenameForeignKey,
		*plan.AlterEvent:
		return true
	}
	return false
}

// commitsAround reports whether n runs a statement that is not DDL to GMS
// but that MySQL commits around: account management, LOCK TABLES, FLUSH,
// ANALYZE TABLE and replication control.
func commitsAround(n sql.Node) bool {
	switch n.(type) {
	case *plan.CreateUser, *plan.DropUser, *plan.RenameUser, *plan.AlterUser,
		*plan.CreateRole, *plan.DropRole,
		*plan.Grant, *plan.GrantRole, *plan.GrantProxy,
		*plan.Revoke, *plan.RevokeAll, *plan.RevokeRole, *plan.RevokeProxy,
		*plan.FlushPrivileges, *plan.LockTables, *plan.AnalyzeTable,
		*plan.ChangeReplicationSource, *plan.ChangeReplicationFilter,
		*plan.StartReplica, *plan.StopReplica, *plan.ResetReplica:
		return true
	}
	return false
}
