package sqlstore

import (
	"context"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// The diagnostics area
//
// MySQL keeps the conditions of a session's last statement: its warnings
// and notes, and, when it failed, its error, as a row of Level 'Error'.
// SHOW WARNINGS lists them all, SHOW ERRORS the errors, @@warning_count
// and @@error_count count them. GMS keeps only warnings (the session's
// list, cleared when a statement other than SHOW WARNINGS is bound) and
// forgets a statement's error once the client has it.
//
// Every front end reports a failed statement's error, as the client sees
// it, to StatementFailed: Conn's Exec and Query, a Stmt's and the rows of
// either (the driver and the shell), and the server's handler and its fast
// paths. The error joins the statement's warnings as their last row. A
// statement that fails before GMS clears the list (a syntax error, an
// unknown table found while binding) would leave the previous statement's
// warnings beside its error, so the area also knows whether the running
// statement cleared it: a statement's context is made fresh
// (resetStatementContext, NewContext) and ClearWarnings marks the area as
// the running statement's.
//
// @@warning_count and @@error_count answer what the statement found when
// it began: GMS clears the list before a statement runs, where MySQL keeps
// it for a statement that uses no table, so SELECT @@warning_count reads
// the counts of the statement before, as in MySQL.
type diagArea struct {
	// own is set when the running statement cleared the area: the
	// conditions in it are that statement's.
	own bool
	// warnings and errors count the conditions in the area, all levels
	// and the Error rows (GMS's warning count is reset by SHOW WARNINGS).
	warnings, errors int
	// before holds the counts as the running statement found them, taken
	// when it cleared the area.
	beforeWarnings, beforeErrors int
	// state is the SQLSTATE of the last error recorded.
	state string
}

// statementStarted marks the area as the previous statement's: called for
// each statement's context, before the statement runs.
func (s *Session) statementStarted() {
	s.diag.own = false
	s.txnStatement = false
}

// StatementStarted marks the start of a statement of ctx's session, for a
// context made without NewContext or NewStatementContext (the server's
// own statement contexts).
func StatementStarted(ctx *sql.Context) {
	if ctx != nil {
		if s, ok := ctx.Session.(*Session); ok {
			s.statementStarted()
		}
	}
}

// NewContext is sql.NewContext for a statement's context: the session the
// options give starts a statement (StatementStarted). The server makes
// its contexts with it.
func NewContext(ctx context.Context, opts ...sql.ContextOption) *sql.Context {
	c := sql.NewContext(ctx, opts...)
	StatementStarted(c)
	return c
}

// ClearWarnings implements sql.Session: GMS's clearing, which also makes
// the area the running statement's.
func (s *Session) ClearWarnings() {
	if !s.diag.own {
		s.diag.beforeWarnings, s.diag.beforeErrors = s.diag.warnings, s.diag.errors
		s.diag.own = true
	}
	s.diag.warnings, s.diag.errors = 0, 0
	s.strictFirst, s.strictOther = nil, nil
	s.BaseSession.ClearWarnings()
}

// StatementFailed records err, the error a failed statement returns to
// its client, in the session's diagnostics area as an Error row, and
// returns err. A nil session or error records nothing.
func (s *Session) StatementFailed(err error) error {
	if s == nil || err == nil {
		return err
	}
	se := ServerError(err)
	if se == nil {
		return err
	}
	if !s.diag.own {
		s.ClearWarnings()
	}
	s.diag.state = se.State
	s.diag.errors++
	s.diag.warnings++
	s.BaseSession.Warn(&sql.Warning{Level: "Error", Code: se.Num, Message: se.Message})
	return err
}

// StatementPrepared ends the prepare of query (COM_STMT_PREPARE,
// Conn.Prepare) in the diagnostics area and returns err: a failed one is
// recorded as StatementFailed records a statement's failure; one that
// succeeded clears the area, as a prepare does in MySQL and MariaDB by the
// rule of any statement (which here clears it always), unless its own
// warnings are in it or the statement may read the area (readsDiagnostics):
// its executions are to find the area as the statement before left it.
func (s *Session) StatementPrepared(query string, err error) error {
	if s == nil {
		return err
	}
	if err != nil {
		return s.StatementFailed(err)
	}
	if !s.diag.own && !readsDiagnostics(query) {
		s.ClearWarnings()
	}
	return nil
}

// readsDiagnostics reports whether the statement query may read the
// diagnostics area: a SHOW statement (SHOW WARNINGS, SHOW ERRORS, SHOW
// COUNT(*)), or one that names @@warning_count or @@error_count.
func readsDiagnostics(query string) bool {
	first, _ := LeadingWords(query)
	return strings.EqualFold(first, "show") || containsFold(query, warningCountVar) || containsFold(query, errorCountVar)
}

// counted counts w, a condition the session keeps (Warn).
func (d *diagArea) counted(w *sql.Warning) {
	d.warnings++
	if w.Level == "Error" {
		d.errors++
	}
}

// Variables answered from the diagnostics area.
const (
	warningCountVar = "warning_count"
	errorCountVar   = "error_count"
)

// diagnosticsVar returns the value of @@warning_count or @@error_count
// when name is one of them.
func (s *Session) diagnosticsVar(name string) (any, bool) {
	switch {
	case len(name) == len(warningCountVar) && strings.EqualFold(name, warningCountVar):
		if s.diag.own {
			return int64(s.diag.beforeWarnings), true
		}
		return int64(s.diag.warnings), true
	case len(name) == len(errorCountVar) && strings.EqualFold(name, errorCountVar):
		if s.diag.own {
			return int64(s.diag.beforeErrors), true
		}
		return int64(s.diag.errors), true
	}
	return nil, false
}

func init() {
	// Read-only session variables, answered by the session
	// (GetSessionVariable); registered so that GMS binds them.
	sql.SystemVariables.AddSystemVariables([]sql.SystemVariable{&sql.MysqlSystemVariable{
		Name:    warningCountVar,
		Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Session),
		Dynamic: false,
		Type:    types.NewSystemIntType(warningCountVar, 0, 65535, false),
		Default: int64(0),
	}, &sql.MysqlSystemVariable{
		Name:    errorCountVar,
		Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Session),
		Dynamic: false,
		Type:    types.NewSystemIntType(errorCountVar, 0, 65535, false),
		Default: int64(0),
	}})
}
