package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/internal/leveliter"
	"github.com/strata-db/strata/kv/internal/manifest"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/table"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/strata-db/strata/storage"
)

// ScanRange is a range of keys [Start, End) of a MultiScan.
type ScanRange = storage.Range

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
	d      *DB
	it     *Iterator
	ranges []ScanRange
	// jobs are the tables some range touches, by level (levels[l] to
	// levels[l+1]) and in key order within a level.
	jobs   []prepareJob
	levels [manifest.NumLevels + 1]int
	// sole[r] is the position in jobs of the only table range r touches,
	// when nothing else holds a key in the range (no other table, no
	// memtable, no batch); -1 otherwise. SeekRange reads such a range
	// through that table's iterator alone, without the merge.
	sole []int
	// merged is the iterator over every source, it.iter's own; tio are
	// the table iterator options of the scan.
	merged base.InternalIterator
	tio    table.IterOptions
	mem    *multiScanMem
	closed bool
}

// multiScanMem is the memory of a MultiScan that the next one reuses
// (multiScanPool), so that once the pool is warm a prepare allocates
// nothing per table: the jobs, their prepared scans, and the level
// iterators' view of them.
type multiScanMem struct {
	all   []table.ScanRange
	jobs  []prepareJob
	scans []table.PreparedScan
	files []leveliter.File
	sole  []int
	// probes and pages are what prepare touches before it reads (see
	// touch); touched keeps what the loads returned.
	probes  []*uint64
	pages   []*byte
	touched uint64
}

var multiScanPool = sync.Pool{New: func() any { return new(multiScanMem) }}

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

	s := &MultiScan{d: d, ranges: ranges, mem: multiScanPool.Get().(*multiScanMem)}
	rs := d.loadReadState()
	if err := s.prepare(ctx, rs, &opts); err != nil {
		rs.unref()
		s.release()
		return nil, err
	}
	s.findSole(rs, b)
	s.tio = d.tableIterOptions(&opts.ReadOptions)
	it, err := d.newIterAt(rs, b, &opts, s)
	if err != nil {
		s.release()
		return nil, err
	}
	s.it, s.merged = it, it.iter
	return s, nil
}

// findSole settles sole: a range that one table touches has its keys
// there alone unless a memtable or the batch b holds one too. What a
// memtable gains after this check is newer than the scan's snapshot,
// which the scan does not see.
func (s *MultiScan) findSole(rs *readState, b *Batch) {
	if b != nil {
		// The batch's writes mix with the tables' keys.
		for r := range s.sole {
			s.sole[r] = -1
		}
		return
	}
	var search []byte
	for i := range rs.numMemtables() {
		m, _ := rs.memtable(i)
		if m.Empty() {
			continue
		}
		it := m.NewIter()
		for r, j := range s.sole {
			if j < 0 {
				continue
			}
			rg := &s.ranges[r]
			search = base.MakeSearchKey(search[:0], rg.Start, base.SeqNumMax)
			if kv := it.SeekGE(search); kv != nil && bytes.Compare(kv.UserKey(), rg.End) < 0 {
				s.sole[r] = -1
			}
		}
		_ = it.Close() // a memtable iterator has no error to report
	}
}

// prepareJob is one table of a MultiScan: its ranges, and once prepared
// its reference in the table cache and its prepared scan.
type prepareJob struct {
	file  *manifest.FileMetadata
	sub   []table.ScanRange
	entry *tableEntry
	scan  *table.PreparedScan
	// iter reads the ranges this table alone holds (see sole), opened by
	// the first of them.
	iter *tableIter
}

