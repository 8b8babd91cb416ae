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
	WrapInfoSchemaReader(e, information_schema.TriggersTableName, func(_ sql.Schema, read InfoSchemaReader) InfoSchemaReader {
		return func(ctx *sql.Context, c sql.Catalog) (sql.RowIter, error) {
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
	})
}

// InfoSchemaReader reads the rows of an information_schema table.
type InfoSchemaReader = func(*sql.Context, sql.Catalog) (sql.RowIter, error)

// WrapInfoSchemaReader replaces the reader of e's information_schema table
// name (its catalog's instance, not GMS's package state) by wrap's, given
// the table's schema and its reader; nothing when e has no such table.
func WrapInfoSchemaReader(e *sqle.Engine, name string, wrap func(sql.Schema, InfoSchemaReader) InfoSchemaReader) {
	is := e.Analyzer.Catalog.InfoSchema
	if is == nil {
		return
	}
	t, ok, err := is.GetTableInsensitive(sql.NewEmptyContext(), name)
	if err != nil || !ok {
		return
	}
	ist, ok := t.(*information_schema.InformationSchemaTable)
	if !ok || ist.Reader == nil {
		return
	}
	if r := wrap(ist.Schema(), ist.Reader); r != nil {
		ist.Reader = r
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
