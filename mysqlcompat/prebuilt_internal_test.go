package mysqlcompat

import (
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// checkingExec stands for a server's checking builder: it counts its
// builds and can wrap another builder.
type checkingExec struct {
	sql.NodeExecBuilder
	builds *int
}

func (e checkingExec) Unwrap() sql.NodeExecBuilder { return e.NodeExecBuilder }

func (e checkingExec) Rewrap(inner sql.NodeExecBuilder) sql.NodeExecBuilder {
	e.NodeExecBuilder = inner
	return e
}

func (e checkingExec) Build(ctx *sql.Context, n sql.Node, r sql.Row) (sql.RowIter, error) {
	*e.builds++
	return e.NodeExecBuilder.Build(ctx, n, r)
}

// lookingThrough only says what it wraps.
type lookingThrough struct{ sql.NodeExecBuilder }

func (e lookingThrough) Unwrap() sql.NodeExecBuilder { return e.NodeExecBuilder }

// TestApplyValueRulesKeepsRewrappers checks that a builder that can wrap
// another stays around the builder ApplyValueRules returns (its checks
// run at every build), one that only unwraps is looked through, and a
// chain without Install's builder comes back as it is.
func TestApplyValueRulesKeepsRewrappers(t *testing.T) {
	ctx := sql.NewEmptyContext()
	base := &rowexec.BaseBuilder{}
	rules := valueRulesExec{NodeExecBuilder: base, a: &analyzer.Analyzer{},
		rules: func(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
			return n, transform.SameTree, nil
		}}
	var builds int
	n := plan.NewEmptyTableWithSchema(nil)

	_, b, err := ApplyValueRules(ctx, checkingExec{NodeExecBuilder: lookingThrough{rules}, builds: &builds}, n)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := b.(checkingExec)
	if !ok {
		t.Fatalf("builder %T: want the checking builder kept on top", b)
	}
	if _, ok := c.NodeExecBuilder.(appliedExec); !ok {
		t.Fatalf("inner builder %T: want appliedExec", c.NodeExecBuilder)
	}
	if PlainExec(b) {
		t.Fatal("PlainExec of a checked builder: want false")
	}
	if _, err := b.Build(ctx, n, nil); err != nil {
		t.Fatal(err)
	}
	if builds != 1 {
		t.Fatalf("checking builder built %d plans, want 1", builds)
	}

	_, b, err = ApplyValueRules(ctx, lookingThrough{rules}, n)
	if err != nil || !PlainExec(b) {
		t.Fatalf("through an unwrapping builder: %T, %v; want the plain applied builder", b, err)
	}

	plain := checkingExec{NodeExecBuilder: base, builds: &builds}
	_, b, err = ApplyValueRules(ctx, plain, n)
	if err != nil || b != sql.NodeExecBuilder(plain) {
		t.Fatalf("without Install's builder: %T, %v; want the builder given", b, err)
	}
}
