package table

import (
	"bytes"
	"fmt"
	"math"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/prefetch"
	"github.com/strata-db/strata/kv/stats"
)

// noBlock is the "no data block loaded" value of Iter.blockOff. It cannot
// be 0: the first data block of every file starts at offset 0, and an
// iterator that took 0 for "nothing loaded" would believe it already held
// that block.
const noBlock = math.MaxUint64

// iterPos says where an Iter stands.
type iterPos uint8

const (
	posNone    iterPos = iota // never positioned
	posValid                  // on an entry
	posAtEnd                  // exhausted going forward: past the last entry or Upper
	posAtStart                // exhausted going backward: before the first entry or Lower
)

var _ base.InternalIterator = (*Iter)(nil)

// Iter iterates over the point entries of a table, in internal-key order.
// It is two-level: a position in the reader's in-memory index selects a
// data block, which a BlockIter walks. The iterator holds the current data
// block (pinned in the block cache, or in its own buffer when there is no
// cache, with DontFillCache, or when the block is read in place from a
// mapped file) and keeps it while a seek lands in the same block again.
//
// Iter implements base.InternalIterator. After a forward move returns nil,
// Prev acts as Last; after a backward move returns nil, Next acts as First.
// Bounds: forward moves stop at Upper and backward moves at Lower; seeks are
// clamped into [Lower, Upper) and blocks wholly outside it are not read.
//
// Blocks that are not in the block cache come through the iterator's own
// prefetch buffer (kv/prefetch), which reads ahead as IterOptions say:
// automatically once it sees adjacent block reads, by a fixed amount, and
// in the background with AsyncIO. The buffer reads the reader's file (no
// file is opened per iterator) and never past the block holding Upper.
// With IterOptions.Prepared, blocks of the prepared scan come from it.
//
// An Iter is not safe for concurrent use; many Iters may share one Reader.
type Iter struct {
	r                  *Reader
	lower, upper       []byte // user-key bounds, nil when open
	lowerKey, upperKey []byte // search keys for the bounds
	env                readEnv
	bufs               blockBufs
	pf                 prefetch.Buffer

	// fwdUpper is the bound forward moves stop at: upper, or, after a seek
	// into a range of prep, the lesser of upper and the range's End.
	fwdUpper []byte
	// below is the index position of the loaded block when its separator,
	// and so every key in it, is known to lie below fwdUpper, and -1 when
	// that is not known: forward moves inside such a block compare no key
	// with the bound. Every change of fwdUpper resets it.
	below int
	// straddle is the index position of the loaded block when its
	// separator is known not to lie below fwdUpper (the block may hold the
	// bound), and -1 when that is not known: the separator is compared
	// once per block, each entry's key still is. Reset with below.
	straddle int
	prep     *PreparedScan
	prepHint int // position in prep.blocks of the last prepared block used
	initErr  error

	idx      int // index position of the loaded block
	pos      iterPos
	data     BlockIter
	block    BlockRef
	blockOff uint64 // offset of the loaded block, noBlock when none
	err      error
	closed   bool
}

// NewIter returns an iterator over the table's point entries. The bounds in
// opts are not copied: keep them unchanged while the iterator lives.
func (r *Reader) NewIter(opts IterOptions) *Iter {
	it := new(Iter)
	r.InitIter(it, opts)
	return it
}

// InitIter makes it an iterator over the table's point entries, as NewIter
// would, reusing the buffers of its former life: it must be a zero Iter or
// one that was closed, and nothing may use it under its former identity
// (an owner that pools iterators calls it).
func (r *Reader) InitIter(it *Iter, opts IterOptions) {
	bufs, lowerKey, upperKey, data := it.bufs, it.lowerKey[:0], it.upperKey[:0], it.data
	data.Reset()
	*it = Iter{r: r, lower: opts.Lower, upper: opts.Upper, fwdUpper: opts.Upper, below: -1, straddle: -1, idx: -1, blockOff: noBlock,
		bufs: bufs, data: data}
	if opts.Lower != nil {
		it.lowerKey = base.MakeSearchKey(lowerKey, opts.Lower, base.SeqNumMax)
	}
	if opts.Upper != nil {
		it.upperKey = base.MakeSearchKey(upperKey, opts.Upper, base.SeqNumMax)
	}
	it.env = readEnv{
		src:    r.file,
		sink:   stats.Sink{DB: r.opts.Stats, Op: opts.Stats},
		fill:   !opts.DontFillCache,
		budget: opts.FillBudget,
		bufs:   &it.bufs,
	}
	if p := opts.Prepared; p != nil {
		switch {
		case p.r != r:
			it.initErr = fmt.Errorf("table: %s: IterOptions.Prepared was prepared on %s", r.name, p.r.name)
		case !p.acquire():
			it.initErr = fmt.Errorf("table: %s: IterOptions.Prepared is closed", r.name)
		default:
			it.prep = p
		}
	}
	if po := opts.prefetchOptions(r.opts.Pool, 0, it.env.sink); po.Enabled() {
		it.pf.Init(r.file, po)
		it.pf.SetLimitSource((*limitSource)(it))
		it.env.pf = &it.pf
	}
}

