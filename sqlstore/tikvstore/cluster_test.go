package tikvstore

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/strata-db/strata/sqlstore"
)

// TestRealCluster runs SQL on the TiKV cluster whose PD servers
// STRATA_TIKV_PD names ("pd1:2379,pd2:2379", optionally with
// "/?keyspace=NAME"), in a database of its own that it drops at the end,
// through two stores as two processes would. It skips without one.
func TestRealCluster(t *testing.T) {
	pd := os.Getenv("STRATA_TIKV_PD")
	if pd == "" {
		t.Skip("STRATA_TIKV_PD names no TiKV cluster (e.g. STRATA_TIKV_PD=127.0.0.1:2379 after tiup playground)")
	}
	addr := Scheme + strings.TrimPrefix(pd, Scheme)
	if !strings.Contains(addr[len(Scheme):], "/") {
		addr += "/"
	}
	ctx := context.Background()
	db := fmt.Sprintf("strata_test_%d", time.Now().UnixNano())
	a := openConn(t, addr, db)
	b := openConn(t, addr, db)
	defer func() {
		if _, err := a.Exec(ctx, "DROP DATABASE "+db); err != nil {
			t.Errorf("dropping %s: %v", db, err)
		}
	}()
	exec(t, a, "CREATE TABLE t (id BIGINT PRIMARY KEY AUTO_INCREMENT, v INT, KEY (v))")
	exec(t, a, "INSERT INTO t (v) VALUES (1), (2), (3)")
	exec(t, b, "INSERT INTO t (v) VALUES (4)")
	if got := query(t, b, "SELECT COUNT(*), COUNT(DISTINCT id), SUM(v) FROM t"); got != "[4 4 10]" {
		t.Fatalf("b reads %s", got)
	}
	exec(t, b, "ALTER TABLE t ADD COLUMN w INT DEFAULT 5")
	if got := query(t, a, "SELECT SUM(w) FROM t WHERE v >= 2"); got != "[15]" {
		t.Fatalf("a reads %s after b's ALTER", got)
	}
}

func openConn(t *testing.T, addr, db string) *sqlstore.Conn {
	t.Helper()
	st, err := Open(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := st.OpenEngine()
	c := e.NewConn()
	t.Cleanup(func() {
		c.Close()
		e.Close()
	})
	if err := c.UseDatabase(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return c
}
