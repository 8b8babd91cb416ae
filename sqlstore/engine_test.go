package sqlstore

import (
	"github.com/strata-db/strata/kv"
	"github.com/strata-db/strata/storage"
)

// testOptions open a store over the embedded engine, as package kvstore's
// Open does (which these tests cannot import: it imports sqlstore).
type testOptions struct {
	Options
	KV     *kv.Options
	NoSync bool
	// Plain hides the engine's batched reads (MultiGet, MultiScan): the
	// store falls back to Get and NewIter.
	Plain bool
}

func openStore(dir string, opts *testOptions) (*Store, error) {
	var o testOptions
	if opts != nil {
		o = *opts
	}
	kvOpts := o.KV.Clone()
	if kvOpts.Cache == nil && kvOpts.CacheSize == 0 {
		kvOpts.CacheSize = DefaultCacheSize
	}
	db, err := kv.Open(dir, kvOpts)
	if err != nil {
		return nil, err
	}
	if o.Access.NoFillBytes == 0 {
		c := kvOpts.CacheSize
		if kvOpts.Cache != nil {
			c = kvOpts.Cache.Capacity()
		}
		o.Access.NoFillBytes = max(c/16, 1)
	}
	wo := kv.Sync
	if o.NoSync {
		wo = kv.NoSync
	}
	var e storage.Engine = kv.NewEngine(db, wo)
	if o.Plain {
		e = plainEngine{e.(*kv.Engine)}
	}
	return New(e, &o.Options)
}

// kvDB returns the engine's database, for flushes and compactions.
func (s *Store) kvDB() *kv.DB {
	if p, ok := s.engine.(plainEngine); ok {
		return p.Engine.DB()
	}
	return s.engine.(*kv.Engine).DB()
}

// plainEngine is the embedded engine with readers that offer only the
// contract's required reads: no storage.MultiGetter, no
// storage.MultiScanner.
type plainEngine struct{ *kv.Engine }

func (e plainEngine) Begin() (storage.Txn, error) {
	tx, err := e.Engine.Begin()
	if err != nil {
		return nil, err
	}
	return plainTxn{tx}, nil
}

func (e plainEngine) Latest() storage.Reader { return plainReader{e.Engine.Latest()} }

// plainTxn embeds the interface, so it has the Txn's methods and no others.
type plainTxn struct{ storage.Txn }

func (t plainTxn) Snapshot() storage.Reader { return plainReader{t.Txn.Snapshot()} }
func (t plainTxn) Current() storage.Reader  { return plainReader{t.Txn.Current()} }

func (t plainTxn) ViewAt(n int) (storage.Reader, error) {
	r, err := t.Txn.ViewAt(n)
	return plainReader{r}, err
}

func (t plainTxn) AdvanceView(n int) (storage.Reader, error) {
	r, err := t.Txn.AdvanceView(n)
	return plainReader{r}, err
}

type plainReader struct{ storage.Reader }
