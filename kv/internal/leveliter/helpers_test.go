package leveliter

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/strata-db/strata/kv/internal/base"
)

// sliceIter is a base.InternalIterator over a sorted slice of entries, for
// tests. The positioning call numbered failAt (counting from 1) fails: it
// returns nil, sets Error (sticky until the next seek, First or Last) and
// calls onFail. It ignores bounds, so the level iterator's own bound checks
// are what the tests see.
type sliceIter struct {
	kvs     []base.KV
	pos     int // -1 before the first entry, len(kvs) after the last
	err     error
	calls   int
	failAt  int
	onFail  func()
	onClose func() error
	closed  bool
}

var errInjected = errors.New("injected failure")

func newSliceIter(kvs []base.KV) *sliceIter { return &sliceIter{kvs: kvs, pos: -1} }

func (s *sliceIter) call(reset bool) bool {
	if s.closed {
		panic("sliceIter: used after Close")
	}
	s.calls++
	if s.failAt != 0 && s.calls == s.failAt {
		s.err = errInjected
		if s.onFail != nil {
			s.onFail()
		}
		return true
	}
	if reset {
		s.err = nil
	}
	return s.err != nil
}

func (s *sliceIter) at(pos int) *base.KV {
	s.pos = pos
	if pos < 0 || pos >= len(s.kvs) {
		return nil
	}
	return &s.kvs[pos]
}

func (s *sliceIter) search(key []byte) int {
	return sort.Search(len(s.kvs), func(i int) bool { return base.Compare(s.kvs[i].K, key) >= 0 })
}

func (s *sliceIter) SeekGE(key []byte) *base.KV {
	if s.call(true) {
		return nil
	}
	return s.at(s.search(key))
}

func (s *sliceIter) SeekLT(key []byte) *base.KV {
	if s.call(true) {
		return nil
	}
	return s.at(s.search(key) - 1)
}

func (s *sliceIter) First() *base.KV {
	if s.call(true) {
		return nil
	}
	return s.at(0)
}

func (s *sliceIter) Last() *base.KV {
	if s.call(true) {
		return nil
	}
	return s.at(len(s.kvs) - 1)
}

func (s *sliceIter) Next() *base.KV {
	if s.call(false) {
		return nil
	}
	if s.pos < 0 || s.pos >= len(s.kvs) {
		panic("sliceIter: Next while not on an entry")
	}
	return s.at(s.pos + 1)
}

func (s *sliceIter) Prev() *base.KV {
	if s.call(false) {
		return nil
	}
	if s.pos < 0 || s.pos >= len(s.kvs) {
		panic("sliceIter: Prev while not on an entry")
	}
	return s.at(s.pos - 1)
}

func (s *sliceIter) Error() error { return s.err }

func (s *sliceIter) Close() error {
	if s.closed {
		panic("sliceIter: closed twice")
	}
	s.closed = true
	if s.onClose != nil {
		return s.onClose()
	}
	return nil
}

// parseKV parses "ukey#seq,KIND:value".
func parseKV(s string) (base.KV, error) {
	k, v, _ := strings.Cut(s, ":")
	ik, err := parseKey(k)
	return base.KV{K: ik, V: []byte(v)}, err
}

// parseKey parses "ukey#seq,KIND" or "ukey#seq" (kind SET); seq may be
// "max".
func parseKey(s string) ([]byte, error) {
	ukey, rest, ok := strings.Cut(s, "#")
	if !ok {
		return nil, fmt.Errorf("bad key %q", s)
	}
	seqStr, kindStr, _ := strings.Cut(rest, ",")
	seq := uint64(base.SeqNumMax)
	if seqStr != "max" {
		var err error
		if seq, err = strconv.ParseUint(seqStr, 10, 64); err != nil {
			return nil, fmt.Errorf("bad key %q: %w", s, err)
		}
	}
	kind := base.KindSet
	switch kindStr {
	case "", "SET":
	case "DEL":
		kind = base.KindDelete
	case "RANGEDEL":
		kind = base.KindRangeDelete
	case "MAX":
		kind = base.KindMax
	default:
		return nil, fmt.Errorf("bad kind in %q", s)
	}
	return base.AppendKey(nil, []byte(ukey), base.SeqNum(seq), kind), nil
}

// formatKV renders an entry as "ukey#seq,KIND:value", or "." for nil.
func formatKV(kv *base.KV) string {
	if kv == nil {
		return "."
	}
	return fmt.Sprintf("%s#%d,%s:%s", kv.UserKey(), kv.Seq(), kv.Kind(), kv.V)
}

// formatKey renders an internal key as "ukey#seq,KIND" with "max" for
// SeqNumMax.
func formatKey(k []byte) string {
	seq := strconv.FormatUint(uint64(base.Seq(k)), 10)
	if base.Seq(k) == base.SeqNumMax {
		seq = "max"
	}
	return fmt.Sprintf("%s#%s,%s", base.UserKey(k), seq, base.KindOfKey(k))
}
