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
// at every build. With no builder Install made, n and b come back as
// they are.
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
			return nn, r.Rewrap(inner), true, nil
		}
		u, ok := x.(interface{ Unwrap() sql.NodeExecBuilder })
		if !ok {
			return n, b, false, nil
		}
		x = u.Unwrap()
	}
}

// PlainExec reports whether b, an executor ApplyValueRules returned, is
// GMS's own builder with nothing around it but what ApplyValueRules put
// there: a caller that runs such a plan itself, without building it, skips
// no check another wrapper of the engine's executor would make (a server's
// privileges and read_only).
func PlainExec(b sql.NodeExecBuilder) bool {
	a, ok := b.(appliedExec)
	if !ok {
		return false
	}
	_, ok = a.NodeExecBuilder.(*rowexec.BaseBuilder)
	return ok
}

// appliedExec builds plans the value rules were applied to already.
type appliedExec struct{ sql.NodeExecBuilder }

// Build implements sql.NodeExecBuilder.
func (e appliedExec) Build(ctx *sql.Context, n sql.Node, r sql.Row) (sql.RowIter, error) {
	return buildWording(ctx, e.NodeExecBuilder, n, r)
}
