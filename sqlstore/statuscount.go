package sqlstore

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
)

// The status variables every statement of the plan cache's paths counts.
// sql.IncrementStatusVariable looks a variable up by name twice in the
// global registry and twice in the session's map at every increment; the
// session's values are kept instead (Session.counted), found once: GMS
// makes them with the session and never replaces them (SET writes into
// the same value). The global registry offers no such handle and is
// still asked by name.
type countedStatus int

const (
	statusQuestions countedStatus = iota
	statusComSelect
	statusComBegin
	statusComCommit
	statusComRollback
	numCounted
)

var countedNames = [numCounted]string{"Questions", "Com_select", "Com_begin", "Com_commit", "Com_rollback"}

// countTxnStatement counts Com_begin, Com_commit or Com_rollback when
// query is BEGIN or START TRANSACTION, COMMIT, or ROLLBACK (not ROLLBACK
// TO SAVEPOINT, which MySQL counts apart), as MySQL does and GMS does not:
// Session.ValidateSession calls it for the statements of every path, kept
// (txnstmt.go) or planned. Other texts cost a look at their first
// character. It reports whether query is one of them.
func countTxnStatement(ctx *sql.Context, query string) bool {
	i := 0
	for i < len(query) && (query[i] == ' ' || query[i] == '\t' || query[i] == '\r' || query[i] == '\n') {
		i++
	}
	if i == len(query) {
		return false
	}
	switch query[i] | 0x20 {
	// '/', '(', '-' and '#' (a comment's or a parenthesis' start) are
	// unchanged by the bit.
	case 'b', 'c', 'r', 's', '/', '(', '-', '#':
	default:
		return false
	}
	first, second := LeadingWords(query[i:])
	switch {
	case strings.EqualFold(first, "begin"), strings.EqualFold(first, "start") && strings.EqualFold(second, "transaction"):
		countStatus(ctx, statusComBegin)
	case strings.EqualFold(first, "commit"):
		countStatus(ctx, statusComCommit)
	case strings.EqualFold(first, "rollback") && !strings.EqualFold(second, "to"):
		countStatus(ctx, statusComRollback)
	default:
		return false
	}
	return true
}

// countStatus adds one to the status variable v, globally and in ctx's
// session, as sql.IncrementStatusVariable does.
func countStatus(ctx *sql.Context, v countedStatus) {
	name := countedNames[v]
	s, ok := ctx.Session.(*Session)
	if !ok {
		sql.IncrementStatusVariable(ctx, name, 1)
		return
	}
	sql.StatusVariables.IncrementGlobal(name, 1)
	c := s.counted.Load()
	if c == nil {
		all := s.BaseSession.GetAllStatusVariables(ctx)
		c = new([numCounted]sql.StatusVarValue)
		for i, n := range countedNames {
			c[i] = all[n]
		}
		s.counted.Store(c)
	}
	if sv := c[v]; sv != nil {
		sv.Increment(1)
	}
}
