package table

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/strata-db/strata/kv/filter"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/vfs"
)

// Writer writes a table file in one pass: point entries in increasing
// internal-key order through Add, range tombstones in any order through
// AddRangeDelete, then Close. Writes reach the file through a buffer, in few
// large calls.
//
// Errors: a key that is out of order or malformed is rejected with an error
// and leaves the writer as it was; an I/O error is sticky and returned by
// every later call. Close always closes the file.
//
// A Writer is not safe for concurrent use.
type Writer struct {
	f       vfs.File
	name    string
	opts    WriterOptions
	bw      *bufio.Writer
	off     uint64 // file offset of the next byte handed to bw
	baseCtx uint32

	data  blockWriter
	index blockWriter
	meta  blockWriter // filter, range deletions, properties, metaindex: one at a time

	lastKey  []byte // the last point key added
	firstKey []byte // the first key of the data block being built
	// The index entry of the last data block waits for the next key, so
	// that its separator can be short.
	pending      bool
	pendingH     BlockHandle
	pendingFirst []byte
	sepBuf       []byte
	valBuf       []byte

	filter     *filter.Builder
	tombstones []Tombstone
	hasSeq     bool

	props       Properties
	compressBuf []byte
	footerBuf   []byte

	err    error // sticky: an I/O error or invalid options
	closed bool
	md     *Metadata
}

// newBaseContext returns a file's base context checksum: random and
// non-zero. Tests replace it to write reproducible files.
var newBaseContext = func() uint32 {
	for {
		if v := rand.Uint32(); v != 0 {
			return v
		}
	}
}

// NewWriter returns a writer of a new table into f, which must be empty and
// open for writing; name is used in errors. The writer owns f from now on
// and closes it in Close. Invalid options are reported by the first Add,
// AddRangeDelete or Close.
func NewWriter(f vfs.File, name string, opts WriterOptions) *Writer {
	w := &Writer{f: f, name: name, baseCtx: newBaseContext()}
	if err := opts.Validate(); err != nil {
		w.err = err
	}
	w.opts = opts.EnsureDefaults()
	w.bw = bufio.NewWriterSize(f, max(w.opts.WriteBufferSize, minWriteBufferSize))
	w.data.init(max(w.opts.RestartInterval, 1))
	w.index.init(max(w.opts.IndexRestartInterval, 1))
	w.meta.init(1)
	if w.opts.FilterPolicy.Type != filter.None {
		w.filter = w.opts.FilterPolicy.NewBuilder()
	}
	w.props.Compression = w.opts.Compression
	w.props.FilterPolicy = policyName(w.opts.FilterPolicy)
	w.props.FormatVersion = FormatVersion
	w.props.FileNum = w.opts.FileNum
	return w
}

// policyName names a filter policy for the properties block.
func policyName(p filter.Policy) string {
	switch {
	case p.Type == filter.None:
		return "none"
	case p.Type == filter.Ribbon && p.FPRate > 0:
		return fmt.Sprintf("%s(fp=%g)", p.Type, p.FPRate)
	}
	bits := p.BitsPerKey
	if bits == 0 {
		bits = filter.DefaultBitsPerKey
	}
	return fmt.Sprintf("%s(bits=%g)", p.Type, bits)
}

// Add appends a point entry. ikey is an internal key that sorts strictly
// after the previous one (base.Compare); its kind must not be
// base.KindRangeDelete (use AddRangeDelete) or base.KindMax. The writer
// copies ikey and value.
func (w *Writer) Add(ikey, value []byte) error {
	switch {
	case w.closed:
		return ErrClosed
	case w.err != nil:
		return w.err
	case !base.Valid(ikey):
		return fmt.Errorf("%w: %q is shorter than an internal key trailer", ErrInvalidKey, ikey)
	}
	if k := base.KindOfKey(ikey); k == base.KindRangeDelete || k == base.KindMax {
		return fmt.Errorf("%w: %s: kind %s is not a point entry", ErrInvalidKey, base.FormatKey(ikey), k)
	}
	if w.lastKey != nil && base.Compare(w.lastKey, ikey) >= 0 {
		return fmt.Errorf("%w: %s added after %s", ErrOutOfOrder, base.FormatKey(ikey), base.FormatKey(w.lastKey))
	}
	if len(ikey)+len(value) > maxBlockLen-64 {
		return fmt.Errorf("%w: %s: entry of %d bytes exceeds the block limit of %d", ErrInvalidKey, base.FormatKey(ikey), len(ikey)+len(value), maxBlockLen-64)
	}
	if !w.data.empty() && w.blockFull(len(ikey), len(value)) {
		if err := w.flushDataBlock(); err != nil {
			return err
		}
	}
	if w.pending {
		w.sepBuf = base.Separator(w.sepBuf[:0], w.lastKey, ikey)
		w.addIndexEntry(w.sepBuf)
	}
	if w.data.empty() {
		w.firstKey = append(w.firstKey[:0], ikey...)
	}
	w.data.add(ikey, value)

	ukey := base.UserKey(ikey)
	if w.filter != nil && (w.lastKey == nil || !bytes.Equal(base.UserKey(w.lastKey), ukey)) {
		w.filter.Add(filter.Hash(ukey))
	}
	p := &w.props
	if p.NumEntries == 0 {
		p.SmallestPoint = slices.Clone(ikey)
	}
	p.NumEntries++
	if base.KindOfKey(ikey) == base.KindDelete {
		p.NumDeletions++
	}
	p.RawKeySize += uint64(len(ikey))
	p.RawValueSize += uint64(len(value))
	w.noteSeq(base.Seq(ikey))
	w.lastKey = append(w.lastKey[:0], ikey...)
	return nil
}

