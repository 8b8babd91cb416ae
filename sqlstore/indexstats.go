package sqlstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/strata-db/strata/sqlstore/codec"
	"github.com/strata-db/strata/storage"
)

// Index cardinality (ANALYZE TABLE, SHOW INDEX)
//
// GMS shows every index's Cardinality as 0, in SHOW INDEX and in
// information_schema.STATISTICS. MySQL shows, for each column of an index,
// an estimate of the number of distinct values of the index's columns up
// to that one, which ANALYZE TABLE refreshes and which tools read to judge
// an index. ANALYZE TABLE here counts them for every index of the table
// from the index's keys (memcomparable, so equal values have equal bytes
// under the column's collation): a key whose first k columns differ from
// the key before it starts a new distinct prefix of length k. Past
// maxAnalyzedKeys keys of an index the counts are scaled to the table's row
// count (a sample of the index's first keys). The counts are kept durably
// per table (metaKey indexStatsKey, JSON), and the cardinality rule puts
// them into both answers; an index ANALYZE has not counted keeps GMS's 0.

// maxAnalyzedKeys bounds the keys ANALYZE TABLE reads of one index.
const maxAnalyzedKeys = 1 << 20

// tableIndexStats is what ANALYZE TABLE keeps of a table.
type tableIndexStats struct {
	Indexes map[string]indexStats `json:"indexes"` // by index name ("PRIMARY" for the row index)
}

// indexStats are the distinct counts of one index's column prefixes.
type indexStats struct {
	ID       uint32  `json:"id"`       // the index's ID when counted; another ID is another index
	Distinct []int64 `json:"distinct"` // Distinct[k]: distinct values of the first k+1 columns
}

// indexStatsKey is the meta key of a table's index statistics.
func indexStatsKey(tableID uint64) []byte {
	return metaKey("index-stats/" + strconv.FormatUint(tableID, 10))
}

// analyzeIndexes counts the distinct prefixes of every index of d at one
// snapshot and saves them; rows is the table's row count, for scaling.
func (s *Store) analyzeIndexes(ctx *sql.Context, d *tableDef, rows uint64) error {
	t := s.beginTxn(true)
	defer t.rollback()
	out := tableIndexStats{Indexes: map[string]indexStats{}}
	for _, ix := range append([]*indexDef{d.primary}, d.secondary...) {
		cols := ix.cols
		if ix.primary {
			cols = d.pkOrds
		}
		distinct, err := countDistinctPrefixes(ctx, t, d, ix, cols, rows)
		if err != nil {
			return wrapf(err, "sqlstore: analyzing index %s of %s", ix.name, d.name)
		}
		out.Indexes[ix.name] = indexStats{ID: ix.id, Distinct: distinct}
	}
	data, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return wrapf(writeNow(s.engine, indexStatsKey(d.id), data, false), "sqlstore: saving index statistics of %s", d.name)
}

// countDistinctPrefixes returns the distinct counts of the first 1..n
// columns (cols, by ordinal) of index ix's keys.
func countDistinctPrefixes(ctx *sql.Context, t *txn, d *tableDef, ix *indexDef, cols []int, rows uint64) ([]int64, error) {
	n := max(len(cols), 1) // a keyless table's row index: its hidden key
	distinct := make([]int64, n)
	prefix := appendIndexPrefix(nil, d.id, ix.id)
	it, err := t.newTunedIter(prefix, prefixEnd(prefix), false, -1, iterTuning{dontFill: true})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var prev []byte
	prevEnds := make([]int, n)
	ends := make([]int, n)
	var keys int64
	for ok := it.First(); ok; ok = it.Next() {
		if keys%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		key := it.Key()[len(prefix):]
		if len(cols) == 0 {
			ends[0] = len(key)
		} else {
			rest := key
			for i, o := range cols {
				if rest, err = codec.SkipKey(rest, d.schema[o].Type, codec.Asc); err != nil {
					return nil, err
				}
				ends[i] = len(key) - len(rest)
			}
		}
		// The first column prefix that differs from the key before, and
		// every longer one, is new.
		i := 0
		if prev != nil {
			for i < n && ends[i] == prevEnds[i] && bytes.Equal(key[:ends[i]], prev[:prevEnds[i]]) {
				i++
			}
		}
		for ; i < n; i++ {
			distinct[i]++
		}
		prev = append(prev[:0], key...)
		copy(prevEnds, ends)
		keys++
		if keys == maxAnalyzedKeys && rows > uint64(keys) {
			scale := float64(rows) / float64(keys)
			for i := range distinct {
				distinct[i] = min(int64(float64(distinct[i])*scale), int64(rows))
			}
			return distinct, nil
		}
	}
	return distinct, it.Error()
}

