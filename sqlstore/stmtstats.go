package sqlstore

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/planner"
)

// Statement statistics. Every read of table data a statement makes passes
// the session's statement counters in kv.ReadOptions.Stats, and every row
// iterator records the access plan it runs. When the next statement begins
// (ValidateSession), a statement that read table data becomes the
// session's last statement; statements that read none (SET, SHOW STATUS
// itself) leave it alone. SQL reads the last statement through session
// status variables:
//
//	SHOW STATUS LIKE 'Strata_last%'
//
// Strata_last_access lists the access plans as they ran, which are the
// plans EXPLAIN shows ("sbtest: MultiGet(keys=100, batch=32)", with "x N"
// for a plan run N times, as lookup joins do);
// Strata_last_<counter> gives each engine counter of package kv/stats with
// dots as underscores (Strata_last_file_read_count,
// Strata_last_block_cache_hit, Strata_last_multiget_keys, ...). Catalog
// reads and the point reads of table editors (uniqueness checks) are not
// counted. Go code reads the same through LastStatement.
//
// Strata_engine_<counter> gives the same counters for the whole database
// since it was opened (every session, writes, flushes and compactions
// included): the difference of two readings is what happened between them.

// maxAccessRecords bounds the distinct plans kept for one statement.
const maxAccessRecords = 16

// stmtStats is a session's statement statistics. Reads add to cur from any
// goroutine; the rest is guarded by mu.
type stmtStats struct {
	cur     stats.Counters
	touched atomic.Bool

	mu         sync.Mutex
	curAccess  []accessRecord
	last       stats.Snapshot
	lastAccess []accessRecord
	hasLast    bool
}

// accessRecord is one access plan a statement ran, n times.
type accessRecord struct {
	table string
	plan  planner.Plan // Ranges is nil; nranges holds their number
	nr    int
	n     int
}

func (r accessRecord) String() string {
	p := r.plan
	p.Ranges = make([]planner.KeyRange, r.nr)
	s := r.table + ": " + p.String()
	if r.n > 1 {
		s += " x " + itoa(r.n)
	}
	return s
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return string(b[i:])
}

// counters returns the counters reads of the running statement add to.
func (s *stmtStats) counters() *stats.Counters {
	s.touched.Store(true)
	return &s.cur
}

// record notes that the running statement reads table through plan.
func (s *stmtStats) record(table string, plan planner.Plan) {
	s.touched.Store(true)
	nr := len(plan.Ranges)
	plan.Ranges = nil
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.curAccess {
		r := &s.curAccess[i]
		if r.nr == nr && r.table == table && samePlan(r.plan, plan) {
			r.n++
			return
		}
	}
	if len(s.curAccess) < maxAccessRecords {
		s.curAccess = append(s.curAccess, accessRecord{table: table, plan: plan, nr: nr, n: 1})
	}
}

// samePlan compares two plans whose Ranges are nil.
func samePlan(a, b planner.Plan) bool {
	return a.Kind == b.Kind && a.Batch == b.Batch && a.Readahead == b.Readahead &&
		a.ReadaheadAfter == b.ReadaheadAfter && a.Async == b.Async && a.DontFillCache == b.DontFillCache && a.Chunk == b.Chunk &&
		a.Reverse == b.Reverse && a.IterPerRange == b.IterPerRange && a.Fetch == b.Fetch && a.Covering == b.Covering &&
		a.Mutable == b.Mutable
}

// begin starts a statement: the previous one becomes the last statement if
// it read table data.
func (s *stmtStats) begin() {
	// A load first: most statements between two that read table data
	// touch nothing, and a swap is a locked instruction.
	if !s.touched.Load() || !s.touched.Swap(false) {
		return
	}
	s.mu.Lock()
	s.last = s.cur.Snapshot()
	s.lastAccess, s.curAccess = s.curAccess, s.lastAccess[:0]
	s.hasLast = true
	s.mu.Unlock()
	s.cur.Reset()
}

// LastStatement returns what the last statement of ctx's session that read
// table data cost: its engine counters and its access plans, one line per
// distinct plan. Called while a statement runs, it returns that statement's
// figures so far. ok is false when the session has run no such statement or
// is not a session of this package.
func LastStatement(ctx *sql.Context) (counters stats.Snapshot, access []string, ok bool) {
	sess, isOurs := ctx.Session.(*Session)
	if !isOurs {
		return counters, nil, false
	}
	return sess.stmt.lastStatement()
}