// AddRangeDelete records a range tombstone deleting the user keys in
// [start, end) below seq. Tombstones may come in any order and overlap;
// the writer copies them and sorts them at Close.
func (w *Writer) AddRangeDelete(start, end []byte, seq base.SeqNum) error {
	switch {
	case w.closed:
		return ErrClosed
	case w.err != nil:
		return w.err
	case bytes.Compare(start, end) >= 0:
		return fmt.Errorf("%w: range deletion [%q, %q) is empty or inverted", ErrInvalidKey, start, end)
	case seq > base.SeqNumMax:
		return fmt.Errorf("%w: range deletion [%q, %q): sequence number %d exceeds the maximum", ErrInvalidKey, start, end, seq)
	}
	w.tombstones = append(w.tombstones, Tombstone{Start: slices.Clone(start), End: slices.Clone(end), Seq: seq})
	w.props.NumRangeDeletions++
	w.noteSeq(seq)
	return nil
}

func (w *Writer) noteSeq(s base.SeqNum) {
	if !w.hasSeq {
		w.props.SmallestSeq, w.props.LargestSeq, w.hasSeq = s, s, true
		return
	}
	w.props.SmallestSeq = min(w.props.SmallestSeq, s)
	w.props.LargestSeq = max(w.props.LargestSeq, s)
}

// EstimatedSize returns about how large the file would be if closed now.
func (w *Writer) EstimatedSize() uint64 {
	return w.off + uint64(w.data.estimatedSize()+w.index.estimatedSize()) + FooterLen
}

// blockFull reports whether the data block should be closed before an
// entry of these lengths: it has reached the target size, or the entry
// would overflow it and it is already within the deviation margin.
func (w *Writer) blockFull(keyLen, valueLen int) bool {
	size := w.data.estimatedSize()
	if size >= w.opts.BlockSize {
		return true
	}
	if w.data.estimatedSizeAfter(keyLen, valueLen) <= w.opts.BlockSize {
		return false
	}
	return size*100 >= w.opts.BlockSize*(100-w.opts.BlockSizeDeviation)
}

// flushDataBlock writes the data block being built; its index entry waits
// for the next key (or Close).
func (w *Writer) flushDataBlock() error {
	h, err := w.writeBlock(w.data.finish(), w.opts.Compression)
	w.data.reset()
	if err != nil {
		return err
	}
	w.pending, w.pendingH = true, h
	w.firstKey, w.pendingFirst = w.pendingFirst, w.firstKey
	w.props.NumDataBlocks++
	return nil
}

func (w *Writer) addIndexEntry(sep []byte) {
	w.valBuf = appendIndexValue(w.valBuf[:0], w.pendingH, w.pendingFirst)
	w.index.add(sep, w.valBuf)
	w.pending = false
}

// writeBlock compresses raw with c when that saves enough, appends the
// trailer and hands the block to the buffer. raw's spare capacity may be
// used.
func (w *Writer) writeBlock(raw []byte, c Compression) (BlockHandle, error) {
	if w.err != nil {
		return BlockHandle{}, w.err
	}
	payload, typ := raw, NoCompression
	if c != NoCompression {
		out, ok, err := compressBlock(c, raw, w.compressBuf)
		if err != nil {
			w.err = fmt.Errorf("table: %s: %w", w.name, err)
			return BlockHandle{}, w.err
		}
		w.compressBuf = out[:0]
		if ok {
			payload, typ = out, c
		}
	}
	h := BlockHandle{Offset: w.off, Length: uint64(len(payload))}
	b := appendTrailer(payload, typ, w.baseCtx, w.off)
	if typ != NoCompression {
		w.compressBuf = b[:0] // keep whatever capacity the trailer needed
	}
	if err := w.write(b); err != nil {
		return BlockHandle{}, err
	}
	return h, nil
}

func (w *Writer) write(b []byte) error {
	if _, err := w.bw.Write(b); err != nil {
		w.err = fmt.Errorf("table: writing %s: %w", w.name, err)
		return w.err
	}
	w.off += uint64(len(b))
	return nil
}

