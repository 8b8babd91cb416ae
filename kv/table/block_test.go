package table

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/stretchr/testify/require"
)

// buildBlock encodes es as one block with the given restart interval.
func buildBlock(es []entry, restartInterval int) []byte {
	var bw blockWriter
	bw.init(restartInterval)
	for _, e := range es {
		bw.add(e.k, e.v)
	}
	return slices.Clone(bw.finish())
}

func TestBlockIter(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	for _, n := range []int{0, 1, 2, 17, 300} {
		es := randomEntries(rng, n, false)
		for _, ri := range []int{1, 2, 3, 16, 1000} {
			t.Run(fmt.Sprintf("n=%d/restart=%d", len(es), ri), func(t *testing.T) {
				block := buildBlock(es, ri)
				var it BlockIter
				require.NoError(t, it.Init(block))
				m := &model{es: es, pos: -1}
				check := func(op string, got *base.KV, want *entry) {
					require.NoError(t, it.Error(), op)
					if want == nil {
						require.Nil(t, got, "%s: want nil, got %s", op, fmtKV(got))
						return
					}
					require.NotNil(t, got, "%s: want %s", op, fmtEntry(want))
					require.Equal(t, want.k, got.K, op)
					require.True(t, bytes.Equal(want.v, got.V), op)
				}
				for range 2000 {
					switch rng.IntN(8) {
					case 0:
						check("First", it.First(), m.first())
					case 1:
						check("Last", it.Last(), m.last())
					case 2:
						k := randomSearchKey(rng, es)
						check("SeekGE "+base.FormatKey(k), it.SeekGE(k), m.seekGE(k))
					case 3:
						k := randomSearchKey(rng, es)
						check("SeekLT "+base.FormatKey(k), it.SeekLT(k), m.seekLT(k))
					case 4, 5:
						check("Next", it.Next(), m.next())
					default:
						check("Prev", it.Prev(), m.prev())
					}
				}
				// Full scans both ways.
				i := 0
				for kv := it.First(); kv != nil; kv = it.Next() {
					require.Equal(t, es[i].k, kv.K)
					i++
				}
				require.Equal(t, len(es), i)
				for kv := it.Last(); kv != nil; kv = it.Prev() {
					i--
					require.Equal(t, es[i].k, kv.K)
				}
				require.Zero(t, i)
			})
		}
	}
}

func TestBlockIterReset(t *testing.T) {
	a := buildBlock([]entry{{ikey("a", 1, base.KindSet), []byte("1")}}, 16)
	b := buildBlock([]entry{{ikey("b", 1, base.KindSet), []byte("2")}, {ikey("c", 1, base.KindSet), nil}}, 16)
	var it BlockIter
	require.NoError(t, it.Init(a))
	require.Equal(t, "a", string(it.First().UserKey()))
	require.NoError(t, it.InitAt(b, "f", 10))
	require.Equal(t, "b", string(it.First().UserKey()))
	require.Equal(t, "c", string(it.Last().UserKey()))
	it.Reset()
	require.Nil(t, it.First())
	require.Nil(t, it.Last())
	require.Nil(t, it.SeekGE(ikey("a", 1, 1)))
	require.NoError(t, it.Error())

	// A bad block: InitAt fails, every move returns nil with the error.
	err := it.InitAt([]byte{1, 2}, "f", 10)
	require.True(t, base.IsCorruption(err))
	require.Nil(t, it.First())
	require.ErrorIs(t, it.Error(), base.ErrCorruption)
	require.Contains(t, it.Error().Error(), "f at offset 10")
}

func TestBlockIterZeroAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	es := randomEntries(rng, 400, false)
	block := buildBlock(es, 16)
	other := buildBlock(es[:100], 16)
	var keys [][]byte
	for range 64 {
		keys = append(keys, randomSearchKey(rng, es))
	}
	var it BlockIter
	require.NoError(t, it.Init(block))
	// Warm up the buffers.
	for _, k := range keys {
		it.SeekGE(k)
		it.SeekLT(k)
		it.Prev()
	}
	it.Last()
	i := 0
	for name, op := range map[string]func(){
		"SeekGE": func() { it.SeekGE(keys[i%len(keys)]); i++ },
		"SeekLT": func() { it.SeekLT(keys[i%len(keys)]); i++ },
		"Next": func() {
			if it.Next() == nil {
				it.First()
			}
		},
		"Prev": func() {
			if it.Prev() == nil {
				it.Last()
			}
		},
		"InitAt": func() {
			b := block
			if i++; i%2 == 0 {
				b = other
			}
			_ = it.InitAt(b, "f", 0)
			it.First()
		},
	} {
		require.Zero(t, testing.AllocsPerRun(500, op), name)
	}
}

