package mysqlcompat

import (
	"slices"
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
	if plainExec(b, n) {
		t.Fatal("plainExec of a checked builder: want false")
	}
	if _, err := b.Build(ctx, n, nil); err != nil {
		t.Fatal(err)
	}
	if builds != 1 {
		t.Fatalf("checking builder built %d plans, want 1", builds)
	}

	_, b, err = ApplyValueRules(ctx, lookingThrough{rules}, n)
	if err != nil || !plainExec(b, n) {
		t.Fatalf("through an unwrapping builder: %T, %v; want the plain applied builder", b, err)
	}

	plain := checkingExec{NodeExecBuilder: base, builds: &builds}
	_, b, err = ApplyValueRules(ctx, plain, n)
	if err != nil || b != sql.NodeExecBuilder(plain) {
		t.Fatalf("without Install's builder: %T, %v; want the builder given", b, err)
	}
}

// precheckingExec stands for a server's checking builder that can hand
// its checks over: it logs them, and refuses plans when keeps is false.
type precheckingExec struct {
	checkingExec
	name  string
	keeps bool
	log   *[]string
}

func (e precheckingExec) Rewrap(inner sql.NodeExecBuilder) sql.NodeExecBuilder {
	e.NodeExecBuilder = inner
	return e
}

func (e precheckingExec) RewrapFor(inner sql.NodeExecBuilder, _ sql.Node) sql.NodeExecBuilder {
	*e.log = append(*e.log, "rewrap "+e.name)
	return e.Rewrap(inner)
}

func (e precheckingExec) Precheck(sql.Node) (func(*sql.Context) error, bool) {
	if !e.keeps {
		return nil, false
	}
	return func(*sql.Context) error {
		*e.log = append(*e.log, "check "+e.name)
		return nil
	}, true
}

// TestDirectExec checks which chains of builders let a caller run a kept
// plan itself: GMS's builder under ApplyValueRules' alone, or under
// Precheckers that keep the plan, whose checks then run outermost first;
// not under a builder that only checks as it builds, or a Prechecker that
// would change the plan.
func TestDirectExec(t *testing.T) {
	ctx := sql.NewEmptyContext()
	rules := valueRulesExec{NodeExecBuilder: &rowexec.BaseBuilder{}, a: &analyzer.Analyzer{},
		rules: func(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
			return n, transform.SameTree, nil
		}}
	n := plan.NewEmptyTableWithSchema(nil)
	var builds int
	var log []string
	pc := func(name string, keeps bool, inner sql.NodeExecBuilder) sql.NodeExecBuilder {
		return precheckingExec{checkingExec: checkingExec{NodeExecBuilder: inner, builds: &builds}, name: name, keeps: keeps, log: &log}
	}
	applied := func(b sql.NodeExecBuilder) sql.NodeExecBuilder {
		_, b, err := ApplyValueRules(ctx, b, n)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	if check, ok := DirectExec(applied(rules), n); !ok || check != nil {
		t.Fatalf("plain: %v, %v; want no check, true", check != nil, ok)
	}
	if _, ok := DirectExec(applied(checkingExec{NodeExecBuilder: rules, builds: &builds}), n); ok {
		t.Fatal("under a builder that checks only as it builds: want false")
	}
	if _, ok := DirectExec(rules, n); ok {
		t.Fatal("a builder ApplyValueRules did not return: want false")
	}

	b := applied(pc("outer", true, lookingThrough{pc("inner", true, rules)}))
	if want := []string{"rewrap inner", "rewrap outer"}; !slices.Equal(log, want) {
		t.Fatalf("rewrapped: %q, want %q", log, want)
	}
	log = nil
	check, ok := DirectExec(b, n)
	if !ok || check == nil {
		t.Fatalf("under Precheckers that keep the plan: %v, %v; want a check, true", check != nil, ok)
	}
	if err := check(ctx); err != nil {
		t.Fatal(err)
	}
	if want := []string{"check outer", "check inner"}; !slices.Equal(log, want) {
		t.Fatalf("checks ran %q, want %q", log, want)
	}
	if builds != 0 {
		t.Fatalf("%d builds; want none", builds)
	}

	if _, ok := DirectExec(applied(pc("outer", true, pc("inner", false, rules))), n); ok {
		t.Fatal("under a Prechecker that would change the plan: want false")
	}
	if plainExec(b, n) {
		t.Fatal("plainExec under Precheckers: want false")
	}
}

// plainExec reports whether b runs plans itself with nothing to check
// first: GMS's builder under what ApplyValueRules put there alone.
func plainExec(b sql.NodeExecBuilder, n sql.Node) bool {
	check, ok := DirectExec(b, n)
	return ok && check == nil
}
