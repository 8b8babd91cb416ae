package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"

	"github.com/strata-db/strata/mysqlcompat"
	"github.com/strata-db/strata/planner"
	"github.com/strata-db/strata/storage"
)

// Options configure a Store. The zero value (or nil) gives the defaults.
// Durability is the engine's: a commit is as durable as the engine's
// transactions are.
type Options struct {
	// Access sets how reads reach the engine: the planner's mode and
	// thresholds (package planner; the zero value is the planned mode with
	// the planner's defaults, and NoFillBytes a sixteenth of
	// DefaultCacheSize). A session may override the mode with
	// SET strata_access = 'planned' | 'naive' | 'default'.
	Access planner.Options
	// MaxTxnBytes bounds the writes one transaction holds (they live in
	// memory until commit): a row write that would take it past the bound
	// fails with MySQL's 1197, and its statement is rolled back. Zero means
	// DefaultMaxTxnBytes; negative, no bound. Statements that change the
	// schema (an index built over a table's rows) are not bounded.
	MaxTxnBytes int64
	// IndexBuildMemory is the memory an index build sorts its entries in
	// before spilling sorted runs to temporary files (indexbuild.go); zero
	// means DefaultIndexBuildMemory.
	IndexBuildMemory int
	// SharedCatalog says that other processes may serve the same engine
	// (the TiKV backend): every transaction then checks the schema
	// version and reloads the catalog another process changed
	// (catalog_version.go), at the cost of one read per transaction.
	SharedCatalog bool
}

// DefaultMaxTxnBytes is the bound on a transaction's writes when the
// options set none: a transaction's writes take about three times their
// size in memory (the batch, its index and the statement log), so 1 GiB
// of them keeps a runaway INSERT ... SELECT well short of exhausting a
// machine that has a few GiB, with an error instead of the process killed.
const DefaultMaxTxnBytes = 1 << 30

// DefaultCacheSize is the block cache an engine opened for a store should
// have unless told otherwise: rows are read at random far more than an engine benchmark's keys, and
// a miss costs a read and a decompression, so a SQL database keeps more
// blocks than the engine's bare default (InnoDB's buffer pool defaults to
// 128 MiB too).
const DefaultCacheSize = 128 << 20

// Store is an open SQL database: the GMS backend over one engine
// directory. It is safe for concurrent use by many sessions.
type Store struct {
	engine storage.Engine
	// sizes and engineStats are engine's optional parts; nil without them.
	sizes       storage.SizeEstimator
	engineStats storage.StatsSource
	opts        Options

	provider *Provider
	locks    lockRegistry // open pessimistic transactions (lockview.go)
	mdl      mdlTable     // metadata locks (mdl.go)
	defs     defCache
	catalog  catalogCache
	counters rowCounters
	autoinc  autoIncs
	tableIDs *allocator
	rowIDs   *allocator
	indexIDs indexIDs // IDs of indexes being built by bulk loads

	// ddlMu orders commits: transactions that changed the catalog commit
	// alone (write lock), the others share it. live, the set of table IDs
	// the committed catalog names, changes only under the write lock.
	ddlMu sync.RWMutex
	live  map[uint64]bool
	// schemaSeen is the schema version the catalog cache and live last
	// followed (catalog_version.go).
	schemaSeen atomic.Uint64

	// turns orders autocommit writes (rerun.go): first runs share it, a
	// run after a conflict holds it alone.
	turns sync.RWMutex

	directWrites atomic.Int64 // DirectWrites (writedirect.go)

	sessionIDs atomic.Uint32
	pids       atomic.Uint64 // process IDs of statements (NewStatementContext)
	closed     atomic.Bool
}

