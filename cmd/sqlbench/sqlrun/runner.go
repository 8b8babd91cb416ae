package sqlrun

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/strata-db/strata/cmd/sqlbench/internal/meter"
)

// sqlBench runs workloads against Strata's database and the other engines'.
type sqlBench struct {
	cfg *sqlConfig
	db  *sql.DB // Strata's
	// others holds the other engines' databases of -engines by engine
	// name.
	others   map[string]*sql.DB
	dir      string
	store    string // -store: Strata's store, instead of dir
	stdout   io.Writer
	stderr   io.Writer
	progress io.Writer
	// nextID is the last id taken by insert (atomic).
	nextID int64
	runs   int
}

// sqlRunMode is one of the ways each workload runs: an engine and, for
// Strata, an access mode.
type sqlRunMode struct {
	engine string // "strata" or the name of another engine (sqlConfig.others)
	// access is an -access entry, with its @txn_mode (-txn_mode); empty
	// for the other engines.
	access string
	label  string // as the report names it
}

// runModes returns the runs of each workload, in the order they
// interleave: the engines in -engines order, Strata in each access mode.
// With Strata alone a run is named by its access mode; beside others,
// by "strata", or "strata:" and the mode when there are several.
func (c *sqlConfig) runModes() []sqlRunMode {
	var out []sqlRunMode
	for _, e := range c.engines {
		if e != "strata" {
			out = append(out, sqlRunMode{engine: e, label: e})
			continue
		}
		for _, a := range c.access {
			label := a
			if len(c.engines) > 1 {
				label = "strata"
				if len(c.access) > 1 {
					label += ":" + a
				}
			}
			out = append(out, sqlRunMode{engine: e, access: a, label: label})
		}
	}
	return out
}

// sqlResult is one workload run in one run mode.
type sqlResult struct {
	workload string
	access   string // the run mode's label
	queries  int64
	rows     int64
	errors   int64 // write conflicts (MySQL 1213), retried by the next query
	elapsed  time.Duration
	// cpu is the process's CPU time (user and system, every thread: the
	// clients, the engine's goroutines and the garbage collector) during
	// the timed run; zero when unknown (-cold, whose page-cache drops
	// would count). On a shared machine it varies less than qps, since
	// time spent waiting for a CPU is not in it.
	cpu time.Duration
	lat []time.Duration // sorted
	// perQuery holds the database-wide engine counters of the run divided
	// by its queries; lastAccess the access plan of its last query.
	perQuery   []sqlCounter
	lastAccess string
	// statistics is set when the run collected perQuery and lastAccess
	// (-statistics, Strata's runs).
	statistics bool
}

type sqlCounter struct {
	name  string
	value float64
}

func (r *sqlResult) qps() float64 { return float64(r.queries) / r.elapsed.Seconds() }

// cpuPerQuery returns the run's CPU time per query, zero when unknown.
func (r *sqlResult) cpuPerQuery() time.Duration {
	if r.queries == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.queries)
}

func (r *sqlResult) mean() time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range r.lat {
		sum += d
	}
	return sum / time.Duration(len(r.lat))
}

// percentile returns the latency below which a fraction p of the queries
// fall.
func (r *sqlResult) percentile(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	i := int(p*float64(len(r.lat))+0.5) - 1
	return r.lat[min(max(i, 0), len(r.lat)-1)]
}

