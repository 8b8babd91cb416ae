package sqlstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/stretchr/testify/assert"

	"github.com/strata-db/strata/internal/sqltest"
)

// TestAccessPathsSpec runs testdata/access_paths: queries, the access
// paths EXPLAIN shows for them, the paths they ran and what the engine did.
// Commands:
//
//	exec
//	  statements, one a line, that must succeed (setup)
//	flush
//	  flushes the memtable to a table file, so that reads go through the
//	  engine's tables and their estimates
//	explain
//	  a query; prints the access line of each table access EXPLAIN
//	  FORMAT=DEBUG shows, "(none)" when there is none
//	run [mode=planned|naive]
//	  a query that reads a table (otherwise the figures shown are those of
//	  the statement before), run with strata_access set to mode (default
//	  planned);
//	  prints what explain prints ("explain: " lines), the plans that ran
//	  as Strata_last_access lists them ("ran: " lines), the number of
//	  rows, and the deterministic engine counters of SHOW STATUS LIKE
//	  'Strata_last_%' that are not zero: the calls, keys, batches and
//	  ranges of each path, not the block, byte and timing counters that
//	  depend on the table files and the machine. A planned run is checked
//	  against a naive one: the same rows, each table read by Scans.
func TestAccessPathsSpec(t *testing.T) {
	d := newTestDB(t)
	datadriven.RunTest(t, "testdata/access_paths", func(t *testing.T, td *datadriven.TestData) string {
		d.t = t
		if out, ok := specSetup(t, d, td); ok {
			return out
		}
		switch td.Cmd {
		case "explain":
			return specExplain(d, specQueryText(t, td))
		case "run":
			mode := accessPlanned
			if td.HasArg("mode") {
				td.ScanArgs(t, "mode", &mode)
			}
			return specRun(t, d, td, specQueryText(t, td), mode)
		default:
			td.Fatalf(t, "unknown command %q", td.Cmd)
			return ""
		}
	})
}

// specCounters are the counters a run prints: those of the read paths,
// which depend on the plan and the rows only.
var specCounters = []string{
	"get_calls", "iter_seeks", "multiget_batches", "multiget_keys", "multiget_keys_found",
	"multiscan_prepares", "multiscan_ranges",
}

// specQueryText returns the query of a block: its lines joined by spaces.
func specQueryText(t *testing.T, td *datadriven.TestData) string {
	q := strings.Join(sqltest.Lines(td.Input), " ")
	if q == "" {
		td.Fatalf(t, "%s: want a query", td.Cmd)
	}
	return q
}

// specExplain prints the access lines of EXPLAIN FORMAT=DEBUG q.
func specExplain(d *testDB, q string) string {
	access := d.accessOf(q)
	if len(access) == 0 {
		return "(none)\n"
	}
	return strings.Join(access, "\n") + "\n"
}

// specRun runs q with strata_access = mode and prints its EXPLAIN access
// lines, the plans that ran, its row count and its path counters. A planned
// run is checked against a naive one.
func specRun(t *testing.T, d *testDB, td *datadriven.TestData, q, mode string) string {
	explain := d.accessOf(q)
	rows, status := specRunIn(t, d, td, q, mode)
	if mode == accessPlanned {
		naive, naiveStatus := specRunIn(t, d, td, q, accessNaive)
		if !assert.ObjectsAreEqual(rows, naive) {
			td.Fatalf(t, "planned rows differ from naive ones:\nplanned: %v\nnaive:   %v", rows, naive)
		}
		for _, a := range strings.Split(naiveStatus["access"].(string), "; ") {
			if !strings.Contains(a, "Scans(") {
				td.Fatalf(t, "naive mode ran %q", a)
			}
		}
	}

	var b strings.Builder
	for _, a := range explain {
		fmt.Fprintf(&b, "explain: %s\n", a)
	}
	if ran, _ := status["access"].(string); ran != "" {
		for _, a := range strings.Split(ran, "; ") {
			fmt.Fprintf(&b, "ran: %s\n", a)
		}
	}
	fmt.Fprintf(&b, "rows: %d\n", len(rows))
	var counters []string
	for _, name := range specCounters {
		v, ok := status[name].(int64)
		if !ok {
			td.Fatalf(t, "no status variable Strata_last_%s", name)
		}
		if v != 0 {
			counters = append(counters, fmt.Sprintf("%s=%d", name, v))
		}
	}
	if len(counters) == 0 {
		counters = append(counters, "none")
	}
	fmt.Fprintf(&b, "counters: %s\n", strings.Join(counters, " "))
	return b.String()
}

// specRunIn runs q with strata_access = mode, then restores the default,
// and returns its rows and the Strata_last_ status variables, by name
// without the prefix.
func specRunIn(t *testing.T, d *testDB, td *datadriven.TestData, q, mode string) ([]sql.Row, map[string]any) {
	must := func(q string) []sql.Row {
		rows, err := query(d.e, d.ctx.WithQuery(q), q)
		if err != nil {
			td.Fatalf(t, "%s: %v", q, err)
		}
		return rows
	}
	must("SET strata_access = '" + mode + "'")
	rows := must(q)
	status := map[string]any{}
	for _, r := range must("SHOW STATUS LIKE '" + lastPrefix + "%'") {
		status[strings.TrimPrefix(r[0].(string), lastPrefix)] = r[1]
	}
	must("SET strata_access = '" + accessDefault + "'")
	return rows, status
}
