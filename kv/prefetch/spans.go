package prefetch

import "slices"

// spans is a set of disjoint byte ranges, sorted and merged: the parts of a
// region handed out. A forward scan keeps it at one range; it allocates
// only when it grows past its largest size so far.
type spans []Extent

// add inserts [off, off+n) and returns how many of its bytes were new.
func (s *spans) add(off, n int64) int64 {
	v, end := *s, off+n
	before := v.total()
	i := 0
	for i < len(v) && v[i].End() < off {
		i++
	}
	j := i
	for j < len(v) && v[j].Off <= end {
		off, end = min(off, v[j].Off), max(end, v[j].End())
		j++
	}
	if i == j {
		v = slices.Insert(v, i, Extent{off, end - off})
	} else {
		v[i] = Extent{off, end - off}
		v = append(v[:i+1], v[j:]...)
	}
	*s = v
	return v.total() - before
}

// total returns the number of bytes in the set.
func (s spans) total() int64 {
	var t int64
	for _, e := range s {
		t += e.Len
	}
	return t
}

// trimBelow removes the bytes below x and returns how many there were.
func (s *spans) trimBelow(x int64) int64 {
	v := *s
	var removed int64
	k := 0
	for _, e := range v {
		switch {
		case e.End() <= x:
			removed += e.Len
		case e.Off < x:
			removed += x - e.Off
			v[k] = Extent{x, e.End() - x}
			k++
		default:
			v[k] = e
			k++
		}
	}
	*s = v[:k]
	return removed
}

func (s *spans) reset() { *s = (*s)[:0] }
