package merging

import "github.com/strata-db/strata/kv/internal/base"

var (
	_ base.InternalIterator = (*Iter)(nil)
	_ base.ForwardSeeker    = (*Iter)(nil)
)

// direction says which heap order is in force.
type direction int8

const (
	// unpositioned: no positioning call since Init, or closed.
	unpositioned direction = iota
	// forward: the heap is a min-heap and every child sits on its first
	// entry at or after the merged position.
	forward
	// reverse: the heap is a max-heap and every child sits on its last entry
	// at or before the merged position.
	reverse
)

// child is one input of the merge with its current entry.
type child struct {
	iter base.InternalIterator
	// kv is the entry iter returned last; nil when iter is exhausted in the
	// current direction (then the child is not in the heap).
	kv *base.KV
	// index is the child's position among the arguments of Init. It breaks
	// ties between equal internal keys: lower index first moving forward.
	index int
	// fwd is iter as a base.ForwardSeeker, nil when it is not one.
	fwd base.ForwardSeeker
	// applies: iter applies its bounds itself (base.BoundsApplier).
	applies bool
}

// Iter is a merging iterator: it yields the entries of all its children in
// (internal key, child index) order. See the package documentation for the
// invariants it keeps.
//
// The returned *KV is the child's own, so its contract is the child's: valid
// until the next positioning call on the Iter, or Close.
//
// The zero value is an Iter with no children; Init gives it some.
type Iter struct {
	children []child
	// heap holds a pointer into children for every child with kv != nil,
	// in heap order for dir; heap[0] is the merged position.
	heap []*child
	dir  direction
	// err is the first error a child reported since the last repositioning
	// of every child. While it is set the heap is empty.
	err error
}

// New returns an Iter over iters. The Iter takes ownership of them: Close
// closes them all.
func New(iters ...base.InternalIterator) *Iter {
	m := &Iter{}
	m.Init(iters...)
	return m
}

// Init makes m an unpositioned Iter over iters, reusing the memory of any
// previous use, so that a pool of Iters allocates only when a merge has more
// children than any before it. The Iter takes ownership of iters (Close
// closes them) but not of the slice, which it does not keep. Init does not
// close the children of a previous use: call Close first.
func (m *Iter) Init(iters ...base.InternalIterator) {
	clear(m.children)
	children := m.children[:0]
	for i, it := range iters {
		fwd, _ := it.(base.ForwardSeeker)
		ba, ok := it.(base.BoundsApplier)
		children = append(children, child{iter: it, index: i, fwd: fwd, applies: ok && ba.AppliesBounds()})
	}
	clear(m.heap)
	*m = Iter{children: children, heap: m.heap[:0]}
}

// SetBounds passes new user-key bounds [lower, upper) to the children that
// take them (base.BoundsSetter) and leaves m unpositioned: seek or call First or
// Last next. Children that do not take bounds keep theirs, so the caller
// applies the bounds it sets; the point is to let a child stop early, for
// example a level iterator that would otherwise open the next file when its
// current one ends.
func (m *Iter) SetBounds(lower, upper []byte) {
	for i := range m.children {
		c := &m.children[i]
		c.kv = nil
		if bs, ok := c.iter.(base.BoundsSetter); ok {
			bs.SetBounds(lower, upper)
		}
	}
	clear(m.heap)
	m.heap, m.dir, m.err = m.heap[:0], 0, nil
}

// SeekGE positions every child on its first entry >= key and returns the
// smallest of them, or nil when there is none or a child failed.
func (m *Iter) SeekGE(key []byte) *base.KV {
	m.err = nil
	for i := range m.children {
		c := &m.children[i]
		if c.kv = c.iter.SeekGE(key); c.kv == nil && !m.ok(c) {
			return m.fail()
		}
	}
	return m.build(forward)
}

// SeekLT positions every child on its last entry < key and returns the
// largest of them, or nil when there is none or a child failed.
func (m *Iter) SeekLT(key []byte) *base.KV {
	m.err = nil
	for i := range m.children {
		c := &m.children[i]
		if c.kv = c.iter.SeekLT(key); c.kv == nil && !m.ok(c) {
			return m.fail()
		}
	}
	return m.build(reverse)
}

// First positions on the first entry of the merge and returns it, or nil
// when every child is empty or a child failed.
func (m *Iter) First() *base.KV {
	m.err = nil
	for i := range m.children {
		c := &m.children[i]
		if c.kv = c.iter.First(); c.kv == nil && !m.ok(c) {
			return m.fail()
		}
	}
	return m.build(forward)
}

// Last positions on the last entry of the merge and returns it, or nil when
// every child is empty or a child failed.
func (m *Iter) Last() *base.KV {
	m.err = nil
	for i := range m.children {
		c := &m.children[i]
		if c.kv = c.iter.Last(); c.kv == nil && !m.ok(c) {
			return m.fail()
		}
	}
	return m.build(reverse)
}

// Next moves to the following entry and returns it, or nil at the end or on
// error. After a backward move it switches direction (see the package
// documentation); after a nil from a backward move, and on an unpositioned
// Iter, it behaves as First. Costs one child Next and O(log n) comparisons;
// allocates nothing.
func (m *Iter) Next() *base.KV {
	if m.dir != forward {
		return m.switchToForward()
	}
	if len(m.heap) == 0 {
		return nil
	}
	c := m.heap[0]
	if c.kv = c.iter.Next(); c.kv == nil {
		if !m.ok(c) {
			return m.fail()
		}
		m.pop()
	} else if len(m.heap) > 1 {
		m.down(0)
	} else {
		// One child left, as in a scan of one table's range: its
		// entry, without the call to sift the heap.
		return c.kv
	}
	return m.top()
}