// limitSource is an Iter as its prefetch buffer's prefetch.LimitSource:
// the buffer asks for the limit of the current upper bound only when it is
// about to read.
type limitSource Iter

func (l *limitSource) ReadLimit() int64 { return int64(l.r.prefetchLimit(l.upper)) }

// SetBounds changes the bounds to [lower, upper), as IterOptions.Lower and
// Upper set them (they are not copied either), and leaves the iterator
// unpositioned: seek or call First or Last next. The block it holds stays
// held, so a seek that lands in it again reads nothing, and no read ahead
// passes the block holding the new upper bound.
func (it *Iter) SetBounds(lower, upper []byte) {
	it.lower, it.upper, it.fwdUpper, it.below, it.straddle = lower, upper, upper, -1, -1
	if lower != nil {
		it.lowerKey = base.MakeSearchKey(it.lowerKey[:0], lower, base.SeqNumMax)
	}
	if upper != nil {
		it.upperKey = base.MakeSearchKey(it.upperKey[:0], upper, base.SeqNumMax)
	}
	it.pos = posNone
	if it.env.pf != nil {
		it.pf.SetLimitSource((*limitSource)(it))
	}
}

// prefetchLimit is readLimit as a prefetch buffer's limit, for which 0
// means none: an upper bound at or before the first block gives 1, which
// lets nothing be read ahead.
func (r *Reader) prefetchLimit(upper []byte) uint64 {
	return max(r.readLimit(upper), 1)
}

// readLimit returns the offset forward reads of an iterator bounded by
// upper never need to pass: the start of the first block whose first key is
// at or past upper (no forward move loads it), or the end of the data.
//
// Blocks before the first separator at or past upper hold only smaller user
// keys, and the block after it starts past that separator, so the answer is
// that block or the next, as its first key says.
func (r *Reader) readLimit(upper []byte) uint64 {
	if upper == nil {
		return r.dataEnd
	}
	i := r.seekIndexUser(upper)
	if i < len(r.index) && bytes.Compare(base.UserKey(r.index[i].first), upper) < 0 {
		i++
	}
	if i >= len(r.index) {
		return r.dataEnd
	}
	return r.index[i].h.Offset
}

// start clears the error before a seek, First or Last; false means the
// iterator cannot move.
func (it *Iter) start() bool {
	switch {
	case it.closed:
		it.err = ErrClosed
	case it.r.closed.Load():
		it.err = ErrClosed
	default:
		it.err = it.initErr
	}
	return it.err == nil
}

// boundForward sets the bound of forward moves after a seek to ukey: the
// End of the prepared range holding ukey, if any, within Upper. When ukey
// is that range's Start, it returns the index position the prepare found
// for it; otherwise -1.
//
// The position is that of the first block that can hold any version of
// Start; a seek to an older version may belong a block or two later (see
// advance) unless exact says it cannot (see rangeSpan).
func (it *Iter) boundForward(ukey []byte) (n int, exact bool) {
	it.fwdUpper, it.below, it.straddle = it.upper, -1, -1
	if it.prep == nil {
		return -1, false
	}
	k, ok := it.prep.rangeOf(ukey)
	if !ok {
		return -1, false
	}
	rg := &it.prep.ranges[k]
	if rg.End != nil && (it.upper == nil || bytes.Compare(rg.End, it.upper) < 0) {
		it.fwdUpper = rg.End
	}
	if bytes.Equal(rg.Start, ukey) {
		return it.prep.spans[k].start, it.prep.spans[k].exact
	}
	return -1, false
}