func (b *sqlBench) runAll(ctx context.Context) error {
	c := b.cfg
	cache := "warm caches"
	if c.cold {
		cache = "OS page cache dropped before every query"
	}
	blockCache := sqlBlockCache(c)
	fmt.Fprintf(b.stdout, "sqlbench sql: %d rows, %d thread(s), %v per run, %s, %d MiB block cache, prepared statements, %s GOMAXPROCS=%d, sync=%t\n",
		c.rows, c.threads, c.duration, cache, blockCache>>20, runtime.Version(), runtime.GOMAXPROCS(0), c.sync)
	var settings []string
	for _, e := range c.engines {
		if other, ok := c.others[e]; ok {
			if line := other.Settings(b.setup()); line != "" && !slices.Contains(settings, line) {
				settings = append(settings, line)
				fmt.Fprintln(b.stdout, line)
			}
		}
	}
	fmt.Fprintf(b.stdout, "%-20s %-20s %9s %9s %9s %9s %9s %8s %7s\n", "workload", "access", "qps", "mean_us", "p95_us", "p99_us", "cpu_us", "rows/q", "errors")
	modes := c.runModes()
	for _, spec := range c.workloads {
		q := sqlWorkloads[spec.name].build(b, spec.size)
		if q.name == "" {
			q.name = spec.name
		}
		// runs[m] holds the runs of modes[m], interleaved with the other
		// modes', so that a busy machine slows them alike.
		runs := make([][]*sqlResult, len(modes))
		for rep := 0; rep < c.repeat; rep++ {
			for m, mode := range modes {
				r, err := b.run(ctx, q, mode)
				if err != nil {
					return fmt.Errorf("%s (%s): %w", q.name, mode.label, err)
				}
				b.report(r, "", r.cpuPerQuery())
				runs[m] = append(runs[m], r)
			}
		}
		var medians []*sqlResult
		var cpus []time.Duration
		for m := range runs {
			med, cpu := medianRun(runs[m]), medianCPU(runs[m])
			if c.repeat > 1 {
				b.report(med, "median", cpu)
			}
			medians = append(medians, med)
			cpus = append(cpus, cpu)
		}
		// The first mode against each other one.
		for m := 1; m < len(medians); m++ {
			if medians[m].qps() == 0 {
				continue
			}
			line := fmt.Sprintf("%-20s %s/%s: %.2fx qps", q.name, medians[0].access, medians[m].access, medians[0].qps()/medians[m].qps())
			if cpus[0] > 0 && cpus[m] > 0 {
				// The inverse ratio of CPU per query: how many more
				// queries the first mode answers per CPU-second.
				line += fmt.Sprintf(", %.2fx queries per CPU-second", float64(cpus[m])/float64(cpus[0]))
			}
			fmt.Fprintln(b.stdout, line)
		}
	}
	return nil
}

// medianRun returns the run of median qps.
func medianRun(runs []*sqlResult) *sqlResult {
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, func(a, b *sqlResult) int {
		switch {
		case a.qps() < b.qps():
			return -1
		case a.qps() > b.qps():
			return 1
		}
		return 0
	})
	return sorted[len(sorted)/2]
}

// medianCPU returns the median of the runs' CPU time per query (taken
// apart from medianRun's: the run of median qps need not have the median
// CPU time), zero when unknown.
func medianCPU(runs []*sqlResult) time.Duration {
	var cpus []time.Duration
	for _, r := range runs {
		if d := r.cpuPerQuery(); d > 0 {
			cpus = append(cpus, d)
		}
	}
	if len(cpus) == 0 {
		return 0
	}
	slices.Sort(cpus)
	return cpus[len(cpus)/2]
}

// report prints a run's line, and its counters with -statistics; a
// median's line says so. cpuPerQuery is the CPU time per query to print
// (zero for unknown): a median line prints the median of the runs', which
// may be another run's than the one of median qps.
func (b *sqlBench) report(r *sqlResult, label string, cpuPerQuery time.Duration) {
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	access := r.access
	if label != "" {
		access += " " + label
	}
	cpu := "-"
	if cpuPerQuery > 0 {
		cpu = fmt.Sprintf("%.1f", us(cpuPerQuery))
	}
	fmt.Fprintf(b.stdout, "%-20s %-20s %9.1f %9.1f %9.1f %9.1f %9s %8.1f %7d\n", r.workload, access, r.qps(),
		us(r.mean()), us(r.percentile(0.95)), us(r.percentile(0.99)), cpu, float64(r.rows)/max(float64(r.queries), 1), r.errors)
	if !r.statistics || label != "" {
		return
	}
	var parts []string
	for _, c := range r.perQuery {
		parts = append(parts, fmt.Sprintf("%s %.2f", c.name, c.value))
	}
	fmt.Fprintf(b.stdout, "    engine per query: %s\n", strings.Join(parts, ", "))
	if r.lastAccess != "" {
		fmt.Fprintf(b.stdout, "    last query: %s\n", r.lastAccess)
	}
}

// sqlThread is one client: a connection with the workload's statement
// prepared on it.
type sqlThread struct {
	conn *sql.Conn
	stmt *sql.Stmt
	then *sql.Stmt // q.then, prepared
	q    *sqlQuery
	r    *rand.Rand
	args []any
	dest []any
	lat  []time.Duration
	rows int64
	errs int64
	// evict is the time the timed run spent dropping the page cache
	// (-cold), which qps leaves out.
	evict time.Duration
}

