package sqlstore

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/strata-db/strata/mysqlcompat"
)

// The memory quota of a statement
//
// GMS keeps in memory every row a sort, a hash join's build side, cached
// results or a window reads, and every group of a GROUP BY, with no bound
// but the process's (its MAX_MEMORY check is process-wide and off by
// default): one statement over a large join could take the machine's
// memory and the process with it. Each statement gets a quota, the session
// variable strata_mem_quota_query (bytes; 0 for none), as TiDB's
// tidb_mem_quota_query: the rows those operators hold are sized as they
// arrive and added to the statement's account in the session, and the row
// that takes the account past the quota fails the statement with
//
//	ERROR 3170 (HY000): Memory capacity of N bytes for 'strata_mem_quota_query' exceeded in this query.
//
// MySQL's error for a memory bound it enforces on one statement
// (range_optimizer_max_mem_size; MySQL has no per-statement quota of its
// own). The statement's iterators are closed as for any error and drop the
// rows, the session goes on, and its next statement starts a new account.
//
// An analyzer rule (memQuotaRule, run by Store.Configure inside GMS's
// process tracking rule, just before it wraps the plan) puts a quotaNode between each such operator and its
// input: the node's iterator sizes each row it passes up. It runs once,
// over the whole analyzed statement: GMS analyzes derived tables,
// subquery expressions and the sides of a UNION on their own first, and
// its rules and ours go on over them in the statement's own pass, which
// the wrappers must not hide things from; so memQuota skips those passes
// and reaches into them from the statement's. A sort or window
// iterator gives its rows back when it closes, and its account with it; a
// hash join's lookup table and cached results live on in the plan until
// the statement ends, so their account stays until the next statement
// starts. A GROUP BY with grouping columns keeps a group per key, not per
// row: its first aggregation is wrapped (quotaAgg) so that a group's
// buffer is charged when it takes its first row and refunded when it is
// disposed of. ORDER BY ... LIMIT n runs as GMS's TopN, which keeps n rows
// whatever the input, and is not charged.
//
// Sizes are estimates of what Go holds for a row: its slice, a boxed
// interface per value, the bytes of strings and byte slices. They count
// rows, not the operators' own overhead, so a quota is a bound on the
// order of the memory a statement takes, not an exact one.
//
// Targets GMS v0.20.0. Without it, TestMemQuota and TestMemQuotaTopN fail.

// memQuotaVar is the session variable with the quota, in bytes.
const memQuotaVar = "strata_mem_quota_query"

// erCapacityExceeded is MySQL's ER_CAPACITY_EXCEEDED, which vitess does not
// name.
const erCapacityExceeded = 3170

// minDefaultMemQuota is the least default quota, for machines that report
// little memory (or none).
const minDefaultMemQuota = 64 << 20

// defaultMemQuota is the quota a session starts with: a quarter of the
// machine's memory, at least minDefaultMemQuota, 1 GiB where the machine's
// memory cannot be read.
var defaultMemQuota = func() int64 {
	total, ok := physicalMemory()
	if !ok {
		return 1 << 30
	}
	return max(total/4, minDefaultMemQuota)
}()

// physicalMemory returns the machine's memory, from /proc/meminfo.
func physicalMemory() (int64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil || kib <= 0 {
			return 0, false
		}
		return kib << 10, true
	}
	return 0, false
}

func init() {
	// As the session variables of stmtstats.go: registered once for the
	// process, before any session exists.
	sql.SystemVariables.AddSystemVariables([]sql.SystemVariable{&sql.MysqlSystemVariable{
		Name:              memQuotaVar,
		Scope:             sql.GetMysqlScope(sql.SystemVariableScope_Both),
		Dynamic:           true,
		SetVarHintApplies: true,
		Type:              types.NewSystemIntType(memQuotaVar, 0, math.MaxInt64, false),
		Default:           defaultMemQuota,
	}})
}

