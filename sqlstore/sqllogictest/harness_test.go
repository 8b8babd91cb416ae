// Package sqllogictest runs the sqllogictest files beside the repository
// (../shared/sqllogictest from its root) against sqlstore through
// go-mysql-server's sqllogictest runner, each file in its own process, and
// checks that every record GMS's in-memory engine passes passes here too.
package sqllogictest

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/shopspring/decimal"

	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/kvstore"
	"github.com/strata-db/strata/sqlstore/tikvstore"
)

// harness implements logictest.Harness over a fresh store per file.
type harness struct {
	dir   string
	store *sqlstore.Store
	e     *sqle.Engine
	sess  *sqlstore.Session
}

// EngineStr implements logictest.Harness: the files' MySQL flavour.
func (h *harness) EngineStr() string { return "mysql" }

// Init implements logictest.Harness: a new, empty store with database mydb.
func (h *harness) Init() error {
	if h.store != nil {
		_ = h.store.Close()
		_ = os.RemoveAll(h.dir)
	}
	var dir string
	var s *sqlstore.Store
	var err error
	if addr := os.Getenv("STRATA_TEST_STORE"); tikvstore.IsAddress(addr) {
		// The same files on the remote backend (tikv://mock?regions=4).
		s, err = tikvstore.Open(addr, nil)
	} else {
		if dir, err = os.MkdirTemp(tempBase(), "sqlstore-slt-"); err != nil {
			return err
		}
		s, _, err = kvstore.Open(dir, &kvstore.Options{NoSync: true})
	}
	if err != nil {
		return err
	}
	h.dir, h.store, h.e = dir, s, s.NewEngine()
	h.sess = s.NewSession(nil)
	return h.ExecuteStatement("CREATE DATABASE mydb")
}

// Close releases the store.
func (h *harness) Close() {
	if h.store != nil {
		_ = h.store.Close()
		_ = os.RemoveAll(h.dir)
	}
}

func tempBase() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		return "/dev/shm"
	}
	return ""
}

func (h *harness) ctx() *sql.Context {
	ctx := sql.NewContext(context.Background(), sql.WithSession(h.sess))
	if h.store.Provider().HasDatabase(ctx, "mydb") {
		ctx.SetCurrentDatabase("mydb")
	}
	return ctx
}

// ExecuteStatement implements logictest.Harness.
func (h *harness) ExecuteStatement(statement string) error {
	ctx := h.ctx()
	_, iter, _, err := h.e.Query(ctx, statement)
	if err != nil {
		return err
	}
	_, err = sql.RowIterToRows(ctx, iter)
	return err
}

// ExecuteQuery implements logictest.Harness: the schema as letters (I, R,
// T) and every value as the runner's text.
func (h *harness) ExecuteQuery(statement string) (string, []string, error) {
	ctx := h.ctx()
	sch, iter, _, err := h.e.Query(ctx, statement)
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	for _, col := range sch {
		switch col.Type.Type() {
		case query.Type_INT8, query.Type_INT16, query.Type_INT24, query.Type_INT32, query.Type_INT64,
			query.Type_UINT8, query.Type_UINT16, query.Type_UINT24, query.Type_UINT32, query.Type_UINT64,
			query.Type_BIT:
			b.WriteString("I")
		case query.Type_TEXT, query.Type_VARCHAR:
			b.WriteString("T")
		case query.Type_FLOAT32, query.Type_FLOAT64, query.Type_DECIMAL:
			b.WriteString("R")
		default:
			_, _ = sql.RowIterToRows(ctx, iter)
			return "", nil, fmt.Errorf("unhandled type: %v", col.Type)
		}
	}
	var results []string
	for {
		row, err := iter.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			_ = iter.Close(ctx)
			return "", nil, err
		}
		for _, v := range row {
			s, err := resultString(v)
			if err != nil {
				_ = iter.Close(ctx)
				return "", nil, err
			}
			results = append(results, s)
		}
	}
	return b.String(), results, iter.Close(ctx)
}

// resultString formats a value as sqllogictest expects: NULL, integers,
// reals with three decimals, text as is.
func resultString(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "NULL", nil
	case float32:
		return fmt.Sprintf("%.3f", x), nil
	case float64:
		return fmt.Sprintf("%.3f", x), nil
	case decimal.Decimal:
		return x.StringFixed(3), nil
	case int8, int16, int32, int64, int:
		return fmt.Sprint(x), nil
	case uint8, uint16, uint32, uint64, uint:
		return fmt.Sprint(x), nil
	case string:
		return x, nil
	case bool:
		if x {
			return "1", nil
		}
		return "0", nil
	}
	return "", fmt.Errorf("no conversion for %v of type %T", v, v)
}
