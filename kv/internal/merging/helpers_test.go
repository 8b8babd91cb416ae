package merging

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-db/strata/kv/internal/base"
)

// sliceIter is a base.InternalIterator over a sorted slice of entries, for
// tests. It can be told to fail: the positioning call numbered failAt
// (counting from 1) returns nil and sets Error; the error is sticky until the
// next seek, First or Last.
type sliceIter struct {
	kvs      []base.KV
	pos      int // -1 before the first entry, len(kvs) after the last
	err      error
	calls    int
	failAt   int   // 0: never
	fired    bool  // the injected failure happened
	closeErr error // returned by Close
	closed   bool
}

var errInjected = errors.New("injected failure")

func newSliceIter(kvs []base.KV) *sliceIter { return &sliceIter{kvs: kvs, pos: -1} }

// call counts a positioning call and reports whether it must fail.
func (s *sliceIter) call(reset bool) bool {
	s.calls++
	if s.failAt != 0 && s.calls == s.failAt {
		s.err, s.fired = errInjected, true
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

func (s *sliceIter) SeekGE(key []byte) *base.KV {
	if s.call(true) {
		return nil
	}
	return s.at(sort.Search(len(s.kvs), func(i int) bool { return base.Compare(s.kvs[i].K, key) >= 0 }))
}

func (s *sliceIter) SeekLT(key []byte) *base.KV {
	if s.call(true) {
		return nil
	}
	return s.at(sort.Search(len(s.kvs), func(i int) bool { return base.Compare(s.kvs[i].K, key) >= 0 }) - 1)
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
	s.closed = true
	return s.closeErr
}

// parseKV parses "ukey#seq,KIND:value" (KIND is SET, DEL or RANGEDEL).
func parseKV(s string) (base.KV, error) {
	k, v, _ := strings.Cut(s, ":")
	ik, err := parseKey(k)
	return base.KV{K: ik, V: []byte(v)}, err
}

// parseKey parses "ukey#seq,KIND" or "ukey#seq" (kind SET).
func parseKey(s string) ([]byte, error) {
	ukey, rest, ok := strings.Cut(s, "#")
	if !ok {
		return nil, fmt.Errorf("bad key %q", s)
	}
	seqStr, kindStr, _ := strings.Cut(rest, ",")
	seq, err := strconv.ParseUint(seqStr, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("bad key %q: %w", s, err)
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

// runIterCmds runs the iterator commands of a datadriven "iter" block, one
// per line, and returns one output line per command.
func runIterCmds(t testing.TB, it base.InternalIterator, input string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(strings.TrimSpace(input), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		var kv *base.KV
		switch fields[0] {
		case "first":
			kv = it.First()
		case "last":
			kv = it.Last()
		case "next":
			kv = it.Next()
		case "prev":
			kv = it.Prev()
		case "seek-ge", "seek-lt":
			if len(fields) != 2 {
				t.Fatalf("%s: want one key", line)
			}
			key := base.MakeSearchKey(nil, []byte(fields[1]), base.SeqNumMax)
			if strings.Contains(fields[1], "#") {
				var err error
				if key, err = parseKey(fields[1]); err != nil {
					t.Fatal(err)
				}
			}
			if fields[0] == "seek-ge" {
				kv = it.SeekGE(key)
			} else {
				kv = it.SeekLT(key)
			}
		default:
			t.Fatalf("unknown iterator command %q", fields[0])
		}
		fmt.Fprintf(&b, "%s: %s", line, formatKV(kv))
		if err := it.Error(); err != nil {
			fmt.Fprintf(&b, " err=%v", err)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
