package server

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/information_schema"

	"github.com/strata-db/strata/mysqlcompat"
	"github.com/strata-db/strata/sqlstore"
)

// The State of a waiting statement in the process list
//
// GMS's SHOW PROCESSLIST and information_schema.PROCESSLIST make a
// statement's State from its table progress ("running" without any), so a
// statement waiting for a lock looked like any other. MySQL shows "Waiting
// for table metadata lock" while it waits for a metadata lock, and the
// stage a row lock wait happens in ("updating" for UPDATE and DELETE).
// The store knows who waits (Store.Waits); both readers of the list have
// the State of each waiting connection replaced as they are read, nothing
// being recorded on the statement's path.

// Column positions shared by SHOW PROCESSLIST and
// information_schema.PROCESSLIST: Id, User, Host, db, Command, Time, State,
// Info.
const (
	processIDColumn    = 0
	processStateColumn = 6
	processInfoColumn  = 7
)

// waitingStates returns rows with the State of each connection whose
// statement waits replaced by the wait's (Wait.State).
func waitingStates(store *sqlstore.Store, rows []gsql.Row) []gsql.Row {
	waits := store.Waits()
	if len(waits) == 0 {
		return rows
	}
	for _, r := range rows {
		if len(r) <= processInfoColumn {
			continue
		}
		var id uint32
		switch v := r[processIDColumn].(type) {
		case int64:
			id = uint32(v)
		case uint64:
			id = uint32(v)
		default:
			continue
		}
		w, ok := waits[id]
		if !ok {
			continue
		}
		query, _ := r[processInfoColumn].(string)
		r[processStateColumn] = w.State(query)
	}
	return rows
}

// showProcessList reads the rows of iter, a process list's (SHOW
// PROCESSLIST or information_schema.PROCESSLIST), with the waits' States
// set.
func showProcessList(ctx *gsql.Context, store *sqlstore.Store, iter gsql.RowIter) (gsql.RowIter, error) {
	rows, err := gsql.RowIterToRows(ctx, iter)
	if err != nil {
		return nil, err
	}
	return gsql.RowsToRowIter(waitingStates(store, rows)...), nil
}

// processListStates makes the engine's information_schema.PROCESSLIST (its
// catalog's instance, not GMS's package state) show the waits' States.
func (s *Server) processListStates() {
	store := s.store
	mysqlcompat.WrapInfoSchemaReader(s.engine, information_schema.ProcessListTableName, func(_ gsql.Schema, read mysqlcompat.InfoSchemaReader) mysqlcompat.InfoSchemaReader {
		return func(ctx *gsql.Context, c gsql.Catalog) (gsql.RowIter, error) {
			iter, err := read(ctx, c)
			if err != nil {
				return nil, err
			}
			return showProcessList(ctx, store, iter)
		}
	})
}
