package sqlstore

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/stretchr/testify/require"
)

// TestExplainSpec runs testdata/explain_formats: EXPLAIN in each of
// MySQL's forms over Strata's plans. Commands:
//
//	exec
//	  statements, one a line, that must succeed (setup)
//	flush
//	  flushes the memtable to a table file
//	explain [format=traditional|tree|json|analyze|debug]
//	  a statement (its lines joined by spaces), explained in the format
//	  (traditional by default): the tabular form prints one line per row,
//	  its columns separated by " | "; the tree and JSON forms print their
//	  text (JSON must be valid); analyze prints the tree with each
//	  "actual time=a..b" shown as "actual time=..." (times vary, rows and
//	  loops do not); debug prints the access lines of FORMAT=DEBUG.
//	  Warnings, if any, follow ("warning: ").
func TestExplainSpec(t *testing.T) {
	d := newTestDB(t)
	datadriven.RunTest(t, "testdata/explain_formats", func(t *testing.T, td *datadriven.TestData) string {
		d.t = t
		if out, ok := specSetup(t, d, td); ok {
			return out
		}
		switch td.Cmd {
		case "explain":
			format := "traditional"
			if td.HasArg("format") {
				td.ScanArgs(t, "format", &format)
			}
			return specExplainFormat(t, d, format, specQueryText(t, td))
		default:
			td.Fatalf(t, "unknown command %q", td.Cmd)
			return ""
		}
	})
}

var actualTime = regexp.MustCompile(`actual time=[0-9.]+\.\.[0-9.]+`)

func specExplainFormat(t *testing.T, d *testDB, format, q string) string {
	var stmt string
	switch format {
	case "traditional":
		stmt = "EXPLAIN " + q
	case "tree", "json":
		stmt = "EXPLAIN FORMAT=" + strings.ToUpper(format) + " " + q
	case "analyze":
		stmt = "EXPLAIN ANALYZE " + q
	case "debug":
		return strings.Join(d.accessOf(q), "\n") + "\n"
	default:
		t.Fatalf("unknown format %q", format)
	}
	ctx := d.ctx.WithQuery(stmt)
	ctx.ClearWarnings()
	rows, err := query(d.e, ctx, stmt)
	if err != nil {
		return fmt.Sprintf("error: %v\n", err)
	}
	var b strings.Builder
	switch format {
	case "traditional":
		for _, r := range rows {
			b.WriteString(tabularLine(r))
			b.WriteByte('\n')
		}
	default:
		require.Len(t, rows, 1, stmt)
		text := rows[0][0].(string)
		if format == "json" {
			require.True(t, json.Valid([]byte(text)), "invalid JSON:\n%s", text)
		}
		if format == "analyze" {
			text = actualTime.ReplaceAllString(text, "actual time=...")
		}
		b.WriteString(strings.TrimRight(text, "\n"))
		b.WriteByte('\n')
	}
	for _, w := range ctx.Warnings() {
		fmt.Fprintf(&b, "warning: %d %s\n", w.Code, w.Message)
	}
	return b.String()
}

func tabularLine(r sql.Row) string {
	parts := make([]string, len(r))
	for i, v := range r {
		if v == nil {
			parts[i] = "NULL"
		} else {
			parts[i] = fmt.Sprint(v)
		}
	}
	return strings.Join(parts, " | ")
}