// New opens a store over e, creating its catalog when e holds none. The
// store owns e from then on: Close closes it, also when New fails.
func New(e storage.Engine, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Access.NoFillBytes == 0 {
		// A scan of a sixteenth of the block cache or more reads past it.
		o.Access.NoFillBytes = DefaultCacheSize / 16
	}
	switch {
	case o.MaxTxnBytes == 0:
		o.MaxTxnBytes = DefaultMaxTxnBytes
	case o.MaxTxnBytes < 0:
		o.MaxTxnBytes = math.MaxInt64
	}
	s := &Store{engine: e, opts: o}
	s.sizes, _ = e.(storage.SizeEstimator)
	s.engineStats, _ = e.(storage.StatsSource)
	s.autoinc = autoIncs{engine: e}
	s.provider = &Provider{store: s, procs: sql.NewExternalStoredProcedureRegistry()}
	s.provider.RegisterProcedures(lockWaitsProcedure(s), checkTableProcedure(s), repairTableProcedure(s), rebuildTableProcedure(s))
	if err := s.load(); err != nil {
		_ = e.Close()
		return nil, err
	}
	if err := s.stampKeyFormats(); err != nil {
		_ = e.Close()
		return nil, err
	}
	return s, nil
}

// load checks the store format and reads the set of live tables and the
// ID allocators.
func (s *Store) load() error {
	v, err := s.engine.Latest().Get(metaKey(metaFormat), nil)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		if err := writeNow(s.engine, metaKey(metaFormat), []byte{storeFormat}, true); err != nil {
			return wrapf(err, "sqlstore: writing the format")
		}
	case err != nil:
		return wrapf(err, "sqlstore: reading the format")
	case len(v) != 1 || v[0] != storeFormat:
		return fmt.Errorf("%w: store format %x, want %d", ErrCorruptCatalog, v, storeFormat)
	}
	live, maxID, err := s.readLive(s.engine.Latest())
	if err != nil {
		return err
	}
	s.live = live
	ver, err := readSchemaVersion(s.engine.Latest())
	if err != nil {
		return err
	}
	s.schemaSeen.Store(ver)
	if s.tableIDs, err = newAllocator(s.engine, metaKey(metaTableID), 16, max(maxID+1, 1)); err != nil {
		return err
	}
	if s.rowIDs, err = newAllocator(s.engine, metaKey(metaRowID), 4096, 1); err != nil {
		return err
	}
	return nil
}

// Close persists the counters and closes the engine. Sessions must not be
// used afterwards.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	err := errors.Join(s.autoinc.flush(), s.tableIDs.flush(), s.rowIDs.flush())
	if cerr := s.engine.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err != nil {
		return fmt.Errorf("sqlstore: close: %w", err)
	}
	return nil
}

