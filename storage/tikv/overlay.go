//go:build !darwin || cgo

package tikv

import (
	"bytes"

	"github.com/google/btree"
	"github.com/strata-db/strata/storage"
)

// A transaction's writes stay in the process until Commit: TiKV's own
// membuffer has no positions to roll back to or to read as of, which
// statement rollback, savepoints and statement views need. They are an
// ordered log (ops: what positions count) and overlays built from it: a
// B-tree of the last write of each key over a list of range deletions.
// A B-tree clone is lazy copy-on-write, so an iterator takes a clone and
// keeps reading what it saw however the transaction writes on.

// opKind is the kind of one write.
type opKind uint8

const (
	opSet opKind = iota
	opDelete
	opDeleteRange
)

// op is one write of a transaction; its slices are the transaction's own.
type op struct {
	kind       opKind
	key, value []byte // value: opSet; end of the range: opDeleteRange
}

// entry is the last write of a key: a value, or a deletion.
type entry struct {
	key, value []byte
	del        bool
}

func entryLess(a, b entry) bool { return bytes.Compare(a.key, b.key) < 0 }

// overlay is the state the first n writes of a transaction leave over its
// snapshot: an entry in the tree wins; a key without one that a range
// deletion covers is deleted; any other key reads from the snapshot.
type overlay struct {
	t    *btree.BTreeG[entry]
	dels []storage.Range
}

func newOverlay() *overlay { return &overlay{t: btree.NewG(16, entryLess)} }

// clone returns a copy that later writes to either side do not change.
func (o *overlay) clone() *overlay {
	return &overlay{t: o.t.Clone(), dels: o.dels[:len(o.dels):len(o.dels)]}
}

func (o *overlay) empty() bool { return o == nil || (o.t.Len() == 0 && len(o.dels) == 0) }

func (o *overlay) apply(w *op) {
	switch w.kind {
	case opSet:
		o.t.ReplaceOrInsert(entry{key: w.key, value: w.value})
	case opDelete:
		o.t.ReplaceOrInsert(entry{key: w.key, del: true})
	case opDeleteRange:
		var in []entry
		o.t.AscendRange(entry{key: w.key}, entry{key: w.value}, func(e entry) bool {
			in = append(in, e)
			return true
		})
		for _, e := range in {
			o.t.Delete(e)
		}
		o.dels = append(o.dels, storage.Range{Start: w.key, End: w.value})
	}
}

// lookup says what the overlay knows of key: found with its value, or
// deleted; known is false when the snapshot decides.
func (o *overlay) lookup(key []byte) (value []byte, deleted, known bool) {
	if o == nil {
		return nil, false, false
	}
	if e, ok := o.t.Get(entry{key: key}); ok {
		return e.value, e.del, true
	}
	if o.covered(key) {
		return nil, true, true
	}
	return nil, false, false
}

// covered reports whether a range deletion covers key.
func (o *overlay) covered(key []byte) bool {
	for _, r := range o.dels {
		if bytes.Compare(key, r.Start) >= 0 && bytes.Compare(key, r.End) < 0 {
			return true
		}
	}
	return false
}

// seekGE returns the first entry at or after key (after it when strict).
func (o *overlay) seekGE(key []byte, strict bool) (entry, bool) {
	var out entry
	found := false
	o.t.AscendGreaterOrEqual(entry{key: key}, func(e entry) bool {
		if strict && bytes.Equal(e.key, key) {
			return true
		}
		out, found = e, true
		return false
	})
	return out, found
}

// seekLT returns the last entry before key (nil: the last entry).
func (o *overlay) seekLT(key []byte) (entry, bool) {
	var out entry
	found := false
	visit := func(e entry) bool {
		if key != nil && bytes.Compare(e.key, key) >= 0 {
			return true
		}
		out, found = e, true
		return false
	}
	if key == nil {
		o.t.Descend(visit)
	} else {
		o.t.DescendLessOrEqual(entry{key: key}, visit)
	}
	return out, found
}

// build returns the overlay of ops.
func build(ops []op) *overlay {
	o := newOverlay()
	for i := range ops {
		o.apply(&ops[i])
	}
	return o
}

// TiKV stores no empty value (a write of one is a deletion to it), and the
// SQL layer writes empty values (non-unique index entries). A value is
// stored as it is unless it is empty or starts with 0x00; then it is
// stored behind one 0x00 byte. Most values go unchanged, without a copy.

// encodeValue returns the stored form of v.
func encodeValue(v []byte) []byte {
	if len(v) > 0 && v[0] != 0 {
		return v
	}
	return append([]byte{0}, v...)
}

// decodeValue returns the value whose stored form is w.
func decodeValue(w []byte) []byte {
	if len(w) > 0 && w[0] == 0 {
		return w[1:]
	}
	return w
}
