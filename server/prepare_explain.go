package server

import (
	"context"
	"math"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/strata-db/strata/sqlstore"
)

// countExplainParams sets the parameter count of a statement being
// prepared that the protocol layer counted none in, though it has
// placeholders: the protocol layer's walk does not enter an EXPLAIN, so a
// client preparing EXPLAIN SELECT ... WHERE id = ? would be told the
// statement takes none and could not bind the value. Only a statement
// with a '?' and no parameters counted is parsed again.
func (h *handler) countExplainParams(ctx context.Context, c *mysql.Conn, query string, prepare *mysql.PrepareData) {
	if prepare.ParamsCount != 0 || !strings.Contains(query, "?") {
		return
	}
	opts, err := h.Handler.ParserOptionsForConnection(c)
	if err != nil {
		return
	}
	stmt, err := sqlparser.ParseWithOptions(ctx, query, opts)
	if err != nil {
		return // the protocol layer parsed it; the engine reports its error
	}
	if _, ok := stmt.(*sqlparser.Explain); !ok {
		return
	}
	if n := sqlstore.PlaceholderCount(stmt); n > 0 && n <= math.MaxUint16 {
		prepare.ParamsCount = uint16(n)
		prepare.ParamsType = make([]int32, n)
		prepare.BindVars = make(map[string]*querypb.BindVariable, n)
	}
}
