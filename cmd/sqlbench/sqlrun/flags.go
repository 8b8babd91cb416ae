package sqlrun

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-db/strata/planner"
	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/tikvstore"
)

// sqlConfig is the sql subcommand's command line.
type sqlConfig struct {
	dir        string
	rows       int
	workloads  []sqlWorkloadSpec
	access     []string
	threads    int
	duration   time.Duration
	warmup     time.Duration
	repeat     int
	rangeSize  int
	inListSize int
	statistics bool
	cold       bool
	store      string // -store: a tikv:// address for Strata's store
	sync       bool
	cacheSize  int64
	seed       uint64
	cpuProfile string
	planner    string // -planner: thresholds for every access mode
	// engines are the databases each workload runs against, in -engines
	// order: "strata" and names of others.
	engines []string
	// others are the engines besides Strata that -engines accepts, by
	// name (Options.Engines).
	others map[string]Engine
	// txnModes are the strata_txn_mode values (-txn_mode) each workload
	// runs in, for every access mode; empty: the store's default.
	txnModes []string
}

// runMode splits a run's mode, an -access entry with an optional
// "@txn_mode" suffix (-txn_mode), into the two.
func runMode(m string) (access, txnMode string) {
	i := strings.LastIndexByte(m, '@')
	if i < 0 || strings.Contains(m[i:], ")") {
		return m, ""
	}
	return m[:i], m[i+1:]
}

// accessMode splits an -access entry, "planned" or
// "planned(multiget_batch=8)", into its mode and thresholds.
func accessMode(a string) (mode, thresholds string) {
	mode, rest, ok := strings.Cut(a, "(")
	if !ok {
		return a, ""
	}
	thresholds, ok = strings.CutSuffix(rest, ")")
	if !ok {
		return a, "" // unknown mode
	}
	return strings.TrimSpace(mode), thresholds
}

// splitOutsideParens splits s at the commas that are not inside
// parentheses.
func splitOutsideParens(s string) []string {
	var out []string
	depth, from := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[from:i])
				from = i + 1
			}
		}
	}
	return append(out, s[from:])
}

// sqlWorkloadSpec is one entry of -workloads: a workload name and its size
// (IN-list length, rows of a range, ranges of a multi-range); 0 means the
// default for the workload.
type sqlWorkloadSpec struct {
	name string
	size int
}

func (s sqlWorkloadSpec) String() string {
	if s.size > 0 {
		return fmt.Sprintf("%s:%d", s.name, s.size)
	}
	return s.name
}

// sqlDefaultWorkloads is the default of -workloads.
const sqlDefaultWorkloads = "point_select,in_list,simple_range,sum_range,order_range,distinct_range,multi_range,index_lookup,insert,update_index"

