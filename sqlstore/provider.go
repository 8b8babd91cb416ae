package sqlstore

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/strata-db/strata/mysqlcompat"
	"github.com/strata-db/strata/sqlstore/codec"
	"github.com/strata-db/strata/storage"
)

var (
	_ sql.DatabaseProvider                = (*Provider)(nil)
	_ sql.MutableDatabaseProvider         = (*Provider)(nil)
	_ sql.CollatedDatabaseProvider        = (*Provider)(nil)
	_ sql.ExternalStoredProcedureProvider = (*Provider)(nil)
	_ sql.FunctionProvider                = (*Provider)(nil)
)

// Provider is the GMS database provider of a Store. Databases are catalog
// records read through the calling session's transaction, so a database a
// transaction creates is visible to it at once and to others after commit.
// It is safe for concurrent use.
type Provider struct {
	store *Store
	// procs holds stored procedures written in Go (RegisterProcedures),
	// which are not stored.
	procs sql.ExternalStoredProcedureRegistry
}

// Function implements sql.FunctionProvider: the functions package
// mysqlcompat defines in place of GMS's, for this provider's engines only.
func (p *Provider) Function(_ *sql.Context, name string) (sql.Function, bool) {
	return mysqlcompat.Function(name)
}

// RegisterProcedures adds stored procedures implemented in Go, callable
// with CALL from every database. Register them before the first query.
func (p *Provider) RegisterProcedures(procs ...sql.ExternalStoredProcedureDetails) {
	for _, proc := range procs {
		p.procs.Register(proc)
	}
}

// ExternalStoredProcedure implements sql.ExternalStoredProcedureProvider.
func (p *Provider) ExternalStoredProcedure(_ *sql.Context, name string, numOfParams int) (*sql.ExternalStoredProcedureDetails, error) {
	return p.procs.LookupByNameAndParamCount(name, numOfParams)
}

// ExternalStoredProcedures implements sql.ExternalStoredProcedureProvider.
func (p *Provider) ExternalStoredProcedures(_ *sql.Context, name string) ([]sql.ExternalStoredProcedureDetails, error) {
	return p.procs.LookupByName(name)
}

// readDatabase returns a database's record as t sees it.
func readDatabase(t *txn, name string) (*databaseRecord, bool, error) {
	v, ok, err := t.get(catalogKey(kindDatabase, name))
	if err != nil || !ok {
		return nil, false, err
	}
	return decodeDatabase(v, name)
}

// lookupDatabase returns a database's record as ctx's transaction sees it,
// or, for a context without one, as the last commit left it. The latter
// answers from the catalog cache when it can: go-mysql-server's
// authorization check looks up the database "mysql" before a statement's
// transaction begins, at every statement, and a transaction made only for
// that lookup (a snapshot and a batch) cost more than the lookup.
func (p *Provider) lookupDatabase(ctx *sql.Context, name string) (*databaseRecord, bool, error) {
	if t := txnOf(ctx); (t == nil || t.store != p.store || t.isDone()) && !p.store.closed.Load() {
		s := p.store
		if e, ok := s.catalog.lookup(catalogKey(kindDatabase, name), s.engine.LastVersion()); ok {
			if !e.found {
				return nil, false, nil
			}
			return decodeDatabase(e.value, name)
		}
	}
	t, release := p.store.view(ctx)
	defer release()
	return readDatabase(t, name)
}

// decodeDatabase decodes the stored record v of database name.
func decodeDatabase(v []byte, name string) (*databaseRecord, bool, error) {
	if rec, ok := decodedDatabases.Load(string(v)); ok {
		return rec.(*databaseRecord), true, nil
	}
	var rec databaseRecord
	if err := decodeRecord(v, &rec, "database "+name); err != nil {
		return nil, false, err
	}
	if decodedCount.Add(1) < 4096 {
		decodedDatabases.Store(string(v), &rec)
	}
	return &rec, true, nil
}

// decodedDatabases caches decoded database records by their encoded bytes:
// GMS resolves the current database (and "mysql") at every statement, and a
// record is immutable once encoded. The returned records must not be
// modified.
var (
	decodedDatabases sync.Map
	decodedCount     atomic.Int64
)

// errDatabaseNotFound returns GMS's "database not found" error for name,
// built once per name: building it captures a stack trace, and GMS looks
// up databases that do not exist (such as "mysql") at every statement.
func errDatabaseNotFound(name string) error {
	key := strings.ToLower(name)
	if e, ok := notFoundErrs.Load(key); ok {
		return e.(error)
	}
	e := sql.ErrDatabaseNotFound.New(name)
	if notFoundCount.Add(1) < 1024 {
		notFoundErrs.Store(key, e)
	}
	return e
}

var (
	notFoundErrs  sync.Map
	notFoundCount atomic.Int64
)

// Database implements sql.DatabaseProvider.
func (p *Provider) Database(ctx *sql.Context, name string) (sql.Database, error) {
	if strings.EqualFold(name, perfSchemaName) {
		return perfSchema{store: p.store}, nil
	}
	rec, ok, err := p.lookupDatabase(ctx, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errDatabaseNotFound(name)
	}
	return &Database{store: p.store, name: rec.Name}, nil
}

// HasDatabase implements sql.DatabaseProvider.
func (p *Provider) HasDatabase(ctx *sql.Context, name string) bool {
	if strings.EqualFold(name, perfSchemaName) {
		return true
	}
	_, ok, err := p.lookupDatabase(ctx, name)
	return err == nil && ok
}

