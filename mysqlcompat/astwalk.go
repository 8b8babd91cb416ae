package mysqlcompat

import ast "github.com/dolthub/vitess/go/vt/sqlparser"

// walkSQL is ast.Walk that also reaches a set operation's WITH, ORDER BY
// and LIMIT, which vitess's walk of a SetOp skips (it walks the two sides
// only), in the order of the text: WITH, the sides, ORDER BY, LIMIT.
func walkSQL(visit ast.Visit, nodes ...ast.SQLNode) error {
	var v ast.Visit
	v = func(n ast.SQLNode) (bool, error) {
		kontinue, err := visit(n)
		if err != nil || !kontinue {
			return kontinue, err
		}
		s, ok := n.(*ast.SetOp)
		if !ok || s == nil {
			return true, nil
		}
		parts := make([]ast.SQLNode, 0, 5)
		if s.With != nil {
			parts = append(parts, s.With)
		}
		parts = append(parts, s.Left, s.Right)
		if s.OrderBy != nil {
			parts = append(parts, s.OrderBy)
		}
		if s.Limit != nil {
			parts = append(parts, s.Limit)
		}
		return false, ast.Walk(v, parts...)
	}
	return ast.Walk(v, nodes...)
}
