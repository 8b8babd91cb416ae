package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/strata-db/strata/kv/internal/manifest"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/table"
)

// ScanRange is a range of keys [Start, End) of a MultiScan.
type ScanRange struct {
	Start, End []byte
}

// MultiScan scans an ordered list of key ranges. NewMultiScan prepares it:
// in every table of the tree that a range touches, it collects the data
// blocks of all the ranges, reads the ones the block cache lacks with as
// few reads as it can (adjacent or nearby blocks share one read; with
// ReadOptions.AsyncIO all reads are issued at once) and pins every block
// until Close. Iterating the ranges in order then reads no file:
//
//	s, err := db.NewMultiScan(ctx, ranges, nil)
//	for r := range ranges {
//		for ok := s.SeekRange(r); ok; ok = s.Next() {
//			use(s.Key(), s.Value())
//		}
//	}
//	err = s.Close()
//
// Ranges that no table covers cost nothing. Memtables are read directly.
// A MultiScan sees one consistent state (the snapshot of its options, or
// the state when it was made) and is not safe for concurrent use.
type MultiScan struct {
	d        *DB
	it       *Iterator
	ranges   []ScanRange
	prepared map[uint64]*table.PreparedScan
	entries  []*tableEntry
	closed   bool
}

// NewMultiScan prepares a scan of ranges, which must be sorted, with
// Start < End, and must not overlap (End of one <= Start of the next).
// o.LowerBound and o.UpperBound are ignored.
func (d *DB) NewMultiScan(ctx context.Context, ranges []ScanRange, o *IterOptions) (*MultiScan, error) {
	return d.newMultiScan(ctx, nil, ranges, o)
}

func (d *DB) newMultiScan(ctx context.Context, b *Batch, ranges []ScanRange, o *IterOptions) (*MultiScan, error) {
	if d.closed.Load() {
		return nil, ErrClosed
	}
	if len(ranges) == 0 {
		return nil, errors.New("kv: MultiScan needs at least one range")
	}
	for i, r := range ranges {
		if r.Start == nil || r.End == nil || bytes.Compare(r.Start, r.End) >= 0 {
			return nil, fmt.Errorf("kv: MultiScan range %d [%q, %q) is empty or unbounded", i, r.Start, r.End)
		}
		if i > 0 && bytes.Compare(ranges[i-1].End, r.Start) > 0 {
			return nil, fmt.Errorf("kv: MultiScan ranges %d and %d overlap or are out of order", i-1, i)
		}
	}
	var opts IterOptions
	if o != nil {
		opts = *o
	}
	opts.LowerBound, opts.UpperBound = ranges[0].Start, ranges[len(ranges)-1].End
	sink := stats.Sink{DB: &d.stats, Op: opts.Stats}
	sink.Add(stats.MultiScanPrepares, 1)
	sink.Add(stats.MultiScanRanges, int64(len(ranges)))

	s := &MultiScan{d: d, ranges: ranges, prepared: map[uint64]*table.PreparedScan{}}
	rs := d.loadReadState()
	if err := s.prepare(ctx, rs, &opts); err != nil {
		rs.unref()
		s.release()
		return nil, err
	}
	it, err := d.newIterAt(rs, b, &opts, s.prepared)
	if err != nil {
		s.release()
		return nil, err
	}
	s.it = it
	return s, nil
}

// prepareJob is one table of a MultiScan to prepare.
type prepareJob struct {
	file  *manifest.FileMetadata
	sub   []table.ScanRange
	entry *tableEntry
	scan  *table.PreparedScan
}

// prepare prepares every table of the read state that a range touches, in
// three passes: each table collects its blocks and pins the cached ones;
// with AsyncIO, when more than one read is left and reads have lately been
// slow (they reach the device, prefetch.SlowRead), all the tables' reads
// are issued at once on the I/O pool; then each table reads (or waits for)
// its blocks. No read is left in flight when prepare returns.
//
// Blocks that are all cached cost no read and no hand-off to the pool, and
// reads the OS page cache serves are made in turn on this goroutine: they
// take less time than waking another one. The reads of a prepare, made
// here or on the pool, feed the pool's measure of latency.
func (s *MultiScan) prepare(ctx context.Context, rs *readState, o *IterOptions) error {
	d := s.d
	po := table.PrepareOptions{Async: o.AsyncIO, DontFillCache: o.DontFillCache, Stats: o.Stats,
		CoalesceThreshold: o.CoalesceThreshold}
	jobs := s.collect(rs.v, o)
	var err error
	reads := 0
	for i := range jobs {
		j := &jobs[i]
		if err = ctx.Err(); err != nil {
			break
		}
		if j.entry, err = d.tables.get(j.file.FileNum); err != nil {
			break
		}
		if j.scan, err = j.entry.reader.BeginPrepareScan(j.sub, po); err != nil {
			break
		}
		reads += j.scan.Reads()
	}
	if err == nil && o.AsyncIO && d.ioPool.Overlaps(reads) {
		// One ring for the reads of every table: they are all in flight
		// together, and this goroutine collects them in Finish below.
		g := d.ioPool.Ring()
		defer g.Close()
		for i := range jobs {
			jobs[i].scan.Submit(ctx, g)
		}
	}
	// Everything opened is recorded, so that release frees it. After an
	// error the begun scans are closed instead of finished, which waits
	// for their submitted reads.
	for i := range jobs {
		j := &jobs[i]
		if j.entry != nil {
			s.entries = append(s.entries, j.entry)
		}
		switch {
		case j.scan == nil:
		case err != nil:
			_ = j.scan.Close() // no iterator is open: it cannot fail
		default:
			if err = j.scan.Finish(ctx); err == nil {
				s.prepared[j.file.FileNum] = j.scan
			}
		}
	}
	return err
}

