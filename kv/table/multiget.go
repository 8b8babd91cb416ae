package table

import (
	"bytes"
	"fmt"

	"github.com/strata-db/strata/kv/filter"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/prefetch"
	"github.com/strata-db/strata/kv/stats"
)

// MultiGet
//
// A batch of point lookups in one table costs less than a loop of Get:
//
//  1. The filter is probed for every pending key in one batch
//     (filter.Reader.MayContainBatch), whose cache misses overlap.
//  2. Keys go in order; each finds its block in the index. Consecutive keys
//     in the same block reuse the block and its BlockIter (re-seeked for
//     each key, never continued): the block is looked up in the block
//     cache once per run of keys, not once per key. The "no block yet"
//     offset is noBlock (math.MaxUint64), never 0: the first data block
//     starts at offset 0.
//  3. Values are copied into one arena for the batch, so a block's cache
//     handle is released as soon as the batch moves to another block.
//
// A key that sorts between two blocks (below the next block's first key) is
// a miss without a block read. Once a key's search has passed every entry
// of a block, later (larger) keys skip that block without looking it up.

// GetResult is the outcome of one key of MultiGet.
type GetResult struct {
	// Done marks a resolved key: MultiGet skips keys whose Done is set on
	// entry (the caller found them in a newer source), and sets it for
	// every key it finds here, with Kind and Seq of the entry found and the
	// value's place in the arena. A found base.KindDelete entry is Done
	// with an empty value. Keys not found are left as they were.
	Done bool
	Kind base.Kind
	Seq  base.SeqNum
	// ValueStart and ValueEnd locate the value in the arena MultiGet
	// returns: arena[ValueStart:ValueEnd].
	ValueStart, ValueEnd int
}

// Value returns the result's value in arena (the slice MultiGet returned,
// or a later extension of it).
func (g *GetResult) Value(arena []byte) []byte { return arena[g.ValueStart:g.ValueEnd] }

// multiGetState is the reusable memory of one MultiGet.
type multiGetState struct {
	it     BlockIter
	key    []byte
	bufs   blockBufs
	pos    []int    // positions of the keys to look up
	hashes []uint64 // their hashes
	may    []bool   // their filter answers
}

// MultiGet looks up a batch of user keys at sequence number seq: for every
// key not already Done, the newest point entry with a sequence number <=
// seq, as Get finds it. keys should be sorted (any order is correct, but
// sorted keys share block lookups); hashes, when not nil, holds
// filter.Hash of each key, computed once by the caller for every table it
// asks. Values are appended to arena, which is returned; results locate
// them in it (GetResult.Value). Range tombstones are not applied: the
// caller checks RangeDeletes.
//
// Beyond growing the arena, MultiGet does not allocate per key once its
// pooled state is warm. Counts (filter probes, block reads: one per
// distinct block, through the cache or in place from a mapped file, see
// readsMapped) go to the reader's Stats and to st.
func (r *Reader) MultiGet(keys [][]byte, hashes []uint64, seq base.SeqNum, res []GetResult, arena []byte, st *stats.Counters) ([]byte, error) {
	return r.multiGet(keys, hashes, seq, res, arena, st, false)
}

// MultiGetLoaded is MultiGet for keys whose blocks a BlockLoads (see
// PlanMultiGet) has pinned in the block cache: it reads every block through
// the cache, where MultiGet would copy the blocks of a mapped file whose
// reads are fast from the mapping instead (reads turn fast while the loads
// run when the page cache serves them).
func (r *Reader) MultiGetLoaded(keys [][]byte, hashes []uint64, seq base.SeqNum, res []GetResult, arena []byte, st *stats.Counters) ([]byte, error) {
	return r.multiGet(keys, hashes, seq, res, arena, st, true)
}

