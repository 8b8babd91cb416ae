package mysqlcompat

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
)

// ApplyValueRules returns plan n with the value rules applied as the
// engine's exec builder b applies them when it builds n (valueRulesExec),
// and the builder that builds such a plan without applying them again. A
// plan kept to be built many times (sqlstore's prepared writes) is
// corrected once instead of at every build. With a builder Install did
// not make, n and b come back as they are.
func ApplyValueRules(ctx *sql.Context, b sql.NodeExecBuilder, n sql.Node) (sql.Node, sql.NodeExecBuilder, error) {
	e, ok := b.(valueRulesExec)
	if !ok {
		return n, b, nil
	}
	if fixedBatches(n) {
		nn, _, err := e.rules(ctx, e.a, n, nil, analyzer.DefaultRuleSelector, nil)
		if err != nil {
			return nil, nil, err
		}
		n = nn
	}
	return n, e.NodeExecBuilder, nil
}
