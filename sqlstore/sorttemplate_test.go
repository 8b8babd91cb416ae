package sqlstore

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/stretchr/testify/require"
)

// hasKeySort reports whether a template's plan sorts or makes rows
// distinct by keys (sorttemplate.go).
func hasKeySort(n sql.Node) bool {
	found := false
	transform.Inspect(n, func(c sql.Node) bool {
		_, ok := c.(*keySort)
		found = found || ok
		return !found
	})
	return found
}

// TestKeySortMatchesPlanned runs prepared range reads with ORDER BY and
// DISTINCT through their templates and planned in full by GMS, over
// random rows with NULLs, duplicates, strings that differ only in case,
// accents or trailing spaces, and random ranges (empty ones among them),
// and compares the rows and their order.
func TestKeySortMatchesPlanned(t *testing.T) {
	d := newTestDB(t)
	d.exec(`CREATE TABLE t (
		id INT PRIMARY KEY,
		k INT,
		u BIGINT UNSIGNED,
		ci VARCHAR(20) COLLATE utf8mb4_0900_ai_ci,
		cs VARCHAR(20) COLLATE utf8mb4_0900_bin,
		pb VARCHAR(20) COLLATE utf8mb4_bin,
		ch CHAR(8),
		vb VARBINARY(8),
		f DOUBLE,
		KEY k_idx (k))`)
	r := rand.New(rand.NewPCG(7, 8))
	words := []string{"a", "A", "á", "b", "B", "ab", "a ", "", "zz", "Zz", "é", "e", "E", "ß", "ss"}
	str := func() string {
		if r.IntN(8) == 0 {
			return "NULL"
		}
		return "'" + words[r.IntN(len(words))] + "'"
	}
	num := func(n int) string {
		if r.IntN(8) == 0 {
			return "NULL"
		}
		return fmt.Sprint(r.IntN(n) - n/3)
	}
	var rows []string
	for i := 0; i < 400; i++ {
		u := "NULL"
		if r.IntN(8) != 0 {
			u = fmt.Sprint(r.Uint64() >> r.IntN(64))
		}
		vb := "NULL"
		if r.IntN(8) != 0 {
			vb = fmt.Sprintf("x'%02x%02x'", r.IntN(4), r.IntN(256))
		}
		rows = append(rows, fmt.Sprintf("(%d, %s, %s, %s, %s, %s, %s, %s, %s)",
			i*2-200, num(30), u, str(), str(), str(), str(), vb, num(10)))
	}
	d.exec("INSERT INTO t VALUES " + strings.Join(rows, ", "))

	tests := []struct {
		q     string
		nargs int
		keyed bool // whether the template sorts by keys
	}{
		{"SELECT ci FROM t WHERE id BETWEEN ? AND ? ORDER BY ci", 2, true},
		{"SELECT id, ci FROM t WHERE id BETWEEN ? AND ? ORDER BY ci DESC", 2, true},
		{"SELECT cs, k FROM t WHERE id BETWEEN ? AND ? ORDER BY cs, k DESC", 2, true},
		{"SELECT pb, id FROM t WHERE id BETWEEN ? AND ? ORDER BY pb DESC, id", 2, true},
		{"SELECT ch FROM t WHERE id BETWEEN ? AND ? OR id IN (?, ?) ORDER BY ch", 4, true},
		{"SELECT u, k FROM t WHERE id BETWEEN ? AND ? ORDER BY u DESC", 2, true},
		{"SELECT vb FROM t WHERE id BETWEEN ? AND ? ORDER BY vb", 2, true},
		{"SELECT id, k FROM t WHERE k BETWEEN ? AND ? ORDER BY k DESC, id", 2, true},
		{"SELECT DISTINCT cs FROM t WHERE id BETWEEN ? AND ? ORDER BY cs", 2, true},
		{"SELECT DISTINCT pb FROM t WHERE id BETWEEN ? AND ? ORDER BY pb DESC", 2, true},
		{"SELECT DISTINCT k, cs FROM t WHERE id BETWEEN ? AND ? ORDER BY cs", 2, true},
		{"SELECT DISTINCT k, u FROM t WHERE id BETWEEN ? AND ? ORDER BY k, u", 2, true},
		{"SELECT DISTINCT vb FROM t WHERE id BETWEEN ? AND ? ORDER BY vb", 2, true},
		{"SELECT k, id, cs FROM t WHERE id BETWEEN ? AND ? ORDER BY cs DESC, id", 2, true},
		{"SELECT cs AS x, k FROM t WHERE id BETWEEN ? AND ? ORDER BY x", 2, true},
		{"SELECT DISTINCT u, k FROM t WHERE id BETWEEN ? AND ? ORDER BY k DESC", 2, true},
		{"SELECT k, COUNT(*) FROM t WHERE id BETWEEN ? AND ? GROUP BY k ORDER BY k", 2, true},
		{"SELECT cs, k FROM t WHERE id BETWEEN ? AND ? ORDER BY k LIMIT 5", 2, true},
		{"SELECT id, ci FROM t WHERE id BETWEEN ? AND ? ORDER BY ci DESC LIMIT 1", 2, true},
		{"SELECT k FROM t WHERE id BETWEEN ? AND ? ORDER BY k LIMIT 0", 2, true},
		{"SELECT u, cs FROM t WHERE id BETWEEN ? AND ? ORDER BY cs LIMIT 40", 2, true},
		{"SELECT DISTINCT cs FROM t WHERE id BETWEEN ? AND ? ORDER BY cs DESC LIMIT 3", 2, true},
		{"SELECT k FROM t WHERE id BETWEEN ? AND ? ORDER BY k LIMIT 3 OFFSET 2", 2, false},
		{"SELECT DISTINCT k FROM t WHERE id BETWEEN ? AND ?", 2, true},
		{"SELECT DISTINCT ch FROM t WHERE id BETWEEN ? AND ?", 2, true},
		{"SELECT DISTINCT cs, k FROM t WHERE id IN (?, ?, ?, ?)", 4, true},
		// GMS's Distinct keeps 'a' and 'A' apart under a case-insensitive
		// collation: left to it, not answered otherwise.
		{"SELECT DISTINCT ci FROM t WHERE id BETWEEN ? AND ? ORDER BY ci", 2, false},
		{"SELECT DISTINCT ci, k FROM t WHERE id BETWEEN ? AND ?", 2, false},
		// Floats and expressions: GMS's Sort.
		{"SELECT f FROM t WHERE id BETWEEN ? AND ? ORDER BY f", 2, false},
		{"SELECT k FROM t WHERE id BETWEEN ? AND ? ORDER BY k + 1", 2, false},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			p := d.prepare(d.ctx, tc.q)
			require.NotNil(t, p.sel)
			for i := 0; i < 200; i++ {
				args := make([]any, tc.nargs)
				for j := range args {
					args[j] = int64(r.IntN(1000) - 300)
				}
				if tc.nargs == 2 && r.IntN(2) == 0 && args[0].(int64) > args[1].(int64) {
					args[0], args[1] = args[1], args[0]
				}
				got, err1 := p.run(args...)
				want, err2 := p.planned(args...)
				require.NoError(t, err1, "args %v", args)
				require.NoError(t, err2, "args %v", args)
				require.Equal(t, want, got, "args %v", args)
			}
			require.Equal(t, tc.keyed, p.sel.tmpl != nil && hasKeySort(p.sel.tmpl.root))
		})
	}
}

