package merging

import "github.com/strata-db/strata/kv/internal/base"

// The heap is written out by hand rather than through container/heap: the
// interface calls of container/heap cost more than the comparisons on the
// path of every Next, and a direction-aware comparison is simpler inline.

// before reports whether a's entry comes before b's in the heap's direction.
// Entries order by internal key, then by child index; moving backward the
// order is reversed, so the larger key (or, on a tie, the larger index) wins.
// REQUIRES: a.kv and b.kv are non-nil.
func (m *Iter) before(a, b *child) bool {
	c := base.Compare(a.kv.K, b.kv.K)
	if c == 0 {
		c = a.index - b.index
	}
	if m.dir == reverse {
		return c > 0
	}
	return c < 0
}

// build puts every positioned child into a heap ordered for d and returns
// the top.
func (m *Iter) build(d direction) *base.KV {
	m.dir = d
	clear(m.heap)
	m.heap = m.heap[:0]
	for i := range m.children {
		if m.children[i].kv != nil {
			m.heap = append(m.heap, &m.children[i])
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m.top()
}

// down restores the heap property below i after heap[i] moved away from the
// top.
func (m *Iter) down(i int) {
	h := m.heap
	n := len(h)
	for {
		j := 2*i + 1
		if j >= n {
			return
		}
		if r := j + 1; r < n && m.before(h[r], h[j]) {
			j = r
		}
		if !m.before(h[j], h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// pop removes the top child, which is exhausted.
func (m *Iter) pop() {
	n := len(m.heap) - 1
	m.heap[0] = m.heap[n]
	m.heap[n] = nil
	m.heap = m.heap[:n]
	if n > 1 {
		m.down(0)
	}
}
