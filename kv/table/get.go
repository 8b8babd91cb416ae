package table

import (
	"bytes"

	"github.com/strata-db/strata/kv/filter"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/stats"
)

// getState is the reusable memory of one Get.
type getState struct {
	it   BlockIter
	key  []byte
	bufs blockBufs
}

// MayContain reports whether the table may hold a point entry of ukey: false
// means it certainly does not. It consults the filter (recording
// FilterChecked and FilterUseful in the reader's Stats); without a filter
// the answer is true unless the table has no point entries.
func (r *Reader) MayContain(ukey []byte) bool {
	if !r.hasFilter {
		return len(r.index) > 0
	}
	return r.mayContain(filter.Hash(ukey), stats.Sink{DB: r.opts.Stats})
}

// MayContainHash is MayContain for a key already hashed with filter.Hash,
// so that a batch of lookups hashes each key once for every table.
func (r *Reader) MayContainHash(h uint64) bool {
	return r.mayContain(h, stats.Sink{DB: r.opts.Stats})
}

func (r *Reader) mayContain(h uint64, sink stats.Sink) bool {
	if !r.hasFilter {
		return len(r.index) > 0
	}
	sink.Add(stats.FilterChecked, 1)
	if r.filter.MayContain(h) {
		return true
	}
	sink.Add(stats.FilterUseful, 1)
	return false
}

// Get looks up the newest point entry of ukey with a sequence number <= seq.
// It consults the filter first and reads at most the data blocks holding
// ukey's versions (usually one). When found it appends the value to dst
// (copied out of the block) and returns it with the entry's kind: a
// base.KindDelete entry is found, with an empty value. Range tombstones are
// not applied: the caller checks RangeDeletes.
//
// Counts go to the reader's Stats and to st, which may be nil.
func (r *Reader) Get(ukey []byte, seq base.SeqNum, dst []byte, st *stats.Counters) (value []byte, kind base.Kind, entrySeq base.SeqNum, found bool, err error) {
	if r.closed.Load() {
		return dst, 0, 0, false, ErrClosed
	}
	sink := stats.Sink{DB: r.opts.Stats, Op: st}
	if !r.mayContain(filter.Hash(ukey), sink) {
		return dst, 0, 0, false, nil
	}
	gs := r.getPool.Get().(*getState)
	defer r.putGetState(gs)
	gs.key = base.MakeSearchKey(gs.key[:0], ukey, seq)
	env := readEnv{src: r.file, sink: sink, fill: true, bufs: &gs.bufs}

	found0 := r.seekIndex(gs.key)
	for i := found0; i < len(r.index); i++ {
		e := &r.index[i]
		if r.mayStartBefore(i, found0) && bytes.Compare(ukey, base.UserKey(e.first)) < 0 {
			// ukey sorts before this block's first key (and so before every
			// later block): no entry of ukey is left to find.
			break
		}
		ref, err := r.readBlock(e.h, env)
		if err != nil {
			return dst, 0, 0, false, err
		}
		kv, err := gs.seekInBlock(ref.data, r.name, e.h.Offset, gs.key)
		if err != nil || kv == nil {
			ref.Release()
			if err != nil {
				return dst, 0, 0, false, err
			}
			// Every entry of this block is below the search key; the next
			// block may start with an older version of ukey.
			continue
		}
		if bytes.Equal(kv.UserKey(), ukey) {
			dst = append(dst, kv.V...)
			kind = kv.Kind()
			entrySeq = kv.Seq()
			found = true
			if r.hasFilter {
				sink.Add(stats.FilterTruePositive, 1)
			}
		}
		ref.Release()
		return dst, kind, entrySeq, found, nil
	}
	return dst, 0, 0, false, nil
}

// putGetState returns gs to the pool, dropping its hold on any block.
func (r *Reader) putGetState(gs *getState) {
	gs.it.Reset()
	r.getPool.Put(gs)
}

// seekInBlock positions gs.it on the first entry >= key of the block.
func (gs *getState) seekInBlock(data []byte, file string, off uint64, key []byte) (*base.KV, error) {
	if err := gs.it.InitAt(data, file, off); err != nil {
		return nil, err
	}
	kv := gs.it.SeekGE(key)
	if kv == nil {
		return nil, gs.it.Error()
	}
	return kv, nil
}

// mayStartBefore reports whether a point lookup should check that its key
// is not below the first key of block i, found0 being the block the index
// search found, before reading block i: the check skips a block that
// cannot hold the key. Where the table's filter passed the key, the key is
// nearly always in the block the search found, and the check there would
// only cost a cache miss on the first key (kept with the index block, away
// from the index entry) on every lookup into a large database; a key that
// only a false positive let through costs one block read instead. Later
// blocks, reached when the found one ends below the key, are checked.
func (r *Reader) mayStartBefore(i, found0 int) bool {
	return i > found0 || !r.hasFilter
}
