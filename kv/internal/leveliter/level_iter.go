package leveliter

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/strata-db/strata/kv/internal/base"
)

var _ base.InternalIterator = (*Iter)(nil)

// state says where an Iter is.
type state int8

const (
	// unpositioned: no positioning call since Init.
	unpositioned state = iota
	// valid: on an entry of files[idx], within bounds.
	valid
	// atStart: exhausted moving backward; Next returns the first entry.
	atStart
	// atEnd: exhausted moving forward; Prev returns the last entry.
	atEnd
	// failed: stopped by err until the next seek, First or Last.
	failed
)

// Iter iterates over one level. It implements base.InternalIterator; see the
// package documentation. Seeks cost a binary search over the files plus a
// seek in one file (two or more when files hold no entry in range); Next and
// Prev within a file cost one call to the file's iterator and, in the files
// that straddle a bound, one user-key comparison, and allocate nothing.
//
// The returned *KV belongs to the current file's iterator and is valid until
// the next positioning call or Close.
type Iter struct {
	files []File
	open  OpenFunc

	// lower and upper are the user-key bounds, nil when absent; when
	// present, lowerKey and upperKey are the search keys
	// lower#SeqNumMax,KindMax and upper#SeqNumMax,KindMax, which sort before
	// every entry of the bound's user key. They live in buffers reused
	// across Init.
	lower, upper       []byte
	lowerKey, upperKey []byte

	// files[lo:hi] are the files that can hold entries within bounds; the
	// Iter never opens any other.
	lo, hi int

	// iter is the open iterator of files[idx]; nil (and idx -1) when no
	// file is open.
	iter base.InternalIterator
	idx  int
	// stale: SetBounds left the open file behind; the next load closes it
	// (reporting a Close error from a positioning call, as loads do).
	stale bool
	// checkLower and checkUpper say whether files[idx] straddles the lower
	// or upper bound, so that its entries must be compared with it.
	checkLower, checkUpper bool
	// applied says that iter applies the bounds it was given itself
	// (base.BoundsApplier): then checkLower and checkUpper only say that
	// the scan ends in this file, and no entry is compared with a bound.
	applied bool

	state state
	err   error
}

// New returns an unpositioned Iter over files, which must be sorted and
// non-overlapping (see the package documentation), with optional user-key
// bounds [lower, upper); nil means unbounded.
func New(files []File, open OpenFunc, lower, upper []byte) *Iter {
	it := &Iter{}
	it.Init(files, open, lower, upper)
	return it
}

// Init makes it an unpositioned Iter over files, like New, reusing the
// memory of a previous use. Close the previous use first: Init does not
// close its file iterator.
func (it *Iter) Init(files []File, open OpenFunc, lower, upper []byte) {
	*it = Iter{
		files:    files,
		open:     open,
		lowerKey: it.lowerKey[:0],
		upperKey: it.upperKey[:0],
		idx:      -1,
	}
	it.setBounds(lower, upper)
}

// SetBounds changes the user-key bounds to [lower, upper) (nil: unbounded)
// and leaves the Iter unpositioned: seek or call First or Last next. When
// the open file still overlaps the new bounds it stays open, so that
// seeking from range to range within one file does not reopen it: its
// iterator takes the new bounds if it can (a base.BoundsSetter), else it stays
// only if it lies wholly inside them and was opened without bounds of its
// own. Otherwise the file is closed by the next seek, First or Last, which
// reports an error from its Close.
func (it *Iter) SetBounds(lower, upper []byte) {
	keep := false
	var f *File
	if it.iter != nil {
		f = &it.files[it.idx]
		overlaps := (upper == nil || bytes.Compare(base.UserKey(f.Smallest), upper) < 0) &&
			(lower == nil || !below(f, lower))
		within := (lower == nil || bytes.Compare(base.UserKey(f.Smallest), lower) >= 0) &&
			(upper == nil || below(f, upper))
		_, settable := it.iter.(base.BoundsSetter)
		keep = overlaps && (settable || within && !it.checkLower && !it.checkUpper)
	}
	it.stale = it.iter != nil && !keep
	it.setBounds(lower, upper)
	if keep {
		it.checkLower = lower != nil && bytes.Compare(base.UserKey(f.Smallest), lower) < 0
		it.checkUpper = upper != nil && !below(f, upper)
		if bs, ok := it.iter.(base.BoundsSetter); ok {
			var fl, fu []byte
			if it.checkLower {
				fl = lower
			}
			if it.checkUpper {
				fu = upper
			}
			bs.SetBounds(fl, fu)
		}
	}
	if it.state != failed {
		it.state = unpositioned
	}
}

