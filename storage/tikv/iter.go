//go:build !darwin || cgo

package tikv

import (
	"bytes"
	"fmt"

	"github.com/strata-db/strata/storage"
	"github.com/tikv/client-go/v2/tikv"
)

// iter is the contract's iterator: a TiKV scan at the reader's timestamp
// merged with the overlay of the transaction's writes (nil: none). TiKV's
// scanners go one way, so a change of direction opens a scanner the other
// way at the current key; a scan in one direction pays one round trip per
// batch (the batch size comes from the reader's readahead).
type iter struct {
	src          *source
	ov           *overlay
	lower, upper []byte

	dir  int8 // +1 forward, -1 backward, 0 unpositioned
	base tikv.Iterator
	// pre, when not nil, is a prefetched forward scan of [lower, upper)
	// that the first forward seek to lower uses instead of a new scanner
	// (MultiScan).
	pre tikv.Iterator

	ovEnt entry
	ovOK  bool

	key, value []byte
	valid      bool
	err        error
}

var _ storage.Iterator = (*iter)(nil)

func (it *iter) closeBase() {
	if it.base != nil {
		it.base.Close()
		it.base = nil
	}
}

// openForward opens the base scanner at key going forward.
func (it *iter) openForward(key []byte) bool {
	it.closeBase()
	if it.pre != nil && bytes.Equal(key, it.lower) {
		it.base, it.pre = it.pre, nil
		return true
	}
	if it.upper != nil && bytes.Compare(key, it.upper) >= 0 {
		it.base = emptyIter{} // nothing to ask TiKV for
		return true
	}
	b, err := it.src.snapshot().Iter(key, it.upper)
	if err != nil {
		it.fail(err)
		return false
	}
	it.base = b
	return true
}

// keyMax stands for "past every key" in a backward scan without an upper
// bound: client-go's reverse scanner needs an end key. Keys from 0xff 0xff
// 0xff 0xff on are not read backward without a bound (the SQL layer's keys
// begin with 0x01 or 0x02).
var keyMax = []byte{0xff, 0xff, 0xff, 0xff}

func (it *iter) openBackward(key []byte) bool {
	it.closeBase()
	if key == nil {
		key = keyMax
	}
	if it.lower != nil && bytes.Compare(key, it.lower) <= 0 {
		it.base = emptyIter{}
		return true
	}
	b, err := it.src.snapshot().IterReverse(key, it.lower)
	if err != nil {
		it.fail(err)
		return false
	}
	it.base = b
	return true
}

func (it *iter) fail(err error) {
	it.err = fmt.Errorf("tikv: scan: %w", mapError(err))
	it.valid = false
}

func (it *iter) SeekGE(key []byte) bool {
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	it.dir, it.err = 1, nil
	if !it.openForward(key) {
		return false
	}
	if it.ov != nil {
		it.ovEnt, it.ovOK = it.ov.seekGE(key, false)
	}
	return it.settleForward()
}

func (it *iter) SeekLT(key []byte) bool {
	if it.upper != nil && (key == nil || bytes.Compare(key, it.upper) > 0) {
		key = it.upper
	}
	it.dir, it.err = -1, nil
	if !it.openBackward(key) {
		return false
	}
	if it.ov != nil {
		it.ovEnt, it.ovOK = it.ov.seekLT(key)
	}
	return it.settleBackward()
}

func (it *iter) First() bool { return it.SeekGE(it.lower) }

func (it *iter) Last() bool { return it.SeekLT(it.upper) }

func (it *iter) Next() bool {
	if !it.valid {
		return false
	}
	if it.dir != 1 {
		return it.SeekGE(append(append([]byte(nil), it.key...), 0))
	}
	cur := it.key
	for it.base.Valid() && bytes.Compare(it.base.Key(), cur) <= 0 {
		if err := it.base.Next(); err != nil {
			it.fail(err)
			return false
		}
	}
	if it.ovOK && bytes.Compare(it.ovEnt.key, cur) <= 0 {
		it.ovEnt, it.ovOK = it.ov.seekGE(cur, true)
	}
	return it.settleForward()
}