// indexStatsOf reads a table's saved index statistics; nil when ANALYZE
// TABLE has not run on it.
func (s *Store) indexStatsOf(tableID uint64) (*tableIndexStats, error) {
	v, err := s.engine.Latest().Get(indexStatsKey(tableID), nil)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st tableIndexStats
	if err := json.Unmarshal(v, &st); err != nil {
		return nil, nil // unreadable statistics are no statistics
	}
	return &st, nil
}

// cardinality returns the saved distinct count of the first seq columns of
// index name of d, and whether there is one.
func (st *tableIndexStats) cardinality(d *tableDef, name string, seq int) (int64, bool) {
	if st == nil || seq < 1 {
		return 0, false
	}
	var ix *indexDef
	if strings.EqualFold(name, "PRIMARY") {
		ix = d.primary
	} else {
		ix = d.index(name)
	}
	is, ok := st.Indexes[name]
	if !ok && ix != nil {
		is, ok = st.Indexes[ix.name]
	}
	if !ok || ix == nil || is.ID != ix.id || seq > len(is.Distinct) {
		return 0, false
	}
	return is.Distinct[seq-1], true
}

// cardinalityRule returns the rule, for engines whose analyzer is a, that
// puts the saved cardinalities into SHOW INDEX and into reads of
// information_schema.STATISTICS (see above). The function it applies to
// each node is made once, here, so that the rule allocates nothing for the
// statements it only walks.
func (s *Store) cardinalityRule(a *analyzer.Analyzer) analyzer.RuleFunc {
	visit := func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		switch x := n.(type) {
		case *plan.ShowIndexes:
			return &cardinalities{child: x, exec: a.ExecBuilder, store: s, table: tableOfNode(x.Child),
				tableCol: 0, indexCol: 2, seqCol: 3, cardCol: 6}, transform.NewTree, nil
		case *plan.ResolvedTable:
			return statisticsCardinalities(x, a, s)
		}
		return n, transform.SameTree, nil
	}
	return func(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
		if _, show := n.(*plan.ShowIndexes); !show && ctx.Query() != "" && !containsFold(ctx.Query(), "statistics") {
			// Neither SHOW INDEX nor, by its text, a read of STATISTICS
			// (a view over it keeps GMS's 0): most statements are not
			// walked. A context without the statement's text is walked.
			return n, transform.SameTree, nil
		}
		return transform.Node(n, visit)
	}
}

// statisticsCardinalities wraps a read of information_schema.STATISTICS
// in cardinalities; any other table is left as it is.
func statisticsCardinalities(x *plan.ResolvedTable, a *analyzer.Analyzer, s *Store) (sql.Node, transform.TreeIdentity, error) {
	if !strings.EqualFold(x.Name(), "statistics") || x.Database() == nil || !strings.EqualFold(x.Database().Name(), "information_schema") {
		return x, transform.SameTree, nil
	}
	c := &cardinalities{child: x, exec: a.ExecBuilder, store: s}
	cols := map[string]*int{"TABLE_SCHEMA": &c.schemaCol, "TABLE_NAME": &c.tableCol, "INDEX_NAME": &c.indexCol, "SEQ_IN_INDEX": &c.seqCol, "CARDINALITY": &c.cardCol}
	for _, p := range cols {
		*p = -1
	}
	for i, col := range x.Schema() {
		if p, ok := cols[strings.ToUpper(col.Name)]; ok {
			*p = i
		}
	}
	for _, p := range cols {
		if *p < 0 {
			return x, transform.SameTree, nil
		}
	}
	return c, transform.NewTree, nil
}