// errMemQuota is the error of a statement past its quota.
func errMemQuota(quota int64) error {
	return mysql.NewSQLError(erCapacityExceeded, mysql.SSUnknownSQLState,
		"Memory capacity of %d bytes for '%s' exceeded in this query.", quota, memQuotaVar)
}

// memAccount is the memory account of a session's running statement. Its
// operators may run on several goroutines.
type memAccount struct {
	used atomic.Int64
	// quota is the statement's quota, read from the session at its first
	// charge: 0 until then, -1 for none.
	quota atomic.Int64
}

// begin starts the account of a new statement.
// Each store is skipped where the value is zero already (a statement that
// charged nothing, or read no quota): a store is a locked exchange.
func (m *memAccount) begin() {
	if m.used.Load() != 0 {
		m.used.Store(0)
	}
	if m.quota.Load() != 0 {
		m.quota.Store(0)
	}
}

// Charge adds n bytes, and fails when they take the account past the
// quota.
func (m *memAccount) Charge(ctx *sql.Context, n int64) error {
	used := m.used.Add(n)
	q := m.quota.Load()
	if q == 0 {
		q = sessionMemQuota(ctx)
		m.quota.Store(q)
	}
	if q > 0 && used > q {
		return errMemQuota(q)
	}
	return nil
}

// Release takes back n bytes charged.
func (m *memAccount) Release(n int64) { m.used.Add(-n) }

// sessionMemQuota returns ctx's session's quota, -1 for none.
func sessionMemQuota(ctx *sql.Context) int64 {
	v, err := ctx.GetSessionVariable(ctx, memQuotaVar)
	if err != nil {
		return defaultMemQuota
	}
	if n, ok := mysqlcompat.IntValue(v); ok && n > 0 {
		return n
	}
	return -1
}

// memAccountOf returns the account of ctx's session, nil for a session of
// another kind.
func memAccountOf(ctx *sql.Context) *memAccount {
	if ctx == nil {
		return nil
	}
	if s, ok := ctx.Session.(*Session); ok {
		return &s.mem
	}
	return nil
}

var _ mysqlcompat.MemoryAccounter = (*Session)(nil)

// StatementMemory implements mysqlcompat.MemoryAccounter: what the
// corrections hold (GROUP_CONCAT's values) counts against the quota.
func (s *Session) StatementMemory() mysqlcompat.MemoryAccount { return &s.mem }

// memQuotaRule returns the memQuota rule for a's statements: it skips the
// passes over derived tables, subqueries and set operation sides
// (nestedPass) and puts the whole plan under the quota in the statement's
// own pass. Store.Configure runs it just before GMS tracks the process.
func memQuotaRule(a *analyzer.Analyzer) analyzer.RuleFunc {
	nested := nestedPass(a)
	return func(_ *sql.Context, a *analyzer.Analyzer, n sql.Node, _ *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
		if nested(sel) {
			return n, transform.SameTree, nil
		}
		return memQuota(a, n, qFlags)
	}
}

// nestedPass returns a test of whether a rule selector is that of a pass
// over a derived table, a subquery expression or a side of a set
// operation: GMS analyzes those on their own, then goes on with the
// statement's pass over them, whose rules must not find them wrapped.
// Those passes, and only those, skip GMS's resolveUnions
// (NewFinalizeSubquerySel, NewFinalizeUnionSel).
func nestedPass(a *analyzer.Analyzer) func(analyzer.RuleSelector) bool {
	for _, b := range a.Batches {
		for _, r := range b.Rules {
			if r.Id.String() == "resolveUnions" {
				id := r.Id
				return func(sel analyzer.RuleSelector) bool { return !sel(id) }
			}
		}
	}
	// Another GMS: the derived tables' and subqueries' passes skip the
	// process tracking.
	return func(sel analyzer.RuleSelector) bool { return !sel(analyzer.TrackProcessId) }
}

