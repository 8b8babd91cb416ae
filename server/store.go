package server

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/strata-db/strata/kv"
	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/kvstore"
	"github.com/strata-db/strata/sqlstore/tikvstore"
)

// openStore opens (creating) the store in dir, with the engine's notices
// going to out, or the store at a tikv:// address when store names one.
// The DB is the engine under the store, for its metrics (nil over TiKV).
func openStore(dir, store string, noSync bool, out *log.Logger) (*sqlstore.Store, *kv.DB, error) {
	if store != "" {
		st, err := tikvstore.Open(store, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("opening %s: %w", store, err)
		}
		return st, nil, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("creating the data folder: %w", err)
	}
	st, db, err := kvstore.Open(dir, &kvstore.Options{NoSync: noSync, KV: &kv.Options{Logger: storeLog{out}}})
	if err != nil {
		return nil, nil, fmt.Errorf("opening %s: %w", dir, err)
	}
	return st, db, nil
}

// storeLog passes the engine's errors (a failed log write, a background
// error that made the database read-only) and its recovery notices (a torn
// log tail dropped, writes resumed after a full disk) to a log; the
// routine ones, each flush and compaction, it drops. It is the filter
// sqlshell applies to the shell's store.
type storeLog struct{ out *log.Logger }

func (l storeLog) Infof(format string, args ...any) {
	if strings.HasPrefix(format, "kv: recovery") || strings.HasPrefix(format, "kv: resumed") {
		l.out.Printf(format, args...)
	}
}

func (l storeLog) Errorf(format string, args ...any) { l.out.Printf(format, args...) }

// createDatabase creates database name when it is missing, on a
// connection of its own that ends with it.
func (s *Server) createDatabase(name string) error {
	conn := s.store.WrapEngine(s.engine).NewConn()
	defer conn.Close()
	_, err := conn.Exec(context.Background(), "CREATE DATABASE IF NOT EXISTS `"+strings.ReplaceAll(name, "`", "``")+"`")
	return err
}
