package planner

import (
	"bytes"
	"fmt"
	"strings"
)

// KeyRange is one byte range of a lookup over an index's keys: [Start, End),
// a nil Start or End being unbounded.
type KeyRange struct {
	Start, End []byte
	// Point marks an exact point on a unique key: the range holds at most
	// one entry, found with a point lookup of Start.
	Point bool
	// EstBytes estimates the bytes of index entries the range covers; 0
	// when unknown.
	EstBytes int64
}

// Index describes the index a lookup reads.
type Index struct {
	Primary bool
	Unique  bool
	// Covering: the index entries hold every column the query needs, so no
	// row has to be fetched by primary key. Always true for the primary
	// index.
	Covering bool
}

// Hints are what the query tells beyond its ranges.
type Hints struct {
	// Reverse: rows are wanted in descending key order.
	Reverse bool
	// Limit is the number of rows the query will consume at most; 0 when
	// unknown or unlimited.
	Limit int64
	// Probe: the lookup is one probe of a lookup join, made once per outer
	// row (or one run of a lookup repeated for each row of an outer
	// query). A probe reads a handful of entries: it gets no explicit
	// readahead and is never prepared as a MultiScan, whose set-up would
	// cost more than the probe.
	Probe bool
	// Mutable: what the lookup reads can change while the statement runs
	// (in the SQL layer, a transaction's own writes: the statement view of
	// a transaction that has written, or its batch), and a rollback of it
	// reuses its memory. Nothing may then be read lazily from it: points
	// are read at once, in one batch, when the plan starts; several ranges
	// are not prepared as a MultiScan (it would read the reader later) but
	// read by Scans; a deferred readahead starts at once (reopening the
	// iterator later could see other writes); and a fetch seeks one
	// iterator, made with the first step, to each primary key.
	Mutable bool
}

// Kind is an access path.
type Kind uint8

const (
	Empty     Kind = iota // nothing can match: no I/O
	Get                   // one point lookup
	MultiGet              // many point lookups, sorted and batched
	Range                 // one range through an iterator
	MultiScan             // several ranges, prepared together
	Scans                 // several ranges, one iterator each, in order
	FullScan              // the whole index
)

var kindNames = [...]string{Empty: "Empty", Get: "Get", MultiGet: "MultiGet", Range: "Range", MultiScan: "MultiScan", Scans: "Scans", FullScan: "FullScan"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Mode selects how plans are made.
type Mode uint8

const (
	// Planned applies the rules of the package documentation.
	Planned Mode = iota
	// Naive answers every lookup with a plain iterator per range and a Get
	// per fetched row: the baseline to measure plans against.
	Naive
)

// ParseMode parses "planned" or "naive".
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(s) {
	case "planned", "":
		return Planned, nil
	case "naive":
		return Naive, nil
	}
	return 0, fmt.Errorf("planner: unknown mode %q (want planned or naive)", s)
}

func (m Mode) String() string {
	if m == Naive {
		return "naive"
	}
	return "planned"
}

// Plan is a chosen access path.
type Plan struct {
	Kind Kind
	// Ranges are the lookup's ranges, in the order rows must come out.
	Ranges []KeyRange
	// Batch is the keys per call of a MultiGet.
	Batch int
	// Readahead is the explicit readahead of an iterator (Range,
	// FullScan, Scans): 0 leaves the engine's automatic readahead; -1
	// turns readahead off.
	Readahead int64
	// ReadaheadAfter, when positive, defers Readahead and Async until the
	// iterator has returned that many rows: until then readahead is
	// automatic. A full scan whose consumer may stop early (an ORDER BY
	// ... LIMIT, which go-mysql-server does not pass down) then reads no
	// more than it needs.
	ReadaheadAfter int64
	// Async asks for background reads (double-buffered readahead, or a
	// MultiScan's reads issued at once).
	Async bool
	// DontFillCache reads without adding blocks to the block cache: a
	// scan with explicit readahead of at least NoFillBytes, whose blocks
	// would each cost a copy into the cache and evict blocks that point
	// reads want, and which reads them once.
	DontFillCache bool
	// Chunk is the number of ranges a MultiScan prepares at once.
	Chunk int
	// Reverse: iterate each range backwards, ranges in the given order.
	Reverse bool
	// IterPerRange: Scans opens a fresh iterator bounded by each range
	// instead of seeking one iterator from range to range (naive mode).
	IterPerRange bool
	// Fetch is the second step of a non-covering secondary index: rows
	// fetched by primary key. Fetch.Kind is Empty when there is none.
	Fetch Fetch
	// Covering: a secondary index whose entries hold every column the
	// query needs; its rows come from the entries, with no Fetch.
	Covering bool
	// Mutable: the plan is for a reader that can change under the
	// statement (Hints.Mutable): its points are read when the plan starts,
	// and its fetch, if any, seeks one iterator.
	Mutable bool
}

