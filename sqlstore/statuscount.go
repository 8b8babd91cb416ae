package sqlstore

import "github.com/dolthub/go-mysql-server/sql"

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
	numCounted
)

var countedNames = [numCounted]string{"Questions", "Com_select"}

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
