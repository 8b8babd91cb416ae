package sqlstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"

	"github.com/strata-db/strata/mysqlcompat"
)

// explainExec is an engine's exec builder that answers EXPLAIN in MySQL's
// forms (explainparse.go lists them); GMS's own forms and every other
// statement go to the builder it wraps.
type explainExec struct {
	sql.NodeExecBuilder
}

// Unwrap returns the builder explainExec wraps, for what looks for one
// under it (mysqlcompat.ApplyValueRules).
func (e explainExec) Unwrap() sql.NodeExecBuilder { return e.NodeExecBuilder }

// Build implements sql.NodeExecBuilder.
func (e explainExec) Build(ctx *sql.Context, n sql.Node, r sql.Row) (sql.RowIter, error) {
	dq, ok := n.(*plan.DescribeQuery)
	if !ok || dq.Format.Debug || dq.Format.Estimates {
		return e.NodeExecBuilder.Build(ctx, n, r)
	}
	h := explainHeadOf(ctx.Query())
	if dq.Format.Plan && !dq.Format.Analyze && (h.plan || !h.ok) {
		// EXPLAIN PLAN: GMS's tree. So is a plan explained without its
		// text (a caller of the engine that gave the context none).
		return e.NodeExecBuilder.Build(ctx, n, r)
	}
	child := dq.Query()
	// A statement of GMS's fixed batches reads as it will run: its
	// lookups planned from corrected values (mysqlcompat/dmlranges.go).
	child, err := mysqlcompat.PlanFixedLookups(ctx, e.NodeExecBuilder, child)
	if err != nil {
		return nil, err
	}
	if nn, _, err := explainScans(ctx, child); err == nil {
		child = nn
	}
	x := newExplainer(ctx)
	root := x.describe(child)
	switch {
	case dq.Format.Analyze:
		stats, err := runMeasured(ctx, child, r)
		if err != nil {
			return nil, err
		}
		return sql.RowsToRowIter(sql.NewRow(treeText(root, stats))), nil
	case !dq.Format.Plan:
		return sql.RowsToRowIter(x.tabular()...), nil
	case h.ok && h.format == "json":
		return sql.RowsToRowIter(sql.NewRow(x.json())), nil
	}
	return sql.RowsToRowIter(sql.NewRow(treeText(root, nil))), nil
}

// tabular is the traditional form: one row per table access, selects in
// the order of their ids, a UNION RESULT after its members.
func (x *explainer) tabular() []sql.Row {
	var rows []sql.Row
	var emit func(s *xSelect)
	done := map[*xSelect]bool{}
	emit = func(s *xSelect) {
		if done[s] || s.noRow {
			return
		}
		done[s] = true
		if s.insert != nil {
			rows = append(rows, x.tableRow(s, s.insert, true))
		}
		for i, t := range s.tables {
			rows = append(rows, x.tableRow(s, t, i == 0))
		}
		if len(s.tables) == 0 && s.insert == nil && s.id > 0 {
			rows = append(rows, sql.Row{uint64(s.id), s.typ, nil, nil, nil, nil, nil, nil, nil, nil, nil, "No tables used"})
		}
	}
	for _, s := range x.selects {
		emit(s)
	}
	return rows
}

func (x *explainer) tableRow(s *xSelect, t *xTable, first bool) sql.Row {
	var id any
	if s.id > 0 {
		id = uint64(s.id)
	}
	typ := s.typ
	if t.selectType != "" {
		typ = t.selectType
	}
	if t.selectType == "INSERT" {
		return sql.Row{id, typ, t.name, nil, t.typ, nil, nil, nil, nil, nil, nil, nil}
	}
	var extra []string
	if t.impossible {
		return sql.Row{id, typ, nil, nil, nil, nil, nil, nil, nil, nil, nil, "Impossible WHERE"}
	}
	if len(t.cond) > 0 {
		extra = append(extra, "Using where")
	}
	if t.covering {
		extra = append(extra, "Using index")
	}
	if first && s.temporary {
		extra = append(extra, "Using temporary")
	}
	if first && s.filesort {
		extra = append(extra, "Using filesort")
	}
	if t.hashJoin {
		extra = append(extra, "Using join buffer (hash join)")
	}
	if t.strata != "" {
		extra = append(extra, "Strata: "+t.strata)
	}
	var rows, filtered any
	if t.filtered >= 0 {
		rows = uint64(max(t.rows, 1))
		filtered = roundPercent(t.filtered)
	}
	return sql.Row{id, typ, t.name, nil, nullable(t.typ), nullable(strings.Join(t.possibleKeys, ",")), keyName(t), nullable(t.keyLen),
		nullable(strings.Join(t.ref, ",")), rows, filtered, nullable(strings.Join(extra, "; "))}
}

