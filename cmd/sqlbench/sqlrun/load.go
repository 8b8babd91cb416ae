package sqlrun

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-db/strata/cmd/sqlbench/internal/meter"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/strata-db/strata/sqlstore/kvstore"
	"github.com/strata-db/strata/sqlstore/tikvstore"
)

// sqlLoadBatch is the number of rows per INSERT of the bulk load.
const sqlLoadBatch = 500

// sqlPrepareTable makes sure dir holds sbtest with the ids 1 to cfg.rows:
// it keeps such a table (earlier runs' inserts included), or (re)creates
// and loads it, then compacts the database so that runs start from a
// settled tree. It returns the table's largest id.
func sqlPrepareTable(ctx context.Context, dir string, cfg *sqlConfig, stderr, progress io.Writer) (int64, error) {
	dsn := dir + "?db=sbtest&sync=false"
	if tikvstore.IsAddress(dir) {
		dsn = withDB(dir)
	}
	db, err := sql.Open("strata", dsn)
	if err != nil {
		return 0, err
	}
	n, maxID, err := sqlTableRows(ctx, db, cfg.rows)
	if err == nil && n == int64(cfg.rows) {
		fmt.Fprintf(stderr, "... reusing sbtest in %s (ids 1 to %d, largest %d)\n", dir, n, maxID)
		return maxID, db.Close()
	}
	start := time.Now()
	err = sqlLoad(ctx, db, cfg, progress, "sbtest", strataDDL)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(stderr, "... loaded %d rows in %.1fs\n", cfg.rows, time.Since(start).Seconds())
	if tikvstore.IsAddress(dir) {
		return int64(cfg.rows), nil // TiKV compacts by itself
	}
	start = time.Now()
	if err := sqlCompact(dir); err != nil {
		return 0, err
	}
	fmt.Fprintf(stderr, "... compacted in %.1fs\n", time.Since(start).Seconds())
	return int64(cfg.rows), nil
}

// withDB adds db=sbtest to a tikv:// address.
func withDB(addr string) string {
	if strings.Contains(addr, "?") {
		return addr + "&db=sbtest"
	}
	return addr + "?db=sbtest"
}

// sqlTableRows returns how many of the ids 1 to rows sbtest holds and its
// largest id, or an error when there is no table.
func sqlTableRows(ctx context.Context, db *sql.DB, rows int) (n, maxID int64, err error) {
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM sbtest WHERE id BETWEEN 1 AND ?", rows).Scan(&n); err != nil {
		return 0, 0, err
	}
	var m sql.NullInt64
	err = db.QueryRowContext(ctx, "SELECT MAX(id) FROM sbtest").Scan(&m)
	return n, m.Int64, err
}

// strataDDL creates sbtest in Strata.
var strataDDL = []string{
	"DROP TABLE IF EXISTS sbtest",
	"CREATE TABLE sbtest (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_idx (k))",
}

// sqlLoad creates sbtest with ddl and inserts cfg.rows rows, sqlLoadBatch
// per statement; the rows depend on cfg.seed alone, so every engine loads
// the same ones. label names the progress bar.
func sqlLoad(ctx context.Context, db *sql.DB, cfg *sqlConfig, progress io.Writer, label string, ddl []string) error {
	for _, q := range ddl {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	r := rand.New(rand.NewPCG(cfg.seed, 0x5b7e57))
	bar := meter.Start(progress, "load "+label, int64(cfg.rows), 0)
	defer bar.Stop()
	var sb strings.Builder
	for lo := 1; lo <= cfg.rows; lo += sqlLoadBatch {
		if err := ctx.Err(); err != nil {
			return err
		}
		sb.Reset()
		sb.WriteString("INSERT INTO sbtest (id, k, c, pad) VALUES ")
		hi := min(lo+sqlLoadBatch-1, cfg.rows)
		for id := lo; id <= hi; id++ {
			if id > lo {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(%d,%d,'%s','%s')", id, r.IntN(cfg.rows)+1, sbtestString(r, 10), sbtestString(r, 5))
		}
		if _, err := db.ExecContext(ctx, sb.String()); err != nil {
			return fmt.Errorf("loading rows %d to %d: %w", lo, hi, err)
		}
		bar.Add(int64(hi - lo + 1))
	}
	return nil
}

// sqlCompact opens the store directly (no connection holds it now) and
// compacts it: the memtable is flushed and the tree settled, as sysbench's
// prepare step leaves a server before a run.
func sqlCompact(dir string) error {
	s, db, err := kvstore.Open(dir, &kvstore.Options{NoSync: true})
	if err != nil {
		return err
	}
	err = db.Compact(nil, nil)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return err
}

// sqlEvictTables drops the OS page cache of the database's table files and
// returns how many there were.
func sqlEvictTables(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".sst" {
			continue
		}
		f, err := vfs.Default.Open(filepath.Join(dir, e.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue // removed by a compaction meanwhile
		}
		if err != nil {
			return n, err
		}
		err = f.Evict()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
