package sqlstore

import (
	"bytes"
	"errors"
	"slices"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/strata-db/strata/storage"
)

// Entry sources: the first step of an access plan (access.go). A source
// yields the index entries of a lookup's spans in the lookup's order; the
// row iterator (scan.go) decodes them or fetches their rows.
type entrySource interface {
	// next moves to the next entry and reports whether there is one; false
	// with a nil error is the end.
	next(ctx *sql.Context) (bool, error)
	// entry returns the current entry and the index of its span. key and
	// value stay valid until the next call of next.
	entry() (key, value []byte, span int)
	close() error
}

var (
	_ entrySource = (*iterSource)(nil)
	_ entrySource = (*pointSource)(nil)
	_ entrySource = (*multiScanSource)(nil)
)

// iterSource reads spans through one iterator, sought to each span in
// turn (backwards for a reverse lookup): the Range, FullScan and Scans
// plans. With perSpan (naive mode) it opens a fresh iterator bounded by
// each span instead. With later set, it reopens its iterator with that
// tuning once it has returned laterAfter entries (a deferred readahead).
type iterSource struct {
	spans   []span
	rev     bool
	perSpan bool
	tune    iterTuning
	opener  *iterOpener // of the rowIter read

	it    *txnIter
	lower []byte
	upper []byte
	cur   int  // current span
	pos   bool // positioned within spans[cur]

	later      iterTuning
	laterAfter int64
	n          int64
	saved      []byte
}

// init opens the iterator, bounded by every span: GMS sorts most
// collections of ranges, not all (boxes that overlap in their first column
// come in any order).
func (s *iterSource) init(tune iterTuning) error {
	s.tune = tune
	if s.perSpan {
		return nil // each span opens its own (next)
	}
	s.lower, s.upper = s.spans[0].start, s.spans[0].end
	for _, sp := range s.spans[1:] {
		if bytes.Compare(sp.start, s.lower) < 0 {
			s.lower = sp.start
		}
		if s.upper != nil && (sp.end == nil || bytes.Compare(sp.end, s.upper) > 0) {
			s.upper = sp.end
		}
	}
	it, err := s.opener.open(s.lower, s.upper, tune)
	if err != nil {
		return err
	}
	s.it = it
	return nil
}

func (s *iterSource) next(*sql.Context) (bool, error) {
	for s.cur < len(s.spans) {
		sp := &s.spans[s.cur]
		var ok bool
		switch {
		case !s.pos:
			s.pos = true
			if s.perSpan {
				if err := s.close(); err != nil {
					return false, err
				}
				it, err := s.opener.open(sp.start, sp.end, s.tune)
				if err != nil {
					return false, err
				}
				s.it = it
			}
			if s.rev {
				if sp.end == nil {
					ok = s.it.Last()
				} else {
					ok = s.it.SeekLT(sp.end)
				}
			} else {
				ok = s.it.SeekGE(sp.start)
			}
		case s.rev:
			ok = s.it.Prev()
		case s.laterAfter > 0 && s.n >= s.laterAfter:
			var err error
			if ok, err = s.upgrade(); err != nil {
				return false, err
			}
		default:
			ok = s.it.Next()
		}
		if ok {
			// An iterator bounded by this span alone (one span, or one
			// iterator per span) stops at its end itself.
			switch {
			case s.rev:
				ok = bytes.Compare(s.it.Key(), sp.start) >= 0
			case s.perSpan || len(s.spans) == 1:
			default:
				ok = sp.end == nil || bytes.Compare(s.it.Key(), sp.end) < 0
			}
		}
		if !ok {
			if err := s.it.Error(); err != nil {
				return false, err
			}
			s.cur++
			s.pos = false
			continue
		}
		s.n++
		return true, nil
	}
	return false, nil
}

// upgrade replaces the iterator by one with the deferred tuning, moved past
// the current key.
func (s *iterSource) upgrade() (bool, error) {
	s.laterAfter = 0
	s.saved = append(s.saved[:0], s.it.Key()...)
	it, err := s.opener.open(s.lower, s.upper, s.later)
	if err != nil {
		return false, err
	}
	_ = s.it.Close()
	s.it = it
	if !it.SeekGE(s.saved) {
		return false, nil
	}
	if bytes.Equal(it.Key(), s.saved) {
		return it.Next(), nil
	}
	return true, nil
}

func (s *iterSource) entry() ([]byte, []byte, int) {
	return s.it.Key(), s.it.Value(), s.cur
}

func (s *iterSource) close() error {
	if s.it == nil {
		return nil
	}
	err := s.it.Close()
	s.it = nil
	return err
}