// AllDatabases implements sql.DatabaseProvider, sorted by name.
//
// GMS asks for the list for every table of every plan (its assignRoutines
// rule), so the list is kept in the catalog cache while the catalog does
// not change; the caller gets a copy.
func (p *Provider) AllDatabases(ctx *sql.Context) []sql.Database {
	t, release := p.store.view(ctx)
	defer release()
	cache := &p.store.catalog
	version, cacheable := t.catalogVersion()
	if cacheable {
		if dbs, ok := cache.allDatabases(t.tx.StartVersion()); ok {
			return slices.Clone(dbs)
		}
	}
	var out []sql.Database
	err := scanCatalog(t, catalogKey(kindDatabase), func(_, v []byte) error {
		var rec databaseRecord
		if err := decodeRecord(v, &rec, "database"); err != nil {
			return err
		}
		out = append(out, &Database{store: p.store, name: rec.Name})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i].Name()) < strings.ToLower(out[j].Name()) })
	if err == nil && cacheable {
		cache.addAllDatabases(slices.Clone(out), t.tx.StartVersion(), version)
	}
	return out
}

// CreateDatabase implements sql.MutableDatabaseProvider.
func (p *Provider) CreateDatabase(ctx *sql.Context, name string) error {
	return p.CreateCollatedDatabase(ctx, name, sql.Collation_Unspecified)
}

// CreateCollatedDatabase implements sql.CollatedDatabaseProvider.
func (p *Provider) CreateCollatedDatabase(ctx *sql.Context, name string, collation sql.CollationID) error {
	if err := checkDatabaseName(name); err != nil {
		return err
	}
	if strings.EqualFold(name, perfSchemaName) {
		return sql.ErrDatabaseExists.New(name)
	}
	t, err := p.store.writer(ctx)
	if err != nil {
		return err
	}
	if _, ok, err := readDatabase(t, name); err != nil {
		return err
	} else if ok {
		return sql.ErrDatabaseExists.New(name)
	}
	if collation == sql.Collation_Unspecified {
		collation = sql.Collation_Default
	}
	b, err := encodeRecord(&databaseRecord{Format: recordFormat, Name: name, Collation: collationName(collation)})
	if err != nil {
		return err
	}
	return t.setCatalog(catalogKey(kindDatabase, name), b)
}

// checkDatabaseName applies MySQL's rules for a new database's name: not
// empty, at most 64 characters, not ending in a space. The parser accepts
// an empty quoted name and others MySQL refuses; such a database could be
// created but hardly told apart in SHOW DATABASES or used from a client.
func checkDatabaseName(name string) error {
	if name == "" || utf8.RuneCountInString(name) > 64 || strings.HasSuffix(name, " ") {
		return sql.ErrInvalidDatabaseName.New(fmt.Sprintf("'%s'", name))
	}
	return nil
}

// DropDatabase implements sql.MutableDatabaseProvider: the database's
// record, every catalog entry under it and every table's data go, in the
// session's transaction.
func (p *Provider) DropDatabase(ctx *sql.Context, name string) error {
	t, err := p.store.writer(ctx)
	if err != nil {
		return err
	}
	if _, ok, err := readDatabase(t, name); err != nil {
		return err
	} else if !ok {
		return sql.ErrDatabaseNotFound.New(name)
	}
	if err := (&Database{store: p.store, name: name}).lockAll(ctx, t); err != nil {
		return err
	}
	m := t.mark()
	err = p.dropDatabase(t, name)
	if err != nil {
		_ = t.rollbackTo(m)
	}
	return err
}

func (p *Provider) dropDatabase(t *txn, name string) error {
	db := &Database{store: p.store, name: name}
	names, err := db.tableNames(t)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := db.dropTable(t, n); err != nil {
			return err
		}
	}
	for _, kind := range []byte{kindView, kindTrigger, kindProcedure, kindEvent} {
		var keys [][]byte
		if err := scanCatalog(t, catalogKey(kind, name), func(k, _ []byte) error {
			keys = append(keys, append([]byte(nil), k...))
			return nil
		}); err != nil {
			return err
		}
		for _, k := range keys {
			if err := t.delCatalog(k); err != nil {
				return err
			}
		}
	}
	if err := t.delCatalog(catalogKey(kindDatabase, name)); err != nil {
		return err
	}
	// A table created in this database by a concurrent transaction would
	// outlive it: refuse the commit if one appeared.
	prefix := catalogKey(kindTable, name)
	t.addCheck(func(r storage.Reader) error {
		it, err := r.NewIter(&storage.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
		if err != nil {
			return err
		}
		defer it.Close()
		if it.First() {
			return fmt.Errorf("%w: a table was created in database %s while it was dropped", ErrConflict, name)
		}
		return it.Error()
	})
	return nil
}

// scanCatalog calls fn for every catalog entry under prefix, in key order.
// The slices are valid only during the call.
func scanCatalog(t *txn, prefix []byte, fn func(k, v []byte) error) error {
	it, err := t.newIter(prefix, prefixEnd(prefix))
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			return err
		}
	}
	return it.Error()
}

// decodeNamePart decodes the first name part of a catalog key suffix.
func decodeNamePart(b []byte) (rest []byte, name string, err error) {
	rest, v, err := codec.DecodeKey(b, types.LongBlob, codec.Asc)
	if err != nil {
		return nil, "", fmt.Errorf("%w: catalog key: %v", ErrCorruptCatalog, err)
	}
	bs, _ := v.([]byte)
	return rest, string(bs), nil
}