func TestBlockIterCorrupt(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	es := randomEntries(rng, 60, false)
	block := buildBlock(es, 4)
	// Any byte changed gives correct answers or an error, never a panic;
	// blocks are normally protected by their checksums, so wrong answers
	// are tolerated here, but keys must remain internal keys.
	for pos := range block {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			b := slices.Clone(block)
			b[pos] ^= x
			var it BlockIter
			if it.Init(b) != nil {
				continue
			}
			for kv := it.First(); kv != nil; kv = it.Next() {
				require.True(t, base.Valid(kv.K))
			}
			for kv := it.Last(); kv != nil; kv = it.Prev() {
				require.True(t, base.Valid(kv.K))
			}
			for _, e := range es[:10] {
				it.SeekGE(e.k)
				it.SeekLT(e.k)
				it.Prev()
			}
		}
	}
	// Specific malformations are reported.
	var it BlockIter
	for name, b := range map[string][]byte{
		"short":          {0, 0},
		"flags":          binary.LittleEndian.AppendUint32(nil, 1<<31),
		"too many":       binary.LittleEndian.AppendUint32(nil, 5),
		"no restarts":    append([]byte{0, 1, 0, 'x'}, 0, 0, 0, 0),
		"first restart":  append(append([]byte{0, 9, 0}, "xxxxxxxxx"...), 4, 0, 0, 0, 1, 0, 0, 0),
		"entry overflow": append(append([]byte{0, 90, 0}, "xxxxxxxxx"...), 0, 0, 0, 0, 1, 0, 0, 0),
	} {
		err := it.Init(b)
		if err == nil {
			require.Nil(t, it.First(), name)
			err = it.Error()
		}
		require.True(t, base.IsCorruption(err), "%s: %v", name, err)
	}
}

// TestDecodeEntryHeaderFastPaths checks the header decoder's fast paths
// against binary.Uvarint on every shape around them: one- and two-byte
// lengths, non-minimal encodings, and lengths that run past the limit.
func TestDecodeEntryHeaderFastPaths(t *testing.T) {
	slow := func(b []byte, off, limit int) (v [3]int, p int, ok bool) {
		p = off
		for i := range v {
			if p >= limit {
				return v, 0, false
			}
			x, n := binary.Uvarint(b[p:limit])
			if n <= 0 || x > maxBlockLen {
				return v, 0, false
			}
			v[i], p = int(x), p+n
		}
		if v[1]+v[2] > limit-p {
			return v, 0, false
		}
		return v, p, true
	}
	var headers [][]byte
	for _, shared := range []uint64{0, 5, 127, 128} {
		for _, unshared := range []uint64{0, 9, 127, 300} {
			for _, vlen := range []uint64{0, 100, 127, 128, 200, 1000, 16383, 16384} {
				h := binary.AppendUvarint(nil, shared)
				h = binary.AppendUvarint(h, unshared)
				headers = append(headers, binary.AppendUvarint(h, vlen))
			}
		}
	}
	// Non-minimal two-byte encodings of small lengths.
	headers = append(headers, []byte{1, 2, 0x85, 0x00}, []byte{1, 2, 0x80, 0x01}, []byte{1, 2, 0xff, 0x7f})
	for _, h := range headers {
		for _, room := range []int{0, 1, 500, 20000} {
			b := append(append([]byte{7}, h...), make([]byte, room)...)
			for _, limit := range []int{len(b), len(b) - room/2, 1 + len(h), len(h)} {
				wv, wp, wok := slow(b, 1, limit)
				s, u, v, p, ok := decodeEntryHeader(b, 1, limit)
				require.Equal(t, wok, ok, "header %x room %d limit %d", h, room, limit)
				if ok {
					require.Equal(t, wv, [3]int{s, u, v}, "header %x", h)
					require.Equal(t, wp, p, "header %x", h)
				}
			}
		}
	}
}