// writeNow writes key (a nil value: deletes it) in a transaction of its
// own, committed at once (durable: synced whatever the engine's options):
// the store's own records that live outside transactions (counters,
// accounts, the format). Their writers hold a lock per key, so the commit
// finds no conflict.
func writeNow(e storage.Engine, key, value []byte, durable bool) error {
	tx, err := e.Begin()
	if err != nil {
		return err
	}
	if durable {
		tx.SetDurable()
	}
	if value == nil {
		err = tx.Delete(key)
	} else {
		err = tx.Set(key, value)
	}
	if err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Provider returns the database provider to hand to GMS.
func (s *Store) Provider() *Provider { return s.provider }

// NewEngine returns a GMS engine over the store, with this package's
// statistics provider and corrections (Configure). Run queries with
// contexts from NewContext.
func (s *Store) NewEngine() *sqle.Engine {
	e := sqle.New(analyzer.NewDefault(s.provider), &sqle.Config{})
	s.Configure(e)
	return e
}

// Configure installs GMS's corrections (package mysqlcompat) and this
// package's own rules on e, an engine over the store's provider, and on
// nothing else: rules on e's own analyzer, its executor and its parser.
// NewEngine calls it; an engine built another way (GMS's test harness)
// gets the same behaviour from it. Call it once per engine, before its
// first statement.
func (s *Store) Configure(e *sqle.Engine) {
	a := e.Analyzer
	// CALL and PREPARE keep the transaction (nestedtxn.go): an override
	// builder, which goes in before mysqlcompat wraps the exec builder.
	installNestedTxn(a)
	// Full scans show their plans under EXPLAIN (explain.go): with the
	// value rules, which see every statement's plan.
	mysqlcompat.Install(e, explainScansRule, s.cardinalityRule(a))
	// After the joins are planned, in mysqlcompat's rule at the end of the
	// once-after batch: join keys exact (joinkeys.go).
	mysqlcompat.WrapRule(a, func(id analyzer.RuleId) bool { return id == mysqlcompat.AfterJoinsRule }, func(after analyzer.RuleFunc) analyzer.RuleFunc {
		return mysqlcompat.ChainRules(exactJoinKeys, after)
	})
	// At the end of a statement's analysis, before GMS tracks the process
	// (which wraps the plan in nodes of its own): buffering operators under
	// the statement's memory quota (memquota.go), and the commit flags set
	// from what the statement is (implicitcommit.go).
	quota := memQuotaRule(a)
	mysqlcompat.WrapRule(a, func(id analyzer.RuleId) bool { return id == analyzer.TrackProcessId }, func(track analyzer.RuleFunc) analyzer.RuleFunc {
		return mysqlcompat.ChainRules(quota, correctCommitFlagsRule, track)
	})
	a.Catalog.StatsProvider = NewStatsProvider()
	// Locking clauses vitess refuses are hidden from it (lockclause.go),
	// around the parsers mysqlcompat.Install wrapped.
	a.Parser = hidingParser{a.Parser, hideLockClauses}
	e.Parser = hidingParser{e.Parser, hideLockClauses}
	// EXPLAIN in MySQL's formats (explainparse.go, explainout.go): the
	// formats vitess refuses hidden from it, and the answer built over
	// the plan that runs.
	e.Parser = explainParser{e.Parser}
	a.ExecBuilder = explainExec{a.ExecBuilder}
	// CHECK TABLE, which vitess does not parse (checktable.go), and INTO
	// OUTFILE's CHARACTER SET binary, which GMS refuses (outfilecharset.go).
	e.Parser = callParser{hidingParser{e.Parser, hideOutfileBinaryCharset}, checkTableCall}
	// REPAIR TABLE and ALTER TABLE ... FORCE, which rebuild a table whose
	// keys are of an older format (keyformat.go).
	e.Parser = callParser{e.Parser, repairCall}
	// Multi-row INSERTs of literals, their tuples read without the parser
	// (insertvalues.go).
	e.Parser = insertValuesParser{e.Parser}
	// A procedure's write whose plan went stale runs again (rerun.go).
	a.Runner = planRunner{a.Runner}
}

// CloseEngine stops e, an engine over the store, and closes the store. The
// engine's background threads report their own stop as context.Canceled,
// which is no error here.
func (s *Store) CloseEngine(e *sqle.Engine) error {
	err := e.Close()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return errors.Join(err, s.Close())
}

// NewSession returns a session over the store. base carries the client,
// address and connection ID; nil makes a local one.
func (s *Store) NewSession(base *sql.BaseSession) *Session {
	if base == nil {
		base = sql.NewBaseSessionWithClientServer("localhost", sql.Client{Address: "localhost", User: "root"}, s.sessionIDs.Add(1))
		// A local session (embedded: driver, shell; or a server's own
		// work) holds every privilege. information_schema's VIEWS,
		// ROUTINES and TRIGGERS list only what the session's privilege
		// set allows, and without one they are empty. The counter no
		// account store ever reaches makes a server with accounts
		// compute the set from the account, as before.
		base.SetPrivilegeSet(mysql_db.NewPrivilegeSetWithAllPrivileges(), math.MaxUint64)
	}
	return newSession(base, s)
}

// NewContext returns a context with a fresh session over the store, with
// db as the current database when not empty.
func (s *Store) NewContext(ctx context.Context, db string) *sql.Context {
	sctx := sql.NewContext(ctx, sql.WithSession(s.NewSession(nil)))
	if db != "" {
		sctx.SetCurrentDatabase(db)
	}
	return sctx
}
