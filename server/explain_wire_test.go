package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/server/servertest"
)

// TestExplainMariaDBClient: the mariadb client over the server gets
// EXPLAIN in MySQL's forms: the tabular columns with Strata's access path
// in Extra and no placeholder warning, the tree, valid JSON, and EXPLAIN
// ANALYZE's measured rows and loops.
func TestExplainMariaDBClient(t *testing.T) {
	mariadb := servertest.NeedTool(t, "mariadb")
	s := testServer(t, Config{Password: "pw"})
	host, port := servertest.HostPort(t, s.Addr())
	db := client(t, s.Addr(), "root", "pw", "")
	for _, q := range []string{
		"CREATE DATABASE ex",
		"CREATE TABLE ex.t (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY k_idx (k))",
		"INSERT INTO ex.t VALUES (1, 1, 'a'), (2, 1, 'b'), (3, 2, 'c'), (4, 2, 'd')",
	} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := servertest.Tool(t, "", mariadb, append([]string{"-h", host, "-P", port, "-uroot", "-ppw", "ex"}, args...)...)
		require.NoError(t, err, out)
		return out
	}

	out := run("--table", "--show-warnings", "-e", "EXPLAIN SELECT c FROM t WHERE id IN (1, 3)")
	require.Regexp(t, `\| id +\| select_type +\| table +\| partitions +\| type +\| possible_keys +\| key +\| key_len +\| ref +\| rows +\| filtered +\| Extra +\|`, out)
	require.Regexp(t, `\| +1 \| SIMPLE +\| t +\| NULL +\| range +\| PRIMARY +\| PRIMARY +\| 4 +\| NULL +\| +2 \| +100 \| Strata: MultiGet\(keys=2, batch=32\) +\|`, out)
	require.NotContains(t, out, "placeholder")
	require.NotContains(t, out, "Warning")

	out = run("--table", "-e", "EXPLAIN FORMAT=TRADITIONAL SELECT * FROM t WHERE k = 2")
	require.Regexp(t, `\| ref +\| k_idx +\| k_idx +\| 5 +\| const +\| +[0-9]+ \| +100 \| Strata: Range`, out)

	// Batch mode with --raw prints the tree's and the document's lines
	// as they are.
	out = run("-N", "-B", "--raw", "-e", "EXPLAIN FORMAT=TREE SELECT * FROM t WHERE k = 2 AND c > 'c'")
	require.Contains(t, out, "-> Filter: (t.c > 'c')")
	require.Contains(t, out, "\n    -> Index lookup on t using k_idx (k=2); Strata: ")

	out = run("-N", "-B", "--raw", "-e", "EXPLAIN FORMAT=JSON SELECT c FROM t WHERE id = 3")
	var doc struct {
		QueryBlock struct {
			Table struct {
				TableName    string `json:"table_name"`
				AccessType   string `json:"access_type"`
				Key          string `json:"key"`
				StrataAccess string `json:"strata_access"`
			} `json:"table"`
		} `json:"query_block"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	require.Equal(t, "t", doc.QueryBlock.Table.TableName)
	require.Equal(t, "const", doc.QueryBlock.Table.AccessType)
	require.Equal(t, "PRIMARY", doc.QueryBlock.Table.Key)
	require.Equal(t, "Get(key=1)", doc.QueryBlock.Table.StrataAccess)

	// --comments keeps the join hint, which the client strips otherwise.
	out = run("-N", "-B", "--raw", "--comments", "-e", "EXPLAIN ANALYZE SELECT /*+ LOOKUP_JOIN(a, b) */ a.id, b.id FROM t a JOIN t b ON b.id = a.k")
	require.Regexp(t, `-> Nested loop inner join .*\(actual time=[0-9.]+\.\.[0-9.]+ rows=4 loops=1\)`, out)
	require.Regexp(t, `Single-row index lookup on b using PRIMARY \(id=a.k\).*rows=1 loops=4\)`, out)
	require.Equal(t, 1, strings.Count(out, "-> Nested loop"), out)

	// GMS's own plan stays available.
	out = run("-N", "-B", "--raw", "-e", "EXPLAIN FORMAT=DEBUG SELECT c FROM t WHERE id IN (1, 3)")
	require.Contains(t, out, "access: MultiGet(keys=2, batch=32)")
}

// TestExplainPreparedWire: a client preparing EXPLAIN over the binary
// protocol is told the placeholders of the statement explained, binds
// them, and the plan uses the value bound; a statement without
// placeholders still takes none.
func TestExplainPreparedWire(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	for _, q := range []string{
		"CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY k_idx (k))",
		"INSERT INTO t VALUES (1, 1, 'a?'), (2, 1, 'b'), (3, 2, 'c')",
	} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	conn, err := db.Conn(t.Context())
	require.NoError(t, err)
	defer conn.Close()

	stmt, err := conn.PrepareContext(t.Context(), "EXPLAIN FORMAT=TREE SELECT c FROM t WHERE id = ? OR k = ?")
	require.NoError(t, err)
	defer stmt.Close()
	var plan string
	require.NoError(t, stmt.QueryRow(3, 1).Scan(&plan))
	require.Contains(t, plan, "(t.id = 3) OR (t.k = 1)", plan)

	stmt2, err := conn.PrepareContext(t.Context(), "EXPLAIN SELECT c FROM t WHERE id = ?")
	require.NoError(t, err)
	defer stmt2.Close()
	rows, err := stmt2.Query(2)
	require.NoError(t, err)
	cols, err := rows.Columns()
	require.NoError(t, err)
	require.Equal(t, "id", cols[0])
	var n int
	for rows.Next() {
		n++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, 1, n)

	// A '?' in a literal is no placeholder.
	stmt3, err := conn.PrepareContext(t.Context(), "EXPLAIN SELECT c FROM t WHERE c = 'a?'")
	require.NoError(t, err)
	defer stmt3.Close()
	_, err = stmt3.Query(1)
	require.ErrorContains(t, err, "expected 0 arguments")
}
