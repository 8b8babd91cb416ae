package mysqlcompat

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
)

// ApplyValueRules returns plan n with the value rules applied as the
// engine's exec builder b applies them when it builds n (valueRulesExec),
// and a builder that builds such a plan without applying them again but
// still words an INSERT's conversion errors as MySQL does. A plan kept to
// be built many times (sqlstore's prepared writes) is corrected once
// instead of at every build. Builders that wrap Install's and say so with
// an Unwrap method are looked through; one that can also wrap another
// builder the same way (Rewrapper: a server's privilege and read_only
// checks) stays around the builder returned, so that its checks still run
// at every build (a Prechecker is told the plan: RewrapFor). With no
// builder Install made, n and b come back as they are.
func ApplyValueRules(ctx *sql.Context, b sql.NodeExecBuilder, n sql.Node) (sql.Node, sql.NodeExecBuilder, error) {
	nn, applied, found, err := applyValueRules(ctx, b, n)
	if err != nil || !found {
		return n, b, err
	}
	return nn, applied, nil
}

// Rewrapper is an exec builder wrapping another that can wrap a different
// one in the same way (ApplyValueRules).
type Rewrapper interface {
	Unwrap() sql.NodeExecBuilder
	Rewrap(inner sql.NodeExecBuilder) sql.NodeExecBuilder
}

// applyValueRules is ApplyValueRules; found reports whether b holds the
// builder Install made.
func applyValueRules(ctx *sql.Context, b sql.NodeExecBuilder, n sql.Node) (sql.Node, sql.NodeExecBuilder, bool, error) {
	for x := b; ; {
		if e, ok := x.(valueRulesExec); ok {
			if fixedBatches(n) {
				nn, err := planFixedRanges(ctx, e.a, n) // dmlranges.go
				if err != nil {
					return nil, nil, false, err
				}
				nn, _, err = e.rules(ctx, e.a, nn, nil, analyzer.DefaultRuleSelector, nil)
				if err != nil {
					return nil, nil, false, err
				}
				n = nn
			}
			return n, appliedExec{e.NodeExecBuilder}, true, nil
		}
		if r, ok := x.(Rewrapper); ok {
			nn, inner, found, err := applyValueRules(ctx, r.Unwrap(), n)
			if err != nil || !found {
				return nil, nil, found, err
			}
			if pc, ok := r.(Prechecker); ok {
				return nn, pc.RewrapFor(inner, nn), true, nil
			}
			return nn, r.Rewrap(inner), true, nil
		}
		u, ok := x.(interface{ Unwrap() sql.NodeExecBuilder })
		if !ok {
			return n, b, false, nil
		}
		x = u.Unwrap()
	}
}

// Prechecker is a Rewrapper whose Build checks a plan before building
// the inner builder's (a server's privileges and read_only), and that can
// hand those checks to a caller that runs a kept plan itself instead of
// building it (DirectExec), or remember what they found in a kept plan.
type Prechecker interface {
	Rewrapper
	// Precheck returns the checks Build makes of plan n, or of a plan
	// made from n by putting other literals and another static index
	// lookup in it, to be called before such a plan is run: nil when
	// Build checks nothing of them. ok is false when Build would run
	// another plan than n (its checks rewrite n, or wrap its rows): such a
	// plan must be built. It is asked once per kept plan; the check it
	// returns runs at every execution and sees the session's state then
	// (its account's privileges, read_only).
	Precheck(n sql.Node) (check func(*sql.Context) error, ok bool)
	// RewrapFor is Rewrap for a builder that will build only plans made
	// from n as above (ApplyValueRules' callers keep n): what the checks
	// can know of n alone they may find once.
	RewrapFor(inner sql.NodeExecBuilder, n sql.Node) sql.NodeExecBuilder
}

// DirectExec reports whether a caller may run plan n, which ApplyValueRules
// returned with b, itself instead of having b build it, and what it must
// call first, at every execution, where b's Build would have checked the
// plan (nil when nothing): b is GMS's own builder with nothing around it
// but what ApplyValueRules put there and Precheckers that run n as it is.
// It is asked once per kept plan.
func DirectExec(b sql.NodeExecBuilder, n sql.Node) (check func(*sql.Context) error, ok bool) {
	var checks []func(*sql.Context) error
	for x := b; ; {
		switch e := x.(type) {
		case appliedExec:
			if _, ok := e.NodeExecBuilder.(*rowexec.BaseBuilder); !ok {
				return nil, false
			}
			switch len(checks) {
			case 0:
				return nil, true
			case 1:
				return checks[0], true
			}
			return func(ctx *sql.Context) error {
				// Outermost first, as their Builds would run.
				for _, c := range checks {
					if err := c(ctx); err != nil {
						return err
					}
				}
				return nil
			}, true
		case Prechecker:
			c, ok := e.Precheck(n)
			if !ok {
				return nil, false
			}
			if c != nil {
				checks = append(checks, c)
			}
			x = e.Unwrap()
		default:
			return nil, false
		}
	}
}

// appliedExec builds plans the value rules were applied to already.
type appliedExec struct{ sql.NodeExecBuilder }

// Build implements sql.NodeExecBuilder.
func (e appliedExec) Build(ctx *sql.Context, n sql.Node, r sql.Row) (sql.RowIter, error) {
	return buildWording(ctx, e.NodeExecBuilder, n, r)
}
