package memtable

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"

	"github.com/strata-db/strata/kv/internal/base"
)

// skiplist is one ordered list of nodes in an arena, bounded by two sentinel
// nodes of full height: head sorts before every key and tail after every
// key. They are recognised by offset; their keys are never compared.
//
// Invariants, each kept by insert:
//   - At every level the nodes reachable from head through next links are in
//     strictly increasing base.Compare order and end at tail.
//   - A node is in the level-i list only if it is in every list below i; it
//     is linked bottom-up, so a reader that reaches it at level i finds its
//     links at levels <= i already set.
//   - A node's key, value and header are written before it is linked at
//     level 0, and never change afterwards.
//   - A node's prev link always names a node that sorts before it; once every
//     insert has returned it names the node's predecessor exactly.
//
// Nodes are never unlinked. Any number of goroutines may insert and search at
// once; nobody waits for anybody.
type skiplist struct {
	arena      *arena
	head, tail uint32
}

// init allocates the two sentinels of s in a and links them at every level.
func (s *skiplist) init(a *arena) bool {
	s.arena = a
	var ok bool
	if s.head, ok = a.newNode(maxHeight, nil, 0, nil); !ok {
		return false
	}
	if s.tail, ok = a.newNode(maxHeight, nil, 0, nil); !ok {
		return false
	}
	for i := range maxHeight {
		a.next(s.head, i).Store(s.tail)
	}
	a.prev(s.tail).Store(s.head)
	return true
}

// empty reports whether no node is linked in s.
func (s *skiplist) empty() bool { return s.arena.next(s.head, 0).Load() == s.tail }

// randomHeight draws a tower height: 1 with probability 3/4, and each further
// level with probability 1/4 of the one below, up to maxHeight.
func randomHeight() int {
	r := rand.Uint32() // per-thread generator: no lock, no allocation
	h := 1
	for h < maxHeight && r&3 == 0 {
		h++
		r >>= 2
	}
	return h
}

// cmp compares the internal key (ukey, trailer) with the key of node nd, as
// base.Compare would: negative when the former sorts first.
// REQUIRES: nd is neither sentinel.
func (s *skiplist) cmp(ukey []byte, trailer uint64, nd uint32) int {
	k := s.arena.key(nd)
	n := len(k) - base.TrailerLen
	if c := bytes.Compare(ukey, k[:n]); c != 0 {
		return c
	}
	t := binary.LittleEndian.Uint64(k[n:])
	switch {
	case trailer > t:
		return -1
	case trailer < t:
		return 1
	}
	return 0
}

// seek returns the last node that sorts before (ukey, trailer), which may be
// head, and the node after it at level 0, which may be tail. It descends
// from the top level in O(log n) comparisons and allocates nothing.
func (s *skiplist) seek(ukey []byte, trailer uint64) (prev, next uint32) {
	a := s.arena
	prev = s.head
	// known is a node already found to sort at or after the key. Towers often
	// lead to it again one level down; it need not be compared twice.
	known := s.tail
	for i := maxHeight - 1; i >= 0; i-- {
		for {
			next = a.next(prev, i).Load()
			if next == known || next == s.tail || s.cmp(ukey, trailer, next) <= 0 {
				break
			}
			prev = next
		}
		known = next
	}
	return prev, next
}

// seekFrom returns the first node at or after (ukey, trailer), which may be
// tail, searching forward from nd, which sorts before it (a finger search).
// It walks forward, climbing a level whenever the node it reaches has a
// taller tower, until the next node at its level no longer sorts before the
// key, then descends as seek does: O(log d) links for a node d positions
// ahead. A tower level that a concurrent insert has not linked yet reads as
// 0 (nil) and is not climbed; a link set but not yet reachable from head
// still points forward, to a node in that level's list, which is all the
// search needs.
// REQUIRES: nd is neither sentinel and sorts before (ukey, trailer).
func (s *skiplist) seekFrom(nd uint32, ukey []byte, trailer uint64) uint32 {
	_, next := s.seekFromPrev(nd, ukey, trailer)
	return next
}

// seekFromPrev is seekFrom, also returning the last node before the key
// (nd or a node after it).
func (s *skiplist) seekFromPrev(nd uint32, ukey []byte, trailer uint64) (prev, next uint32) {
	a := s.arena
	prev = nd
	level := 0
	for {
		next := a.next(prev, level).Load()
		if next == s.tail || s.cmp(ukey, trailer, next) <= 0 {
			break
		}
		prev = next
		if level+1 < int(a.header(prev).height) && a.next(prev, level+1).Load() != 0 {
			level++
		}
	}
	for i := level; i >= 0; i-- {
		for {
			next = a.next(prev, i).Load()
			if next == s.tail || s.cmp(ukey, trailer, next) <= 0 {
				break
			}
			prev = next
		}
	}
	return prev, next
}