// TestKeySortMemQuota: the rows a sort by keys holds count against the
// statement's memory quota, as those of GMS's Sort do.
func TestKeySortMemQuota(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(200))")
	d.exec(insertValues("t", 0, 2000, func(i int) string { return fmt.Sprintf("(%d, REPEAT('x', 150))", i) }))
	p := d.prepare(d.ctx, "SELECT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c")
	for range 3 {
		_, err := p.run(int64(0), int64(1999))
		require.NoError(t, err)
	}
	require.True(t, hasKeySort(p.sel.tmpl.root))
	d.exec("SET strata_mem_quota_query = 100000")
	_, err := p.run(int64(0), int64(1999))
	require.ErrorContains(t, err, "strata_mem_quota_query")
	_, err = p.run(int64(0), int64(9))
	require.NoError(t, err)
}

// TestKeySortAllocs: a template's sort reuses its buffers from statement
// to statement: it allocates no more per row than the same range read
// without ORDER BY.
func TestKeySortAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops buffers under the race detector")
	}
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(20) COLLATE utf8mb4_0900_bin)")
	d.exec(insertValues("t", 0, 500, func(i int) string { return fmt.Sprintf("(%d, 'c%d')", i, i*7919%500) }))
	allocs := func(q string) float64 {
		p := d.prepare(d.ctx, q)
		run := func() {
			_, iter, err := p.sel.Query(p.ctx, p.d.e, p.key, p.parsed, nil, map[string]any{"v1": int64(0), "v2": int64(409)})
			require.NoError(t, err)
			for {
				if _, err := iter.Next(p.ctx); err != nil {
					break
				}
			}
			require.NoError(t, iter.Close(p.ctx))
		}
		for range 3 {
			_, err := p.run(int64(0), int64(1))
			require.NoError(t, err)
		}
		require.NotNil(t, p.sel.tmpl, q)
		return testing.AllocsPerRun(20, run)
	}
	// LIMIT keeps the plain read on GMS's executor, as the sorts are: a
	// bare range runs on the template's own iterator (templateiter.go),
	// which spares a dozen allocations per statement, not per row.
	plain := allocs("SELECT c FROM t WHERE id BETWEEN ? AND ? LIMIT 1000")
	sorted := allocs("SELECT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c")
	distinct := allocs("SELECT DISTINCT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c")
	require.Less(t, sorted-plain, 20.0, "410 rows: %.0f allocations sorted, %.0f not", sorted, plain)
	require.Less(t, distinct-plain, 20.0, "410 rows: %.0f allocations distinct, %.0f not", distinct, plain)
}