// tableOfNode returns the store's table under a resolved table node.
func tableOfNode(n sql.Node) *Table {
	rt, ok := n.(*plan.ResolvedTable)
	if !ok {
		return nil
	}
	return underlyingTable(rt.Table)
}

// cardinalities runs child (SHOW INDEX, or information_schema.STATISTICS)
// with the cardinality column of each row set from the saved statistics.
// For SHOW INDEX the table is known (table); for STATISTICS each row names
// its schema and table (schemaCol >= 0).
type cardinalities struct {
	child                                          sql.Node
	exec                                           sql.NodeExecBuilder
	store                                          *Store
	table                                          *Table
	schemaCol, tableCol, indexCol, seqCol, cardCol int
}

var _ sql.ExecSourceRel = (*cardinalities)(nil)

func (c *cardinalities) Schema() sql.Schema   { return c.child.Schema() }
func (c *cardinalities) Children() []sql.Node { return []sql.Node{c.child} }
func (c *cardinalities) Resolved() bool       { return c.child.Resolved() }
func (c *cardinalities) IsReadOnly() bool     { return true }
func (c *cardinalities) String() string       { return c.child.String() }
func (c *cardinalities) DebugString() string  { return sql.DebugString(c.child) }

// WithChildren implements sql.Node.
func (c *cardinalities) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(c, len(children), 1)
	}
	nc := *c
	nc.child = children[0]
	return &nc, nil
}

// CollationCoercibility implements sql.CollationCoercible.
func (c *cardinalities) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, c.child)
}

// RowIter implements sql.ExecSourceRel.
func (c *cardinalities) RowIter(ctx *sql.Context, row sql.Row) (sql.RowIter, error) {
	iter, err := c.exec.Build(ctx, c.child, row)
	if err != nil {
		return nil, err
	}
	return &cardinalityIter{RowIter: iter, c: c, stats: map[string]*defStats{}}, nil
}

type defStats struct {
	def   *tableDef
	stats *tableIndexStats
}

type cardinalityIter struct {
	sql.RowIter
	c     *cardinalities
	stats map[string]*defStats // by schema and table, for STATISTICS
}

func (it *cardinalityIter) Next(ctx *sql.Context) (sql.Row, error) {
	row, err := it.RowIter.Next(ctx)
	if err != nil {
		return nil, err
	}
	c := it.c
	if len(row) <= max(c.cardCol, c.indexCol, c.seqCol, c.tableCol, c.schemaCol) {
		return row, nil
	}
	ds := it.lookup(ctx, row)
	if ds == nil {
		return row, nil
	}
	name, _ := row[c.indexCol].(string)
	seq, ok := asInt(row[c.seqCol])
	if !ok {
		return row, nil
	}
	n, ok := ds.stats.cardinality(ds.def, name, seq)
	if !ok {
		return row, nil
	}
	out := row.Copy()
	out[c.cardCol] = n
	return out, nil
}

// lookup returns the definition and statistics of the row's table.
func (it *cardinalityIter) lookup(ctx *sql.Context, row sql.Row) *defStats {
	c := it.c
	if c.table != nil {
		key := "\x00"
		if ds, ok := it.stats[key]; ok {
			return ds
		}
		st, err := c.store.indexStatsOf(c.table.def.id)
		var ds *defStats
		if err == nil {
			ds = &defStats{def: c.table.def, stats: st}
		}
		it.stats[key] = ds
		return ds
	}
	db, _ := row[c.schemaCol].(string)
	table, _ := row[c.tableCol].(string)
	key := db + "\x00" + table
	if ds, ok := it.stats[key]; ok {
		return ds
	}
	var ds *defStats
	t := c.store.beginTxn(true)
	if v, ok, err := t.get(catalogKey(kindTable, db, table)); err == nil && ok {
		if def, err := c.store.defs.get(db, v); err == nil {
			if st, err := c.store.indexStatsOf(def.id); err == nil {
				ds = &defStats{def: def, stats: st}
			}
		}
	}
	t.rollback()
	it.stats[key] = ds
	return ds
}

// asInt returns an integer column value as an int.
func asInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int32:
		return int(x), true
	case int64:
		return int(x), true
	case uint32:
		return int(x), true
	case uint64:
		return int(x), true
	}
	return 0, false
}
