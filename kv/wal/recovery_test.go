package wal

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

// damageLog returns a log of three blocks and a bit, exercising every chunk
// type, an empty first chunk, padding and empty records.
func damageLog(t testing.TB, syncEach bool) testLog {
	rng := rand.New(rand.NewPCG(7, 8))
	recs := randRecs(rng, 6, func() int { return rng.IntN(80) })
	recs = append(recs, nil)
	// fillTo appends a record that leaves exactly room bytes in a block of
	// which used bytes are taken.
	used := 0
	fillTo := func(room int) {
		recs = append(recs, randRecs(rng, 1, func() int { return blockSize - used - headerSize - room })...)
	}
	for _, p := range recs {
		used += headerSize + len(p)
	}
	// The next record's first chunk is empty, at the end of block 0; its
	// middle chunk fills block 1 and its last starts block 2.
	fillTo(headerSize)
	recs = append(recs, randRecs(rng, 1, func() int { return maxPayload + 400 })...)
	small := randRecs(rng, 4, func() int { return rng.IntN(60) })
	recs = append(recs, small...)
	used = headerSize + 400
	for _, p := range small {
		used += headerSize + len(p)
	}
	fillTo(9) // padding at the end of block 2
	recs = append(recs, []byte("end"), []byte("fin"))
	l := writeLog(t, recs, writeOpts{id: 0x5eed, syncEach: syncEach})
	require.EqualValues(t, blockSize-headerSize, l.starts[8], "empty first chunk")
	require.EqualValues(t, 3*blockSize, l.starts[14], "padding before")
	return l
}

// completeBefore returns how many records end at or before off.
func (l testLog) completeBefore(off int64) int {
	k := 0
	for k < len(l.ends) && l.ends[k] <= off {
		k++
	}
	return k
}

// recordAt returns the record whose bytes hold off, or -1 for padding.
func (l testLog) recordAt(off int64) int {
	for i := range l.starts {
		if l.starts[i] <= off && off < l.ends[i] {
			return i
		}
	}
	return -1
}

func TestTruncateAtEveryOffset(t *testing.T) {
	l := damageLog(t, true)
	step := 1
	if testing.Short() {
		step = 97
	}
	r := NewReader(nil, 0, "")
	for cut := 0; cut <= len(l.data); cut += step {
		n, res := readPrefix(t, r, l.data[:cut], l.recs, "cut %d", cut)
		require.NoError(t, res.err, "cut %d", cut)
		k := l.completeBefore(int64(cut))
		require.Equal(t, k, n, "cut %d", cut)
		clean := cut == 0 || k == len(l.recs) || int64(cut) <= l.starts[k]
		require.Equal(t, !clean, res.torn, "cut %d: %s", cut, res.reason)
		if res.torn {
			require.Equal(t, l.starts[k], res.tailOff, "cut %d", cut)
			require.NotEmpty(t, res.reason)
		} else {
			require.EqualValues(t, cut, res.tailOff)
		}
	}
}

func TestFlipEveryByte(t *testing.T) {
	for _, syncEach := range []bool{true, false} {
		t.Run(fmt.Sprintf("sync=%t", syncEach), func(t *testing.T) {
			l := damageLog(t, syncEach)
			data := bytes.Clone(l.data)
			step := 1
			if testing.Short() {
				step = 89
			}
			r := NewReader(nil, 0, "")
			for i := 0; i < len(data); i += step {
				x := byte(1 + i%255)
				data[i] ^= x
				n, res := readPrefix(t, r, data, l.recs, "flip %d", i)
				data[i] ^= x

				k := l.recordAt(int64(i))
				if k < 0 { // padding: nobody reads it
					require.NoError(t, res.err, "flip %d", i)
					require.Equal(t, len(l.recs), n, "flip %d", i)
					require.False(t, res.torn)
					continue
				}
				require.Equal(t, k, n, "flip %d in record %d", i, k)
				if syncEach && k < len(l.recs)-1 {
					// A later record was written after this one was synced.
					require.True(t, base.IsCorruption(res.err), "flip %d in record %d: %v", i, k, res.err)
					require.Contains(t, res.err.Error(), "kv: corruption in log at offset")
				} else {
					require.NoError(t, res.err, "flip %d in record %d", i, k)
					require.True(t, res.torn, "flip %d", i)
					require.Equal(t, l.starts[k], res.tailOff, "flip %d", i)
				}
			}
		})
	}
}

