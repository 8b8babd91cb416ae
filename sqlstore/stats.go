package sqlstore

import (
	"fmt"
	"sync"

	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/sql"
)

var _ sql.StatsProvider = (*StatsProvider)(nil)

// rowCounters keeps, per table, the committed row count and an estimate of
// its bytes, so that RowCount can be exact without a scan.
//
// A count is exact for a transaction when no commit changed it after the
// transaction's snapshot: each counter remembers lastSeq, an upper bound of
// the sequence number of the last commit that changed it, and pending, the
// number of commits in flight that may change it. A commit raises pending
// before it applies its batch and, after, adds its deltas, sets lastSeq to
// the engine's last sequence number (which is at least its own) and lowers
// pending. A reader whose snapshot is at seq sees an exact count when
// pending == 0 and lastSeq <= seq; otherwise the count is an estimate and
// COUNT(*) scans. Counts are kept in memory only: after Open a table's count
// is unknown until a scan establishes it (Table.count). The planner does not
// wait for that scan: its first lookup on a table takes an approximate
// count from the engine's table properties (Table.approximateCount), which
// commits then adjust like an exact one.
type rowCounters struct {
	mu sync.Mutex
	m  map[uint64]*rowCounter
}

type rowCounter struct {
	known   bool // rows and bytes are exact as of lastSeq
	approx  bool // rows and bytes are an estimate (not known)
	rows    int64
	bytes   int64
	lastSeq uint64
	pending int
}

func (c *rowCounters) getLocked(id uint64) *rowCounter {
	if c.m == nil {
		c.m = make(map[uint64]*rowCounter)
	}
	rc := c.m[id]
	if rc == nil {
		rc = &rowCounter{}
		c.m[id] = rc
	}
	return rc
}

// newTable records that a table starts out empty (it was just created, so
// nothing older than the creating transaction can see it).
func (c *rowCounters) newTable(id uint64) {
	c.mu.Lock()
	rc := c.getLocked(id)
	if rc.pending == 0 && !rc.known {
		rc.known = true
	}
	c.mu.Unlock()
}

func (c *rowCounters) beginCommit(tables []uint64) {
	if len(tables) == 0 {
		return
	}
	c.mu.Lock()
	for _, id := range tables {
		c.getLocked(id).pending++
	}
	c.mu.Unlock()
}

func (c *rowCounters) endCommit(tables []uint64, deltas []countDelta, committed bool, lastSeq func() uint64) {
	if len(tables) == 0 {
		return
	}
	var seq uint64
	if committed {
		seq = lastSeq()
	}
	c.mu.Lock()
	for _, id := range tables {
		rc := c.getLocked(id)
		rc.pending--
		if committed {
			rc.lastSeq = seq
		}
	}
	if committed {
		for _, d := range deltas {
			rc := c.getLocked(d.table)
			rc.rows += d.rows
			rc.bytes += d.bytes
		}
	}
	c.mu.Unlock()
}

func (c *rowCounters) drop(id uint64) {
	c.mu.Lock()
	delete(c.m, id)
	c.mu.Unlock()
}

// approximate sets a table's count to an estimate, unless it has a value.
// A commit to the table in flight meanwhile may be counted twice (in the
// estimate and in its delta) or not at all, which an estimate can take;
// refusing the estimate instead would send every lookup of a busy table
// back to the engine for a new one.
func (c *rowCounters) approximate(id uint64, rows, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rc := c.getLocked(id); !rc.valued() {
		rc.approx, rc.rows, rc.bytes = true, rows, bytes
	}
}

// hasEstimate reports whether a table's count is established or
// approximated.
func (c *rowCounters) hasEstimate(id uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	rc := c.m[id]
	return rc != nil && rc.valued()
}

// valued reports whether rc holds a count, exact or approximate.
func (rc *rowCounter) valued() bool { return rc.known || rc.approx }

// isKnown reports whether a table's count has been established.
func (c *rowCounters) isKnown(id uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.getLocked(id).known
}

// committed returns the committed count of a table as a snapshot at seq
// sees it; exact is false when it cannot tell.
func (c *rowCounters) committed(id uint64, seq uint64) (rows, bytes int64, exact bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rc := c.getLocked(id)
	exact = rc.known && rc.pending == 0 && rc.lastSeq <= seq
	return rc.rows, rc.bytes, exact
}

