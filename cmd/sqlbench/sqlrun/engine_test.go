package sqlrun

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// otherStrata is an Engine for the tests: a second Strata database beside
// the first, loaded through Setup as another engine's would be.
type otherStrata struct{ name string }

func (e otherStrata) Name() string        { return e.name }
func (e otherStrata) Description() string { return "a second Strata database" }
func (e otherStrata) Statement(text string) string {
	return strings.TrimSuffix(text, " FOR UPDATE")
}
func (e otherStrata) Settings(s *Setup) string { return "other: " + s.Dir }

func (e otherStrata) Open(ctx context.Context, s *Setup) (*sql.DB, int64, error) {
	db, err := sql.Open("strata", s.Dir+"."+e.name+"?db=sbtest&sync=false")
	if err != nil {
		return nil, 0, err
	}
	if n, maxID, err := s.TableRows(ctx, db); err == nil && n == int64(s.Rows) {
		return db, maxID, nil
	}
	if err := s.Load(ctx, db, e.name, strataDDL); err != nil {
		_ = db.Close()
		return nil, 0, err
	}
	return db, int64(s.Rows), nil
}

func TestSQLEnginesFlag(t *testing.T) {
	opts := Options{Engines: []Engine{otherStrata{"a"}, otherStrata{"b"}}, Aliases: map[string][]string{"ab": {"a", "b"}}}
	c, err := parseSQLFlags([]string{"-engines=strata,ab,b"}, io.Discard, opts)
	require.NoError(t, err)
	require.Equal(t, []string{"strata", "a", "b"}, c.engines)
	require.Equal(t, []sqlRunMode{{"strata", "planned", "strata"}, {"a", "", "a"}, {"b", "", "b"}}, c.runModes())

	c, err = parseSQLFlags([]string{"-engines=b,strata", "-access=planned,naive"}, io.Discard, opts)
	require.NoError(t, err)
	require.Equal(t, []sqlRunMode{{"b", "", "b"}, {"strata", "planned", "strata:planned"}, {"strata", "naive", "strata:naive"}}, c.runModes())

	c, err = parseSQLFlags([]string{"-access=planned,naive"}, io.Discard, opts)
	require.NoError(t, err)
	require.Equal(t, []sqlRunMode{{"strata", "planned", "planned"}, {"strata", "naive", "naive"}}, c.runModes())

	_, err = parseSQLFlags([]string{"-engines=strata,a", "-cold"}, io.Discard, opts)
	require.ErrorContains(t, err, "-cold: Strata only")
	_, err = parseSQLFlags([]string{"-engines=strata,mysql"}, io.Discard, opts)
	require.ErrorContains(t, err, `unknown engine "mysql" (strata, a, b, ab)`)
	_, err = parseSQLFlags([]string{"-engines=x"}, io.Discard, Options{Aliases: map[string][]string{"x": {"strata", "c"}}})
	require.ErrorContains(t, err, `-engines: x: no engine "c"`)
	_, err = parseSQLFlags([]string{"-engines=strata,a"}, io.Discard, Options{})
	require.ErrorContains(t, err, `unknown engine "a" (strata)`)

	var help bytes.Buffer
	_, err = parseSQLFlags([]string{"-h"}, &help, Options{Command: "other sql", Engines: opts.Engines, Aliases: opts.Aliases})
	require.Error(t, err)
	require.Contains(t, help.String(), "usage: other sql [flags]")
	require.Contains(t, help.String(), "a (a second Strata database), b (a second Strata database), ab (a and b)")
}

// TestSQLRunEngine runs workloads against Strata and an Engine beside it,
// then again on the tables the first run left.
func TestSQLRunEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("loads two tables")
	}
	opts := Options{Engines: []Engine{otherStrata{"other"}}}
	dir := t.TempDir() + "/db"
	var out, notices bytes.Buffer
	args := []string{"-db", dir, "-rows=200", "-duration=30ms", "-warmup=0", "-range_size=20", "-threads=2", "-statistics",
		"-engines=strata,other", "-workloads=point_select,insert,counter"}
	require.NoError(t, Main(context.Background(), args, &out, &notices, nil, opts))
	report := out.String()
	for _, w := range []string{"point_select", "insert", "counter:1"} {
		require.Regexp(t, "(?m)^"+w+` +strata( +[0-9.]+){6} +[0-9]+$`, report)
		require.Regexp(t, "(?m)^"+w+` +other( +[0-9.]+){6} +[0-9]+$`, report)
		require.Regexp(t, "(?m)^"+w+` +strata/other: [0-9.]+x qps, [0-9.]+x queries per CPU-second$`, report)
	}
	require.Contains(t, report, "\nother: "+dir+"\n")
	// Engine counters are Strata's alone: one line per Strata run.
	require.Equal(t, 3, strings.Count(report, "engine per query:"), report)

	notices.Reset()
	require.NoError(t, Main(context.Background(), []string{"-db", dir, "-rows=200", "-duration=20ms", "-warmup=0",
		"-engines=strata,other", "-workloads=insert"}, io.Discard, &notices, nil, opts))
	require.Contains(t, notices.String(), "reusing sbtest in "+dir+" ")
}
