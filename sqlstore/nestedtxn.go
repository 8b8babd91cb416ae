package sqlstore

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
)

// Transactions GMS takes away from a statement
//
// Two statements lost the transaction they ran in, GMS v0.20.0 clearing
// it from the session; the session then rolled it back as one no
// statement used (Session.idleLocked), or the statement committed it.
//
// CALL: GMS runs a procedure body with the session's transaction cleared
// (rowexec buildCall), so the body's statements ran in transactions of
// their own, which did not see the caller's writes, and the caller's
// transaction was rolled back by the first of them: BEGIN; INSERT ...;
// CALL p(); COMMIT lost the insert. In MySQL the body runs in the caller's
// transaction: its statements see the caller's writes, their writes
// belong to the caller's transaction (a ROLLBACK after the CALL undoes
// both), with autocommit each of them commits, and a COMMIT, ROLLBACK or
// START TRANSACTION in the body acts on the caller's transaction. The
// session therefore keeps a stack of running procedure bodies, each with
// the transaction its statements run in: the caller's at first, then the
// one a statement of the body starts after a COMMIT (StartTransaction).
// A body statement that finds no transaction in the context takes up its
// body's (takeUp), and after the body the CALL goes on in the body's
// last transaction, or none if the body finished it.
//
// A procedure called by a trigger runs inside the triggering statement,
// whose transaction is in use (an editor is open): its statements must not
// commit it half-way, with autocommit or not, so the body runs as in an
// explicit transaction (GetIgnoreAutoCommit).
//
// PREPARE: GMS binds the statement a PREPARE names into the PREPARE's
// query flags and skips the analyzer for it, so the rule that corrects
// the flags (implicitcommit.go) never sees it: a PREPARE of a query over a
// view, or of DDL, committed the open transaction, through the driver and
// the server alike. Its iterator, on Close, takes the transaction out of
// the context when it is explicit or autocommit is off, so that the
// committing iterator GMS puts around it finds nothing to commit; the
// session takes it up again when the iterator is closed through Query,
// and otherwise (the server calls GMS's handler) at the next statement.
//
// Both are done by the exec builder of the engines Store.NewEngine makes
// (installNestedTxn), so the driver, the shell and the server get them
// alike.
//
// Targets GMS v0.20.0. Without it, server's
// TestServerCallAndPrepareKeepTransaction fails.

// installNestedTxn makes a build CALL and PREPARE as described above. The
// nodes it does not handle, and those two after its own step, are built
// by the builder a had.
func installNestedTxn(a *analyzer.Analyzer) {
	b := &nestedTxnBuilder{base: a.ExecBuilder}
	b.full = rowexec.NewOverrideBuilder(b)
	a.ExecBuilder = b.full
}

// nestedTxnBuilder builds CALL and PREPARE nodes, and LOAD DATA, ADD
// CHECK / FOREIGN KEY and INSERT nodes; for other nodes it returns no
// iterator, and GMS's builder builds them.
type nestedTxnBuilder struct {
	base sql.NodeExecBuilder
	// full is the builder this one overrides: a DDL statement's plan is
	// built with it from the top (buildDDL).
	full sql.NodeExecBuilder
}

// Build implements sql.NodeExecBuilder.
func (b *nestedTxnBuilder) Build(ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error) {
	switch n := n.(type) {
	case *plan.Call:
		s, ok := ctx.Session.(*Session)
		if !ok || n.Procedure == nil || n.Procedure.ExternalProc != nil {
			// A procedure written in Go runs in the caller's transaction.
			return nil, nil
		}
		return s.call(ctx, n, row, b.base)
	case *plan.PrepareQuery:
		iter, err := b.base.Build(ctx, n, row)
		if err != nil {
			return nil, err
		}
		return &prepareIter{RowIter: iter}, nil
	case *plan.LoadData:
		return buildLoadData(ctx, n) // loaddata.go
	case *plan.InsertInto:
		noteInsert(ctx, n) // insertprefetch.go
	case *plan.CreateCheck, *plan.CreateForeignKey:
		if iter, err := buildDDL(ctx, n, row, b.full); iter != nil || err != nil {
			return iter, err
		}
		// Locked before GMS checks the rows (mdl.go).
		return buildValidated(ctx, n, row, b.base)
	case *plan.Block, *plan.AlterIndex, *plan.AlterPK, *plan.AddColumn, *plan.ModifyColumn,
		*plan.DropColumn, *plan.RenameColumn, *plan.AlterDefaultSet, *plan.AlterDefaultDrop,
		*plan.AlterAutoIncrement, *plan.AlterTableCollation, *plan.DropCheck, *plan.DropForeignKey,
		*plan.DropConstraint, *plan.RenameTable, *plan.DropTable, *plan.Truncate, *plan.CreateTable,
		*plan.DropDB, *plan.AlterDB:
		// A failed DDL statement releases its metadata locks (mdl.go).
		return buildDDL(ctx, n, row, b.full)
	}
	return nil, nil
}

