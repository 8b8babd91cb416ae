package filter

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"unsafe"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/stretchr/testify/require"
)

// randomHashes returns n distinct random hashes.
func randomHashes(rng *rand.Rand, n int) []uint64 {
	seen := make(map[uint64]struct{}, n)
	out := make([]uint64, 0, n)
	for len(out) < n {
		h := rng.Uint64()
		if _, ok := seen[h]; ok {
			continue
		}
		seen[h] = struct{}{}
		out = append(out, h)
	}
	return out
}

// build builds one filter over hashes and decodes it.
func build(t testing.TB, p Policy, hashes []uint64) ([]byte, Reader) {
	t.Helper()
	b := p.NewBuilder()
	for _, h := range hashes {
		b.Add(h)
	}
	data := b.Finish(nil)
	r, err := Decode(data)
	require.NoError(t, err)
	return data, r
}

var (
	bloom10  = Policy{Type: Bloom, BitsPerKey: 10}
	ribbon10 = Policy{Type: Ribbon, BitsPerKey: 10}
)

func TestNoFalseNegatives(t *testing.T) {
	policies := []Policy{
		bloom10,
		ribbon10,
		{Type: Bloom, BitsPerKey: 1},
		{Type: Bloom, BitsPerKey: 23.5},
		{Type: Ribbon, BitsPerKey: 1},
		{Type: Ribbon, FPRate: 0.001},
		{Type: Ribbon, FPRate: 0.3},
		{Type: Ribbon, FPRate: 0.75},
		{Type: Ribbon, FPRate: 1e-12},
	}
	sizes := []int{0, 1, 2, 3, 7, 31, 100, 248, 249, 300, 1000, 1023, 1025, 4096, 20_000, 100_000}
	if !testing.Short() {
		sizes = append(sizes, 1_000_000)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range policies {
		for _, n := range sizes {
			if n >= 1_000_000 && (p.FPRate == 0.3 || p.FPRate == 0.75 || p.BitsPerKey == 23.5) {
				continue
			}
			t.Run(fmt.Sprintf("%s/bpk=%v/fp=%v/n=%d", p.Type, p.BitsPerKey, p.FPRate, n), func(t *testing.T) {
				hashes := randomHashes(rng, n)
				_, r := build(t, p, hashes)
				out := make([]bool, len(hashes))
				r.MayContainBatch(hashes, out)
				for i, h := range hashes {
					if !r.MayContain(h) || !out[i] {
						t.Fatalf("false negative for hash %#x (key %d of %d): single %v batch %v",
							h, i, n, r.MayContain(h), out[i])
					}
				}
				if n == 0 {
					require.False(t, r.MayContain(rng.Uint64()), "an empty filter must answer no")
				}
			})
		}
	}
}

// measureFP returns the share of q random hashes outside the filter for
// which it answers "maybe".
func measureFP(rng *rand.Rand, r *Reader, q int) float64 {
	fp := 0
	for range q {
		if r.MayContain(rng.Uint64()) {
			fp++
		}
	}
	return float64(fp) / float64(q)
}

func TestFPRate(t *testing.T) {
	const n, q = 100_000, 2_000_000
	tests := []struct {
		policy          Policy
		typ             Type
		minFP, maxFP    float64 // measured rate band
		minBPK, maxBPK  float64 // bits per key stored (with trailer)
		estimateSlackPc float64 // measured vs EstimatedFPRate, percent
	}{
		{bloom10, Bloom, 0.0085, 0.0105, 10.0, 10.1, 10},
		{Policy{Type: Bloom, BitsPerKey: 16}, Bloom, 0.0006, 0.0012, 16.0, 16.1, 15},
		{Policy{Type: Bloom, BitsPerKey: 5}, Bloom, 0.085, 0.105, 5.0, 5.1, 10},
		{ribbon10, Ribbon, 0.0085, 0.0100, 6.8, 7.2, 10},
		{Policy{Type: Ribbon, FPRate: 0.01}, Ribbon, 0.009, 0.0108, 6.7, 7.1, 10},
		{Policy{Type: Ribbon, FPRate: 0.001}, Ribbon, 0.0008, 0.0012, 10.0, 10.6, 15},
		{Policy{Type: Ribbon, FPRate: 1.0 / 64}, Ribbon, 0.014, 0.017, 6.1, 6.4, 10},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/bpk=%v/fp=%v", tc.policy.Type, tc.policy.BitsPerKey, tc.policy.FPRate), func(t *testing.T) {
			data, r := build(t, tc.policy, randomHashes(rng, n))
			require.Equal(t, tc.typ, r.Type())
			bpk := float64(len(data)) * 8 / n
			require.GreaterOrEqual(t, bpk, tc.minBPK)
			require.LessOrEqual(t, bpk, tc.maxBPK)
			fp := measureFP(rng, &r, q)
			t.Logf("bits/key %.3f, FP %.4f%%, estimated %.4f%%", bpk, 100*fp, 100*r.EstimatedFPRate(n))
			require.GreaterOrEqual(t, fp, tc.minFP)
			require.LessOrEqual(t, fp, tc.maxFP)
			require.InEpsilon(t, r.EstimatedFPRate(n), fp, tc.estimateSlackPc/100)
		})
	}
}