// run runs q in run mode mode in cfg.threads threads.
func (b *sqlBench) run(ctx context.Context, q *sqlQuery, mode sqlRunMode) (*sqlResult, error) {
	c := b.cfg
	b.runs++
	if c.cold && b.runs > 1 {
		// The first run has the database as Main opened it; each
		// later one reopens it, to start with caches as empty.
		if err := b.reopen(); err != nil {
			return nil, err
		}
	}
	threads := make([]*sqlThread, c.threads)
	defer func() {
		for _, t := range threads {
			if t != nil {
				t.close()
			}
		}
	}()
	for i := range threads {
		t, err := b.newThread(ctx, q, mode, uint64(b.runs*1000+i))
		if err != nil {
			return nil, err
		}
		threads[i] = t
	}
	if c.warmup > 0 && !c.cold {
		if err := b.loop(ctx, threads, c.warmup, nil, false); err != nil {
			return nil, err
		}
		for _, t := range threads {
			t.lat, t.rows, t.errs = t.lat[:0], 0, 0
		}
	}
	// Engine counters are Strata's: -statistics reports Strata's runs.
	statistics := c.statistics && mode.engine == "strata"
	var before map[string]int64
	if statistics {
		var err error
		if before, err = b.statusCounters(ctx, b.db, "Strata_engine_"); err != nil {
			return nil, err
		}
	}
	bar := meter.Start(b.progress, q.name+" "+mode.label, 0, c.duration)
	cpuStart := meter.ProcessCPU()
	start := time.Now()
	err := b.loop(ctx, threads, c.duration, bar, true)
	elapsed := time.Since(start)
	cpu := meter.ProcessCPU() - cpuStart
	bar.Stop()
	if err != nil {
		return nil, err
	}
	if c.cold {
		// Dropping the page cache before each query is not the query's
		// time: leave out the longest any thread spent on it.
		var evict time.Duration
		for _, t := range threads {
			evict = max(evict, t.evict)
		}
		elapsed = max(elapsed-evict, time.Nanosecond)
	}
	r := &sqlResult{workload: q.name, access: mode.label, elapsed: elapsed, statistics: statistics}
	if !c.cold && cpu > 0 {
		r.cpu = cpu
	}
	for _, t := range threads {
		r.lat = append(r.lat, t.lat...)
		r.rows += t.rows
		r.errors += t.errs
	}
	r.queries = int64(len(r.lat))
	slices.Sort(r.lat)
	if statistics {
		after, err := b.statusCounters(ctx, b.db, "Strata_engine_")
		if err != nil {
			return nil, err
		}
		for name, v := range after {
			if d := v - before[name]; d != 0 {
				r.perQuery = append(r.perQuery, sqlCounter{strings.ReplaceAll(name, "_", "."), float64(d) / max(float64(r.queries), 1)})
			}
		}
		sort.Slice(r.perQuery, func(i, j int) bool { return r.perQuery[i].name < r.perQuery[j].name })
		if !q.write {
			// Writes read rows only to check them (not counted): the
			// session's last reading statement is an earlier one.
			last, err := b.statusText(ctx, threads[0].conn, "Strata_last_access")
			if err != nil {
				return nil, err
			}
			r.lastAccess = last
		}
	}
	return r, nil
}