// establish sets a table's committed count from a scan of a snapshot at
// seq, unless a commit changed the table after that snapshot.
func (c *rowCounters) establish(id uint64, seq uint64, rows, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rc := c.getLocked(id)
	if rc.known || rc.pending != 0 || rc.lastSeq > seq {
		return
	}
	rc.known, rc.approx, rc.rows, rc.bytes = true, false, rows, bytes
}

// StatsProvider is the engine's statistics provider: histograms come from
// ANALYZE TABLE (kept in memory, with GMS's own estimator), row counts and
// sizes from the tables' counters when ANALYZE has not run. It is safe for
// concurrent use.
type StatsProvider struct {
	mu   sync.Mutex
	prov *memory.StatsProv
}

// NewStatsProvider returns a statistics provider for tables of this package.
func NewStatsProvider() *StatsProvider {
	return &StatsProvider{prov: memory.NewStatsProv()}
}

// GetTableStats implements sql.StatsProvider.
func (p *StatsProvider) GetTableStats(ctx *sql.Context, db string, table sql.Table) ([]sql.Statistic, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.prov.GetTableStats(ctx, db, table)
}

// AnalyzeTable implements sql.StatsProvider. GMS's estimator divides by
// the row count (it panics on an empty table, GMS v0.20.0); an empty table
// gets no statistics instead.
func (p *StatsProvider) AnalyzeTable(ctx *sql.Context, table sql.Table, db string) (err error) {
	if t := underlyingTable(table); t != nil {
		// The distinct counts of every index, kept for SHOW INDEX
		// (indexstats.go).
		rows, _, err := t.RowCount(ctx)
		if err != nil {
			return err
		}
		if err := t.store.analyzeIndexes(ctx, t.def, rows); err != nil {
			return err
		}
	}
	if st, ok := table.(sql.StatisticsTable); ok {
		if n, _, cerr := st.RowCount(ctx); cerr == nil && n == 0 {
			return nil
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("sqlstore: analyzing %s.%s: %v", db, table.Name(), r)
		}
	}()
	return p.prov.AnalyzeTable(ctx, table, db)
}

// underlyingTable returns the store's table under table's wrappers.
func underlyingTable(table sql.Table) *Table {
	for {
		switch x := table.(type) {
		case *Table:
			return x
		case sql.TableWrapper:
			table = x.Underlying()
		default:
			return nil
		}
	}
}

// SetStats implements sql.StatsProvider.
func (p *StatsProvider) SetStats(ctx *sql.Context, stats sql.Statistic) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.prov.SetStats(ctx, stats)
}

// GetStats implements sql.StatsProvider.
func (p *StatsProvider) GetStats(ctx *sql.Context, qual sql.StatQualifier, cols []string) (sql.Statistic, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.prov.GetStats(ctx, qual, cols)
}

// DropStats implements sql.StatsProvider.
func (p *StatsProvider) DropStats(ctx *sql.Context, qual sql.StatQualifier, cols []string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.prov.DropStats(ctx, qual, cols)
}

// DropDbStats implements sql.StatsProvider.
func (p *StatsProvider) DropDbStats(ctx *sql.Context, db string, flush bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.prov.DropDbStats(ctx, db, flush)
}

// RowCount implements sql.StatsProvider: ANALYZE's count if there is one,
// else the table's own (StatisticsTable).
func (p *StatsProvider) RowCount(ctx *sql.Context, db string, table sql.Table) (uint64, error) {
	p.mu.Lock()
	n, err := p.prov.RowCount(ctx, db, table)
	p.mu.Unlock()
	if err == nil && n > 0 {
		return n, nil
	}
	if st, ok := table.(sql.StatisticsTable); ok {
		n, _, err := st.RowCount(ctx)
		return n, err
	}
	return 0, nil
}

// DataLength implements sql.StatsProvider.
func (p *StatsProvider) DataLength(ctx *sql.Context, db string, table sql.Table) (uint64, error) {
	p.mu.Lock()
	n, err := p.prov.DataLength(ctx, db, table)
	p.mu.Unlock()
	if err == nil && n > 0 {
		return n, nil
	}
	if st, ok := table.(sql.StatisticsTable); ok {
		return st.DataLength(ctx)
	}
	return 0, nil
}