// TestExplainHead reads the head of EXPLAIN statements as the formats are
// chosen from it, and hides what vitess refuses at the same length.
func TestExplainHead(t *testing.T) {
	for _, tc := range []struct {
		q                 string
		ok, analyze, plan bool
		format            string
		hidden            string // hideExplainFormat's text; "" when unchanged
	}{
		{q: "SELECT 1"},
		{q: "EXPLAIN SELECT 1", ok: true},
		{q: "explain format=json select 1", ok: true, format: "json", hidden: "explain format=JSN_ select 1"},
		{q: "/* c */ EXPLAIN  FORMAT = Tree SELECT 1", ok: true, format: "tree"},
		{q: "EXPLAIN FORMAT=TRADITIONAL SELECT 1", ok: true, format: "traditional"},
		{q: "DESC FORMAT=JSON SELECT 1", ok: true, format: "json", hidden: "DESC FORMAT=JSN_ SELECT 1"},
		{q: "EXPLAIN ANALYZE SELECT 1", ok: true, analyze: true},
		{q: "EXPLAIN ANALYZE FORMAT=TREE SELECT 1", ok: true, analyze: true, format: "tree", hidden: "EXPLAIN ANALYZE /*       */ SELECT 1"},
		{q: "EXPLAIN PLAN SELECT 1", ok: true, plan: true},
		{q: "EXPLAIN EXTENDED SELECT 1", ok: true},
		{q: "DESCRIBE t", ok: true},
		{q: "SELECT 'EXPLAIN FORMAT=JSON'"},
	} {
		h := explainHeadOf(tc.q)
		require.Equal(t, tc.ok, h.ok, tc.q)
		require.Equal(t, tc.analyze, h.analyze, tc.q)
		require.Equal(t, tc.plan, h.plan, tc.q)
		require.Equal(t, tc.format, h.format, tc.q)
		want := tc.hidden
		if want == "" {
			want = tc.q
		}
		got := hideExplainFormat(tc.q)
		require.Equal(t, want, got, tc.q)
		require.Len(t, got, len(tc.q), tc.q)
	}
}

// TestExplainAnalyzeCounts: EXPLAIN ANALYZE runs the statement and reports
// each operator's rows and loops: a lookup join's inner side is built once
// per outer row.
// TestExplainFormatSyntaxError: a syntax error at FORMAT=JSON's name (no
// statement after it) is 1064 near the word the user wrote, never near the
// parser's stand-in for it.
func TestExplainFormatSyntaxError(t *testing.T) {
	d := newTestDB(t)
	for _, tc := range []struct{ q, near string }{
		{"EXPLAIN FORMAT=JSON", "near 'JSON'"},
		{"explain format = json", "near 'json'"},
		{"DESC FORMAT=Json", "near 'Json'"},
	} {
		err := d.execErr(tc.q)
		require.Equal(t, 1064, MySQLError(err).Num, tc.q)
		require.Contains(t, MySQLError(err).Message, tc.near, tc.q)
		require.NotContains(t, MySQLError(err).Message, jsonStandIn, tc.q)
	}
}

func TestExplainAnalyzeCounts(t *testing.T) {
	d := accessDB(t)
	q := "EXPLAIN ANALYZE SELECT t.id, p.z FROM t JOIN p ON p.z = t.id WHERE t.k = 3"
	rows, err := query(d.e, d.ctx.WithQuery(q), q)
	require.NoError(t, err)
	text := rows[0][0].(string)
	// t.k = 3 holds for id 3, 103, ..., 903: ten rows; p.z holds 0..99, so
	// one of the ten probes finds its row.
	require.Contains(t, text, "-> Nested loop inner join")
	require.Regexp(t, `index lookup on t using k_idx \(k=3\).* rows=10 loops=1\)`, text)
	require.Regexp(t, `index lookup on p using uz \(z=t.id\).* rows=0.10 loops=10\)`, text)
	require.Regexp(t, `Nested loop inner join.*\(actual time=[0-9.]+\.\.[0-9.]+ rows=1 loops=1\)`, text)
}

// TestExplainParserAllocs: the parser wrapper reads every statement's
// first word and allocates nothing for one that is not an EXPLAIN.
func TestExplainParserAllocs(t *testing.T) {
	for _, q := range []string{
		"SELECT c FROM t WHERE id = ?",
		"DELETE FROM t WHERE id = 1",
		"/* hint */ UPDATE t SET c = 'x' WHERE id = 1",
		"EXPLAIN SELECT 1",
	} {
		require.Zero(t, testing.AllocsPerRun(100, func() { _ = hideExplainFormat(q) }), q)
	}
}
