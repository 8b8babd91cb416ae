package sqlstore

import (
	"context"
	"errors"
	"slices"

	"github.com/strata-db/strata/storage"
)

// Batched reads. A reader's MultiGet and MultiScan are optional parts of the
// storage contract (storage.MultiGetter, storage.MultiScanner); over a
// reader without them, the same reads are made one key or one range at a
// time, with the same results.

// multiGet returns the values of keys as r sees them (nil for a key without
// one), reusing dst.
func multiGet(r storage.Reader, keys [][]byte, ro *storage.ReadOptions, dst [][]byte) ([][]byte, error) {
	if mg, ok := r.(storage.MultiGetter); ok {
		return mg.MultiGet(keys, ro, dst)
	}
	vals := slices.Grow(dst[:0], len(keys))[:len(keys)]
	for i, k := range keys {
		v, err := r.Get(k, ro)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			v = nil
		case err != nil:
			return nil, err
		}
		vals[i] = v
	}
	return vals, nil
}

// newMultiScan prepares a scan of ranges over r: r's own, or one iterator
// per range in turn.
func newMultiScan(ctx context.Context, r storage.Reader, ranges []storage.Range, o *storage.IterOptions) (storage.MultiScan, error) {
	if ms, ok := r.(storage.MultiScanner); ok {
		return ms.NewMultiScan(ctx, ranges, o)
	}
	s := &iterMultiScan{r: r, ranges: ranges}
	if o != nil {
		s.opts = *o
	}
	return s, nil
}

// iterMultiScan is a MultiScan made of one iterator per range, opened when
// the scan seeks to the range.
type iterMultiScan struct {
	r      storage.Reader
	ranges []storage.Range
	opts   storage.IterOptions
	it     storage.Iterator
	err    error
}

func (s *iterMultiScan) SeekRange(i int) bool {
	if s.err != nil {
		return false
	}
	if s.it != nil {
		s.err = s.it.Close()
		s.it = nil
		if s.err != nil {
			return false
		}
	}
	o := s.opts
	o.LowerBound, o.UpperBound = s.ranges[i].Start, s.ranges[i].End
	s.it, s.err = s.r.NewIter(&o)
	if s.err != nil {
		return false
	}
	return s.it.First()
}

func (s *iterMultiScan) Next() bool { return s.it != nil && s.it.Next() }

func (s *iterMultiScan) Key() []byte   { return s.it.Key() }
func (s *iterMultiScan) Value() []byte { return s.it.Value() }

func (s *iterMultiScan) Error() error {
	if s.err != nil || s.it == nil {
		return s.err
	}
	return s.it.Error()
}

func (s *iterMultiScan) Close() error {
	if s.it == nil {
		return s.err
	}
	err := s.it.Close()
	s.it = nil
	return errors.Join(s.err, err)
}