func (b *sqlBench) newThread(ctx context.Context, q *sqlQuery, mode sqlRunMode, seed uint64) (*sqlThread, error) {
	if mode.engine != "strata" {
		return b.newOtherThread(ctx, q, mode, seed)
	}
	conn, err := b.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	t := &sqlThread{conn: conn, q: q, r: rand.New(rand.NewPCG(b.cfg.seed, seed)), args: make([]any, q.nargs)}
	accessEntry, txnMode := runMode(mode.access)
	access, thresholds := accessMode(accessEntry)
	reuse := "ON"
	if access == "replan" {
		access, reuse = "planned", "OFF"
	}
	thresholds = strings.Trim(b.cfg.planner+","+thresholds, ",")
	set := "SET strata_access = '" + access + "', strata_plan_reuse = " + reuse + ", strata_planner = '" + thresholds + "'"
	if txnMode != "" {
		set += ", strata_txn_mode = '" + txnMode + "'"
	}
	if _, err := conn.ExecContext(ctx, set); err != nil {
		t.close()
		return nil, err
	}
	if err := t.prepare(ctx, q.text, q.then); err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// newOtherThread is newThread for an engine other than Strata.
func (b *sqlBench) newOtherThread(ctx context.Context, q *sqlQuery, mode sqlRunMode, seed uint64) (*sqlThread, error) {
	conn, err := b.others[mode.engine].Conn(ctx)
	if err != nil {
		return nil, err
	}
	t := &sqlThread{conn: conn, q: q, r: rand.New(rand.NewPCG(b.cfg.seed, seed)), args: make([]any, q.nargs)}
	e := b.cfg.others[mode.engine]
	then := q.then
	if then != "" {
		then = e.Statement(then)
	}
	if err := t.prepare(ctx, e.Statement(q.text), then); err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// prepare prepares the thread's statement, text, and then when it is not
// empty, on its connection.
func (t *sqlThread) prepare(ctx context.Context, text, then string) error {
	var err error
	if t.stmt, err = t.conn.PrepareContext(ctx, text); err != nil {
		return err
	}
	if then != "" {
		if t.then, err = t.conn.PrepareContext(ctx, then); err != nil {
			return err
		}
	}
	t.lat = make([]time.Duration, 0, 1<<16)
	return nil
}

func (t *sqlThread) close() {
	if t.stmt != nil {
		_ = t.stmt.Close()
	}
	if t.then != nil {
		_ = t.then.Close()
	}
	_ = t.conn.Close()
}

// loop runs every thread for d, all started together.
func (b *sqlBench) loop(ctx context.Context, threads []*sqlThread, d time.Duration, bar *meter.Bar, timed bool) error {
	deadline := time.Now().Add(d)
	errs := make([]error, len(threads))
	var wg sync.WaitGroup
	for i, t := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = b.threadLoop(ctx, t, deadline, bar, timed)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (b *sqlBench) threadLoop(ctx context.Context, t *sqlThread, deadline time.Time, bar *meter.Bar, timed bool) error {
	// Statements run without ctx's cancellation, which would cost each
	// query a goroutine in database/sql; the loop checks ctx instead.
	qctx := context.WithoutCancel(ctx)
	for ctx.Err() == nil {
		if b.cfg.cold {
			evictStart := time.Now()
			if _, err := sqlEvictTables(b.dir); err != nil {
				return err
			}
			if timed {
				t.evict += time.Since(evictStart)
			}
		}
		start := time.Now()
		if start.After(deadline) {
			break
		}
		err := t.once(qctx)
		lat := time.Since(start)
		if err != nil {
			if !isConflict(err) {
				return err
			}
			t.errs++
			continue
		}
		if timed {
			t.lat = append(t.lat, lat)
			bar.Add(1)
		}
	}
	return ctx.Err()
}

// once runs the statement once with fresh arguments and reads its rows.
func (t *sqlThread) once(ctx context.Context) error {
	t.q.fill(t.r, t.args)
	if t.then != nil {
		return t.readThenWrite(ctx)
	}
	if t.q.write {
		_, err := t.stmt.ExecContext(ctx, t.args...)
		return err
	}
	rs, err := t.stmt.QueryContext(ctx, t.args...)
	if err != nil {
		return err
	}
	if t.dest == nil {
		cols, err := rs.Columns()
		if err != nil {
			_ = rs.Close()
			return err
		}
		t.dest = make([]any, len(cols))
		for i := range t.dest {
			t.dest[i] = new(sql.RawBytes)
		}
	}
	for rs.Next() {
		if err := rs.Scan(t.dest...); err != nil {
			_ = rs.Close()
			return err
		}
		t.rows++
	}
	if err := rs.Err(); err != nil {
		_ = rs.Close()
		return err
	}
	return rs.Close()
}

// readThenWrite runs q's transaction: its statement reads one row, and
// q.then writes it with the same arguments.
func (t *sqlThread) readThenWrite(ctx context.Context) error {
	tx, err := t.conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	var v sql.RawBytes
	rs, err := tx.StmtContext(ctx, t.stmt).QueryContext(ctx, t.args...)
	if err == nil {
		for rs.Next() {
			if err = rs.Scan(&v); err != nil {
				break
			}
			t.rows++
		}
		err = errors.Join(err, rs.Err(), rs.Close())
	}
	if err == nil {
		_, err = tx.StmtContext(ctx, t.then).ExecContext(ctx, t.args...)
	}
	if err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// isConflict reports whether err is a write conflict (MySQL error 1213),
// which two threads updating the same row can meet.
func isConflict(err error) bool {
	var n interface{ Number() int }
	return errors.As(err, &n) && n.Number() == 1213
}

// querier is a *sql.DB or a *sql.Conn.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// statusCounters returns the integer status variables whose names start
// with prefix, without it.
func (b *sqlBench) statusCounters(ctx context.Context, q querier, prefix string) (map[string]int64, error) {
	rs, err := q.QueryContext(ctx, "SHOW STATUS LIKE '"+prefix+"%'")
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := map[string]int64{}
	for rs.Next() {
		var name string
		var v sql.NullInt64
		if err := rs.Scan(&name, &v); err != nil {
			return nil, err
		}
		out[strings.TrimPrefix(name, prefix)] = v.Int64
	}
	return out, rs.Err()
}

// statusText returns one status variable.
func (b *sqlBench) statusText(ctx context.Context, q querier, name string) (string, error) {
	rs, err := q.QueryContext(ctx, "SHOW STATUS LIKE '"+name+"'")
	if err != nil {
		return "", err
	}
	defer rs.Close()
	var n, v string
	if rs.Next() {
		if err := rs.Scan(&n, &v); err != nil {
			return "", err
		}
	}
	return v, rs.Err()
}