// setBounds sets the bounds and the range of files they allow; the open
// file, if any, must lie wholly inside them.
func (it *Iter) setBounds(lower, upper []byte) {
	it.lower, it.upper = lower, upper
	it.lo, it.hi = 0, len(it.files)
	it.lowerKey, it.upperKey = it.lowerKey[:0], it.upperKey[:0]
	if lower != nil {
		it.lowerKey = base.MakeSearchKey(it.lowerKey, lower, base.SeqNumMax)
		// The first file that can hold a point key >= lower.
		it.lo = sort.Search(len(it.files), func(i int) bool { return !below(&it.files[i], lower) })
	}
	if upper != nil {
		it.upperKey = base.MakeSearchKey(it.upperKey, upper, base.SeqNumMax)
		// The first file whose keys are all >= upper.
		it.hi = sort.Search(len(it.files), func(i int) bool {
			return bytes.Compare(base.UserKey(it.files[i].Smallest), upper) >= 0
		})
	}
	if it.hi < it.lo {
		it.hi = it.lo
	}
}

// below reports whether every point key of f has a user key < ukey.
func below(f *File, ukey []byte) bool {
	c := bytes.Compare(base.UserKey(f.Largest), ukey)
	return c < 0 || (c == 0 && base.IsRangeDeleteSentinel(f.Largest))
}

// mayHoldGE reports whether f can hold a point key >= key. A Largest that
// is a range deletion sentinel excludes its user key, so a search for that
// user key skips the file instead of opening it to find nothing.
func mayHoldGE(f *File, key []byte) bool {
	if base.Compare(f.Largest, key) < 0 {
		return false
	}
	return !base.IsRangeDeleteSentinel(f.Largest) ||
		!bytes.Equal(base.UserKey(f.Largest), base.UserKey(key))
}

// SeekGE positions on the first entry >= key within bounds and returns it,
// or nil. A key below the lower bound seeks to the lower bound.
func (it *Iter) SeekGE(key []byte) *base.KV {
	it.err = nil
	if !base.Valid(key) {
		return it.fail(fmt.Errorf("leveliter: seek key %q is not an internal key", key))
	}
	if it.lower != nil && base.Compare(key, it.lowerKey) < 0 {
		key = it.lowerKey
	}
	if it.upper != nil && bytes.Compare(base.UserKey(key), it.upper) >= 0 {
		it.state = atEnd
		return nil
	}
	// The first file in range that can hold a point key >= key; files
	// before it hold only smaller keys.
	i := it.lo + sort.Search(it.hi-it.lo, func(j int) bool {
		return mayHoldGE(&it.files[it.lo+j], key)
	})
	if i >= it.hi {
		return it.exhaustForward()
	}
	if !it.load(i) {
		return nil
	}
	return it.forward(it.iter.SeekGE(key))
}

// SeekLT positions on the last entry < key within bounds and returns it, or
// nil. A key above the upper bound seeks to the upper bound.
func (it *Iter) SeekLT(key []byte) *base.KV {
	it.err = nil
	if !base.Valid(key) {
		return it.fail(fmt.Errorf("leveliter: seek key %q is not an internal key", key))
	}
	if it.upper != nil && base.Compare(key, it.upperKey) > 0 {
		key = it.upperKey
	}
	if it.lower != nil && base.Compare(key, it.lowerKey) <= 0 {
		it.state = atStart
		return nil
	}
	// The last file in range whose Smallest is < key; files after it hold
	// only larger keys.
	i := it.lo + sort.Search(it.hi-it.lo, func(j int) bool {
		return base.Compare(it.files[it.lo+j].Smallest, key) >= 0
	}) - 1
	if i < it.lo {
		return it.exhaustBackward()
	}
	if !it.load(i) {
		return nil
	}
	return it.backward(it.iter.SeekLT(key))
}

// First positions on the first entry within bounds and returns it, or nil.
func (it *Iter) First() *base.KV {
	it.err = nil
	if it.lo >= it.hi {
		return it.exhaustForward()
	}
	if !it.load(it.lo) {
		return nil
	}
	return it.forward(it.firstInFile())
}

// Last positions on the last entry within bounds and returns it, or nil.
func (it *Iter) Last() *base.KV {
	it.err = nil
	if it.lo >= it.hi {
		return it.exhaustBackward()
	}
	if !it.load(it.hi - 1) {
		return nil
	}
	return it.backward(it.lastInFile())
}

// Next moves to the following entry and returns it, or nil at the end or on
// error. When the current file has no more entries it closes that file's
// iterator and opens the next file's. After a nil from a backward move, and
// on an unpositioned Iter, it behaves as First.
func (it *Iter) Next() *base.KV {
	switch it.state {
	case valid:
		kv := it.iter.Next()
		if kv != nil && (!it.checkUpper || it.applied) {
			return kv
		}
		return it.forward(kv)
	case unpositioned, atStart:
		return it.First()
	}
	return nil
}

// Prev moves to the preceding entry and returns it, or nil at the start or
// on error. It mirrors Next: after a nil from a forward move, and on an
// unpositioned Iter, it behaves as Last.
func (it *Iter) Prev() *base.KV {
	switch it.state {
	case valid:
		kv := it.iter.Prev()
		if kv != nil && (!it.checkLower || it.applied) {
			return kv
		}
		return it.backward(kv)
	case unpositioned, atEnd:
		return it.Last()
	}
	return nil
}

// CurrentFile returns the file the current entry came from, or nil when the
// Iter is not on an entry. The pointer is into the files slice given to
// Init.
func (it *Iter) CurrentFile() *File {
	if it.state != valid {
		return nil
	}
	return &it.files[it.idx]
}