func (r *Reader) multiGet(keys [][]byte, hashes []uint64, seq base.SeqNum, res []GetResult, arena []byte, st *stats.Counters, viaCache bool) ([]byte, error) {
	if r.closed.Load() {
		return arena, ErrClosed
	}
	if len(res) != len(keys) || (hashes != nil && len(hashes) != len(keys)) {
		return arena, fmt.Errorf("%w: %s: %d keys, %d hashes, %d results", ErrBatchMismatch, r.name, len(keys), len(hashes), len(res))
	}
	if len(r.index) == 0 {
		return arena, nil
	}
	sink := stats.Sink{DB: r.opts.Stats, Op: st}
	ms := r.multiGetPool.Get().(*multiGetState)
	defer r.putMultiGetState(ms)

	// The keys still to resolve, and their filter answers.
	ms.pos, ms.hashes = ms.pos[:0], ms.hashes[:0]
	for i := range keys {
		if res[i].Done {
			continue
		}
		ms.pos = append(ms.pos, i)
		if hashes != nil {
			ms.hashes = append(ms.hashes, hashes[i])
		} else {
			ms.hashes = append(ms.hashes, filter.Hash(keys[i]))
		}
	}
	if len(ms.pos) == 0 {
		return arena, nil
	}
	if cap(ms.may) < len(ms.pos) {
		ms.may = make([]bool, len(ms.pos))
	}
	ms.may = ms.may[:len(ms.pos)]
	if r.hasFilter {
		r.filter.MayContainBatch(ms.hashes, ms.may)
		useful := 0
		for _, m := range ms.may {
			if !m {
				useful++
			}
		}
		sink.Add(stats.FilterChecked, int64(len(ms.pos)))
		sink.Add(stats.FilterUseful, int64(useful))
	} else {
		for k := range ms.may {
			ms.may[k] = true
		}
	}

	env := readEnv{src: r.file, sink: sink, fill: true, bufs: &ms.bufs, viaCache: viaCache}
	var cur BlockRef
	defer cur.Release()
	curOff := uint64(noBlock)
	minIdx := 0 // blocks below it hold only entries below the search key
	var prev []byte
	for k, i := range ms.pos {
		if !ms.may[k] {
			continue
		}
		ukey := keys[i]
		if prev != nil && bytes.Compare(ukey, prev) < 0 {
			minIdx = 0 // out of order: what held for larger keys may not
		}
		prev = ukey
		ms.key = base.MakeSearchKey(ms.key[:0], ukey, seq)
		j0 := max(r.seekIndex(ms.key), minIdx)
		for j := j0; j < len(r.index); j++ {
			e := &r.index[j]
			if r.mayStartBefore(j, j0) && bytes.Compare(ukey, base.UserKey(e.first)) < 0 {
				break // between blocks: no entry of ukey here
			}
			if e.h.Offset != curOff {
				ms.it.Reset()
				cur.Release()
				curOff = noBlock
				ref, err := r.readBlock(e.h, env)
				if err != nil {
					return arena, err
				}
				if err := ms.it.InitAt(ref.data, r.name, e.h.Offset); err != nil {
					ref.Release()
					return arena, err
				}
				cur, curOff = ref, e.h.Offset
			}
			kv := ms.it.SeekGE(ms.key)
			if kv == nil {
				if err := ms.it.Error(); err != nil {
					return arena, err
				}
				// Every entry of block j is below this search key, and so
				// below those of the keys after it; an older version of
				// ukey may start the next block.
				minIdx = j + 1
				continue
			}
			if bytes.Equal(kv.UserKey(), ukey) {
				start := len(arena)
				arena = append(arena, kv.V...)
				res[i] = GetResult{Done: true, Kind: kv.Kind(), Seq: kv.Seq(), ValueStart: start, ValueEnd: len(arena)}
				if r.hasFilter {
					sink.Add(stats.FilterTruePositive, 1)
				}
			}
			break
		}
	}
	return arena, nil
}

// AppendFilterProbe appends to dst the address in the table's filter that
// a lookup of the key whose filter.Hash is hash reads first, for
// TouchProbes; nothing when the table has no filter.
func (r *Reader) AppendFilterProbe(dst []*byte, hash uint64) []*byte {
	if !r.hasFilter {
		return dst
	}
	return r.filter.AppendProbe(dst, hash)
}

// AppendGetPages appends to dst, for vfs.TouchPages, the pages of the block
// that a MultiGet of ukey at seq would copy from the table's mapping:
// none when the filter rules the key out (hash is filter.Hash of ukey) or
// the block would come through the block cache (see readsMapped). It
// probes the filter and searches the index for the block, which leaves
// the lines the lookup's own probe and search read in the CPU's caches.
// A caller looking up keys in several tables touches the pages of all
// before it looks up any, so that their cache misses and page walks
// overlap, having first touched their filter lines and index probes
// (AppendFilterProbe, AppendIndexProbes), whose misses would otherwise
// come one after another here.
func (r *Reader) AppendGetPages(dst []*byte, ukey []byte, hash uint64, seq base.SeqNum) []*byte {
	if r.closed.Load() || len(r.index) == 0 || r.hasFilter && !r.filter.MayContain(hash) {
		return dst
	}
	var buf [64]byte
	j := r.seekIndex(base.MakeSearchKey(buf[:0], ukey, seq))
	if j >= len(r.index) {
		return dst
	}
	h := r.seps.ents[j].h
	if !r.readsMapped(h) {
		return dst
	}
	return prefetch.AppendPages(dst, r.file, int64(h.Offset), int(h.Length)+TrailerLen, r.opts.Pool.Latency())
}

// putMultiGetState returns ms to the pool, dropping its hold on any block.
func (r *Reader) putMultiGetState(ms *multiGetState) {
	ms.it.Reset()
	r.multiGetPool.Put(ms)
}
