package server

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/strata-db/strata/mysqlcompat"
)

// The views a listing shows
//
// GMS lists a database's tables through the authorization handler
// (grantsAuth.CheckTable narrows them to the tables a privilege reaches),
// but lists its views apart, every one of them, in SHOW TABLES, SHOW FULL
// TABLES and information_schema.TABLES: an account that holds nothing on
// a database's views saw their names. MySQL lists a view as it lists a
// table, to an account a privilege reaches it with (seesTable). SHOW
// TABLES is given the database with its views so narrowed (the policy's
// rewrite of the plan, seenViewsOf), information_schema.TABLES its rows.

// seenViews is a database whose views are those the session's account
// sees; the rest is the database's.
type seenViews struct {
	gsql.Database
	views gsql.ViewDatabase
	sees  func(view string) bool
}

// AllViews implements sql.ViewDatabase: the database's views the account
// sees.
func (d seenViews) AllViews(ctx *gsql.Context) ([]gsql.ViewDefinition, error) {
	all, err := d.views.AllViews(ctx)
	if err != nil {
		return nil, err
	}
	seen := all[:0:0]
	for _, v := range all {
		if d.sees(v.Name) {
			seen = append(seen, v)
		}
	}
	return seen, nil
}

func (d seenViews) CreateView(ctx *gsql.Context, name, selectStatement, createViewStmt string) error {
	return d.views.CreateView(ctx, name, selectStatement, createViewStmt)
}

func (d seenViews) DropView(ctx *gsql.Context, name string) error {
	return d.views.DropView(ctx, name)
}

func (d seenViews) GetViewDefinition(ctx *gsql.Context, name string) (gsql.ViewDefinition, bool, error) {
	return d.views.GetViewDefinition(ctx, name)
}

// viewsSeen returns, for the session's account, a test of whether it sees
// a view (or table) of database db, or nil when it sees every table there (a
// privilege reaches them all, or the privilege system is off).
func (p *policy) viewsSeen(ctx *gsql.Context, db string) func(view string) bool {
	if p.db == nil || !p.db.Enabled() || strings.EqualFold(db, "information_schema") {
		return nil
	}
	ps := p.db.UserActivePrivilegeSet(ctx)
	if reachesTables(ps.Has) || reachesTables(ps.Database(db).Has) {
		return nil
	}
	g := grantsAuth{db: p.db}
	return func(view string) bool { return g.seesTable(ps, db, view) }
}

// seenViewsOf is SHOW TABLES n listing only the views the session's
// account sees.
func (p *policy) seenViewsOf(ctx *gsql.Context, n *plan.ShowTables) (gsql.Node, transform.TreeIdentity, error) {
	db := n.Database()
	views, ok := db.(gsql.ViewDatabase)
	if !ok {
		return n, transform.SameTree, nil
	}
	if _, done := db.(seenViews); done {
		return n, transform.SameTree, nil
	}
	sees := p.viewsSeen(ctx, db.Name())
	if sees == nil {
		return n, transform.SameTree, nil
	}
	out, err := n.WithDatabase(seenViews{Database: db, views: views, sees: sees})
	if err != nil {
		return nil, transform.SameTree, err
	}
	return out, transform.NewTree, nil
}

// Columns of information_schema.TABLES read here.
const (
	tablesSchemaColumn = 1
	tablesNameColumn   = 2
)

// tablesSeen makes the engine's information_schema.TABLES (its catalog's
// instance, not GMS's package state) list only the tables and views the
// session's account sees: GMS listed every view, and every table to an
// account with a privilege that reaches no table (PROCESS).
func (s *Server) tablesSeen(p *policy) {
	mysqlcompat.WrapInfoSchemaReader(s.engine, information_schema.TablesTableName, func(_ gsql.Schema, read mysqlcompat.InfoSchemaReader) mysqlcompat.InfoSchemaReader {
		return func(ctx *gsql.Context, c gsql.Catalog) (gsql.RowIter, error) {
			iter, err := read(ctx, c)
			if err != nil || p.db == nil || !p.db.Enabled() || reachesTables(p.db.UserActivePrivilegeSet(ctx).Has) {
				return iter, err
			}
			rows, err := gsql.RowIterToRows(ctx, iter)
			if err != nil {
				return nil, err
			}
			seen := rows[:0]
			sees := map[string]func(string) bool{}
			for _, r := range rows {
				if len(r) > tablesNameColumn {
					db, _ := r[tablesSchemaColumn].(string)
					name, _ := r[tablesNameColumn].(string)
					f, ok := sees[db]
					if !ok {
						f = p.viewsSeen(ctx, db)
						sees[db] = f
					}
					if f != nil && !f(name) {
						continue
					}
				}
				seen = append(seen, r)
			}
			return gsql.RowsToRowIter(seen...), nil
		}
	})
}