func parseSQLFlags(args []string, out io.Writer, opts Options) (*sqlConfig, error) {
	c := &sqlConfig{others: map[string]Engine{}}
	for _, e := range opts.Engines {
		c.others[e.Name()] = e
	}
	command := opts.Command
	if command == "" {
		command = "sqlbench sql"
	}
	fs := flag.NewFlagSet("sql", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintf(out, "usage: %s [flags]\n", command)
		fmt.Fprintln(out, "\nsysbench-style SQL workloads over database/sql against an embedded database.")
		fmt.Fprintln(out, "Workloads (name[:size]): point_select, in_list[:ids], simple_range[:rows], sum_range[:rows],")
		fmt.Fprintln(out, "order_range[:rows], distinct_range[:rows], multi_range[:ranges], index_lookup, insert, update_index;")
		fmt.Fprintln(out, "and, not among the defaults, covered_range[:rows] (a range of k read from k_idx alone) and")
		fmt.Fprintln(out, "counter[:rows] (a transaction: SELECT k ... FOR UPDATE, then UPDATE it, on one of the first rows),")
		fmt.Fprintln(out, "update_non_index (SET c = ? by id) and select_1 (SELECT 1, the statement floor).")
		fmt.Fprintln(out, "\nflags:")
		fs.PrintDefaults()
	}
	var workloads, access, engines string
	fs.StringVar(&c.dir, "db", "", "database folder (kept; reused when it holds the table with -rows rows); default: a temporary folder")
	fs.StringVar(&c.store, "store", "", "a tikv:// address: Strata's store is that TiKV cluster instead of a folder (reused like -db's); tikv://mock is client-go's in-process mock cluster")
	fs.IntVar(&c.rows, "rows", 100000, "rows in sbtest")
	fs.StringVar(&workloads, "workloads", sqlDefaultWorkloads, "comma-separated workloads, each name or name:size")
	fs.StringVar(&access, "access", "planned", "comma-separated access modes to run each workload in: planned, naive, replan; a mode may add planner thresholds in parentheses, as in planned(multiget_batch=8,fetch_batch=8)")
	fs.StringVar(&engines, "engines", "strata", enginesUsage(opts))
	fs.StringVar(&c.planner, "planner", "", "planner thresholds for every mode, as SET strata_planner takes them: comma-separated name=value of "+strings.Join(planner.OptionNames(), ", ")+" (sizes take KiB, MiB, GiB)")
	fs.IntVar(&c.threads, "threads", 1, "client threads, each with its own connection")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "time each workload runs in each access mode")
	fs.DurationVar(&c.warmup, "warmup", time.Second, "untimed run before each timed one (not with -cold)")
	fs.IntVar(&c.repeat, "repeat", 1, "runs of each workload in each mode, interleaved; with more than one, the median is reported")
	fs.IntVar(&c.rangeSize, "range_size", 100, "rows of simple_range, sum_range, order_range and distinct_range")
	fs.IntVar(&c.inListSize, "in_list_size", 10, "ids of in_list")
	fs.BoolVar(&c.statistics, "statistics", false, "print engine counters per query and the last query's access plan")
	fs.BoolVar(&c.cold, "cold", false, "drop the OS page cache of the tables before every query (not timed: qps counts the queries' time only)")
	fs.BoolVar(&c.sync, "sync", false, "sync the write-ahead log at every commit")
	fs.Int64Var(&c.cacheSize, "cache_size", 0, "block cache bytes; 0 for the store's default (sqlstore.DefaultCacheSize)")
	fs.Uint64Var(&c.seed, "seed", 1, "random seed")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the workloads to this file")
	var txnModes string
	fs.StringVar(&txnModes, "txn_mode", "", "comma-separated transaction modes (strata_txn_mode) to run each workload in, for every access mode: pessimistic, optimistic; default: the store's")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	var errs []error
	var err error
	for _, m := range strings.Split(txnModes, ",") {
		switch m = strings.TrimSpace(m); m {
		case "":
		case "pessimistic", "optimistic":
			c.txnModes = append(c.txnModes, m)
		default:
			errs = append(errs, fmt.Errorf("-txn_mode: unknown mode %q (pessimistic, optimistic)", m))
		}
	}
	known := []string{"strata"}
	for _, e := range opts.Engines {
		known = append(known, e.Name())
	}
	for a := range opts.Aliases {
		known = append(known, a)
	}
	slices.Sort(known[1+len(opts.Engines):])
	for _, e := range strings.Split(engines, ",") {
		e = strings.TrimSpace(e)
		names := []string{e}
		_, isOther := c.others[e]
		if alias, ok := opts.Aliases[e]; ok {
			names = alias
		} else if e != "strata" && !isOther {
			errs = append(errs, fmt.Errorf("-engines: unknown engine %q (%s)", e, strings.Join(known, ", ")))
			continue
		}
		for _, n := range names {
			if _, ok := c.others[n]; !ok && n != "strata" {
				errs = append(errs, fmt.Errorf("-engines: %s: no engine %q", e, n))
				continue
			}
			if !slices.Contains(c.engines, n) {
				c.engines = append(c.engines, n)
			}
		}
	}
	if c.store != "" {
		if _, err := tikvstore.ParseAddress(c.store); err != nil {
			errs = append(errs, fmt.Errorf("-store: %w", err))
		}
		if c.cold || c.dir != "" || c.cacheSize > 0 {
			errs = append(errs, errors.New("-store: -cold, -db and -cache_size are the embedded engine's"))
		}
	}
	if c.cold && slices.ContainsFunc(c.engines, func(e string) bool { return e != "strata" }) {
		errs = append(errs, errors.New("-cold: Strata only: drop the other engines from -engines"))
	}
	if c.workloads, err = parseSQLWorkloads(workloads); err != nil {
		errs = append(errs, err)
	}
	if _, err := planner.ParseOptions(c.planner, planner.Options{}); err != nil {
		errs = append(errs, fmt.Errorf("-planner: %w", err))
	}
	for _, a := range splitOutsideParens(access) {
		a = strings.TrimSpace(a)
		mode, thresholds := accessMode(a)
		switch mode {
		case "planned", "naive", "replan":
			if _, err := planner.ParseOptions(thresholds, planner.Options{}); err != nil {
				errs = append(errs, fmt.Errorf("-access: %s: %w", a, err))
				continue
			}
			c.access = append(c.access, a)
		default:
			errs = append(errs, fmt.Errorf("-access: unknown mode %q (want planned, naive or replan, each with optional (thresholds))", a))
		}
	}
	if len(c.txnModes) > 0 {
		var modes []string
		for _, a := range c.access {
			for _, m := range c.txnModes {
				modes = append(modes, a+"@"+m)
			}
		}
		c.access = modes
	}
	if c.rows < 100 {
		errs = append(errs, fmt.Errorf("-rows=%d: want at least 100", c.rows))
	}
	if c.cacheSize < 0 {
		errs = append(errs, fmt.Errorf("-cache_size=%d: want 0 (the default) or a size in bytes", c.cacheSize))
	}
	if c.threads < 1 {
		errs = append(errs, fmt.Errorf("-threads=%d: want at least 1", c.threads))
	}
	if c.repeat < 1 {
		errs = append(errs, fmt.Errorf("-repeat=%d: want at least 1", c.repeat))
	}
	if c.duration <= 0 {
		errs = append(errs, fmt.Errorf("-duration=%v: want a positive duration", c.duration))
	}
	if c.warmup < 0 {
		errs = append(errs, fmt.Errorf("-warmup=%v: want 0 (none) or a positive duration", c.warmup))
	}
	if c.rangeSize < 1 || c.rangeSize > c.rows {
		errs = append(errs, fmt.Errorf("-range_size=%d: want 1 to -rows", c.rangeSize))
	}
	if c.inListSize < 1 || c.inListSize > c.rows {
		errs = append(errs, fmt.Errorf("-in_list_size=%d: want 1 to -rows", c.inListSize))
	}
	for _, w := range c.workloads {
		if w.size > c.rows {
			errs = append(errs, fmt.Errorf("-workloads: %s: size above -rows", w))
		}
	}
	if len(errs) > 0 {
		return nil, UsageError{errors.Join(errs...)}
	}
	return c, nil
}

