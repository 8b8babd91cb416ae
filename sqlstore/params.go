package sqlstore

import "github.com/dolthub/vitess/go/vt/sqlparser"

// PlaceholderCount returns the number of distinct placeholders of a parsed
// statement, those of the statement an EXPLAIN explains included: the
// protocol layer's own count walks no further than the EXPLAIN, which
// would tell a client preparing EXPLAIN SELECT ... WHERE id = ? that the
// statement takes no parameters.
func PlaceholderCount(stmt sqlparser.Statement) int { return countParams(stmt) }