// AppliesBounds implements base.BoundsApplier: the Iter never returns an
// entry outside its bounds.
func (it *Iter) AppliesBounds() bool { return true }

// Error returns the error that stopped the Iter: from opening, reading or
// closing a file's iterator, or a malformed seek key. It is cleared by the
// next seek, First or Last.
func (it *Iter) Error() error { return it.err }

// Close closes the open file iterator, if any, and returns the first error
// met: the one that stopped the Iter if any, else the file iterator's Close
// error. The Iter may be reused with Init.
func (it *Iter) Close() error {
	err := it.err
	if it.iter != nil {
		if cerr := it.iter.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	it.iter, it.idx, it.err, it.state = nil, -1, nil, unpositioned
	return err
}

// forward finishes a forward move whose file-level result is kv: it checks
// the upper bound, and while the open file is exhausted moves on to the next
// file in range.
func (it *Iter) forward(kv *base.KV) *base.KV {
	for {
		if kv != nil {
			if it.checkUpper && !it.applied && bytes.Compare(kv.UserKey(), it.upper) >= 0 {
				it.state = atEnd
				return nil
			}
			it.state = valid
			return kv
		}
		if err := it.iter.Error(); err != nil {
			return it.fail(err)
		}
		if it.checkUpper {
			// The file reaches past the upper bound, so its iterator
			// stopped at the bound (or at a prepared range's end), and no
			// later file is in range: the end, as when an entry passes the
			// bound. The file stays open for a seek after SetBounds.
			it.state = atEnd
			return nil
		}
		if it.idx+1 >= it.hi {
			return it.exhaustForward()
		}
		if !it.load(it.idx + 1) {
			return nil
		}
		kv = it.firstInFile()
	}
}

// backward mirrors forward.
func (it *Iter) backward(kv *base.KV) *base.KV {
	for {
		if kv != nil {
			if it.checkLower && !it.applied && bytes.Compare(kv.UserKey(), it.lower) < 0 {
				it.state = atStart
				return nil
			}
			it.state = valid
			return kv
		}
		if err := it.iter.Error(); err != nil {
			return it.fail(err)
		}
		if it.checkLower {
			it.state = atStart
			return nil
		}
		if it.idx-1 < it.lo {
			return it.exhaustBackward()
		}
		if !it.load(it.idx - 1) {
			return nil
		}
		kv = it.lastInFile()
	}
}

// firstInFile positions the open file's iterator on its first entry within
// the lower bound.
func (it *Iter) firstInFile() *base.KV {
	if it.checkLower {
		return it.iter.SeekGE(it.lowerKey)
	}
	return it.iter.First()
}

// lastInFile positions the open file's iterator on its last entry within
// the upper bound.
func (it *Iter) lastInFile() *base.KV {
	if it.checkUpper {
		return it.iter.SeekLT(it.upperKey)
	}
	return it.iter.Last()
}

// load makes files[i] the open file, closing the previous one, unless it is
// open already. It reports false, with err set, when closing or opening
// failed.
func (it *Iter) load(i int) bool {
	if it.idx == i && it.iter != nil && !it.stale {
		return true
	}
	if !it.closeFile() {
		return false
	}
	f := &it.files[i]
	it.checkLower = it.lower != nil && bytes.Compare(base.UserKey(f.Smallest), it.lower) < 0
	it.checkUpper = it.upper != nil && !below(f, it.upper)
	var lower, upper []byte
	if it.checkLower {
		lower = it.lower
	}
	if it.checkUpper {
		upper = it.upper
	}
	iter, err := it.open(f, lower, upper)
	if err == nil && iter == nil {
		err = ErrNoIterator
	}
	if err != nil {
		it.fail(fmt.Errorf("leveliter: opening file %s-%s: %w",
			base.FormatKey(f.Smallest), base.FormatKey(f.Largest), err))
		return false
	}
	it.iter, it.idx = iter, i
	ba, ok := iter.(base.BoundsApplier)
	it.applied = ok && ba.AppliesBounds()
	return true
}

// closeFile closes the open file iterator, if any. It reports false, with
// err set, when Close failed.
func (it *Iter) closeFile() bool {
	if it.iter == nil {
		return true
	}
	err := it.iter.Close()
	f := &it.files[it.idx]
	it.iter, it.idx, it.stale = nil, -1, false
	if err != nil {
		it.fail(fmt.Errorf("leveliter: closing file %s-%s: %w",
			base.FormatKey(f.Smallest), base.FormatKey(f.Largest), err))
		return false
	}
	return true
}

// exhaustForward closes the open file, as the scan has left the level's
// last file in range, and returns nil.
func (it *Iter) exhaustForward() *base.KV {
	if it.closeFile() {
		it.state = atEnd
	}
	return nil
}

// exhaustBackward mirrors exhaustForward.
func (it *Iter) exhaustBackward() *base.KV {
	if it.closeFile() {
		it.state = atStart
	}
	return nil
}

// fail stops the Iter with err and returns nil.
func (it *Iter) fail(err error) *base.KV {
	if it.err == nil {
		it.err = err
	}
	it.state = failed
	return nil
}