// Fetch is the second step of a secondary-index plan.
type Fetch struct {
	// Kind is Empty (no second step), MultiGet (batched), Get (one
	// lookup per row: a single-row plan, or naive mode) or Scans (one
	// iterator sought to each key: a reader that can change under the
	// statement, Hints.Mutable).
	Kind  Kind
	Batch int
}

// Choose returns the plan for a lookup: the plan that runs, as it runs.
// ranges are in the order rows must come out, ascending (descending with
// h.Reverse, each still [Start, End)); go-mysql-server sorts most
// collections of ranges, not all, and ranges that are unbounded, out of
// order or overlapping are read by Scans, never prepared as a MultiScan.
func Choose(ranges []KeyRange, idx Index, h Hints, o Options) Plan {
	o = o.withDefaults()
	p := Plan{Ranges: ranges, Reverse: h.Reverse, Covering: idx.Covering && !idx.Primary, Mutable: h.Mutable}
	switch {
	case len(ranges) == 0:
		p.Kind = Empty
		return p
	case o.Mode == Naive:
		// Every row by primary key, covering index or not.
		p.Kind, p.IterPerRange, p.Covering = Scans, true, false
		if !idx.Primary {
			p.Fetch = Fetch{Kind: Get, Batch: 1}
			if h.Mutable {
				p.Fetch = Fetch{Kind: Scans}
			}
		}
		return p
	}

	allPoints := true
	for i := range ranges {
		if !ranges[i].Point {
			allPoints = false
			break
		}
	}
	switch {
	case allPoints && len(ranges) == 1:
		p.Kind = Get
	case allPoints:
		p.Kind, p.Batch = MultiGet, o.MultiGetBatch
	case len(ranges) == 1 && ranges[0].Start == nil && ranges[0].End == nil:
		p.Kind = FullScan
		est := ranges[0].EstBytes
		switch {
		case h.Reverse || h.Probe || (h.Limit > 0 && h.Limit <= o.SmallLimit):
		case est > 0 && est <= o.ShortRangeBytes:
			p.Readahead = -1
		case est > 0 && est < o.LongRangeBytes:
		default:
			p.Readahead, p.Async = o.FullScanReadahead, true
			p.DontFillCache = est <= 0 || est >= o.NoFillBytes
			if h.Limit == 0 {
				p.ReadaheadAfter = o.SmallLimit
			}
		}
	case len(ranges) == 1:
		p.Kind = Range
		est := ranges[0].EstBytes
		switch {
		case h.Reverse:
			// Readahead never runs backwards: automatic.
		case est >= o.LongRangeBytes && !h.Probe && (h.Limit == 0 || h.Limit > o.SmallLimit):
			p.Readahead = min(max(roundUp(est/4, readaheadUnit), o.MinReadahead), o.MaxReadahead)
			p.Async, p.DontFillCache = true, est >= o.NoFillBytes
		case est > 0 && est <= o.ShortRangeBytes:
			p.Readahead = -1
		}
	case h.Reverse || h.Probe || h.Mutable || !preparable(ranges):
		// With the engine's automatic readahead.
		p.Kind = Scans
	default:
		p.Kind, p.Chunk = MultiScan, o.MultiScanChunk
		var est int64
		for i := range ranges {
			if ranges[i].EstBytes <= 0 && !ranges[i].Point {
				est = -1 // unknown
				break
			}
			est += ranges[i].EstBytes
		}
		p.Async = o.MultiScanAsyncBytes >= 0 && (est < 0 || est >= o.MultiScanAsyncBytes)
	}
	if h.Mutable {
		// Read at once: every point in one batch, readahead from the start.
		if p.Kind == MultiGet {
			p.Batch = len(ranges)
		}
		p.ReadaheadAfter = 0
	}
	if !idx.Covering && !idx.Primary {
		switch {
		case h.Mutable:
			p.Fetch = Fetch{Kind: Scans}
		case p.Kind == Get:
			p.Fetch = Fetch{Kind: Get, Batch: 1}
		default:
			p.Fetch = Fetch{Kind: MultiGet, Batch: o.FetchBatch}
		}
	}
	return p
}

