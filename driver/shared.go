package driver

import (
	"fmt"
	"os"
	"sync"

	"github.com/strata-db/strata/kv"
	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/kvstore"
)

// shared is one open store and its engine, shared by every connector of
// this process that names the same folder. It is closed when the last
// connector using it closes.
type shared struct {
	dir       string
	noSync    bool
	cacheSize int64 // the block cache's bytes
	engine    *sqlstore.Engine
	refs      int // guarded by registry.mu
}

// registry maps folders to open stores.
var registry struct {
	mu     sync.Mutex
	stores map[string]*shared
}

// acquire returns the shared store of cfg.Dir, opening it on first use.
// Every successful call must be matched by one release.
func acquire(cfg *Config) (*shared, error) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	loc := cfg.location()
	if s, ok := registry.stores[loc]; ok {
		if s.noSync != cfg.NoSync {
			return nil, fmt.Errorf("%w: %s is open with sync=%t", ErrOptionsMismatch, cfg.Dir, !s.noSync)
		}
		if c := cacheSizeOf(cfg); c != s.cacheSize {
			return nil, fmt.Errorf("%w: %s is open with cache=%d, not %d", ErrOptionsMismatch, cfg.Dir, s.cacheSize, c)
		}
		s.refs++
		return s, nil
	}
	var st *sqlstore.Store
	var err error
	if cfg.Store != "" {
		st, err = sqlstore.OpenRemote(cfg.Store)
	} else {
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("strata: %w", err)
		}
		opts := &kvstore.Options{NoSync: cfg.NoSync}
		if cfg.CacheSize > 0 {
			opts.KV = &kv.Options{CacheSize: cfg.CacheSize}
		}
		st, _, err = kvstore.Open(cfg.Dir, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("strata: %w", err)
	}
	s := &shared{dir: loc, noSync: cfg.NoSync, cacheSize: cacheSizeOf(cfg), engine: st.OpenEngine(), refs: 1}
	if registry.stores == nil {
		registry.stores = make(map[string]*shared)
	}
	registry.stores[loc] = s
	return s, nil
}

// cacheSizeOf returns the block cache a store opened with cfg gets.
func cacheSizeOf(cfg *Config) int64 {
	if cfg.CacheSize > 0 {
		return cfg.CacheSize
	}
	return sqlstore.DefaultCacheSize
}

// retain takes one more reference, for a connection; false when the store
// is already closed.
func (s *shared) retain() bool {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if s.refs <= 0 {
		return false
	}
	s.refs++
	return true
}

// release drops one reference; the last one closes the engine and the store.
func (s *shared) release() error {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	s.refs--
	if s.refs > 0 {
		return nil
	}
	delete(registry.stores, s.dir)
	if err := s.engine.Close(); err != nil {
		return fmt.Errorf("strata: closing %s: %w", s.dir, err)
	}
	return nil
}
