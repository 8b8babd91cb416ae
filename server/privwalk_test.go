package server

import (
	"testing"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/stretchr/testify/require"
)

// TestPolicyWalkDryRun: the policy's list names the plan nodes and
// expressions it checks or rewrites (a rewrite is found inside a
// subquery too), and the walk without a session (inspect, which lets kept
// plans skip it) finds what the walk in a session finds, and finds a
// rewrite in every plan that walk changes: a plan it finds no rewrite in
// comes back as it is, and one the walk refuses is one it finds a check
// or a rewrite in.
func TestPolicyWalkDryRun(t *testing.T) {
	p := &policy{files: t.TempDir()} // accounts off: every check passes
	ctx := gsql.NewEmptyContext()
	dual := plan.NewResolvedDualTable()
	lit := expression.NewLiteral("f", types.LongText)
	sysVar := func(name string) gsql.Expression {
		return expression.NewSystemVar(name, gsql.GetMysqlScope(gsql.SystemVariableScope_Session), "")
	}
	project := func(e gsql.Expression) gsql.Node { return plan.NewProject([]gsql.Expression{e}, dual) }
	load := func(local bool) *plan.LoadData {
		return plan.NewLoadData(local, "in.txt", gsql.Schema{{Name: "id", Type: types.Int64, Source: "t"}}, nil, nil, 0, "")
	}
	for _, tc := range []struct {
		name            string
		n               gsql.Node
		changes, checks bool
	}{
		{"a plain select", project(lit), false, false},
		{"SET of a user variable", plan.NewSet([]gsql.Expression{expression.NewSetField(expression.NewUserVar("a"), lit)}), true, false},
		{"INTO a variable", plan.NewInto(project(lit), []gsql.Expression{expression.NewUserVar("a")}, "", ""), false, false},
		{"INTO OUTFILE", plan.NewInto(project(lit), nil, "out.txt", ""), true, false},
		{"INTO DUMPFILE", plan.NewInto(project(lit), nil, "", "dump.txt"), true, false},
		{"LOAD DATA INFILE", load(false), true, false},
		{"LOAD DATA LOCAL", load(true), false, false},
		{"INSERT of LOAD DATA", plan.NewInsertInto(nil, dual, load(true), false, nil, nil, false), false, true},
		{"KILL", plan.NewKill(plan.KillType_Query, 99), false, true},
		{"SHOW GRANTS", &plan.ShowGrants{CurrentUser: true}, false, true},
		{"LOAD_FILE", project(function.NewLoadFile(lit)), true, false},
		{"a global-only variable", project(sysVar("max_connections")), true, false},
		{"a session variable", project(sysVar("autocommit")), false, false},
		{"LOAD_FILE in a subquery", project(plan.NewSubquery(project(function.NewLoadFile(lit)), "")), true, false},
		{"KILL under a filter", plan.NewFilter(expression.NewLiteral(true, types.Boolean), plan.NewKill(plan.KillType_Query, 99)), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changes, checks := p.inspect(tc.n)
			require.Equal(t, tc.changes, changes, "changes")
			require.Equal(t, tc.checks, checks, "checks")
			out, same, found, err := p.walk(ctx, tc.n)
			require.Equal(t, walkFinds{changes: changes, checks: checks}, found, "the walk in a session finds what the dry run finds")
			if err != nil {
				// KILL of a connection the session's process list lacks.
				require.True(t, checks || changes, "a plan the walk refuses is one the dry run finds a check in: %v", err)
				return
			}
			if same == transform.NewTree {
				require.True(t, changes, "a plan the walk changes is one the dry run finds a rewrite in")
			}
			if !changes {
				require.Equal(t, transform.SameTree, same)
				require.Same(t, tc.n, out)
			}
		})
	}
}
