package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/strata-db/strata/kv"
	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/kvstore"
)

// openStore opens (creating) the store in dir, with the engine's notices
// going to out.
// The DB is the engine under the store, for its metrics.
func openStore(dir string, noSync bool, out *log.Logger) (*sqlstore.Store, *kv.DB, error) {
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

// createDatabase creates database name when it is missing, in a session
// of its own that ends with it.
func (s *Server) createDatabase(name string) (err error) {
	sess := s.store.NewSession(nil)
	defer func() {
		sess.SessionEnd()
		s.engine.CloseSession(sess.ID())
	}()
	q := "CREATE DATABASE IF NOT EXISTS `" + strings.ReplaceAll(name, "`", "``") + "`"
	ctx := sess.NewStatementContext(context.Background(), s.engine, q)
	_, iter, err := sqlstore.Query(ctx, s.engine, q, nil, nil)
	if err != nil {
		return err
	}
	for {
		if _, err = iter.Next(ctx); err != nil {
			break
		}
	}
	if !errors.Is(err, io.EOF) {
		_ = iter.Close(ctx)
		return err
	}
	return iter.Close(ctx)
}