// preparable reports whether ranges can be prepared as one MultiScan:
// each bounded, ascending, without overlaps.
func preparable(ranges []KeyRange) bool {
	for i := range ranges {
		if ranges[i].End == nil {
			return false
		}
		if i > 0 && bytes.Compare(ranges[i-1].End, ranges[i].Start) > 0 {
			return false
		}
	}
	return true
}

// String describes the plan as EXPLAIN shows it, for example
// "MultiGet(keys=100, batch=32)", "Range(readahead=1MiB, async)" or
// "MultiScan(ranges=10, async) then MultiGet(batch=32) by primary key".
func (p Plan) String() string {
	var b strings.Builder
	p.describe(&b)
	return b.String()
}

func (p Plan) describe(b *strings.Builder) {
	switch p.Kind {
	case Empty:
		b.WriteString("Empty()")
	case Get:
		b.WriteString("Get(key=1)")
	case MultiGet:
		fmt.Fprintf(b, "MultiGet(keys=%d, batch=%d", len(p.Ranges), p.Batch)
		if p.Reverse {
			b.WriteString(", reverse")
		}
		b.WriteString(")")
	case Range, FullScan:
		fmt.Fprintf(b, "%s(", p.Kind)
		writeReadahead(b, p.Readahead, p.ReadaheadAfter)
		if p.Async {
			b.WriteString(", async")
		}
		if p.DontFillCache {
			b.WriteString(", no cache fill")
		}
		if p.Reverse {
			b.WriteString(", reverse")
		}
		b.WriteString(")")
	case MultiScan:
		fmt.Fprintf(b, "MultiScan(ranges=%d", len(p.Ranges))
		if p.Chunk > 0 && len(p.Ranges) > p.Chunk {
			fmt.Fprintf(b, ", chunk=%d", p.Chunk)
		}
		if p.Async {
			b.WriteString(", async")
		}
		b.WriteString(")")
	case Scans:
		fmt.Fprintf(b, "Scans(ranges=%d, ", len(p.Ranges))
		writeReadahead(b, p.Readahead, p.ReadaheadAfter)
		if p.IterPerRange {
			b.WriteString(", iterator per range")
		}
		if p.Reverse {
			b.WriteString(", reverse")
		}
		b.WriteString(")")
	default:
		b.WriteString(p.Kind.String())
	}
	if p.Covering {
		b.WriteString(" covering")
	}
	switch p.Fetch.Kind {
	case MultiGet:
		fmt.Fprintf(b, " then MultiGet(batch=%d) by primary key", p.Fetch.Batch)
	case Get:
		if p.Kind == Get {
			b.WriteString(" then Get by primary key")
		} else {
			b.WriteString(" then Get per row by primary key")
		}
	case Scans:
		b.WriteString(" then one iterator sought to each primary key")
	}
}

func writeReadahead(b *strings.Builder, n, after int64) {
	switch {
	case n > 0:
		b.WriteString("readahead=")
		b.WriteString(formatBytes(n))
		if after > 0 {
			fmt.Fprintf(b, " after %d rows", after)
		}
	case n < 0:
		b.WriteString("readahead=off")
	default:
		b.WriteString("readahead=auto")
	}
}

// readaheadUnit is the granularity of a readahead sized from an estimate.
const readaheadUnit = 64 << 10

func roundUp(n, unit int64) int64 { return (n + unit - 1) / unit * unit }

// formatBytes renders a size as "512KiB", "1MiB" or "300B".
func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}