// Close writes the rest of the table (the last data block, the filter,
// index, range-deletion, properties and metaindex blocks and the footer),
// syncs the file and closes it. The file is closed even when Close fails.
func (w *Writer) Close() error {
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	if w.err == nil {
		w.err = w.finish()
	}
	if w.err == nil {
		if err := w.bw.Flush(); err != nil {
			w.err = fmt.Errorf("table: writing %s: %w", w.name, err)
		} else if err := w.f.Sync(); err != nil {
			w.err = fmt.Errorf("table: syncing %s: %w", w.name, err)
		}
	}
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("table: closing %s: %w", w.name, err)
	}
	if w.err != nil {
		return w.err
	}
	p := w.props
	w.md = &Metadata{
		Size:              w.off,
		Smallest:          p.Smallest,
		Largest:           p.Largest,
		SmallestSeq:       p.SmallestSeq,
		LargestSeq:        p.LargestSeq,
		NumEntries:        p.NumEntries,
		NumRangeDeletions: p.NumRangeDeletions,
		Properties:        p,
	}
	return nil
}

// finish writes everything after the last data entry.
func (w *Writer) finish() error {
	if !w.data.empty() {
		if err := w.flushDataBlock(); err != nil {
			return err
		}
	}
	if w.pending {
		w.sepBuf = base.Successor(w.sepBuf[:0], w.lastKey)
		w.addIndexEntry(w.sepBuf)
	}
	p := &w.props
	p.DataSize = w.off
	if w.lastKey != nil {
		p.LargestPoint = slices.Clone(w.lastKey)
	}

	type metaEntry struct {
		name string
		h    BlockHandle
	}
	var metas []metaEntry // added in name order
	if w.filter != nil && p.NumEntries > 0 {
		h, err := w.writeBlock(w.filter.Finish(w.meta.buf[:0]), NoCompression)
		if err != nil {
			return err
		}
		p.FilterSize = h.Length + TrailerLen
		metas = append(metas, metaEntry{metaFilterName, h})
	}
	indexH, err := w.writeBlock(w.index.finish(), w.opts.Compression)
	if err != nil {
		return err
	}
	p.IndexSize = indexH.Length + TrailerLen

	var rangeDelH BlockHandle
	if len(w.tombstones) > 0 {
		if rangeDelH, err = w.writeBlock(encodeRangeDels(w.tombstones, &w.meta), NoCompression); err != nil {
			return err
		}
	}
	w.setBounds()
	propsH, err := w.writeBlock(p.encode(&w.meta), NoCompression)
	if err != nil {
		return err
	}
	metas = append(metas, metaEntry{metaPropertiesName, propsH})
	if len(w.tombstones) > 0 {
		metas = append(metas, metaEntry{metaRangeDelName, rangeDelH})
	}

	w.meta.reset()
	for _, m := range metas {
		w.valBuf = AppendHandle(w.valBuf[:0], m.h)
		w.meta.add([]byte(m.name), w.valBuf)
	}
	metaH, err := w.writeBlock(w.meta.finish(), NoCompression)
	if err != nil {
		return err
	}
	ft := footer{checksumType: ChecksumCRC32C, version: FormatVersion, baseCtx: w.baseCtx, metaindex: metaH, index: indexH}
	w.footerBuf = ft.encode(w.footerBuf[:0], w.off)
	return w.write(w.footerBuf)
}

// setBounds computes the file's bounds from its point keys and tombstones
// (sorted by encodeRangeDels).
func (w *Writer) setBounds() {
	p := &w.props
	p.Smallest, p.Largest = p.SmallestPoint, p.LargestPoint
	if len(w.tombstones) == 0 {
		return
	}
	t0 := w.tombstones[0]
	if s := base.AppendKey(nil, t0.Start, t0.Seq, base.KindRangeDelete); p.Smallest == nil || base.Compare(s, p.Smallest) < 0 {
		p.Smallest = s
	}
	end := w.tombstones[0].End
	for _, t := range w.tombstones[1:] {
		if bytes.Compare(t.End, end) > 0 {
			end = t.End
		}
	}
	if l := base.MakeRangeDeleteSentinel(nil, end); p.Largest == nil || base.Compare(l, p.Largest) > 0 {
		p.Largest = l
	}
}

// Metadata describes a table written by a Writer.
type Metadata struct {
	// Size is the file's length in bytes.
	Size uint64
	// Smallest and Largest bound every key of the file, range tombstones
	// included (see Properties); nil for an empty table.
	Smallest, Largest []byte
	// SmallestSeq and LargestSeq bound the sequence numbers of the file's
	// entries and tombstones.
	SmallestSeq, LargestSeq base.SeqNum
	// NumEntries and NumRangeDeletions count point entries and tombstones.
	NumEntries, NumRangeDeletions uint64
	// Properties are the properties written into the file.
	Properties Properties
}

// Metadata returns the description of the finished table; ErrNotFinished
// until Close has succeeded.
func (w *Writer) Metadata() (*Metadata, error) {
	if w.md == nil {
		if w.closed && w.err != nil {
			return nil, w.err
		}
		return nil, ErrNotFinished
	}
	return w.md, nil
}