func (it *iter) Prev() bool {
	if !it.valid {
		return false
	}
	if it.dir != -1 {
		return it.SeekLT(append([]byte(nil), it.key...))
	}
	cur := it.key
	for it.base.Valid() && bytes.Compare(it.base.Key(), cur) >= 0 {
		if err := it.base.Next(); err != nil {
			it.fail(err)
			return false
		}
	}
	if it.ovOK && bytes.Compare(it.ovEnt.key, cur) >= 0 {
		it.ovEnt, it.ovOK = it.ov.seekLT(cur)
	}
	return it.settleBackward()
}

// settleForward moves to the smallest visible key at or after the heads.
func (it *iter) settleForward() bool {
	for {
		if it.ovOK && it.upper != nil && bytes.Compare(it.ovEnt.key, it.upper) >= 0 {
			it.ovOK = false
		}
		bOK := it.base.Valid()
		switch {
		case !bOK && !it.ovOK:
			it.valid = false
			return false
		case it.ovOK && (!bOK || bytes.Compare(it.ovEnt.key, it.base.Key()) <= 0):
			e := it.ovEnt
			if bOK && bytes.Equal(e.key, it.base.Key()) {
				if err := it.base.Next(); err != nil {
					it.fail(err)
					return false
				}
			}
			if !e.del {
				it.key, it.value, it.valid = e.key, e.value, true
				// Leave the overlay's head here: Next moves past it.
				return true
			}
			it.ovEnt, it.ovOK = it.ov.seekGE(e.key, true)
		default:
			k := it.base.Key()
			if it.ov != nil && it.ov.covered(k) {
				if err := it.base.Next(); err != nil {
					it.fail(err)
					return false
				}
				continue
			}
			it.key, it.value, it.valid = k, decodeValue(it.base.Value()), true
			return true
		}
	}
}

// settleBackward moves to the largest visible key at or before the heads.
func (it *iter) settleBackward() bool {
	for {
		if it.ovOK && it.lower != nil && bytes.Compare(it.ovEnt.key, it.lower) < 0 {
			it.ovOK = false
		}
		bOK := it.base.Valid()
		switch {
		case !bOK && !it.ovOK:
			it.valid = false
			return false
		case it.ovOK && (!bOK || bytes.Compare(it.ovEnt.key, it.base.Key()) >= 0):
			e := it.ovEnt
			if bOK && bytes.Equal(e.key, it.base.Key()) {
				if err := it.base.Next(); err != nil {
					it.fail(err)
					return false
				}
			}
			if !e.del {
				it.key, it.value, it.valid = e.key, e.value, true
				return true
			}
			it.ovEnt, it.ovOK = it.ov.seekLT(e.key)
		default:
			k := it.base.Key()
			if it.ov != nil && it.ov.covered(k) {
				if err := it.base.Next(); err != nil {
					it.fail(err)
					return false
				}
				continue
			}
			it.key, it.value, it.valid = k, decodeValue(it.base.Value()), true
			return true
		}
	}
}

// emptyIter is a scan of an empty range.
type emptyIter struct{}

func (emptyIter) Valid() bool   { return false }
func (emptyIter) Key() []byte   { return nil }
func (emptyIter) Value() []byte { return nil }
func (emptyIter) Next() error   { return nil }
func (emptyIter) Close()        {}

func (it *iter) Valid() bool   { return it.valid }
func (it *iter) Key() []byte   { return it.key }
func (it *iter) Value() []byte { return it.value }
func (it *iter) Error() error  { return it.err }

func (it *iter) Close() error {
	it.closeBase()
	if it.pre != nil {
		it.pre.Close()
		it.pre = nil
	}
	it.valid = false
	return nil
}
