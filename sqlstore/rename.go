package sqlstore

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// checkRenameQualifiers fails a rename whose tables are not in d. GMS
// drops the database qualifiers of RENAME TABLE and ALTER TABLE ... RENAME
// TO and renames in the current database, so RENAME TABLE d2.t TO d2.t2,
// run in another database holding a t, renamed that one (and, before
// calling here, pointed the foreign keys that reference it at the new
// name). The statement's text still has the qualifiers; a rename they
// place elsewhere fails with 1235, and the failed statement undoes what
// GMS did before.
//
// Targets GMS v0.20.0. Without it, TestRenameQualified fails.
func (d *Database) checkRenameQualifiers(ctx *sql.Context, oldName, newName string) error {
	q := ctx.Query()
	if !strings.Contains(strings.ToLower(q), "rename") {
		return nil
	}
	stmt, err := sqlparser.Parse(q)
	if err != nil {
		return nil // GMS parsed it with the session's options: trust it
	}
	var from, to []sqlparser.TableName
	switch s := stmt.(type) {
	case *sqlparser.DDL:
		if s.Action == sqlparser.RenameStr {
			from, to = s.FromTables, s.ToTables
		}
	case *sqlparser.AlterTable:
		for _, st := range s.Statements {
			if st.Action == sqlparser.RenameStr && len(st.ToTables) > 0 {
				from, to = append(from, s.Table), append(to, st.ToTables[0])
			}
		}
	}
	for i := range min(len(from), len(to)) {
		if !strings.EqualFold(from[i].Name.String(), oldName) || !strings.EqualFold(to[i].Name.String(), newName) {
			continue
		}
		for _, n := range []sqlparser.TableName{from[i], to[i]} {
			if q := n.DbQualifier.String(); q != "" && !strings.EqualFold(q, d.name) {
				return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
					"renaming a table in or into database %s from database %s is not supported: USE %s first (tables cannot move between databases)", q, d.name, q)
			}
		}
	}
	return nil
}
