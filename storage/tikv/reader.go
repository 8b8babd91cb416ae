//go:build !darwin || cgo

package tikv

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/strata-db/strata/storage"
	"github.com/tikv/client-go/v2/kv"
	"github.com/tikv/client-go/v2/tikv"
	"github.com/tikv/client-go/v2/txnkv/txnsnapshot"
)

// source is the committed state a reader sees: a snapshot at a fixed
// timestamp, or (ts 0) the latest state, a fresh timestamp per read.
type source struct {
	e         *Engine
	ts        uint64
	batchSize int
	notFill   bool
}

// snapshot returns a TiKV snapshot for one read of s.
func (s *source) snapshot() *txnsnapshot.KVSnapshot {
	ts := s.ts
	if ts == 0 {
		ts = s.e.now()
	}
	snap := s.e.store.GetSnapshot(ts)
	if s.batchSize > 0 {
		snap.SetScanBatchSize(s.batchSize)
	}
	if s.notFill {
		snap.SetNotFillCache(true)
	}
	return snap
}

// reader is every Reader of the engine: a source and, when ov is not nil,
// the overlay *ov of a transaction's writes (a pointer, so that a reader
// of a transaction follows its writes and rollbacks).
type reader struct {
	e  *Engine
	ts uint64
	ov **overlay
}

var (
	_ storage.Reader       = (*reader)(nil)
	_ storage.MultiGetter  = (*reader)(nil)
	_ storage.MultiScanner = (*reader)(nil)
)

func (r *reader) overlay() *overlay {
	if r.ov == nil || (*r.ov).empty() {
		return nil
	}
	return *r.ov
}

func (r *reader) source(o *storage.ReadOptions) *source {
	s := &source{e: r.e, ts: r.ts}
	if o != nil {
		s.notFill = o.DontFillCache
		s.batchSize = batchSize(o.ReadaheadSize)
	}
	return s
}

// batchSize turns a readahead in bytes into a TiKV scan batch in keys: the
// planner's estimate of what a scan will read decides how many keys each
// round trip brings.
func batchSize(readahead int64) int {
	const rowBytes = 64 // a guess at a small row's key and value
	switch {
	case readahead <= 0:
		return 0 // client-go's default
	case readahead/rowBytes < minBatch:
		return minBatch
	case readahead/rowBytes > maxBatch:
		return maxBatch
	}
	return int(readahead / rowBytes)
}

const (
	minBatch = 32
	maxBatch = 4096
)

// Get implements storage.Reader.
func (r *reader) Get(key []byte, o *storage.ReadOptions) ([]byte, error) {
	if v, del, ok := r.overlay().lookup(key); ok {
		if del {
			return nil, storage.ErrNotFound
		}
		return append([]byte(nil), v...), nil
	}
	ve, err := r.source(o).snapshot().Get(context.Background(), key)
	if err != nil {
		if isNotFound(err) {
			return nil, storage.ErrNotFound
		}
		return nil, fmt.Errorf("tikv: get: %w", mapError(err))
	}
	return decodeValue(ve.Value), nil
}

// NewIter implements storage.Reader.
func (r *reader) NewIter(o *storage.IterOptions) (storage.Iterator, error) {
	it := &iter{}
	if o != nil {
		it.src = r.source(&o.ReadOptions)
		it.lower, it.upper = o.LowerBound, o.UpperBound
	} else {
		it.src = r.source(nil)
	}
	if ov := r.overlay(); ov != nil {
		it.ov = ov.clone()
	}
	if it.src.ts == 0 {
		// The latest state, fixed for the iterator's life.
		it.src.ts = r.e.now()
	}
	return it, nil
}

// MultiGet implements storage.MultiGetter: the keys the overlay does not
// decide in one BatchGet.
func (r *reader) MultiGet(keys [][]byte, o *storage.ReadOptions, dst [][]byte) ([][]byte, error) {
	dst = dst[:0]
	ov := r.overlay()
	var ask [][]byte
	for _, k := range keys {
		if _, _, ok := ov.lookup(k); !ok {
			ask = append(ask, k)
		}
	}
	var got map[string]kv.ValueEntry
	if len(ask) > 0 {
		var err error
		got, err = r.source(o).snapshot().BatchGet(context.Background(), ask)
		if err != nil {
			return dst, fmt.Errorf("tikv: batch get: %w", mapError(err))
		}
	}
	for _, k := range keys {
		if v, del, ok := ov.lookup(k); ok {
			if del {
				dst = append(dst, nil)
			} else {
				dst = append(dst, append([]byte(nil), v...))
			}
			continue
		}
		if ve, ok := got[string(k)]; ok && len(ve.Value) > 0 {
			dst = append(dst, decodeValue(ve.Value))
		} else {
			dst = append(dst, nil)
		}
	}
	return dst, nil
}

// scanConcurrency bounds the ranges of a MultiScan fetched at once.
const scanConcurrency = 8

// NewMultiScan implements storage.MultiScanner: the first batch of every
// range is fetched concurrently (at most scanConcurrency at a time); a
// range longer than a batch goes on with a scanner of its own.
func (r *reader) NewMultiScan(ctx context.Context, ranges []storage.Range, o *storage.IterOptions) (storage.MultiScan, error) {
	var ro *storage.ReadOptions
	if o != nil {
		ro = &o.ReadOptions
	}
	src := r.source(ro)
	if src.ts == 0 {
		src.ts = r.e.now()
	}
	if src.batchSize == 0 {
		src.batchSize = minBatch
	}
	var ov *overlay
	if v := r.overlay(); v != nil {
		ov = v.clone()
	}
	ms := &multiScan{its: make([]iter, len(ranges)), cur: -1}
	pres := make([]tikv.Iterator, len(ranges))
	errs := make([]error, len(ranges))
	var wg sync.WaitGroup
	sem := make(chan struct{}, scanConcurrency)
	for i, rg := range ranges {
		ms.its[i] = iter{src: src, ov: ov, lower: rg.Start, upper: rg.End}
		if len(ranges) == 1 {
			break // nothing to overlap
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			errs[i] = ctx.Err()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			pres[i], errs[i] = src.snapshot().Iter(rg.Start, rg.End)
		}()
	}
	wg.Wait()
	for i := range ranges {
		ms.its[i].pre = pres[i]
	}
	if err := errors.Join(errs...); err != nil {
		ms.Close()
		return nil, fmt.Errorf("tikv: multi-scan: %w", mapError(err))
	}
	return ms, nil
}

// multiScan reads the ranges of a MultiScan, one iterator each.
type multiScan struct {
	its []iter
	cur int
}

func (m *multiScan) SeekRange(r int) bool {
	m.cur = r
	return m.its[r].First()
}

func (m *multiScan) Next() bool    { return m.its[m.cur].Next() }
func (m *multiScan) Key() []byte   { return m.its[m.cur].Key() }
func (m *multiScan) Value() []byte { return m.its[m.cur].Value() }

func (m *multiScan) Error() error {
	if m.cur < 0 {
		return nil
	}
	return m.its[m.cur].Error()
}

func (m *multiScan) Close() error {
	for i := range m.its {
		m.its[i].Close()
	}
	return nil
}
