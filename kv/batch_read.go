package kv

import (
	"bytes"
	"errors"

	"github.com/strata-db/strata/kv/internal/base"
)

var errNotIndexed = errors.New("kv: reading a batch that is not indexed")

// Get returns a copy of the value of key as the batch sees it: its own
// writes over the database as of ro.Snapshot (the latest state when nil).
func (b *Batch) Get(key []byte, ro *ReadOptions) ([]byte, error) {
	if b.closed {
		return nil, ErrClosed
	}
	if b.index == nil {
		return nil, errNotIndexed
	}
	// The newest write of key in the batch, if any.
	n := b.index.seekGE(key, base.MakeTrailer(base.SeqNumMax, base.KindMax))
	var entryOrd int64 = -1
	var kind base.Kind
	var value []byte
	if n != nil {
		k, nkey, v, _, _ := decodeEntry(b.data[n.off:])
		if bytes.Equal(nkey, key) {
			entryOrd, kind, value = int64(n.ord), k, v
		}
	}
	// A range deletion of the batch newer than that write hides it, and
	// hides everything in the database.
	for _, r := range b.rangeDels {
		start, end := b.rangeDel(r)
		if int64(r.ord) > entryOrd && bytes.Compare(start, key) <= 0 && bytes.Compare(key, end) < 0 {
			return nil, ErrNotFound
		}
	}
	if entryOrd >= 0 {
		if kind != base.KindSet {
			return nil, ErrNotFound
		}
		return append([]byte{}, value...), nil
	}
	return b.db.Get(key, ro)
}

// NewIter returns an iterator over the batch's writes seen over the
// database as of o.Snapshot (the latest state when nil). It sees the batch
// as it is now: later writes to the batch are not visible to it.
func (b *Batch) NewIter(o *IterOptions) (*Iterator, error) {
	if b.closed {
		return nil, ErrClosed
	}
	if b.index == nil {
		return nil, errNotIndexed
	}
	return b.db.newIter(b, o)
}
