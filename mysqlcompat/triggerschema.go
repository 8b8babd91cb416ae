package mysqlcompat

import (
	"strings"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
)

// information_schema.TRIGGERS reads each database's triggers by parsing
// their stored CREATE TRIGGER statements, and GMS parses them all in the
// session's current database: a trigger whose statement names its table
// without a database ("CREATE TRIGGER tr BEFORE INSERT ON t ...", as
// stored) is bound to the current database's t, so a read from another
// database fails or reports another table. MySQL lists every trigger
// under its own database whatever the current one.
//
// triggersPerDatabase corrects the engine's own TRIGGERS table (the
// information_schema instance of its catalog, not GMS's package state):
// its reader runs once per database, over a catalog that lists only that
// database, in a context whose session reports that database as current.
//
// Targets GMS v0.20.0. Tests: TestTriggersSchemaAcrossDatabases.
func triggersPerDatabase(e *sqle.Engine) {
	is := e.Analyzer.Catalog.InfoSchema
	if is == nil {
		return
	}
	t, ok, err := is.GetTableInsensitive(sql.NewEmptyContext(), information_schema.TriggersTableName)
	if err != nil || !ok {
		return
	}
	ist, ok := t.(*information_schema.InformationSchemaTable)
	if !ok || ist.Reader == nil {
		return
	}
	read := ist.Reader
	ist.Reader = func(ctx *sql.Context, c sql.Catalog) (sql.RowIter, error) {
		var rows []sql.Row
		for _, db := range c.AllDatabases(ctx) {
			if strings.EqualFold(db.Name(), sql.InformationSchemaDatabaseName) {
				continue
			}
			// A copy of the statement's context whose session reports db
			// as current: the session itself is not changed, as other
			// goroutines of the statement (a server's hang-up watch) read
			// it meanwhile.
			dbCtx := *ctx
			dbCtx.Session = inDatabase{Session: ctx.Session, db: db.Name()}
			iter, err := read(&dbCtx, oneDatabase{Catalog: c, db: db})
			if err != nil {
				return nil, err
			}
			dbRows, err := sql.RowIterToRows(&dbCtx, iter)
			if err != nil {
				return nil, err
			}
			rows = append(rows, dbRows...)
		}
		return sql.RowsToRowIter(rows...), nil
	}
}

// oneDatabase is a catalog that lists one database.
type oneDatabase struct {
	sql.Catalog
	db sql.Database
}

func (c oneDatabase) AllDatabases(*sql.Context) []sql.Database { return []sql.Database{c.db} }

// inDatabase is a session that reports db as its current database.
type inDatabase struct {
	sql.Session
	db string
}

func (s inDatabase) GetCurrentDatabase() string { return s.db }