// nextGENexts is how many entries a child that is not a base.ForwardSeeker
// steps over with Next before NextGE seeks it: a table's next entries are
// usually in the block it holds, and a seek searches its index again.
const nextGENexts = 4

// NextGE moves to the first entry >= key and returns it, or nil at the end
// or on error (base.ForwardSeeker). Only the children that sit before key
// move, each from where it is: a base.ForwardSeeker by its own NextGE,
// another by a few Nexts and then a seek. A merge that is not moving
// forward seeks every child instead.
func (m *Iter) NextGE(key []byte) *base.KV {
	if m.dir != forward || m.err != nil {
		return m.SeekGE(key)
	}
	for len(m.heap) > 0 {
		c := m.heap[0]
		if base.Compare(c.kv.K, key) >= 0 {
			break
		}
		if c.kv = c.nextGE(key); c.kv == nil {
			if !m.ok(c) {
				return m.fail()
			}
			m.pop()
		} else {
			m.down(0)
		}
	}
	return m.top()
}

// nextGE moves c forward to its first entry >= key, which lies after its
// current one.
func (c *child) nextGE(key []byte) *base.KV {
	if c.fwd != nil {
		return c.fwd.NextGE(key)
	}
	for range nextGENexts {
		kv := c.iter.Next()
		if kv == nil || base.Compare(kv.K, key) >= 0 {
			return kv
		}
	}
	return c.iter.SeekGE(key)
}

// Prev moves to the preceding entry and returns it, or nil at the start or
// on error. It mirrors Next: after a nil from a forward move, and on an
// unpositioned Iter, it behaves as Last.
func (m *Iter) Prev() *base.KV {
	if m.dir != reverse {
		return m.switchToReverse()
	}
	if len(m.heap) == 0 {
		return nil
	}
	c := m.heap[0]
	if c.kv = c.iter.Prev(); c.kv == nil {
		if !m.ok(c) {
			return m.fail()
		}
		m.pop()
	} else {
		m.down(0)
	}
	return m.top()
}

// TopAppliesBounds reports whether the entry at the merged position comes
// from an input that applies its bounds itself (base.BoundsApplier): a
// caller that gave every such input its own bounds need not compare that
// entry with them.
func (m *Iter) TopAppliesBounds() bool { return len(m.heap) > 0 && m.heap[0].applies }

// Error returns the error that stopped the merge, or nil. It is cleared by
// the next seek, First or Last.
func (m *Iter) Error() error { return m.err }

// Close closes every child, even after a failure, and returns the first
// error met: the one that stopped the merge if any, else the first error a
// child's Close returned. Afterwards m has no children; it may be reused
// with Init.
func (m *Iter) Close() error {
	err := m.err
	for i := range m.children {
		if cerr := m.children[i].iter.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	m.Init()
	return err
}

// switchToForward turns a reverse (or unpositioned) Iter around and returns
// the entry after the current one.
func (m *Iter) switchToForward() *base.KV {
	if m.err != nil {
		return nil
	}
	if len(m.heap) == 0 {
		// Unpositioned, or exhausted backward: the next entry is the first.
		return m.First()
	}
	// Every child other than cur sits on its last entry before cur's, and
	// everything after that entry lies after cur's: one Next lands it on its
	// first entry after the merged position. An exhausted child has nothing
	// before the merged position, so its first entry is the one.
	cur := m.heap[0]
	for i := range m.children {
		c := &m.children[i]
		if c == cur {
			continue
		}
		if c.kv == nil {
			c.kv = c.iter.First()
		} else {
			c.kv = c.iter.Next()
		}
		if c.kv == nil && !m.ok(c) {
			return m.fail()
		}
	}
	if cur.kv = cur.iter.Next(); cur.kv == nil && !m.ok(cur) {
		return m.fail()
	}
	return m.build(forward)
}

// switchToReverse mirrors switchToForward.
func (m *Iter) switchToReverse() *base.KV {
	if m.err != nil {
		return nil
	}
	if len(m.heap) == 0 {
		return m.Last()
	}
	cur := m.heap[0]
	for i := range m.children {
		c := &m.children[i]
		if c == cur {
			continue
		}
		if c.kv == nil {
			c.kv = c.iter.Last()
		} else {
			c.kv = c.iter.Prev()
		}
		if c.kv == nil && !m.ok(c) {
			return m.fail()
		}
	}
	if cur.kv = cur.iter.Prev(); cur.kv == nil && !m.ok(cur) {
		return m.fail()
	}
	return m.build(reverse)
}

// ok is called when c returned nil: it reports whether c is merely
// exhausted, and records c's error otherwise.
func (m *Iter) ok(c *child) bool {
	if err := c.iter.Error(); err != nil {
		m.err = err
		return false
	}
	return true
}

// fail empties the heap after an error and returns nil. The children stay
// where they are; the next seek, First or Last repositions all of them.
func (m *Iter) fail() *base.KV {
	clear(m.heap)
	m.heap = m.heap[:0]
	return nil
}

// top returns the merged position, nil when the heap is empty.
func (m *Iter) top() *base.KV {
	if len(m.heap) == 0 {
		return nil
	}
	return m.heap[0].kv
}