// loadBlock makes data block i current, reading it unless it is the block
// already held. a is the direction of the move, for the prefetch buffer.
func (it *Iter) loadBlock(i int, a prefetch.Access) bool {
	h := it.r.seps.ents[i].h // beside the abbreviations a seek read
	it.idx = i
	if h.Offset == it.blockOff {
		return true
	}
	it.data.Reset()
	it.block.Release()
	it.blockOff = noBlock
	var ref BlockRef
	if data, ok := it.prep.block(i, &it.prepHint); ok {
		// Pinned by the prepared scan for longer than the iterator lives.
		ref = BlockRef{data: data}
		if it.env.pf != nil {
			it.pf.Observe(int64(h.Offset), int(h.Length)+TrailerLen)
		}
	} else {
		env := it.env
		env.access = a
		if env.fill && env.budget.spent() {
			env.fill = false
		}
		var err error
		if ref, err = it.r.readBlock(h, env); err != nil {
			it.err = err
			return false
		}
	}
	if err := it.data.InitAt(ref.data, it.r.name, h.Offset); err != nil {
		ref.Release()
		it.err = err
		return false
	}
	it.block, it.blockOff = ref, h.Offset
	return true
}

// forward finishes a forward move that left the block iterator on kv,
// moving into the next blocks while kv is nil.
func (it *Iter) forward(kv *base.KV) *base.KV {
	for kv == nil {
		if err := it.data.Error(); err != nil {
			it.err = err
			return nil
		}
		n := it.idx + 1
		if n >= len(it.r.index) || (it.fwdUpper != nil && it.r.seps.cmpFirst(it.r.index, n, it.fwdUpper) >= 0) {
			it.pos = posAtEnd
			return nil
		}
		if !it.loadBlock(n, prefetch.Forward) {
			return nil
		}
		kv = it.data.First()
	}
	if it.fwdUpper != nil && it.below != it.idx {
		// Past the bound; or, once per block, the block's separator
		// shows that every key in it is below the bound.
		if bytes.Compare(kv.UserKey(), it.fwdUpper) >= 0 {
			it.pos = posAtEnd
			return nil
		}
		if it.straddle != it.idx {
			if it.r.seps.cmpSep(it.r.index, it.idx, it.fwdUpper) < 0 {
				it.below = it.idx
			} else {
				it.straddle = it.idx
			}
		}
	}
	it.pos = posValid
	return kv
}

// backward finishes a backward move that left the block iterator on kv,
// moving into the previous blocks while kv is nil.
func (it *Iter) backward(kv *base.KV) *base.KV {
	for kv == nil {
		if err := it.data.Error(); err != nil {
			it.err = err
			return nil
		}
		n := it.idx - 1
		// Every key of block n is at most its separator: if that is below
		// Lower, so is the whole block.
		if n < 0 || (it.lower != nil && bytes.Compare(base.UserKey(it.r.index[n].sep), it.lower) < 0) {
			it.pos = posAtStart
			return nil
		}
		if !it.loadBlock(n, prefetch.Backward) {
			return nil
		}
		kv = it.data.Last()
	}
	if it.lower != nil && bytes.Compare(kv.UserKey(), it.lower) < 0 {
		it.pos = posAtStart
		return nil
	}
	it.pos = posValid
	return kv
}

// SeekGE positions on the first entry >= key (an internal key), or on the
// first entry at or above Lower when key is below it.
func (it *Iter) SeekGE(key []byte) *base.KV {
	if !it.start() {
		return nil
	}
	if !base.Valid(key) {
		it.err = fmt.Errorf("table: %s: SeekGE: %q is not an internal key", it.r.name, key)
		return nil
	}
	if it.lower != nil && bytes.Compare(base.UserKey(key), it.lower) < 0 {
		key = it.lowerKey
	}
	n, exact := it.boundForward(base.UserKey(key))
	switch {
	case n < 0:
		n = it.r.seekIndex(key)
	case !exact:
		n = advance(it.r.index, n, key)
	}
	if n >= len(it.r.index) || (it.fwdUpper != nil && it.r.seps.cmpFirst(it.r.index, n, it.fwdUpper) >= 0) {
		it.pos = posAtEnd
		return nil
	}
	if !it.loadBlock(n, prefetch.Forward) {
		return nil
	}
	// A key before the block's first needs no search in the block.
	switch c := it.r.seps.cmpFirst(it.r.index, n, base.UserKey(key)); {
	case c > 0, c == 0 && base.Compare(key, it.r.index[n].first) <= 0:
		return it.forward(it.data.First())
	}
	return it.forward(it.data.SeekGE(key))
}

