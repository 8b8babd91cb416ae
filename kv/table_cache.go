package kv

import (
	"fmt"
	"sync"

	"github.com/strata-db/strata/kv/internal/rangedel"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/table"
	"github.com/strata-db/strata/kv/vfs"
)

// tableCache keeps open table readers (descriptor, footer, index, filter and
// range tombstones), at most maxOpen of them unless more are in use at
// once. Every lookup and iterator of a table shares its one reader: per-scan
// state such as readahead lives in the iterator, never in a new file handle.
//
// A reader in use (refs > 0) is never closed; an unused one goes to the
// front of an LRU list and is closed when the cache needs room or the file
// is deleted.
type tableCache struct {
	d       *DB
	maxOpen int

	mu      sync.Mutex
	entries map[uint64]*tableEntry
	lru     tableEntry // sentinel; unused open readers, most recent at lru.next
	open    int        // readers open, in use or not
}

type tableEntry struct {
	fileNum uint64
	reader  *table.Reader
	tombs   *rangedel.Set // nil when the table has no range tombstones
	err     error
	loaded  chan struct{} // closed when reader or err is set
	refs    int           // guarded by tableCache.mu
	evicted bool          // guarded by tableCache.mu: close when refs reach 0
	// lru links, when refs == 0. Guarded by tableCache.mu.
	prev, next *tableEntry
}

func newTableCache(d *DB, maxOpen int) *tableCache {
	c := &tableCache{d: d, maxOpen: maxOpen, entries: map[uint64]*tableEntry{}}
	c.lru.prev, c.lru.next = &c.lru, &c.lru
	return c
}

func (c *tableCache) lruRemove(e *tableEntry) {
	if e.prev != nil {
		e.prev.next = e.next
		e.next.prev = e.prev
		e.prev, e.next = nil, nil
	}
}

// get returns the open reader of a table, referenced; release it with
// release.
func (c *tableCache) get(fileNum uint64) (*tableEntry, error) {
	c.mu.Lock()
	e := c.entries[fileNum]
	if e != nil {
		if e.refs == 0 {
			c.lruRemove(e)
		}
		e.refs++
		c.mu.Unlock()
		<-e.loaded
		if e.err != nil {
			c.release(e)
			return nil, e.err
		}
		return e, nil
	}
	e = &tableEntry{fileNum: fileNum, loaded: make(chan struct{}), refs: 1}
	c.entries[fileNum] = e
	c.open++
	c.mu.Unlock()

	e.reader, e.tombs, e.err = c.load(fileNum)
	close(e.loaded)
	if e.err != nil {
		c.mu.Lock()
		// Do not cache the failure: the next caller tries again.
		if c.entries[fileNum] == e {
			delete(c.entries, fileNum)
		}
		e.evicted = true
		c.open--
		e.refs--
		c.mu.Unlock()
		return nil, e.err
	}
	return e, nil
}

func (c *tableCache) load(fileNum uint64) (*table.Reader, *rangedel.Set, error) {
	d := c.d
	name := makeFilename(d.dirname, fileTypeTable, fileNum)
	opts := []vfs.OpenOption{vfs.RandomAccess}
	if d.opts.UseDirectReads {
		opts = append(opts, vfs.DirectIO)
	} else if !d.opts.DisableMmapReads {
		opts = append(opts, vfs.MemoryMap)
	}
	f, err := d.fs.Open(name, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("kv: open table %s: %w", name, err)
	}
	d.stats.Add(stats.FileOpens, 1)
	r, err := table.NewReader(f, name, table.ReaderOptions{
		Cache: d.cache, CacheNS: d.cacheNS, FileNum: fileNum, Stats: &d.stats, Pool: d.ioPool,
	})
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("kv: open table %s: %w", name, err)
	}
	var tombs *rangedel.Set
	if ts := r.RangeDeletes(); len(ts) > 0 {
		rts := make([]rangedel.Tombstone, len(ts))
		for i, t := range ts {
			rts[i] = rangedel.Tombstone{Start: t.Start, End: t.End, Seq: t.Seq}
		}
		tombs = rangedel.NewSet(rts)
	}
	return r, tombs, nil
}

// release drops a reference taken by get.
func (c *tableCache) release(e *tableEntry) {
	var toClose []*tableEntry
	c.mu.Lock()
	e.refs--
	if e.refs == 0 {
		if e.evicted {
			if e.reader != nil {
				toClose = append(toClose, e)
			}
		} else {
			// Most recently used at the front.
			e.next, e.prev = c.lru.next, &c.lru
			e.next.prev = e
			c.lru.next = e
		}
	}
	toClose = c.shrinkLocked(toClose)
	c.mu.Unlock()
	for _, e := range toClose {
		e.reader.Close()
	}
}

// shrinkLocked evicts unused readers while more than maxOpen are open.
// REQUIRES: c.mu held.
func (c *tableCache) shrinkLocked(toClose []*tableEntry) []*tableEntry {
	for c.open > c.maxOpen && c.lru.prev != &c.lru {
		e := c.lru.prev
		c.lruRemove(e)
		delete(c.entries, e.fileNum)
		e.evicted = true
		c.open--
		toClose = append(toClose, e)
	}
	return toClose
}

// evict closes the reader of a deleted table once nobody uses it.
func (c *tableCache) evict(fileNum uint64) {
	c.mu.Lock()
	e := c.entries[fileNum]
	if e == nil {
		c.mu.Unlock()
		return
	}
	delete(c.entries, fileNum)
	e.evicted = true
	c.open--
	closeNow := e.refs == 0
	if closeNow {
		c.lruRemove(e)
	}
	c.mu.Unlock()
	if closeNow && e.reader != nil {
		e.reader.Close()
	}
}

// close closes every reader. REQUIRES: no reader in use.
func (c *tableCache) close() error {
	c.mu.Lock()
	entries := c.entries
	c.entries = map[uint64]*tableEntry{}
	c.lru.prev, c.lru.next = &c.lru, &c.lru
	c.open = 0
	c.mu.Unlock()
	var first error
	for _, e := range entries {
		<-e.loaded
		if e.reader != nil {
			if err := e.reader.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}