func keyName(t *xTable) any {
	if t.ix == nil || t.parts == 0 && t.typ != "index" {
		return nil
	}
	return t.ix.name
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func roundPercent(f float64) float64 {
	return float64(int64(f*100+0.5)) / 100
}

// treeText prints the iterator tree as MySQL 8's FORMAT=TREE does, with
// EXPLAIN ANALYZE's measures when stats is not nil.
func treeText(root *xop, stats map[sql.Node]*opStats) string {
	var b strings.Builder
	var write func(op *xop, depth int)
	write = func(op *xop, depth int) {
		b.WriteString(strings.Repeat("    ", depth))
		b.WriteString("-> ")
		b.WriteString(op.title)
		if !op.noEst {
			fmt.Fprintf(&b, "  (cost=%.2f rows=%s)", op.cost, rowsText(op.rows))
		}
		if stats != nil && !op.uncounted {
			if st := statsOf(stats, op.node); st != nil && st.loops > 0 {
				l := float64(st.loops)
				fmt.Fprintf(&b, " (actual time=%.3f..%.3f rows=%s loops=%d)",
					ms(st.first)/l, ms(st.last)/l, rowsText(float64(st.rows)/l), st.loops)
			} else if op.node != nil {
				b.WriteString(" (never executed)")
			}
		}
		b.WriteByte('\n')
		for _, k := range op.kids {
			write(k, depth+1)
		}
	}
	write(root, 0)
	return b.String()
}

func statsOf(stats map[sql.Node]*opStats, n sql.Node) *opStats {
	if !comparableNode(n) {
		return nil
	}
	return stats[n]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// rowsText prints a row count as MySQL does: whole numbers plainly, a
// fraction with two decimals.
func rowsText(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprint(int64(f))
	}
	if f >= 1000 {
		return fmt.Sprintf("%.0f", f)
	}
	return fmt.Sprintf("%.2f", f)
}

// json is the FORMAT=JSON form: MySQL's query_block document, indented
// by two spaces as MySQL indents it.
func (x *explainer) json() string {
	var b bytes.Buffer
	writeJSON(&b, jobj{{"query_block", x.queryBlock(x.selects[0])}}, "")
	return b.String()
}

// jobj is a JSON object that keeps its keys in order, as MySQL prints them.
type jobj []jkv

type jkv struct {
	k string
	v any
}

// writeJSON writes v (a jobj, a slice of them or of strings, or a scalar)
// indented; unlike encoding/json it leaves <, > and & as they are.
func writeJSON(b *bytes.Buffer, v any, indent string) {
	in := indent + "  "
	switch v := v.(type) {
	case jobj:
		if len(v) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, kv := range v {
			b.WriteString(in)
			writeJSONString(b, kv.k)
			b.WriteString(": ")
			writeJSON(b, kv.v, in)
			if i < len(v)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	case []jobj:
		b.WriteString("[\n")
		for i, o := range v {
			b.WriteString(in)
			writeJSON(b, o, in)
			if i < len(v)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	case []string:
		b.WriteString("[\n")
		for i, s := range v {
			b.WriteString(in)
			writeJSONString(b, s)
			if i < len(v)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	case string:
		writeJSONString(b, v)
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			raw = []byte("null")
		}
		b.Write(raw)
	}
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode's newline
}

func (x *explainer) queryBlock(s *xSelect) jobj {
	// A select that starts a UNION is shown as the union's result.
	for _, u := range x.selects {
		if u.id == 0 && len(u.members) > 0 && u.members[0] == s {
			var specs []jobj
			for _, m := range u.members {
				specs = append(specs, jobj{{"dependent", false}, {"cacheable", true}, {"query_block", x.selectBlock(m)}})
			}
			return jobj{{"union_result", jobj{
				{"using_temporary_table", u.temporary},
				{"table_name", u.tables[0].name},
				{"access_type", "ALL"},
				{"query_specifications", specs},
			}}}
		}
	}
	return x.selectBlock(s)
}

func (x *explainer) selectBlock(s *xSelect) jobj {
	blk := jobj{{"select_id", s.id}, {"cost_info", jobj{{"query_cost", fmt.Sprintf("%.2f", s.cost)}}}}
	var body jobj
	if s.insert != nil {
		blk = append(blk, jkv{"table", jobj{{"insert", true}, {"select_id", s.id}, {"table_name", s.insert.name}, {"access_type", "ALL"}}})
	}
	switch len(s.tables) {
	case 0:
		body = jobj{{"message", "No tables used"}}
	case 1:
		body = jobj{{"table", x.tableJSON(s.tables[0])}}
	default:
		var loop []jobj
		for _, t := range s.tables {
			loop = append(loop, jobj{{"table", x.tableJSON(t)}})
		}
		body = jobj{{"nested_loop", loop}}
	}
	if s.grouping {
		body = jobj{{"grouping_operation", append(jobj{{"using_temporary_table", true}, {"using_filesort", false}}, body...)}}
	} else if s.temporary {
		body = jobj{{"duplicates_removal", append(jobj{{"using_temporary_table", true}, {"using_filesort", false}}, body...)}}
	}
	if s.filesort {
		body = jobj{{"ordering_operation", append(jobj{{"using_filesort", true}}, body...)}}
	}
	if s.insert != nil {
		body = jobj{{"insert_from", body}}
	}
	blk = append(blk, body...)
	kinds := map[string][]jobj{}
	var order []string
	for i, sub := range s.subs {
		k := s.subKind[i]
		if _, ok := kinds[k]; !ok {
			order = append(order, k)
		}
		kinds[k] = append(kinds[k], jobj{{"dependent", sub.dependent}, {"cacheable", !sub.dependent}, {"query_block", x.queryBlock(sub)}})
	}
	for _, k := range order {
		blk = append(blk, jkv{k, kinds[k]})
	}
	return blk
}

func (x *explainer) tableJSON(t *xTable) jobj {
	o := jobj{}
	if t.update {
		o = append(o, jkv{"update", true})
	}
	if t.delete {
		o = append(o, jkv{"delete", true})
	}
	o = append(o, jkv{"table_name", t.name})
	if t.impossible {
		return append(o, jkv{"message", "Impossible WHERE"})
	}
	o = append(o, jkv{"access_type", t.typ})
	if len(t.possibleKeys) > 0 {
		o = append(o, jkv{"possible_keys", t.possibleKeys})
	}
	if k := keyName(t); k != nil {
		o = append(o, jkv{"key", k})
		var parts []string
		for i := 0; i < t.parts && i < len(t.ix.cols); i++ {
			parts = append(parts, t.def.schema[t.ix.cols[i]].Name)
		}
		if len(parts) > 0 {
			o = append(o, jkv{"used_key_parts", parts})
		}
		if t.keyLen != "" {
			o = append(o, jkv{"key_length", t.keyLen})
		}
	}
	if len(t.ref) > 0 {
		o = append(o, jkv{"ref", t.ref})
	}
	o = append(o,
		jkv{"rows_examined_per_scan", max(t.rows, 1)},
		jkv{"rows_produced_per_join", max(int64(float64(t.rows)*t.filtered/100), 1)},
		jkv{"filtered", fmt.Sprintf("%.2f", roundPercent(t.filtered))})
	if t.covering {
		o = append(o, jkv{"using_index", true})
	}
	if t.hashJoin {
		o = append(o, jkv{"using_join_buffer", "hash join"})
	}
	o = append(o, jkv{"cost_info", jobj{{"read_cost", fmt.Sprintf("%.2f", t.cost)}, {"eval_cost", fmt.Sprintf("%.2f", float64(t.rows)*0.1)}}})
	if len(t.cols) > 0 {
		o = append(o, jkv{"used_columns", t.cols})
	}
	if t.derived != nil {
		o = append(o, jkv{"materialized_from_subquery", jobj{
			{"using_temporary_table", true}, {"dependent", false}, {"cacheable", true},
			{"query_block", x.queryBlock(t.derived)},
		}})
	}
	if len(t.cond) > 0 {
		o = append(o, jkv{"attached_condition", strings.Join(t.cond, " and ")})
	}
	if t.strata != "" {
		o = append(o, jkv{"strata_access", t.strata})
	}
	return o
}

// EXPLAIN ANALYZE
//
// The statement runs to its end, its rows dropped, with each operator's
// row iterator built by a builder that measures it: the times it is built
// (loops), the rows it returns, the time to its first row and to its last,
// its children's included, as MySQL reports them (averaged per loop, in
// milliseconds). GMS builds a plan's iterators node by node through its
// builder's override, children included; the override measures a node by
// building it through the same builder once more, which the override then
// lets GMS build. Subqueries inside expressions are built by GMS's own
// builder and are not measured. As vitess parses it, EXPLAIN ANALYZE takes
// a SELECT only.

// opStats are one operator's measures, summed over its loops.
type opStats struct {
	loops, rows int64
	first, last time.Duration
}

type measuringBuilder struct {
	inner sql.NodeExecBuilder
	stats map[sql.Node]*opStats
	// self: the next call is the builder building the node this
	// override is measuring.
	self bool
}

// Build implements sql.NodeExecBuilder, as rowexec's override.
func (m *measuringBuilder) Build(ctx *sql.Context, n sql.Node, r sql.Row) (sql.RowIter, error) {
	if m.self || !comparableNode(n) {
		m.self = false
		return nil, nil
	}
	if q, ok := n.(*quotaNode); ok {
		// The memory quota's wrapper (memquota.go) builds its child with
		// the builder it was given: here, this one, so that the child is
		// measured. The wrapper itself is no operator of the tree.
		qq := *q
		qq.exec = m.inner
		return qq.RowIter(ctx, r)
	}
	st := m.stats[n]
	if st == nil {
		st = &opStats{}
		m.stats[n] = st
	}
	start := time.Now()
	m.self = true
	iter, err := m.inner.Build(ctx, n, r)
	m.self = false
	if err != nil {
		return nil, err
	}
	st.loops++
	return &measuredIter{RowIter: iter, st: st, spent: time.Since(start)}, nil
}

// measuredIter counts a row iterator's rows and the time spent in it.
type measuredIter struct {
	sql.RowIter
	st    *opStats
	spent time.Duration // in this loop so far: building and Next
	rows  int64
	done  bool
}

func (it *measuredIter) Next(ctx *sql.Context) (sql.Row, error) {
	start := time.Now()
	row, err := it.RowIter.Next(ctx)
	it.spent += time.Since(start)
	if err == nil {
		it.rows++
		it.st.rows++
		if it.rows == 1 {
			it.st.first += it.spent
		}
		return row, nil
	}
	it.finish()
	return row, err
}

func (it *measuredIter) finish() {
	if it.done {
		return
	}
	it.done = true
	if it.rows == 0 {
		it.st.first += it.spent
	}
	it.st.last += it.spent
}

func (it *measuredIter) Close(ctx *sql.Context) error {
	it.finish()
	return it.RowIter.Close(ctx)
}

// runMeasured runs the plan n to its end and returns its operators'
// measures.
func runMeasured(ctx *sql.Context, n sql.Node, r sql.Row) (map[sql.Node]*opStats, error) {
	m := &measuringBuilder{stats: map[sql.Node]*opStats{}}
	m.inner = rowexec.NewOverrideBuilder(m)
	iter, err := m.inner.Build(ctx, n, r)
	if err != nil {
		return nil, err
	}
	for {
		_, err := iter.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			_ = iter.Close(ctx)
			return nil, err
		}
	}
	if err := iter.Close(ctx); err != nil {
		return nil, err
	}
	return m.stats, nil
}