// chunkStarts returns the offset of every chunk of the log.
func chunkStarts(l testLog) []int64 {
	var offs []int64
	for i, off := range l.starts {
		for off < l.ends[i] {
			offs = append(offs, off)
			_, n, _, _ := chunkAt(l.data, off)
			off += int64(headerSize + n)
		}
	}
	return offs
}

func TestCorruptionInTheMiddle(t *testing.T) {
	l := damageLog(t, true)
	chunks := chunkStarts(l)
	for _, tc := range []struct {
		name   string
		damage func(b []byte) // b is the damaged chunk
		detail string
	}{
		{"payload", func(b []byte) { b[len(b)-1] ^= 0x10 }, "checksum mismatch: expected 0x"},
		{"checksum", func(b []byte) { b[1] ^= 0x01 }, "checksum mismatch: expected 0x"},
		{"log ID", func(b []byte) { b[offLogID] ^= 0x01 }, "checksum mismatch"},
		{"type", func(b []byte) { b[offType] = 9 }, "expected a chunk type from 1 to 4, found 9"},
		{"length", func(b []byte) { b[offLength+1] = 0xff }, "expected a chunk length of at most"},
		{"zeroed header", func(b []byte) { clear(b[:headerSize]) }, "found zeroed bytes"},
		{"zeroed chunk", func(b []byte) { clear(b) }, "found zeroed bytes"},
	} {
		for _, ci := range []int{0, 3, 7, 8, 9, 10, 12, 15, len(chunks) - 2} {
			off := chunks[ci]
			k := l.recordAt(off)
			t.Run(fmt.Sprintf("%s/chunk%d", tc.name, ci), func(t *testing.T) {
				data := bytes.Clone(l.data)
				_, n, _, _ := chunkAt(data, off)
				tc.damage(data[off : off+headerSize+int64(n)])
				r := NewReader(bytes.NewReader(data), int64(len(data)), "log")
				res := drain(r)
				requireRecs(t, l.recs[:k], res.recs)
				require.True(t, base.IsCorruption(res.err), "%v", res.err)
				require.ErrorContains(t, res.err, fmt.Sprintf("kv: corruption in log at offset %d: ", off))
				require.ErrorContains(t, res.err, tc.detail)
				if l.starts[k] != off {
					require.ErrorContains(t, res.err, fmt.Sprintf("the record at offset %d is lost", l.starts[k]))
				}
				_, err := r.Next()
				require.Equal(t, res.err, err, "the error is sticky")

				// Salvage: resume at the first record starting in a later block.
				resume := nextBlock(off)
				j := k
				for j < len(l.starts) && l.starts[j] < resume {
					j++
				}
				want := int64(len(data))
				if j < len(l.starts) {
					want = l.starts[j]
				}
				require.Equal(t, want-l.starts[k], r.SkipCorrupt())
				res = drain(r)
				require.NoError(t, res.err)
				requireRecs(t, l.recs[j:], res.recs)
				require.Equal(t, l.starts[j:], append([]int64{}, res.offsets...))
				require.False(t, res.torn, res.reason)
			})
		}
	}
}

