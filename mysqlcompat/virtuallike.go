package mysqlcompat

import (
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// CREATE TABLE ... LIKE a table with virtual columns
//
// GMS's binder reads the table LIKE names through the wrapper that
// computes its virtual columns (showvirtual.go), and copies from the
// wrapper its secondary indexes and CHECK constraints: none. The plan it
// builds (plan.CreateTable) keeps no trace of the LIKE, so the engine's
// parser notes, for the session, which table the statement copies
// (likeSources.note), and a rule at the end of the analysis gives the
// CreateTable of that name the indexes and CHECKs of that table
// (copyVirtualLike), as GMS gives them for any other table: the indexes
// by name and columns, the CHECKs by expression, named anew.

// likeSources holds, per session, the table the CREATE TABLE ... LIKE
// being planned copies, when it has virtual columns. An entry lives from
// the statement's parse to the end of its analysis; one a failed
// statement leaves is replaced by the session's next CREATE TABLE, and
// only read for a table of the same name.
type likeSources struct {
	mu sync.Mutex
	m  map[uint32]likeSource
}

type likeSource struct {
	db, name string // the table created
	srcDB    string // and the one it copies
	src      sql.Table
}

// note records what ddl, a CREATE TABLE the session is about to plan,
// copies, if it is a LIKE of a table with virtual columns.
func (l *likeSources) note(ctx *sql.Context, cat sql.Catalog, ddl *ast.DDL) {
	if l == nil || ctx == nil || ctx.Session == nil || cat == nil {
		return
	}
	id := ctx.Session.ID()
	var src likeSource
	if ddl.OptLike != nil && len(ddl.OptLike.LikeTables) == 1 {
		lt := ddl.OptLike.LikeTables[0]
		src.srcDB = lt.DbQualifier.String()
		if src.srcDB == "" {
			src.srcDB = ctx.GetCurrentDatabase()
		}
		src.db = ddl.Table.DbQualifier.String()
		if src.db == "" {
			src.db = ctx.GetCurrentDatabase()
		}
		src.name = ddl.Table.Name.String()
		if t, _, err := cat.Table(ctx, src.srcDB, lt.Name.String()); err == nil && t != nil && t.Schema().HasVirtualColumns() {
			src.src = t
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if src.src == nil {
		delete(l.m, id)
		return
	}
	if l.m == nil {
		l.m = make(map[uint32]likeSource)
	}
	l.m[id] = src
}

// take returns and forgets the table the session's CREATE TABLE of db.name
// copies, if noted.
func (l *likeSources) take(ctx *sql.Context, db, name string) (likeSource, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.m) == 0 || ctx.Session == nil {
		return likeSource{}, false
	}
	id := ctx.Session.ID()
	src, ok := l.m[id]
	if !ok || !strings.EqualFold(src.db, db) || !strings.EqualFold(src.name, name) {
		return likeSource{}, false
	}
	delete(l.m, id)
	return src, true
}

// copyVirtualLike returns the rule that completes a CREATE TABLE ... LIKE
// of a table with virtual columns (see above). Every statement passes it:
// the others cost a type assertion.
func copyVirtualLike(likes *likeSources) analyzer.RuleFunc {
	return func(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
		ct, ok := n.(*plan.CreateTable)
		if !ok || ct.Database() == nil || len(ct.Indexes()) > 0 || len(ct.Checks()) > 0 {
			return n, transform.SameTree, nil
		}
		src, ok := likes.take(ctx, ct.Database().Name(), ct.Name())
		if !ok {
			return n, transform.SameTree, nil
		}
		idx, err := shownIndexes(ctx, src.src)
		if err != nil {
			return nil, transform.SameTree, err
		}
		defs := make(sql.IndexDefs, 0, len(idx))
		for _, i := range idx {
			c := sql.IndexConstraint_None
			if i.IsUnique() {
				c = sql.IndexConstraint_Unique
				if i.ID() == "PRIMARY" {
					c = sql.IndexConstraint_Primary
				}
			}
			cols := make([]sql.IndexColumn, len(i.Expressions()))
			for j, e := range i.Expressions() {
				cols[j] = sql.IndexColumn{Name: strings.TrimPrefix(e, src.src.Name()+".")}
			}
			defs = append(defs, &sql.IndexDef{Name: i.ID(), Storage: sql.IndexUsing_Default, Constraint: c, Columns: cols, Comment: i.Comment()})
		}
		if ct, err = ct.WithIndexDefs(defs); err != nil {
			return nil, transform.SameTree, err
		}
		checks, err := boundChecks(ctx, a, src.srcDB, src.src, 0)
		if err != nil {
			return nil, transform.SameTree, err
		}
		for _, c := range checks {
			c.Name = "" // named when the table is made, as GMS names copied CHECKs
		}
		return ct.WithChecks(checks), transform.NewTree, nil
	}
}