func TestBatchMatchesSingle(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, p := range []Policy{bloom10, ribbon10, {Type: Ribbon, FPRate: 0.2}} {
		for _, n := range []int{0, 1, 50, 1000, 30_000} {
			t.Run(fmt.Sprintf("%s/fp=%v/n=%d", p.Type, p.FPRate, n), func(t *testing.T) {
				hashes := randomHashes(rng, n)
				_, r := build(t, p, hashes)
				// Half added keys, half others, in batches of every size
				// around the internal chunk.
				queries := append(append([]uint64(nil), hashes...), randomHashes(rng, 2000)...)
				rng.Shuffle(len(queries), func(i, j int) { queries[i], queries[j] = queries[j], queries[i] })
				out := make([]bool, len(queries)+3)
				for _, size := range []int{1, 7, 31, 32, 33, 64, 100, len(queries)} {
					for lo := 0; lo < len(queries); lo += size {
						hi := min(lo+size, len(queries))
						r.MayContainBatch(queries[lo:hi], out[:hi-lo+3])
						for i, h := range queries[lo:hi] {
							if out[i] != r.MayContain(h) {
								t.Fatalf("batch of %d: hash %#x: batch %v, single %v", size, h, out[i], r.MayContain(h))
							}
						}
					}
				}
			})
		}
	}
}

func TestMayContainBatchShortOutPanics(t *testing.T) {
	_, r := build(t, bloom10, []uint64{1, 2, 3})
	require.Panics(t, func() { r.MayContainBatch([]uint64{1, 2, 3}, make([]bool, 2)) })
}

func TestDuplicates(t *testing.T) {
	for _, p := range []Policy{bloom10, ribbon10} {
		b := p.NewBuilder()
		for _, h := range []uint64{5, 5, 5, 7, 7, 5, 9} {
			b.Add(h)
		}
		require.Equal(t, 4, b.Len(), "consecutive duplicates are skipped")
		r, err := Decode(b.Finish(nil))
		require.NoError(t, err)
		require.Equal(t, 0, b.Len(), "Finish resets the builder")
		for _, h := range []uint64{5, 7, 9} {
			require.True(t, r.MayContain(h))
		}
	}
	// Many non-consecutive duplicates make dependent Ribbon equations,
	// which must not make construction fail.
	rng := rand.New(rand.NewPCG(7, 8))
	hashes := randomHashes(rng, 5000)
	b := ribbon10.NewBuilder()
	for range 3 {
		for _, h := range hashes {
			b.Add(h)
		}
	}
	r, err := Decode(b.Finish(nil))
	require.NoError(t, err)
	require.Equal(t, Ribbon, r.Type())
	for _, h := range hashes {
		require.True(t, r.MayContain(h))
	}
}

func TestNonePolicy(t *testing.T) {
	b := Policy{}.NewBuilder()
	b.Add(1)
	require.Equal(t, 0, b.Len())
	require.Equal(t, []byte("x"), b.Finish([]byte("x")), "None appends nothing")
}

func TestBuilderReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	sets := [][]uint64{randomHashes(rng, 50_000), randomHashes(rng, 10), randomHashes(rng, 3000), nil, randomHashes(rng, 70_000)}
	for _, p := range []Policy{bloom10, ribbon10} {
		reused := p.NewBuilder()
		var buf []byte
		for i, hs := range sets {
			fresh := p.NewBuilder()
			for _, h := range hs {
				fresh.Add(h)
				reused.Add(h)
			}
			want := fresh.Finish(nil)
			// Appending after earlier content must not disturb it.
			buf = append(buf[:0], "prefix"...)
			buf = reused.Finish(buf)
			require.Equal(t, "prefix", string(buf[:6]))
			require.Equal(t, want, buf[6:], "filter %d of %s differs between a fresh and a reused builder", i, p.Type)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	hashes := randomHashes(rng, 10_000)
	probe := randomHashes(rng, 10_000)
	for _, p := range []Policy{bloom10, ribbon10} {
		data, r := build(t, p, hashes)
		// A copy at another address (misaligned by one byte) decodes to a
		// filter with the same answers.
		moved := append(make([]byte, 1, len(data)+1), data...)[1:]
		r2, err := Decode(moved)
		require.NoError(t, err)
		require.Equal(t, r.Type(), r2.Type())
		require.Equal(t, r.Size(), r2.Size())
		require.Equal(t, len(data)-trailerLen, r.Size())
		for _, h := range append(hashes, probe...) {
			require.Equal(t, r.MayContain(h), r2.MayContain(h))
		}
	}
}

func TestDecode(t *testing.T) {
	line := make([]byte, 64)
	seg := make([]byte, 16)
	cat := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	rep := func(b []byte, n int) []byte {
		var out []byte
		for range n {
			out = append(out, b...)
		}
		return out
	}
	tests := []struct {
		name    string
		data    []byte
		wantErr string
		typ     Type
		answer  bool // MayContain of any key, when not an error
	}{
		{name: "nil", data: nil, wantErr: "shorter than the 5-byte trailer"},
		{name: "four bytes", data: []byte{0xFF, 0, 6, 0}, wantErr: "shorter than the 5-byte trailer"},
		{name: "empty bloom", data: []byte{0xFF, 0, 6, 0, 0}, typ: None, answer: false},
		{name: "empty ribbon", data: []byte{0xFE, 0, 0, 0, 0}, typ: None, answer: false},
		{name: "bloom partial line", data: cat(line[:63], []byte{0xFF, 0, 6, 0, 0}), wantErr: "whole number of 64-byte lines"},
		{name: "bloom full line", data: cat(rep([]byte{0xFF}, 64), []byte{0xFF, 0, 6, 0, 0}), typ: Bloom, answer: true},
		{name: "bloom zero line", data: cat(line, []byte{0xFF, 0, 6, 0, 0}), typ: Bloom, answer: false},
		{name: "bloom zero probes", data: cat(line, []byte{0xFF, 0, 0, 0, 0}), typ: None, answer: true},
		{name: "bloom other sub-format", data: cat(line, []byte{0xFF, 1, 6, 0, 0}), typ: None, answer: true},
		{name: "bloom other line size", data: cat(line, []byte{0xFF, 0, 0x26, 0, 0}), typ: None, answer: true},
		{name: "bloom reserved byte", data: cat(line, []byte{0xFF, 0, 6, 0, 1}), typ: None, answer: true},
		{name: "unknown marker", data: cat(line, []byte{0x42, 0, 0, 0, 0}), typ: None, answer: true},
		{name: "unknown marker, short", data: []byte{0x00, 0, 0, 0, 0}, typ: None, answer: true},
		{name: "ribbon partial segment", data: cat(rep(seg, 14), seg[:8], []byte{0xFE, 0, 2, 0, 0}), wantErr: "whole number of 16-byte segments"},
		{name: "ribbon no blocks with payload", data: cat(seg, []byte{0xFE, 0, 0, 0, 0}), wantErr: "0 blocks"},
		{name: "ribbon blocks without payload", data: []byte{0xFE, 0, 2, 0, 0}, wantErr: "cannot have 0 segments"},
		{name: "ribbon too many columns", data: cat(rep(seg, 65), []byte{0xFE, 0, 2, 0, 0}), wantErr: "cannot have 65 segments"},
		{name: "ribbon one block", data: cat(rep(seg, 7), []byte{0xFE, 3, 1, 0, 0}), typ: None, answer: true},
		{name: "ribbon max columns", data: cat(rep(seg, 64), []byte{0xFE, 0, 2, 0, 0}), typ: Ribbon},
		{name: "ribbon one column", data: cat(rep(seg, 1), []byte{0xFE, 0, 2, 0, 0}), typ: Ribbon},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Decode(tc.data)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.True(t, base.IsCorruption(err), "decode errors are corruption: %v", err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.typ, r.Type())
			out := make([]bool, 2)
			for _, h := range []uint64{0, 1, 0x1234567890abcdef, ^uint64(0)} {
				got := r.MayContain(h)
				r.MayContainBatch([]uint64{h, h}, out)
				require.Equal(t, got, out[0])
				require.Equal(t, got, out[1])
				if tc.typ != Ribbon { // Ribbon answers depend on the hash
					require.Equal(t, tc.answer, got, "hash %#x", h)
				}
			}
		})
	}
}

