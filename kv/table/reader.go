package table

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/strata-db/strata/kv/filter"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/vfs"
)

// tailReadLen is how much of a file's end NewReader reads at once, hoping
// that footer, metaindex, properties, index and filter all lie in it; when
// they do not, one more read fetches the rest.
const tailReadLen = 64 << 10

// Reader reads one table file. NewReader loads and verifies everything but
// the data blocks: the footer, metaindex, properties, index, filter and
// range deletions, which stay in memory for the reader's life. Data blocks
// are read on demand, through the block cache when there is one.
//
// A Reader is safe for concurrent use by any number of iterators and
// lookups. Close it after every iterator is closed.
type Reader struct {
	file    vfs.File
	name    string
	opts    ReaderOptions
	size    uint64
	baseCtx uint32

	index   []indexEntry
	seps    sepSearch
	dataEnd uint64
	// filter is valid when hasFilter; it aliases filterData.
	filter     filter.Reader
	hasFilter  bool
	filterData []byte
	props      *Properties
	rangeDels  []Tombstone

	// bufPool holds *blockBufs for reads that fill the cache, getPool
	// *getState for Get, multiGetPool *multiGetState for MultiGet.
	bufPool      sync.Pool
	getPool      sync.Pool
	multiGetPool sync.Pool
	closed       atomic.Bool

	// mapped: the file is a vfs.Mapped. rawLoads and compressedLoads count
	// the blocks loaded that were stored raw and compressed (mappedFast).
	mapped          bool
	rawLoads        atomic.Uint64
	compressedLoads atomic.Uint64
}