// memQuota puts the plan's buffering operators under the statement's
// memory quota (see above), in derived tables, set operations and
// subquery expressions too. Run again over its own output it changes
// nothing.
func memQuota(a *analyzer.Analyzer, n sql.Node, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	n, same, err := transform.NodeWithOpaque(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		switch n := n.(type) {
		case *plan.Limit:
			return topN(n)
		case *plan.Sort:
			return underQuota(n, n.Child, false, a)
		case *plan.Window:
			return underQuota(n, n.Child, false, a)
		case *plan.HashLookup:
			return underQuota(n, n.Child, true, a)
		case *plan.CachedResults:
			return underQuota(n, n.Child, true, a)
		case *plan.GroupBy:
			return quotaGroups(n)
		}
		return n, transform.SameTree, nil
	})
	if err != nil || !qFlags.SubqueryIsSet() {
		return n, same, err
	}
	// The plans of subquery expressions, which no node lists as a child.
	n, sameSq, err := transform.NodeExprsWithOpaque(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		sq, ok := e.(*plan.Subquery)
		if !ok {
			return e, transform.SameTree, nil
		}
		q, same, err := memQuota(a, sq.Query, qFlags)
		if err != nil || same {
			return e, transform.SameTree, err
		}
		return sq.WithQuery(q), transform.NewTree, nil
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	return n, same && sameSq, nil
}

// quotaGroups wraps the first selected expression of a GROUP BY with
// grouping columns in a quotaAgg.
func quotaGroups(n *plan.GroupBy) (sql.Node, transform.TreeIdentity, error) {
	if len(n.GroupByExprs) == 0 || len(n.SelectedExprs) == 0 {
		return n, transform.SameTree, nil
	}
	if _, ok := n.SelectedExprs[0].(*quotaAgg); ok {
		return n, transform.SameTree, nil
	}
	sel := make([]sql.Expression, len(n.SelectedExprs))
	copy(sel, n.SelectedExprs)
	sel[0] = &quotaAgg{Expression: sel[0], n: len(sel)}
	ngb := *n
	ngb.SelectedExprs = sel
	return &ngb, transform.NewTree, nil
}

// topN runs ORDER BY ... LIMIT as GMS's TopN, which keeps only the rows
// the limit lets through, also when the ORDER BY sorts by columns the
// statement does not return: GMS's insertTopN finds a Sort right under
// the Limit (or its Offset), and such a Sort is under a Project. The
// Project goes over the TopN, and the Limit stays on top as GMS leaves it.
// With SQL_CALC_FOUND_ROWS the plan stays as it is.
func topN(l *plan.Limit) (sql.Node, transform.TreeIdentity, error) {
	if l.CalcFoundRows {
		return l, transform.SameTree, nil
	}
	limit, under := l.Limit, l.Child
	off, isOffset := under.(*plan.Offset)
	if isOffset {
		limit, under = expression.NewPlus(l.Limit, off.Offset), off.Child
	}
	p, ok := under.(*plan.Project)
	if !ok {
		return l, transform.SameTree, nil
	}
	s, ok := p.Child.(*plan.Sort)
	if !ok {
		return l, transform.SameTree, nil
	}
	child := s.Child
	if q, ok := child.(*quotaNode); ok {
		child = q.child // a TopN keeps what its limit says, not every row
	}
	np, err := p.WithChildren(plan.NewTopN(s.SortFields, limit, child))
	if err != nil {
		return nil, transform.SameTree, err
	}
	if isOffset {
		if np, err = off.WithChildren(np); err != nil {
			return nil, transform.SameTree, err
		}
	}
	nl, err := l.WithChildren(np)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return nl, transform.NewTree, nil
}