func (s *stmtStats) lastStatement() (stats.Snapshot, []string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	recs, snap := s.lastAccess, s.last
	if s.touched.Load() {
		recs, snap = s.curAccess, s.cur.Snapshot()
	}
	access := make([]string, len(recs))
	for i, r := range recs {
		access[i] = r.String()
	}
	return snap, access, s.hasLast || s.touched.Load()
}

// Prefixes of the status variables of this package: the last statement's
// figures and the database's.
const (
	statusPrefix = "Strata_"
	lastPrefix   = "Strata_last_"
	enginePrefix = "Strata_engine_"
)

// statusName returns the status variable of counter c under prefix.
func statusName(prefix string, c stats.Counter) string {
	return prefix + strings.ReplaceAll(c.String(), ".", "_")
}

// statusVars returns this package's session status variables.
func (s *Session) statusVars() map[string]sql.StatusVarValue {
	snap, access, _ := s.stmt.lastStatement()
	var engine stats.Snapshot
	if es := s.store.engineStats; es != nil {
		engine = es.Stats()
	}
	m := make(map[string]sql.StatusVarValue, 2*int(stats.NumCounters)+1)
	for c := stats.Counter(0); c < stats.NumCounters; c++ {
		name := statusName(lastPrefix, c)
		m[name] = &sql.ImmutableStatusVarValue{Var: statusVar(name, types.Int64, int64(0)), Val: snap.Get(c)}
		name = statusName(enginePrefix, c)
		m[name] = &sql.ImmutableStatusVarValue{Var: statusVar(name, types.Int64, int64(0)), Val: engine.Get(c)}
	}
	name := lastPrefix + "access"
	m[name] = &sql.ImmutableStatusVarValue{Var: statusVar(name, types.LongText, ""), Val: strings.Join(access, "; ")}
	name = statusPrefix + "plans_reused"
	m[name] = &sql.ImmutableStatusVarValue{Var: statusVar(name, types.Int64, int64(0)), Val: s.plansReused.Load()}
	return m
}

func statusVar(name string, typ sql.Type, def any) *sql.MySQLStatusVariable {
	return &sql.MySQLStatusVariable{Name: name, Scope: sql.StatusVariableScope_Session, Type: typ, Default: def}
}

// GetAllStatusVariables implements sql.Session: GMS's status variables
// and this package's Strata_last_*, Strata_engine_* and
// Strata_plans_reused ones.
func (s *Session) GetAllStatusVariables(ctx *sql.Context) map[string]sql.StatusVarValue {
	m := s.BaseSession.GetAllStatusVariables(ctx)
	for k, v := range s.statusVars() {
		m[k] = v
	}
	return m
}

// GetStatusVariable implements sql.Session.
func (s *Session) GetStatusVariable(ctx *sql.Context, name string) (interface{}, error) {
	if len(name) >= len(statusPrefix) && strings.EqualFold(name[:len(statusPrefix)], statusPrefix) {
		for k, v := range s.statusVars() {
			if strings.EqualFold(k, name) {
				return v.Value(), nil
			}
		}
	}
	return s.BaseSession.GetStatusVariable(ctx, name)
}

// stmtStatsOf returns the statement statistics of ctx's session, or nil.
func stmtStatsOf(ctx *sql.Context) *stmtStats {
	if ctx == nil {
		return nil
	}
	if sess, ok := ctx.Session.(*Session); ok {
		return &sess.stmt
	}
	return nil
}

func init() {
	// The session variables are registered once for the process; sessions
	// made before they exist would not see them, hence init.
	sql.SystemVariables.AddSystemVariables([]sql.SystemVariable{&sql.MysqlSystemVariable{
		Name:              accessVar,
		Scope:             sql.GetMysqlScope(sql.SystemVariableScope_Both),
		Dynamic:           true,
		SetVarHintApplies: true,
		Type:              types.NewSystemEnumType(accessVar, accessDefault, accessPlanned, accessNaive),
		Default:           accessDefault,
	}, &sql.MysqlSystemVariable{
		Name:              plannerVar,
		Scope:             sql.GetMysqlScope(sql.SystemVariableScope_Both),
		Dynamic:           true,
		SetVarHintApplies: true,
		Type:              types.NewSystemStringType(plannerVar),
		Default:           "",
		NotifyChanged:     checkThresholds,
	}, &sql.MysqlSystemVariable{
		Name:    planReuseVar,
		Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Both),
		Dynamic: true,
		Type:    types.NewSystemBoolType(planReuseVar),
		Default: int8(1),
	}})
}