// TestUnsyncedHoles simulates a file system that persisted unsynced pages
// out of order: a hole in bytes that were never synced is a torn tail, a hole
// in synced bytes followed by later writes is corruption.
func TestUnsyncedHoles(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	recs := randRecs(rng, 400, func() int { return 50 + rng.IntN(400) })
	for _, tc := range []struct {
		name     string
		syncAt   int   // Sync after this many records; 0: never
		hole     int64 // zero 4 KiB from here
		corrupts bool
	}{
		{"never synced", 0, 8192, false},
		{"never synced, hole at start", 0, 0, false},
		{"hole after sync", 100, 60000, false},
		{"hole before sync", 200, 8192, true},
		{"hole across sync point", 100, -1, false}, // hole starts just after the sync point
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &faultFile{}
			w := NewWriterLogID(f, "log", 77)
			var starts []int64
			var synced int64
			for i, p := range recs {
				off, err := w.WriteRecord(p)
				require.NoError(t, err)
				starts = append(starts, off)
				if i+1 == tc.syncAt {
					require.NoError(t, w.Sync())
					synced = w.Size()
				}
			}
			require.NoError(t, w.Flush()) // written, not synced: no Close
			hole := tc.hole
			if hole < 0 {
				hole = synced + 1
			}
			require.Equal(t, tc.corrupts, hole < synced)
			data := bytes.Clone(f.data)
			clear(data[hole : hole+4096])
			k := 0
			for k+1 < len(starts) && starts[k+1] <= hole {
				k++
			}
			if starts[k]+int64(headerSize+len(recs[k])) <= hole {
				k++ // the hole starts in padding
			}
			res := readLog(data, 77, true)
			requireRecs(t, recs[:k], res.recs)
			if tc.corrupts {
				require.True(t, base.IsCorruption(res.err), "%v", res.err)
				require.ErrorContains(t, res.err, fmt.Sprintf("durable through offset %d", synced))
				return
			}
			require.NoError(t, res.err)
			require.True(t, res.torn)
			require.Equal(t, starts[k], res.tailOff)
			require.Contains(t, res.reason, "intact chunks follow, all written before offset")
		})
	}
}

// TestCrash writes records with occasional syncs and simulates power loss at
// random points, with the unsynced tail lost, kept in part (MemFS), or kept
// with holes and garbage pages: the log always reads as a prefix of what was
// written holding at least every synced record, ending in io.EOF.
func TestCrash(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	trials := 60
	if testing.Short() {
		trials = 10
	}
	for trial := range trials {
		fs := vfs.NewMem()
		f, err := fs.Create("log")
		require.NoError(t, err)
		require.NoError(t, vfs.SyncDir(fs, "/"))
		w := NewWriter(f, "log")
		var recs [][]byte
		syncedRecs := 0
		var synced int64
		n := 1 + rng.IntN(300)
		for i := range n {
			size := rng.IntN(200)
			if rng.IntN(20) == 0 {
				size = rng.IntN(3 * blockSize)
			}
			recs = append(recs, randRecs(rng, 1, func() int { return size })...)
			_, err := w.WriteRecord(recs[i])
			require.NoError(t, err)
			switch rng.IntN(10) {
			case 0:
				require.NoError(t, w.Sync())
				syncedRecs, synced = i+1, w.Size()
			case 1, 2, 3:
				require.NoError(t, w.Flush())
			}
		}
		require.NoError(t, w.Flush())
		full, err := vfs.ReadFile(fs, "log")
		require.NoError(t, err)

		images := map[string][]byte{}
		for _, keep := range []float64{0, 0.5, 1} {
			clone := fs.CrashClone(vfs.CrashOptions{KeepUnsynced: keep, Rand: rand.New(rand.NewPCG(uint64(trial), 1))})
			data, err := vfs.ReadFile(clone, "log")
			require.NoError(t, err)
			images[fmt.Sprintf("memfs keep=%v", keep)] = data
		}
		// Out-of-order persistence: unsynced pages lost (zeroed) or replaced
		// by stale garbage, the file cut anywhere after the synced part.
		holes := bytes.Clone(full[:synced+rng.Int64N(int64(len(full))-synced+1)])
		for page := synced - synced%4096; page < int64(len(holes)); page += 4096 {
			lo, hi := max(page, synced), min(page+4096, int64(len(holes)))
			switch rng.IntN(4) {
			case 0:
				clear(holes[lo:hi])
			case 1:
				for i := lo; i < hi; i++ {
					holes[i] = byte(rng.IntN(256))
				}
			}
		}
		images["holes"] = holes

		for name, data := range images {
			res := readLog(data, 0, false)
			require.NoError(t, res.err, "trial %d, %s", trial, name)
			require.GreaterOrEqual(t, len(res.recs), syncedRecs, "trial %d, %s: synced records lost", trial, name)
			requireRecs(t, recs[:len(res.recs)], res.recs, "trial %d, %s", trial, name)
		}
	}
}