// underQuota returns n with its only child, child, under a quotaNode.
func underQuota(n, child sql.Node, keep bool, a *analyzer.Analyzer) (sql.Node, transform.TreeIdentity, error) {
	if _, ok := child.(*quotaNode); ok {
		return n, transform.SameTree, nil
	}
	nn, err := n.WithChildren(&quotaNode{child: child, keep: keep, exec: a.ExecBuilder})
	if err != nil {
		return nil, transform.SameTree, err
	}
	return nn, transform.NewTree, nil
}

// quotaNode runs its child, charging the rows it returns to the statement's
// memory account: its parent keeps them all. With keep, the parent keeps
// them past the child's end, so they stay charged until the statement
// ends. It shows in no plan: it prints as its child.
type quotaNode struct {
	child sql.Node
	keep  bool
	exec  sql.NodeExecBuilder
}

var (
	_ sql.ExecSourceRel      = (*quotaNode)(nil)
	_ sql.CollationCoercible = (*quotaNode)(nil)
	_ sql.Describable        = (*quotaNode)(nil)
)

func (q *quotaNode) RowIter(ctx *sql.Context, row sql.Row) (sql.RowIter, error) {
	it, err := q.exec.Build(ctx, q.child, row)
	if err != nil {
		return nil, err
	}
	acct := memAccountOf(ctx)
	if acct == nil {
		return it, nil
	}
	return &quotaIter{child: it, acct: acct, keep: q.keep}, nil
}

func (q *quotaNode) Schema() sql.Schema   { return q.child.Schema() }
func (q *quotaNode) Children() []sql.Node { return []sql.Node{q.child} }
func (q *quotaNode) Resolved() bool       { return q.child.Resolved() }
func (q *quotaNode) IsReadOnly() bool     { return q.child.IsReadOnly() }
func (q *quotaNode) String() string       { return q.child.String() }
func (q *quotaNode) DebugString() string  { return sql.DebugString(q.child) }

func (q *quotaNode) Describe(options sql.DescribeOptions) string {
	return sql.Describe(q.child, options)
}

func (q *quotaNode) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, q.child)
}

func (q *quotaNode) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(q, len(children), 1)
	}
	nq := *q
	nq.child = children[0]
	return &nq, nil
}

// quotaIter charges the rows of child to acct.
type quotaIter struct {
	child   sql.RowIter
	acct    *memAccount
	charged int64
	keep    bool
}

func (q *quotaIter) Next(ctx *sql.Context) (sql.Row, error) {
	row, err := q.child.Next(ctx)
	if err != nil {
		return nil, err
	}
	n := mysqlcompat.RowBytes(row)
	q.charged += n
	if err := q.acct.Charge(ctx, n); err != nil {
		return nil, err
	}
	return row, nil
}

func (q *quotaIter) Close(ctx *sql.Context) error {
	if !q.keep {
		q.acct.Release(q.charged)
		q.charged = 0
	}
	return q.child.Close(ctx)
}

// groupOverhead estimates what a GROUP BY holds per group besides its
// first row and its buffers: the key in the map and in the list of keys.
const groupOverhead = 64

// aggBufferBytes estimates an aggregation buffer.
const aggBufferBytes = 64

// quotaAgg is the first selected expression of a GROUP BY with grouping
// columns: it aggregates as the expression does (an aggregation, or the
// first value of the group for a plain expression, as GMS does), and
// charges each group to the statement's account when the group takes its
// first row. n is the number of selected expressions. The GROUP BY's
// schema does not change, and it prints as the expression.
//
// The expression is its one child, so that what walks the plan's
// expressions reaches it and what replaces it stays under the quota:
// GMS's assignExecIndexes, which indexes its columns anew when the
// statement around a derived table is analyzed; mysqlcompat's exact
// aggregates, which replace a SUM and record the type of their own.
type quotaAgg struct {
	sql.Expression
	n int
}