// SeekLT positions on the last entry < key (an internal key), or on the
// last entry below Upper when key is at or above it.
func (it *Iter) SeekLT(key []byte) *base.KV {
	if !it.start() {
		return nil
	}
	if !base.Valid(key) {
		it.err = fmt.Errorf("table: %s: SeekLT: %q is not an internal key", it.r.name, key)
		return nil
	}
	if it.upper != nil && bytes.Compare(base.UserKey(key), it.upper) >= 0 {
		key = it.upperKey
	}
	it.fwdUpper, it.below, it.straddle = it.upper, -1, -1
	n := it.r.seekIndex(key)
	if n == len(it.r.index) || base.Compare(it.r.index[n].first, key) >= 0 {
		// Block n holds nothing below key (or does not exist): the answer
		// is the last entry of the block before.
		n--
	}
	if n < 0 || (it.lower != nil && bytes.Compare(base.UserKey(it.r.index[n].sep), it.lower) < 0) {
		it.pos = posAtStart
		return nil
	}
	if !it.loadBlock(n, prefetch.Backward) {
		return nil
	}
	return it.backward(it.data.SeekLT(key))
}

// First positions on the first entry (at or above Lower).
func (it *Iter) First() *base.KV {
	if it.lower != nil {
		return it.SeekGE(it.lowerKey)
	}
	if !it.start() {
		return nil
	}
	it.boundForward(nil)
	if len(it.r.index) == 0 || (it.fwdUpper != nil && bytes.Compare(base.UserKey(it.r.index[0].first), it.fwdUpper) >= 0) {
		it.pos = posAtEnd
		return nil
	}
	if !it.loadBlock(0, prefetch.Forward) {
		return nil
	}
	return it.forward(it.data.First())
}

// Last positions on the last entry (below Upper).
func (it *Iter) Last() *base.KV {
	if it.upper != nil {
		return it.SeekLT(it.upperKey)
	}
	if !it.start() {
		return nil
	}
	it.fwdUpper, it.below, it.straddle = it.upper, -1, -1
	n := len(it.r.index) - 1
	if n < 0 || (it.lower != nil && bytes.Compare(base.UserKey(it.r.index[n].sep), it.lower) < 0) {
		it.pos = posAtStart
		return nil
	}
	if !it.loadBlock(n, prefetch.Backward) {
		return nil
	}
	return it.backward(it.data.Last())
}

// Next moves to the next entry.
func (it *Iter) Next() *base.KV {
	if it.err != nil {
		return nil
	}
	switch it.pos {
	case posNone, posAtStart:
		return it.First()
	case posAtEnd:
		return nil
	}
	return it.forward(it.data.Next())
}

// Prev moves to the previous entry.
func (it *Iter) Prev() *base.KV {
	if it.err != nil {
		return nil
	}
	switch it.pos {
	case posNone, posAtEnd:
		return it.Last()
	case posAtStart:
		return nil
	}
	return it.backward(it.data.Prev())
}

// AppliesBounds implements base.BoundsApplier: forward moves stop at
// Upper and backward moves at Lower, and seeks are clamped into them.
func (it *Iter) AppliesBounds() bool { return true }

// Error returns the error that stopped the iterator, if any.
func (it *Iter) Error() error { return it.err }

// Close releases the iterator's block, waits for its prefetch buffer's
// reads in flight and returns its error, if any.
func (it *Iter) Close() error {
	if it.closed {
		return it.err
	}
	it.closed = true
	it.data.Reset()
	it.block.Release()
	it.blockOff = noBlock
	it.pos = posNone
	it.pf.Close()
	if it.prep != nil {
		it.prep.iters.Add(-1)
		it.prep = nil
	}
	return it.err
}