// nestedTxns is the state of a session's transaction between the
// statements GMS runs: the transactions of the procedure bodies running,
// innermost last, and a transaction a PREPARE took out of the context.
type nestedTxns struct {
	calls  []*txn
	parked *txn
	// ddl is set while a DDL statement's plan is built (buildDDL).
	ddl bool
}

// call runs the procedure c calls in the transaction of ctx, as base
// builds it (GMS runs the whole body while building), and leaves ctx in the
// transaction the body ended in.
func (s *Session) call(ctx *sql.Context, c *plan.Call, row sql.Row, base sql.NodeExecBuilder) (sql.RowIter, error) {
	caller := txnOf(ctx)
	if caller != nil && !caller.idle() {
		// Called by a trigger, inside the statement that fired it.
		explicit := ctx.GetIgnoreAutoCommit()
		ctx.SetIgnoreAutoCommit(true)
		defer ctx.SetIgnoreAutoCommit(explicit)
	}
	s.mu.Lock()
	s.nested.calls = append(s.nested.calls, caller)
	depth := len(s.nested.calls)
	s.nestedHeld.Store(true)
	s.mu.Unlock()
	defer s.leaveCall(ctx, depth)
	iter, err := base.Build(ctx, c, row)
	if err == nil && callCommits(c) {
		// The body committed at its DDL statement, or the CALL commits
		// after it (callCommits): no transaction is open any more, so
		// the statements after the CALL autocommit again, as after DDL.
		ctx.SetIgnoreAutoCommit(false)
	}
	return iter, err
}

// leaveCall ends the procedure body at depth: the caller goes on in the
// transaction the body was in at its end.
func (s *Session) leaveCall(ctx *sql.Context, depth int) {
	s.mu.Lock()
	var t *txn
	if len(s.nested.calls) >= depth {
		t = s.nested.calls[depth-1]
		s.nested.calls = s.nested.calls[:depth-1]
		if depth > 1 {
			s.nested.calls[depth-2] = t
		}
	}
	s.mu.Unlock()
	if t == nil || t.isDone() {
		ctx.SetTransaction(nil)
		return
	}
	ctx.SetTransaction(t)
}

// startedLocked records t, a transaction just started, as the one the
// innermost running procedure body goes on in. s.mu is held.
func (s *Session) startedLocked(t *txn) {
	if n := len(s.nested.calls); n > 0 {
		s.nested.calls[n-1] = t
	}
}

// takeUp puts back into ctx, when it holds no transaction, the one GMS
// took out of it: a transaction a PREPARE parked, or the transaction of the
// procedure body the statement belongs to. It reports whether it took up
// a procedure body's, which is no autocommit leftover even when idle.
func (s *Session) takeUp(ctx *sql.Context) (inCall bool) {
	if !s.nestedHeld.Load() {
		// Nothing parked and no procedure running: the end of every
		// statement outside CALL and PREPARE takes no lock here.
		return false
	}
	s.mu.Lock()
	inCall = s.takeUpLocked(ctx)
	s.mu.Unlock()
	return inCall
}

// takeUpLocked is takeUp with s.mu held.
func (s *Session) takeUpLocked(ctx *sql.Context) (inCall bool) {
	if !s.nestedHeld.Load() {
		return false
	}
	parked := s.nested.parked
	s.nested.parked = nil
	var body *txn
	if n := len(s.nested.calls); n > 0 {
		body = s.nested.calls[n-1]
	} else {
		s.nestedHeld.Store(false)
	}
	if ctx.GetTransaction() != nil {
		return false
	}
	switch {
	case parked != nil && !parked.isDone():
		ctx.SetTransaction(parked)
	case body != nil && !body.isDone():
		ctx.SetTransaction(body)
		return true
	}
	return false
}

// park takes the transaction of ctx out of it when the statement running
// would not commit it by itself (an explicit transaction, or autocommit
// off), until takeUp puts it back.
func (s *Session) park(ctx *sql.Context) {
	t := txnOf(ctx)
	if t == nil || t.isDone() || s.Autocommitting(ctx) {
		return
	}
	s.mu.Lock()
	s.nested.parked = t
	s.nestedHeld.Store(true)
	s.mu.Unlock()
	ctx.SetTransaction(nil)
}

// prepareIter is the result of a PREPARE: closing it parks the session's
// transaction, which the committing iterator around it would otherwise
// commit.
type prepareIter struct {
	sql.RowIter
}

// Close implements sql.RowIter.
func (p *prepareIter) Close(ctx *sql.Context) error {
	err := p.RowIter.Close(ctx)
	if s, ok := ctx.Session.(*Session); ok {
		s.park(ctx)
	}
	return err
}