// collect returns, in level and file order, the tables of v that some
// range touches, each with the ranges it does. A range touches a table
// when the table may hold a key in [Start, End): its key span overlaps
// [Start, End] and does not begin at End.
//
// L0's tables may overlap one another, so each is checked against every
// range. Below L0 a level is sorted, so each range finds its tables by
// binary search: the cost grows with the ranges and the tables they touch,
// not with ranges times tables.
//
// The ranges a table touches are consecutive (its key span is one
// interval, the ranges are sorted and disjoint), so each job's ranges are
// a slice of one array of them all.
func (s *MultiScan) collect(v *manifest.Version, o *IterOptions) []prepareJob {
	all := make([]table.ScanRange, len(s.ranges))
	for i, r := range s.ranges {
		all[i] = table.ScanRange{Start: r.Start, End: r.End}
	}
	jobs := make([]prepareJob, 0, len(s.ranges)) // a table per range is common
	touches := func(f *manifest.FileMetadata, r ScanRange) bool {
		return f.Overlaps(r.Start, r.End) && !bytes.Equal(f.SmallestUserKey(), r.End)
	}
	for _, f := range v.Overlaps(0, o.LowerBound, o.UpperBound) {
		var sub []table.ScanRange
		for k, r := range s.ranges {
			if touches(f, r) {
				sub = appendRange(sub, all, k)
			}
		}
		if len(sub) > 0 {
			jobs = append(jobs, prepareJob{file: f, sub: sub})
		}
	}
	for level := 1; level < manifest.NumLevels; level++ {
		files := v.Levels[level]
		first := len(jobs) // this level's jobs are jobs[first:]
		for k, r := range s.ranges {
			i, j := v.OverlapIndices(level, r.Start, r.End)
			for _, f := range files[i:j] {
				if !touches(f, r) {
					continue
				}
				// Ranges ascend and do not overlap, so a table is met
				// again only by the next range, as the last job.
				if n := len(jobs); n > first && jobs[n-1].file == f {
					jobs[n-1].sub = appendRange(jobs[n-1].sub, all, k)
					continue
				}
				jobs = append(jobs, prepareJob{file: f, sub: all[k : k+1]})
			}
		}
	}
	return jobs
}

// appendRange appends all[k] to sub, a job's ranges: by reslicing when sub
// ends just before all[k] in all (or is empty), the case collect always
// meets, else by copying.
func appendRange(sub, all []table.ScanRange, k int) []table.ScanRange {
	switch n := len(sub); {
	case n == 0:
		return all[k : k+1]
	case k >= n && &all[k-n] == &sub[0]:
		return all[k-n : k+1]
	}
	return append(slices.Clip(sub), all[k])
}

// SeekRange positions the scan on the first key of range r and reports
// whether there is one; Next then moves within the range. Visiting the
// ranges in order reads nothing from the tables; any other order is
// correct too, and may read.
func (s *MultiScan) SeekRange(r int) bool {
	if s.closed || r < 0 || r >= len(s.ranges) {
		return false
	}
	s.it.setBounds(s.ranges[r].Start, s.ranges[r].End)
	return s.it.SeekGE(s.ranges[r].Start)
}

// Next moves to the next key of the current range.
func (s *MultiScan) Next() bool { return !s.closed && s.it.Next() }

// Key returns the current key, valid until the next move.
func (s *MultiScan) Key() []byte { return s.it.Key() }

// Value returns the current value, valid until the next move.
func (s *MultiScan) Value() []byte { return s.it.Value() }

// Error returns the error that stopped the scan, if any.
func (s *MultiScan) Error() error { return s.it.Error() }

// NumRanges returns the number of ranges.
func (s *MultiScan) NumRanges() int { return len(s.ranges) }

// Close releases the scan: its iterator, then the pinned blocks.
func (s *MultiScan) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.it.Close()
	if rerr := s.release(); err == nil {
		err = rerr
	}
	return err
}

func (s *MultiScan) release() error {
	var first error
	for _, p := range s.prepared {
		if err := p.Close(); err != nil && first == nil {
			first = err
		}
	}
	s.prepared = nil
	for _, e := range s.entries {
		s.d.tables.release(e)
	}
	s.entries = nil
	return first
}