func TestZeroReader(t *testing.T) {
	var r Reader
	require.False(t, r.MayContain(42))
	require.Equal(t, None, r.Type())
	out := []bool{true}
	r.MayContainBatch([]uint64{42}, out)
	require.False(t, out[0])
}

func TestAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	hashes := randomHashes(rng, 20_000)
	out := make([]bool, 100)
	for _, p := range []Policy{bloom10, ribbon10} {
		data, r := build(t, p, hashes)
		q := hashes[:100]
		require.Zero(t, testing.AllocsPerRun(100, func() {
			for _, h := range q {
				r.MayContain(h)
			}
		}), "%s MayContain", p.Type)
		require.Zero(t, testing.AllocsPerRun(100, func() { r.MayContainBatch(q, out) }), "%s MayContainBatch", p.Type)
		require.Zero(t, testing.AllocsPerRun(100, func() {
			if _, err := Decode(data); err != nil {
				t.Fatal(err)
			}
		}), "%s Decode", p.Type)

		// A warmed-up builder writing into a buffer with room allocates
		// nothing.
		b := p.NewBuilder()
		buf := make([]byte, 0, 2*len(data))
		fill := func() {
			for _, h := range hashes {
				b.Add(h)
			}
			buf = b.Finish(buf[:0])
		}
		fill()
		if !raceEnabled {
			require.Zero(t, testing.AllocsPerRun(5, fill), "%s Add+Finish", p.Type)
		}
	}
}

// TestConcurrentReaders queries one Reader from several goroutines; run
// with -race, it checks that queries write nothing shared.
func TestConcurrentReaders(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	hashes := randomHashes(rng, 20_000)
	for _, p := range []Policy{bloom10, ribbon10} {
		_, r := build(t, p, hashes)
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out := make([]bool, 64)
				for lo := g; lo+64 <= len(hashes); lo += 256 {
					r.MayContainBatch(hashes[lo:lo+64], out)
					for i, ok := range out {
						if !ok || !r.MayContain(hashes[lo+i]) {
							errs <- fmt.Errorf("%s: false negative at %d", p.Type, lo+i)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		require.NoError(t, <-errs)
	}
}

// TestAppendProbe: the address given for a hash is where MayContain reads.
// Zeroing the Bloom line there turns an added key's answer to no, which
// only the line MayContain reads can do; Ribbon's address lies in the
// data and moves with the hash. An empty filter gives none.
func TestAppendProbe(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	hashes := randomHashes(rng, 2000)
	data, r := build(t, bloom10, hashes)
	for _, h := range hashes[:200] {
		p := r.AppendProbe(nil, h)
		require.Len(t, p, 1)
		off := -1
		for i := range data {
			if &r.data[i] == p[0] {
				off = i
				break
			}
		}
		require.GreaterOrEqual(t, off, 0, "the address is in the filter")
		cut := append([]byte(nil), data...)
		clear(cut[off : off+bloomLineBytes])
		rc, err := Decode(cut)
		require.NoError(t, err)
		require.False(t, rc.MayContain(h), "MayContain reads the line at the address")
	}
	_, rr := build(t, ribbon10, hashes)
	seen := map[*byte]bool{}
	for _, h := range hashes[:200] {
		p := rr.AppendProbe(nil, h)
		require.Len(t, p, 1)
		require.True(t, &rr.data[0] == p[0] || uintptr(unsafe.Pointer(p[0])) > uintptr(unsafe.Pointer(&rr.data[0])) &&
			uintptr(unsafe.Pointer(p[0])) < uintptr(unsafe.Pointer(&rr.data[len(rr.data)-1])))
		seen[p[0]] = true
	}
	require.Greater(t, len(seen), 10, "the address moves with the hash")
	var empty Reader
	require.Empty(t, empty.AppendProbe(nil, 1))
}
