package server

import (
	"context"
	"fmt"
	"log"

	"github.com/strata-db/strata/kv"
	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/kvstore"
)

// openStore opens (creating) the store in dir, with the engine's errors
// and recovery notices going to out, or the store at a remote address
// (tikv://, whose backend the program links by importing
// sqlstore/tikvstore) when store names one. The DB is the engine under the store, for its
// metrics (nil over TiKV).
func openStore(dir, store string, noSync bool, out *log.Logger) (*sqlstore.Store, *kv.DB, error) {
	if store != "" {
		st, err := sqlstore.OpenRemote(store)
		if err != nil {
			return nil, nil, fmt.Errorf("opening %s: %w", store, err)
		}
		return st, nil, nil
	}
	return kvstore.OpenDir(dir, &kvstore.Options{NoSync: noSync, KV: &kv.Options{Logger: kvstore.NoticeLog(out)}})
}

// createDatabase creates database name when it is missing, on a
// connection of its own that ends with it.
func (s *Server) createDatabase(name string) error {
	conn := s.store.WrapEngine(s.engine).NewConn()
	defer conn.Close()
	_, err := conn.Exec(context.Background(), "CREATE DATABASE IF NOT EXISTS "+sqlstore.QuoteIdent(name))
	return err
}
