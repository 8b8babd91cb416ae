package filter

import (
	"encoding/binary"
	"testing"

	"github.com/strata-db/strata/kv/internal/base"
)

// FuzzDecode feeds arbitrary bytes to Decode. Decoding either fails with a
// corruption error or yields a Reader whose single and batched queries
// agree and do not panic. The seed corpus in testdata/fuzz/FuzzDecode holds
// real Bloom and Ribbon filters (regenerate with go test -run
// TestGoldenFilters -update).
func FuzzDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{bloomMarker, 0, 6, 0, 0})
	f.Add([]byte{ribbonMarker, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Decode(data)
		if err != nil {
			if !base.IsCorruption(err) {
				t.Fatalf("error not marked as corruption: %v", err)
			}
			return
		}
		var hashes [40]uint64
		for i := range hashes {
			hashes[i] = mix64(uint64(i) ^ uint64(len(data))<<32)
		}
		var out [len(hashes)]bool
		r.MayContainBatch(hashes[:], out[:])
		for i, h := range hashes {
			if got := r.MayContain(h); got != out[i] {
				t.Fatalf("hash %#x: single %v, batch %v", h, got, out[i])
			}
		}
		_ = r.EstimatedFPRate(len(data))
		_ = r.Type()
	})
}

// FuzzBuild builds filters from arbitrary hash sets and checks that every
// added hash is found. The first byte picks the policy; the rest, 8 bytes
// at a time, are the hashes.
func FuzzBuild(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{1, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(append([]byte{0x83}, make([]byte, 8*300)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		p := Policy{Type: Bloom + Type(data[0]&1), BitsPerKey: float64(data[0]>>1&63) / 2}
		if data[0]&0x80 != 0 {
			p.FPRate = 1 / float64(2+data[0]>>1&63)
		}
		b := p.NewBuilder()
		var hashes []uint64
		for rest := data[1:]; len(rest) >= 8; rest = rest[8:] {
			h := binary.LittleEndian.Uint64(rest)
			hashes = append(hashes, h)
			b.Add(h)
		}
		r, err := Decode(b.Finish(nil))
		if err != nil {
			t.Fatal(err)
		}
		out := make([]bool, len(hashes))
		r.MayContainBatch(hashes, out)
		for i, h := range hashes {
			if !r.MayContain(h) || !out[i] {
				t.Fatalf("false negative for %#x with %+v", h, p)
			}
		}
	})
}