// NewReader opens the table in f, whose name is used in errors and whose
// blocks are cached under opts.CacheNS and opts.FileNum. The reader owns f
// and closes it in Close; if NewReader fails it closes f itself.
//
// Every error from malformed bytes is a corruption error
// (base.IsCorruption) naming the file and the offset.
func NewReader(f vfs.File, name string, opts ReaderOptions) (*Reader, error) {
	r := &Reader{file: f, name: name, opts: opts}
	_, r.mapped = f.(vfs.Mapped)
	r.bufPool.New = func() any { return new(blockBufs) }
	r.getPool.New = func() any { return new(getState) }
	r.multiGetPool.New = func() any { return new(multiGetState) }
	if err := r.open(); err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

// unmapped is a mapped file read with pread: it hides the mapping from
// prefetch.ReadAt.
type unmapped struct{ io.ReaderAt }

// open reads and checks the file's tail.
func (r *Reader) open() error {
	size, err := r.file.Size()
	if err != nil {
		return fmt.Errorf("table: %s: %w", r.name, err)
	}
	if size < FooterLen {
		return base.Corruptf(r.name, 0, "file of %d bytes is too short for a %d-byte table footer", size, FooterLen)
	}
	r.size = uint64(size)
	// The tail is read once, into memory of its own: through the file's
	// mapping it would cost a page fault per page of a mapping nobody has
	// touched yet (about 30 µs for 64 KiB against 5 for a pread from the
	// page cache), and those slow copies would tell the pool's latency
	// gauge that reads reach the device.
	env := readEnv{src: r.file, sink: stats.Sink{DB: r.opts.Stats}}
	if r.mapped {
		env.src = unmapped{r.file}
	}

	// One read for the tail, which usually holds every meta block.
	tailStart := r.size - min(r.size, tailReadLen)
	var tail []byte
	if tail, err = r.readRaw(env, tailStart, int(r.size-tailStart), new([]byte)); err != nil {
		return err
	}
	ft, err := decodeFooter(tail[len(tail)-FooterLen:], r.name, r.size)
	if err != nil {
		return err
	}
	r.baseCtx = ft.baseCtx
	footerOff := r.size - FooterLen

	// metaBlock returns the verified, decompressed block at h from the tail,
	// reading whatever the tail lacks.
	metaBlock := func(h BlockHandle) ([]byte, error) {
		if h.Offset < tailStart {
			more, err := r.readRaw(env, h.Offset, int(tailStart-h.Offset), new([]byte))
			if err != nil {
				return nil, err
			}
			tail = append(more, tail...)
			tailStart = h.Offset
		}
		raw := tail[h.Offset-tailStart : h.End()-tailStart]
		payload, c, err := verifyBlock(raw, r.name, r.baseCtx, h.Offset)
		if err != nil || c == NoCompression {
			return payload, err
		}
		return decompressBlock(c, payload, nil, r.name, h.Offset)
	}

	// The metaindex: names to handles.
	metaindex, err := metaBlock(ft.metaindex)
	if err != nil {
		return err
	}
	var filterH, rangeDelH, propsH *BlockHandle
	var prevName []byte
	err = walkBlock(metaindex, r.name, ft.metaindex.Offset, func(name, v []byte) error {
		if prevName != nil && bytes.Compare(prevName, name) >= 0 {
			return base.Corruptf(r.name, int64(ft.metaindex.Offset), "metaindex names out of order: %q after %q", name, prevName)
		}
		prevName = append(prevName[:0:0], name...)
		h, n := decodeHandle(v)
		if n == 0 || n != len(v) {
			return base.Corruptf(r.name, int64(ft.metaindex.Offset), "metaindex entry %q: malformed block handle", name)
		}
		if !handleWithin(h, ft.metaindex.Offset) || h.Length > maxBlockLen {
			return base.Corruptf(r.name, int64(ft.metaindex.Offset), "metaindex entry %q: block %s does not lie before the metaindex", name, h)
		}
		switch string(name) {
		case metaFilterName:
			filterH = &h
		case metaRangeDelName:
			rangeDelH = &h
		case metaPropertiesName:
			propsH = &h
		}
		return nil
	})
	if err != nil {
		return err
	}
	if propsH == nil {
		return base.Corruptf(r.name, int64(ft.metaindex.Offset), "metaindex has no %q entry", metaPropertiesName)
	}
	if !handleWithin(ft.index, ft.metaindex.Offset) || ft.index.Length > maxBlockLen {
		return base.Corruptf(r.name, int64(footerOff+footerIndexOff), "index block %s does not lie before the metaindex", ft.index)
	}

	// The meta blocks start where the data blocks end: fetch them all (one
	// more read at most), lowest first.
	metaStart := min(ft.index.Offset, propsH.Offset)
	for _, h := range []*BlockHandle{filterH, rangeDelH} {
		if h != nil {
			metaStart = min(metaStart, h.Offset)
		}
	}
	if metaStart < tailStart {
		more, err := r.readRaw(env, metaStart, int(tailStart-metaStart), new([]byte))
		if err != nil {
			return err
		}
		tail = append(more, tail...)
		tailStart = metaStart
	}

	propsBlock, err := metaBlock(*propsH)
	if err != nil {
		return err
	}
	if r.props, err = decodeProperties(propsBlock, r.name, propsH.Offset); err != nil {
		return err
	}
	indexBlock, err := metaBlock(ft.index)
	if err != nil {
		return err
	}
	if r.index, r.dataEnd, err = decodeIndex(indexBlock, r.name, ft.index.Offset); err != nil {
		return err
	}
	r.seps = newSepSearch(r.index)
	if filterH != nil {
		fb, err := metaBlock(*filterH)
		if err != nil {
			return err
		}
		// A cache-line-aligned copy: each Bloom probe then touches one line.
		r.filterData = vfs.AlignedBuffer(len(fb), 64)
		copy(r.filterData, fb)
		if r.filter, err = filter.Decode(r.filterData); err != nil {
			return base.Corruptf(r.name, int64(filterH.Offset), "filter block: %v", err)
		}
		r.hasFilter = true
	}
	if rangeDelH != nil {
		rd, err := metaBlock(*rangeDelH)
		if err != nil {
			return err
		}
		if r.rangeDels, err = decodeRangeDels(rd, r.name, rangeDelH.Offset); err != nil {
			return err
		}
	}
	return r.checkConsistency(ft, metaStart, filterH)
}

// checkConsistency cross-checks footer, index and properties, so that a
// reader never answers from a file whose parts disagree.
func (r *Reader) checkConsistency(ft footer, metaStart uint64, filterH *BlockHandle) error {
	p := r.props
	fail := func(format string, args ...any) error {
		return base.Corruptf(r.name, int64(ft.index.Offset), format, args...)
	}
	switch {
	case r.dataEnd != metaStart:
		return fail("data blocks end at %d but meta blocks start at %d", r.dataEnd, metaStart)
	case p.DataSize != r.dataEnd:
		return fail("properties give %d bytes of data blocks, the index %d", p.DataSize, r.dataEnd)
	case p.NumDataBlocks != uint64(len(r.index)):
		return fail("properties give %d data blocks, the index %d", p.NumDataBlocks, len(r.index))
	case (p.NumEntries == 0) != (len(r.index) == 0):
		return fail("properties give %d entries for %d data blocks", p.NumEntries, len(r.index))
	case p.FormatVersion != ft.version:
		return fail("properties give format version %d, the footer %d", p.FormatVersion, ft.version)
	case p.IndexSize != ft.index.Length+TrailerLen:
		return fail("properties give an index of %d bytes, the footer %d", p.IndexSize, ft.index.Length+TrailerLen)
	case p.NumRangeDeletions != uint64(len(r.rangeDels)):
		return fail("properties give %d range deletions, the block holds %d", p.NumRangeDeletions, len(r.rangeDels))
	case p.FileNum != 0 && r.opts.FileNum != 0 && p.FileNum != r.opts.FileNum:
		return fail("the file holds table %06d, not table %06d", p.FileNum, r.opts.FileNum)
	}
	if filterH != nil && p.FilterSize != filterH.Length+TrailerLen || filterH == nil && p.FilterSize != 0 {
		return fail("properties give a filter of %d bytes, the metaindex disagrees", p.FilterSize)
	}
	if len(r.index) > 0 {
		if !bytes.Equal(r.index[0].first, p.SmallestPoint) {
			return fail("the first block starts at %s, the properties' smallest point is %s",
				base.FormatKey(r.index[0].first), base.FormatKey(p.SmallestPoint))
		}
		if last := r.index[len(r.index)-1].sep; base.Compare(p.LargestPoint, last) > 0 {
			return fail("the properties' largest point %s is above the last separator %s",
				base.FormatKey(p.LargestPoint), base.FormatKey(last))
		}
	}
	return nil
}

// Name returns the name the reader was opened with.
func (r *Reader) Name() string { return r.name }

// Size returns the file's length.
func (r *Reader) Size() uint64 { return r.size }

// Properties returns the table's properties. Do not modify them.
func (r *Reader) Properties() *Properties { return r.props }

// RangeDeletes returns the table's range tombstones, sorted by start key
// (then sequence number descending). Do not modify them.
func (r *Reader) RangeDeletes() []Tombstone { return r.rangeDels }

// DataEnd returns the offset where the data blocks end: reads of data
// (readahead included) never need to go past it.
func (r *Reader) DataEnd() uint64 { return r.dataEnd }

// NumDataBlocks returns the number of data blocks.
func (r *Reader) NumDataBlocks() int { return len(r.index) }

// Close closes the file. Iterators must be closed first; blocks of the
// file may stay in the cache.
func (r *Reader) Close() error {
	if r.closed.Swap(true) {
		return ErrClosed
	}
	if err := r.file.Close(); err != nil {
		return fmt.Errorf("table: closing %s: %w", r.name, err)
	}
	return nil
}

// seekIndex returns the position of the first index entry whose separator
// is >= key: the only block that can hold the first entry >= key (len(index)
// when key is past every separator). A search key of kind base.KindMax is
// never stored, so a block whose separator equals it holds only smaller
// keys and is skipped too.
func (r *Reader) seekIndex(key []byte) int {
	return r.seps.search(r.index, key)
}

// seekIndexUser is seekIndex for the first entry of user key ukey.
func (r *Reader) seekIndexUser(ukey []byte) int {
	var buf [64]byte
	return r.seekIndex(base.MakeSearchKey(buf[:0], ukey, base.SeqNumMax))
}

// BlocksInRange appends to dst the handles of the data blocks that may hold
// user keys in [lower, upper) (nil lower: from the start; nil upper: to the
// end), in file order, and returns dst. The index's first keys exclude the
// blocks that begin at or past upper without reading them. This is the set
// of blocks a scan of the range reads.
func (r *Reader) BlocksInRange(lower, upper []byte, dst []BlockHandle) []BlockHandle {
	i := 0
	if lower != nil {
		i = r.seekIndexUser(lower)
	}
	for ; i < len(r.index); i++ {
		if upper != nil && bytes.Compare(base.UserKey(r.index[i].first), upper) >= 0 {
			break
		}
		dst = append(dst, r.index[i].h)
	}
	return dst
}

// ApproximateOffset returns about how many bytes of data blocks precede the
// first entry of ukey: the offset of the block that would hold it, or
// DataEnd when ukey is past every key.
func (r *Reader) ApproximateOffset(ukey []byte) uint64 {
	i := r.seekIndexUser(ukey)
	if i == len(r.index) {
		return r.dataEnd
	}
	return r.index[i].h.Offset
}