// spliceAt returns the two nodes at level i between which (ukey, trailer)
// belongs, searching forward from start, which must sort before it and be in
// the level-i list. found reports that next holds exactly that key.
func (s *skiplist) spliceAt(ukey []byte, trailer uint64, i int, start uint32) (prev, next uint32, found bool) {
	a := s.arena
	prev = start
	for {
		next = a.next(prev, i).Load()
		if next == s.tail {
			return prev, next, false
		}
		switch c := s.cmp(ukey, trailer, next); {
		case c == 0:
			return prev, next, true
		case c < 0:
			return prev, next, false
		}
		prev = next
	}
}

// insert links node nd, of the given height and with the internal key
// (ukey, trailer) already written into it, into s. It returns ErrExists,
// leaving nd unlinked, when the key is already present.
//
// The node is linked level by level from the bottom. At each level its next
// link is set first and then the predecessor's next link is swung to it with
// a compare-and-swap; when that fails because another insert got in between,
// the splice for that level is searched again from the old predecessor,
// which is still in the list and still sorts before the key.
//
// At level 0 the back link of the successor is then swung from the old
// predecessor to nd. That second step is not atomic with the first, so an
// insert that finds its successor's back link not yet pointing at its own
// predecessor first helps the earlier insert finish, otherwise its own
// update could be overwritten by the late one and leave a back link stale
// for good. Back links therefore only ever move to nodes closer to their
// owner.
func (s *skiplist) insert(nd uint32, height int, ukey []byte, trailer uint64) error {
	var prevs [maxHeight]uint32
	return s.insertFrom(nd, height, ukey, trailer, &prevs, false)
}

// insertFrom is insert searching from a finger. When hinted, prevs holds at
// each level a node of that level's list that sorts before the previously
// inserted key, prevs[i+1] never after prevs[i] (what insertFrom leaves
// there). If the new key sorts after prevs[0] it sorts after every one of
// them, and the search climbs from level 0 only as far as the first level
// whose next node lies beyond the key, then descends from there: a run of
// ascending keys costs O(log d) comparisons each, d the entries between
// one key and the next, instead of O(log n) from the head. Any other key is
// searched from the head. On success prevs holds the finger for the next
// call; after an error its contents are unspecified.
func (s *skiplist) insertFrom(nd uint32, height int, ukey []byte, trailer uint64, prevs *[maxHeight]uint32, hinted bool) error {
	a := s.arena
	var nexts [maxHeight]uint32
	// Levels at or above top search from their own finger (those below
	// height) or keep it (the rest); top-1 searches from start, and each
	// level below from the predecessor found one level up.
	top, start := maxHeight, s.head
	if hinted && (prevs[0] == s.head || s.cmp(ukey, trailer, prevs[0]) > 0) {
		l := 0
		for l < maxHeight-1 {
			next := a.next(prevs[l], l).Load()
			if next == s.tail || s.cmp(ukey, trailer, next) <= 0 {
				break
			}
			l++
		}
		top, start = l+1, prevs[l]
	}
	for i := maxHeight - 1; i >= 0; i-- {
		var from uint32
		switch {
		case i >= top:
			if i >= height {
				continue
			}
			from = prevs[i]
		case i == top-1:
			from = start
		default:
			from = prevs[i+1]
		}
		p, n, found := s.spliceAt(ukey, trailer, i, from)
		if found {
			return ErrExists
		}
		prevs[i], nexts[i] = p, n
	}

	for i := range height {
		prev, next := prevs[i], nexts[i]
		for {
			a.next(nd, i).Store(next)
			if i == 0 {
				a.prev(nd).Store(prev)
				if np := a.prev(next).Load(); np != prev && a.next(prev, 0).Load() == next {
					// next is already linked behind prev but its back link
					// still lags: finish that insert's second step for it.
					a.prev(next).CompareAndSwap(np, prev)
				}
			}
			if a.next(prev, i).CompareAndSwap(next, nd) {
				if i == 0 {
					a.prev(next).CompareAndSwap(prev, nd)
				}
				prevs[i] = nd
				break
			}
			var found bool
			prev, next, found = s.spliceAt(ukey, trailer, i, prev)
			if found {
				if i == 0 {
					return ErrExists // a concurrent insert of the same key won
				}
				// Unreachable: once nd is in the level-0 list no other node
				// with its key can be. Leaving the tower short keeps the
				// list valid.
				prevs[i] = prev
				return nil
			}
		}
	}
	return nil
}