// prepare prepares every table of the read state that a range touches, in
// three passes: each table collects its blocks and pins the cached ones;
// with AsyncIO, when more than one read is left and reads have lately been
// slow (they reach the device, prefetch.SlowRead), all the tables' reads
// are issued at once on the I/O pool; then each table reads (or waits for)
// its blocks. No read is left in flight when prepare returns.
//
// What is in memory is read in the same spirit as what is not, all at
// once: before the first pass, one loop loads where each table's index
// search will begin; before the last, one loop loads a byte of each page
// the copies from mappings will read (vfs.TouchPages). A warm query's
// prepare otherwise waits on cache misses one after another, table by
// table, a few in each index and one or two at each block's page; loaded
// together they overlap. Only a prepare can do this, since only it knows
// every access before making the first.
//
// Blocks that are all cached cost no read and no hand-off to the pool, and
// reads the OS page cache serves are made in turn on this goroutine: they
// take less time than waking another one. The reads of a prepare, made
// here or on the pool, feed the pool's measure of latency.
func (s *MultiScan) prepare(ctx context.Context, rs *readState, o *IterOptions) error {
	d := s.d
	po := table.PrepareOptions{Async: o.AsyncIO, DontFillCache: o.DontFillCache, Stats: o.Stats,
		CoalesceThreshold: o.CoalesceThreshold}
	s.collect(rs.v, o)
	jobs := s.jobs
	mem := s.mem
	if cap(mem.scans) < len(jobs) {
		mem.scans = make([]table.PreparedScan, len(jobs)) // not copied: scans point into themselves
	}
	var err error
	for i := range jobs {
		j := &jobs[i]
		if j.entry, err = d.tables.get(j.file.FileNum); err != nil {
			break
		}
		mem.probes = j.entry.reader.AppendIndexProbes(mem.probes, j.sub[0].Start)
	}
	mem.touched ^= table.TouchProbes(mem.probes)
	clear(mem.probes)
	mem.probes = mem.probes[:0]
	reads := 0
	for i := range jobs {
		if err != nil {
			break
		}
		j := &jobs[i]
		if err = ctx.Err(); err != nil {
			break
		}
		if err = j.entry.reader.InitPrepareScan(&mem.scans[i], j.sub, po); err != nil {
			break
		}
		j.scan = &mem.scans[i]
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
	if err == nil {
		for i := range jobs {
			mem.pages = jobs[i].scan.AppendPages(mem.pages)
		}
		mem.touched ^= uint64(vfs.TouchPages(mem.pages))
		clear(mem.pages)
		mem.pages = mem.pages[:0]
	}
	// After an error the begun scans are closed instead of finished,
	// which waits for their submitted reads; release frees the rest.
	for i := range jobs {
		j := &jobs[i]
		if j.scan == nil {
			continue
		}
		if err != nil {
			_ = j.scan.Close() // no iterator is open: it cannot fail
			j.scan = nil
			continue
		}
		if err = j.scan.Finish(ctx); err != nil {
			j.scan = nil // Finish released it
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
func (s *MultiScan) collect(v *manifest.Version, o *IterOptions) {
	all := slices.Grow(s.mem.all[:0], len(s.ranges))
	for _, r := range s.ranges {
		all = append(all, table.ScanRange{Start: r.Start, End: r.End})
	}
	s.mem.all = all
	// sole[k]: the job of the one table range k touches so far, -1 for
	// none, -2 for more than one.
	sole := slices.Grow(s.mem.sole[:0], len(s.ranges))[:len(s.ranges)]
	for k := range sole {
		sole[k] = -1
	}
	touch := func(k, job int) {
		if sole[k] == -1 {
			sole[k] = job
		} else {
			sole[k] = -2
		}
	}
	jobs := slices.Grow(s.mem.jobs[:0], len(s.ranges)) // a table per range is common
	touches := func(f *manifest.FileMetadata, r ScanRange) bool {
		return f.Overlaps(r.Start, r.End) && !bytes.Equal(f.SmallestUserKey(), r.End)
	}
	for _, f := range v.Overlaps(0, o.LowerBound, o.UpperBound) {
		var sub []table.ScanRange
		for k, r := range s.ranges {
			if touches(f, r) {
				sub = appendRange(sub, all, k)
				touch(k, len(jobs))
			}
		}
		if len(sub) > 0 {
			jobs = append(jobs, prepareJob{file: f, sub: sub})
		}
	}
	for level := 1; level < manifest.NumLevels; level++ {
		files := v.Levels[level]
		first := len(jobs) // this level's jobs are jobs[first:]
		s.levels[level] = first
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
					touch(k, n-1)
					continue
				}
				touch(k, len(jobs))
				jobs = append(jobs, prepareJob{file: f, sub: all[k : k+1]})
			}
		}
	}
	s.levels[manifest.NumLevels] = len(jobs)
	s.jobs, s.mem.jobs = jobs, jobs
	for k := range sole {
		sole[k] = max(sole[k], -1)
	}
	s.sole, s.mem.sole = sole, sole
}

// appendLevel appends to iters the iterators of level's prepared tables:
// one per table in L0, newest first, and one level iterator over the
// others. A MultiScan moves only within its ranges, so the tables no range
// touches are left out: a seek into a range searches only the tables
// prepared for the scan, and each table's iterator finds its blocks
// through the prepared scan without opening the table again.
func (s *MultiScan) appendLevel(iters []base.InternalIterator, level int, lower, upper []byte, o table.IterOptions) []base.InternalIterator {
	jobs := s.jobs[s.levels[level]:s.levels[level+1]]
	if len(jobs) == 0 {
		return iters
	}
	if level == 0 {
		for i := len(jobs) - 1; i >= 0; i-- {
			iters = append(iters, s.d.openPreparedIter(&jobs[i], lower, upper, o))
		}
		return iters
	}
	if len(s.mem.files) < len(s.jobs) {
		s.mem.files = make([]leveliter.File, len(s.jobs))
	}
	lf := s.mem.files[s.levels[level]:s.levels[level+1]]
	for i := range jobs {
		f := jobs[i].file
		lf[i] = leveliter.File{Smallest: f.Smallest, Largest: f.Largest, Data: &jobs[i]}
	}
	return append(iters, leveliter.New(lf, func(f *leveliter.File, lo, hi []byte) (base.InternalIterator, error) {
		return s.d.openPreparedIter(f.Data.(*prepareJob), lo, hi, o), nil
	}, lower, upper))
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
//
// A range that one table alone holds is read through that table's
// iterator, which finds its first block where the prepare did: no merge
// over the levels and memtables, no search of a level for the table.
func (s *MultiScan) SeekRange(r int) bool {
	if s.closed || r < 0 || r >= len(s.ranges) {
		return false
	}
	rg := &s.ranges[r]
	if j := s.sole[r]; j >= 0 {
		// The table iterator needs no bounds of its own: a seek to a
		// prepared range's Start stops its forward moves at the range's
		// End, and the Iterator applies the bounds too.
		s.it.iter = s.soleIter(&s.jobs[j])
		s.it.applyBounds(rg.Start, rg.End)
	} else {
		s.it.iter = s.merged
		s.it.setBounds(rg.Start, rg.End)
	}
	return s.it.SeekGE(rg.Start)
}

// needsMerge reports whether some range is read through the merge of
// every source.
func (s *MultiScan) needsMerge() bool {
	return slices.Contains(s.sole, -1)
}

// soleIter returns the iterator of j for the ranges it alone holds.
func (s *MultiScan) soleIter(j *prepareJob) *tableIter {
	if j.iter == nil {
		// Every block of the table's ranges is prepared, so the iterator
		// reads nothing and needs no prefetch buffer.
		o := s.tio
		o.ReadaheadSize, o.MaxAutoReadahead, o.AsyncIO = 0, -1, false
		j.iter = s.d.openPreparedIter(j, nil, nil, o)
	}
	return j.iter
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
	s.it.iter = s.merged
	err := s.it.Close()
	if rerr := s.release(); err == nil {
		err = rerr
	}
	return err
}

func (s *MultiScan) release() error {
	var first error
	for i := range s.jobs {
		j := &s.jobs[i]
		if j.iter != nil {
			if err := j.iter.Close(); err != nil && first == nil {
				first = err
			}
			j.iter = nil
		}
		if j.scan != nil {
			if err := j.scan.Close(); err != nil && first == nil {
				first = err
			}
			j.scan = nil
		}
		if j.entry != nil {
			s.d.tables.release(j.entry)
			j.entry = nil
		}
	}
	s.jobs = nil
	if m := s.mem; m != nil {
		// Keep the arrays, not what they point to.
		clear(m.all[:cap(m.all)])
		clear(m.jobs[:cap(m.jobs)])
		clear(m.scans)
		clear(m.files)
		s.sole = nil
		s.mem = nil
		multiScanPool.Put(m)
	}
	return first
}
