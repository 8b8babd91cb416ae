package sqlstore

import (
	"sync"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
)

// catalogCache keeps the catalog entries statements read over and over (a
// database's record, a table's, the view lookup that misses) so that a
// statement does not pay engine reads and block-cache pressure for them.
//
// Entries hold what the committed catalog said at one catalog version: the
// engine sequence number of the last commit that changed the catalog (or of
// Open). A transaction uses the cache only when its snapshot sees that
// version and it has not written the catalog itself; a DDL commit bumps the
// version and empties the cache, so a stale entry is never served. Only the
// kinds that change solely through transactions are cached (not the store's
// metadata, counters or users, which are written outside transactions).
type catalogCache struct {
	version atomic.Uint64
	mu      sync.RWMutex
	entries map[string]catalogEntry
	// databases is every database, sorted by name (Provider.AllDatabases,
	// which GMS calls for every table of every plan); valid when
	// haveDatabases is set.
	databases     []sql.Database
	haveDatabases bool
	// triggers holds each database's decoded trigger definitions in
	// creation order, by the catalog key prefix of its triggers. GMS asks
	// for them at every INSERT, UPDATE and DELETE it plans, and reading
	// them is a catalog scan and a decode per trigger.
	triggers map[string][]sql.TriggerDefinition
}

type catalogEntry struct {
	value []byte // nil when absent
	found bool
}

const catalogCacheMax = 16384

// cacheable reports whether key's kind is cached.
func cacheableCatalogKey(key []byte) bool {
	if len(key) < 2 || key[0] != prefixCatalog {
		return false
	}
	switch key[1] {
	case kindDatabase, kindTable, kindView, kindTrigger, kindProcedure, kindEvent:
		return true
	}
	return false
}

// lookup returns the cached entry of key valid for a reader whose snapshot
// is at seq.
func (c *catalogCache) lookup(key []byte, seq uint64) (catalogEntry, bool) {
	if seq < c.version.Load() {
		return catalogEntry{}, false
	}
	c.mu.RLock()
	e, ok := c.entries[string(key)]
	c.mu.RUnlock()
	return e, ok
}

// add caches what a reader at seq read for key while the catalog was at
// version v (read before the engine read).
func (c *catalogCache) add(key []byte, e catalogEntry, seq, v uint64) {
	if seq < v {
		return
	}
	c.mu.Lock()
	if c.version.Load() == v {
		if c.entries == nil || len(c.entries) >= catalogCacheMax {
			c.entries = make(map[string]catalogEntry)
		}
		c.entries[string(key)] = e
	}
	c.mu.Unlock()
}

// allDatabases returns the cached list of databases valid for a reader
// whose snapshot is at seq. The caller must not modify it.
func (c *catalogCache) allDatabases(seq uint64) ([]sql.Database, bool) {
	if seq < c.version.Load() {
		return nil, false
	}
	c.mu.RLock()
	dbs, ok := c.databases, c.haveDatabases
	c.mu.RUnlock()
	return dbs, ok
}

// addAllDatabases caches the list of databases a reader at seq read while
// the catalog was at version v (read before the engine read).
func (c *catalogCache) addAllDatabases(dbs []sql.Database, seq, v uint64) {
	if seq < v {
		return
	}
	c.mu.Lock()
	if c.version.Load() == v {
		c.databases, c.haveDatabases = dbs, true
	}
	c.mu.Unlock()
}

// triggersOf returns the cached trigger definitions under the catalog key
// prefix prefix, valid for a reader whose snapshot is at seq. The caller
// must not modify them.
func (c *catalogCache) triggersOf(prefix []byte, seq uint64) ([]sql.TriggerDefinition, bool) {
	if seq < c.version.Load() {
		return nil, false
	}
	c.mu.RLock()
	defs, ok := c.triggers[string(prefix)]
	c.mu.RUnlock()
	return defs, ok
}

// addTriggers caches the trigger definitions under prefix that a reader at
// seq read while the catalog was at version v (read before the engine
// read).
func (c *catalogCache) addTriggers(prefix []byte, defs []sql.TriggerDefinition, seq, v uint64) {
	if seq < v {
		return
	}
	c.mu.Lock()
	if c.version.Load() == v {
		if c.triggers == nil || len(c.triggers) >= catalogCacheMax {
			c.triggers = make(map[string][]sql.TriggerDefinition)
		}
		c.triggers[string(prefix)] = defs
	}
	c.mu.Unlock()
}

// invalidate records that the catalog changed at engine sequence seq.
func (c *catalogCache) invalidate(seq uint64) {
	c.mu.Lock()
	c.version.Store(seq)
	c.entries = nil
	c.databases, c.haveDatabases = nil, false
	c.triggers = nil
	c.mu.Unlock()
}