// splice returns a's bytes before off followed by b's from off.
func splice(a, b []byte, off int64) []byte {
	return append(bytes.Clone(a[:off]), b[off:]...)
}

// TestOutOfSequence checks the damage no crash produces: intact chunks of
// one log in an order its writer never wrote.
func TestOutOfSequence(t *testing.T) {
	const id = 5
	small := []byte("small")
	// a: block 0 ends exactly with a full record; block 1 starts with one.
	fill := make([]byte, maxPayload-headerSize-len(small))
	a := writeLog(t, [][]byte{small, fill, []byte("a2"), []byte("a3")}, writeOpts{id: id, syncEach: true})
	require.EqualValues(t, blockSize, a.starts[2])
	// b: a record crossing from block 0 into block 1, then more.
	b := writeLog(t, [][]byte{small, make([]byte, blockSize), []byte("b2"), []byte("b3")}, writeOpts{id: id, syncEach: true})
	require.Less(t, b.starts[1], int64(blockSize))
	require.Greater(t, b.ends[1], int64(blockSize))

	t.Run("last without first", func(t *testing.T) {
		data := splice(a.data, b.data, blockSize)
		r := NewReader(bytes.NewReader(data), int64(len(data)), "log")
		res := drain(r)
		requireRecs(t, a.recs[:2], res.recs)
		require.True(t, base.IsCorruption(res.err), "%v", res.err)
		require.ErrorContains(t, res.err, fmt.Sprintf("at offset %d: expected a full or first chunk, found a last chunk", blockSize))
		require.Equal(t, b.ends[1]-blockSize, r.SkipCorrupt())
		res = drain(r)
		require.NoError(t, res.err)
		requireRecs(t, b.recs[2:], res.recs)
	})
	t.Run("first without last", func(t *testing.T) {
		data := splice(b.data, a.data, blockSize)
		r := NewReader(bytes.NewReader(data), int64(len(data)), "log")
		res := drain(r)
		requireRecs(t, b.recs[:1], res.recs)
		require.True(t, base.IsCorruption(res.err), "%v", res.err)
		require.ErrorContains(t, res.err, fmt.Sprintf(
			"at offset %d: expected a middle or last chunk continuing the record at offset %d, found a full chunk",
			blockSize, b.starts[1]))
		require.Equal(t, blockSize-b.starts[1], r.SkipCorrupt())
		res = drain(r)
		require.NoError(t, res.err)
		requireRecs(t, a.recs[2:], res.recs)
	})
}

func TestTornTailReasons(t *testing.T) {
	l := writeLog(t, [][]byte{[]byte("one"), make([]byte, blockSize), []byte("three")}, writeOpts{id: 1, syncEach: true})
	for _, tc := range []struct {
		name   string
		data   []byte
		off    int64
		reason string
	}{
		{"header cut", l.data[:l.starts[2]+4], l.starts[2], "expected a 15-byte chunk header, found the end of the file after 4 bytes"},
		{"payload cut", l.data[:l.ends[2]-1], l.starts[2], "expected a 5-byte payload, found the end of the file after 4 bytes"},
		{"record cut at block end", l.data[:blockSize], l.starts[1], "incomplete record at offset"},
		{"zeros appended", append(bytes.Clone(l.data), make([]byte, 100)...), int64(len(l.data)), "found zeroed bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := readLog(tc.data, 1, true)
			require.NoError(t, res.err)
			require.True(t, res.torn)
			require.Equal(t, tc.off, res.tailOff)
			require.Contains(t, res.reason, tc.reason)
		})
	}
	_ = io.EOF
}