// pointSource reads the start keys of point spans with Get (one span) or
// MultiGet in batches of batch keys, and yields the ones that exist, in
// span order.
type pointSource struct {
	r     storage.Reader
	ro    *storage.ReadOptions
	spans []span
	batch int

	keys []([]byte) // scratch: the keys of a batch
	vals [][]byte   // values of spans[base : base+len(vals)]
	one  [1][]byte  // vals of a single Get, without an allocation
	// spare, when not nil, is where a batch's keys and values are made,
	// kept for a later source (rowIterMem).
	spare *[][]byte
	base  int
	i     int // next value to look at
	cur   int // span of the current entry
	done  int // spans read so far
}

// fill reads the values of spans[from:to].
func (s *pointSource) fill(from, to int) error {
	s.base, s.i = from, 0
	s.done = to
	if to-from == 1 {
		v, err := s.r.Get(s.spans[from].start, s.ro)
		if errors.Is(err, storage.ErrNotFound) {
			v, err = nil, nil
		}
		if err != nil {
			return err
		}
		if cap(s.vals) == 0 {
			s.vals = s.one[:0]
		}
		s.vals = append(s.vals[:0], v)
		return nil
	}
	if n := to - from; cap(s.keys) < n || cap(s.vals) < n {
		// The keys and the values of a batch in one allocation, made to
		// size: appending would grow them in four or five steps. A
		// template's iterator keeps it for the next execution (spare).
		var buf [][]byte
		if s.spare != nil && cap(*s.spare) >= 2*n {
			buf = (*s.spare)[:2*n]
		} else {
			buf = make([][]byte, 2*n)
			if s.spare != nil {
				*s.spare = buf
			}
		}
		s.keys, s.vals = buf[:0:n], buf[n:n]
	}
	s.keys = s.keys[:0]
	for i := from; i < to; i++ {
		s.keys = append(s.keys, s.spans[i].start)
	}
	vals, err := multiGet(s.r, s.keys, s.ro, s.vals)
	if err != nil {
		return err
	}
	s.vals = vals
	return nil
}

func (s *pointSource) next(*sql.Context) (bool, error) {
	for {
		for s.i < len(s.vals) {
			i := s.i
			s.i++
			if s.vals[i] != nil {
				s.cur = s.base + i
				return true, nil
			}
		}
		if s.done >= len(s.spans) {
			return false, nil
		}
		if err := s.fill(s.done, min(s.done+s.batch, len(s.spans))); err != nil {
			return false, err
		}
	}
}

func (s *pointSource) entry() ([]byte, []byte, int) {
	return s.spans[s.cur].start, s.vals[s.cur-s.base], s.cur
}

func (s *pointSource) close() error {
	if s.spare != nil {
		clear(*s.spare) // holds no values read past the statement
	}
	s.vals, s.keys = nil, nil
	return nil
}

// multiScanSource reads spans through MultiScans (readers.go), each prepared over a
// chunk of up to chunk spans when the scan reaches it.
type multiScanSource struct {
	r     storage.Reader
	opts  storage.IterOptions
	spans []span
	chunk int

	ms     storage.MultiScan
	ranges []storage.Range
	base   int // first span of the prepared chunk
	cur    int
	pos    bool
}

func (s *multiScanSource) next(ctx *sql.Context) (bool, error) {
	for s.cur < len(s.spans) {
		if s.ms == nil || s.cur >= s.base+len(s.ranges) {
			if err := s.prepare(ctx); err != nil {
				return false, err
			}
		}
		var ok bool
		if !s.pos {
			s.pos = true
			ok = s.ms.SeekRange(s.cur - s.base)
		} else {
			ok = s.ms.Next()
		}
		if !ok {
			if err := s.ms.Error(); err != nil {
				return false, err
			}
			s.cur++
			s.pos = false
			continue
		}
		return true, nil
	}
	return false, nil
}

// prepare closes the current MultiScan and prepares the chunk at s.cur.
func (s *multiScanSource) prepare(ctx *sql.Context) error {
	if s.ms != nil {
		err := s.ms.Close()
		s.ms = nil
		if err != nil {
			return err
		}
	}
	s.base = s.cur
	end := min(s.cur+s.chunk, len(s.spans))
	s.ranges = slices.Grow(s.ranges[:0], end-s.cur)
	for i := s.cur; i < end; i++ {
		s.ranges = append(s.ranges, storage.Range{Start: s.spans[i].start, End: s.spans[i].end})
	}
	ms, err := newMultiScan(ctx, s.r, s.ranges, &s.opts)
	if err != nil {
		return err
	}
	s.ms = ms
	return nil
}

func (s *multiScanSource) entry() ([]byte, []byte, int) {
	return s.ms.Key(), s.ms.Value(), s.cur
}

func (s *multiScanSource) close() error {
	if s.ms == nil {
		return nil
	}
	err := s.ms.Close()
	s.ms = nil
	return err
}