// enginesUsage is the help of -engines.
func enginesUsage(opts Options) string {
	var b strings.Builder
	b.WriteString("comma-separated databases to run each workload against, side by side: strata (in each -access mode)")
	for _, e := range opts.Engines {
		fmt.Fprintf(&b, ", %s (%s)", e.Name(), e.Description())
	}
	aliases := make([]string, 0, len(opts.Aliases))
	for a := range opts.Aliases {
		aliases = append(aliases, a)
	}
	slices.Sort(aliases)
	for _, a := range aliases {
		fmt.Fprintf(&b, ", %s (%s)", a, strings.Join(opts.Aliases[a], " and "))
	}
	if len(opts.Engines) > 0 {
		b.WriteString("; the other engines' files lie beside -db")
	}
	return b.String()
}

// parseSQLWorkloads parses -workloads.
func parseSQLWorkloads(s string) ([]sqlWorkloadSpec, error) {
	var out []sqlWorkloadSpec
	var errs []error
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, size, hasSize := strings.Cut(item, ":")
		spec := sqlWorkloadSpec{name: name}
		if _, ok := sqlWorkloads[name]; !ok {
			errs = append(errs, fmt.Errorf("-workloads: unknown workload %q", name))
			continue
		}
		if hasSize {
			n, err := strconv.Atoi(size)
			if err != nil || n < 1 {
				errs = append(errs, fmt.Errorf("-workloads: %q: size must be a positive integer", item))
				continue
			}
			if !sqlWorkloads[name].sized {
				errs = append(errs, fmt.Errorf("-workloads: %q: %s takes no size", item, name))
				continue
			}
			spec.size = n
		}
		out = append(out, spec)
	}
	if len(out) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("-workloads: none given"))
	}
	return out, errors.Join(errs...)
}

// sqlBlockCache returns the size of Strata's block cache in bytes: -cache_size
// or the store's default.
func sqlBlockCache(cfg *sqlConfig) int64 {
	if cfg.cacheSize > 0 {
		return cfg.cacheSize
	}
	return sqlstore.DefaultCacheSize
}