var (
	_ sql.Aggregation        = (*quotaAgg)(nil)
	_ sql.Nameable           = (*quotaAgg)(nil)
	_ sql.Tableable          = (*quotaAgg)(nil)
	_ sql.Databaseable       = (*quotaAgg)(nil)
	_ sql.CollationCoercible = (*quotaAgg)(nil)
	_ sql.IdExpression       = (*quotaAgg)(nil)
	_ sql.Describable        = (*quotaAgg)(nil)
)

func (q *quotaAgg) NewBuffer() (sql.AggregationBuffer, error) {
	var b sql.AggregationBuffer
	var err error
	if a, ok := q.Expression.(sql.Aggregation); ok {
		b, err = a.NewBuffer()
	} else {
		b, err = aggregation.NewFirst(q.Expression).NewBuffer()
	}
	if err != nil {
		return nil, err
	}
	return &quotaAggBuffer{AggregationBuffer: b, n: q.n}, nil
}

func (q *quotaAgg) Name() string {
	if n, ok := q.Expression.(sql.Nameable); ok {
		return n.Name()
	}
	return plan.AliasSubqueryString(q.Expression)
}

func (q *quotaAgg) Table() string {
	if t, ok := q.Expression.(sql.Tableable); ok {
		return t.Table()
	}
	return ""
}

func (q *quotaAgg) Database() string {
	if d, ok := q.Expression.(sql.Databaseable); ok {
		return d.Database()
	}
	return ""
}

func (q *quotaAgg) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, q.Expression)
}

func (q *quotaAgg) DebugString() string { return sql.DebugString(q.Expression) }

func (q *quotaAgg) Describe(options sql.DescribeOptions) string {
	return sql.Describe(q.Expression, options)
}

func (q *quotaAgg) Children() []sql.Expression { return []sql.Expression{q.Expression} }

func (q *quotaAgg) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(q, len(children), 1)
	}
	return &quotaAgg{Expression: children[0], n: q.n}, nil
}

func (q *quotaAgg) Id() sql.ColumnId {
	if i, ok := q.Expression.(sql.IdExpression); ok {
		return i.Id()
	}
	return 0
}

func (q *quotaAgg) WithId(id sql.ColumnId) sql.IdExpression {
	if i, ok := q.Expression.(sql.IdExpression); ok {
		return &quotaAgg{Expression: i.WithId(id), n: q.n}
	}
	return q
}

func (q *quotaAgg) NewWindowFunction() (sql.WindowFunction, error) {
	if a, ok := q.Expression.(sql.Aggregation); ok {
		return a.NewWindowFunction()
	}
	return nil, fmt.Errorf("sqlstore: %s is not an aggregation", q.Expression)
}

func (q *quotaAgg) WithWindow(w *sql.WindowDefinition) sql.WindowAdaptableExpression {
	if a, ok := q.Expression.(sql.Aggregation); ok {
		return &quotaAgg{Expression: a.WithWindow(w), n: q.n}
	}
	return q
}

func (q *quotaAgg) Window() *sql.WindowDefinition {
	if a, ok := q.Expression.(sql.Aggregation); ok {
		return a.Window()
	}
	return nil
}

// quotaAggBuffer charges its group at its first row, and refunds it when
// disposed of.
type quotaAggBuffer struct {
	sql.AggregationBuffer
	acct    *memAccount
	charged int64
	n       int
}

func (b *quotaAggBuffer) Update(ctx *sql.Context, row sql.Row) error {
	if b.acct == nil {
		if b.acct = memAccountOf(ctx); b.acct != nil {
			b.charged = mysqlcompat.RowBytes(row) + int64(b.n)*aggBufferBytes + groupOverhead
			if err := b.acct.Charge(ctx, b.charged); err != nil {
				return err
			}
		}
	}
	return b.AggregationBuffer.Update(ctx, row)
}

func (b *quotaAggBuffer) Dispose() {
	if b.acct != nil {
		b.acct.Release(b.charged)
		b.charged = 0
	}
	b.AggregationBuffer.Dispose()
}