// TestRangeTemplatesConcurrent runs sorts, DISTINCTs and aggregates of
// reused plans on several sessions at once (their pooled buffers among
// them; with -race in CI), each checking its rows against GMS's plan.
func TestRangeTemplatesConcurrent(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20) COLLATE utf8mb4_0900_bin)")
	d.exec(insertValues("t", 0, 600, func(i int) string { return fmt.Sprintf("(%d, %d, 'c%d')", i, i%37, i*7919%300) }))
	queries := []string{
		"SELECT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c",
		"SELECT DISTINCT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c DESC",
		"SELECT id, c FROM t WHERE id BETWEEN ? AND ? ORDER BY c LIMIT 7",
		"SELECT SUM(k), MIN(k), COUNT(*) FROM t WHERE id BETWEEN ? AND ?",
	}
	errs := make(chan error, 4)
	for g := range 4 {
		ctx := d.newCtx()
		go func() {
			errs <- func() error {
				r := rand.New(rand.NewPCG(uint64(g), 1))
				for _, q := range queries {
					p := d.prepare(ctx, q)
					for range 60 {
						lo := int64(r.IntN(600))
						hi := lo + int64(r.IntN(200))
						got, err := p.run(lo, hi)
						if err != nil {
							return err
						}
						want, err := p.planned(lo, hi)
						if err != nil {
							return err
						}
						if fmt.Sprint(got) != fmt.Sprint(want) {
							return fmt.Errorf("%s [%d, %d]: %v, planned %v", q, lo, hi, got, want)
						}
					}
					if p.sel.tmpl == nil || !(hasKeySort(p.sel.tmpl.root) || hasRangeAgg(p.sel.tmpl.root)) {
						return fmt.Errorf("%s: no template of its own operators", q)
					}
				}
				return nil
			}()
		}()
	}
	for range 4 {
		require.NoError(t, <-errs)
	}
}
