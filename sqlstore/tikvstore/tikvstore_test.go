package tikvstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/storage/tikv"
)

func TestMain(m *testing.M) {
	if err := tikv.SetLogLevel("fatal"); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// query runs q on c and returns its rows printed.
func query(t *testing.T, c *sqlstore.Conn, q string) string {
	t.Helper()
	rows, err := c.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for {
		vals, err := rows.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	return fmt.Sprint(out)
}

func exec(t *testing.T, c *sqlstore.Conn, q string) {
	t.Helper()
	if _, err := c.Exec(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func TestSQLOverMock(t *testing.T) {
	st, err := Open("tikv://mock?regions=4", nil)
	if err != nil {
		t.Fatal(err)
	}
	e := st.OpenEngine()
	defer e.Close()
	c := e.NewConn()
	defer c.Close()
	if err := c.UseDatabase(context.Background(), "app"); err != nil {
		t.Fatal(err)
	}
	exec(t, c, "CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(20), n INT, KEY (n))")
	exec(t, c, "INSERT INTO t (name, n) VALUES ('a', 3), ('b', 1), ('c', 2)")
	if got, want := query(t, c, "SELECT id, name FROM t WHERE n >= 2 ORDER BY n"), "[3c 1a]"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	exec(t, c, "UPDATE t SET n = n + 10 WHERE id IN (1, 3)")
	exec(t, c, "DELETE FROM t WHERE id = 2")
	if got, want := query(t, c, "SELECT id, n FROM t ORDER BY id"), "[1 13 3 12]"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestParseAddress(t *testing.T) {
	tests := []struct {
		addr, want, err string
	}{
		{addr: "tikv://pd1:2379,pd2:2379/?keyspace=app", want: "{[pd1:2379 pd2:2379] app false 0 0s}"},
		{addr: "tikv://pd1,pd2/", want: "{[pd1:2379 pd2:2379]  false 0 0s}"},
		{addr: "tikv://mock", want: "{[]  true 1 0s}"},
		{addr: "tikv://mock?regions=8&latency=500us", want: "{[]  true 8 500µs}"},
		{addr: "tikv://mock?regions=0", err: "regions must be 1 to 256"},
		{addr: "tikv://pd1/?regions=2", err: "for tikv://mock only"},
		{addr: "tikv://pd1/?colour=blue", err: "unknown parameter"},
		{addr: "tikv:///", err: "names no PD server"},
		{addr: "/data/x", err: "is not a tikv:// address"},
	}
	for _, tc := range tests {
		a, err := ParseAddress(tc.addr)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error with %q", tc.addr, err, tc.err)
			}
			continue
		}
		if err != nil || fmt.Sprint(a) != tc.want {
			t.Errorf("%s: %v %v, want %s", tc.addr, a, err, tc.want)
		}
	}
}
