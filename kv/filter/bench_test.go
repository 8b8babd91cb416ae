package filter

import (
	"fmt"
	"testing"
)

// Benchmarks. The query benchmarks run against a set of filters of 100,000
// keys each, 20 million keys in all (about 25 MB of Bloom or 18 MB of
// Ribbon filters), so that most queries miss the CPU caches as they do in
// an engine with many tables; cmd/sqlbench's filter subcommand measures the
// same modes at any size.

const (
	benchKeysPerFilter = 100_000
	benchTotalKeys     = 20_000_000
	benchBatch         = 8
)

// mix64 is a bijective mixer (splitmix64's finalizer), used to make
// reproducible key hashes.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// benchHash is the hash of key i of filter f; keys with bit 31 set are
// never added.
func benchHash(f, i uint32) uint64 { return mix64(uint64(f)<<32 | uint64(i)) }

type benchSet struct {
	readers []Reader
	data    [][]byte
}

var benchSets = map[Type]*benchSet{}

func getBenchSet(b testing.TB, typ Type) *benchSet {
	if s, ok := benchSets[typ]; ok {
		return s
	}
	bld := Policy{Type: typ, BitsPerKey: 10}.NewBuilder()
	s := &benchSet{}
	for f := uint32(0); len(s.readers)*benchKeysPerFilter < benchTotalKeys; f++ {
		for i := uint32(0); i < benchKeysPerFilter; i++ {
			bld.Add(benchHash(f, i))
		}
		data := bld.Finish(nil)
		r, err := Decode(data)
		if err != nil {
			b.Fatal(err)
		}
		s.readers = append(s.readers, r)
		s.data = append(s.data, data)
	}
	benchSets[typ] = s
	return s
}

// rng32 is a xorshift generator cheap enough not to blur the timings.
type rng32 uint32

func (r *rng32) next() uint32 {
	x := uint32(*r)
	x ^= x << 13
	x ^= x >> 17
	x ^= x << 5
	*r = rng32(x)
	return x
}

func (r *rng32) below(n uint32) uint32 { return uint32(uint64(r.next()) * uint64(n) >> 32) }

func BenchmarkBuild(b *testing.B) {
	for _, typ := range []Type{Bloom, Ribbon} {
		b.Run(typ.String(), func(b *testing.B) {
			bld := Policy{Type: typ, BitsPerKey: 10}.NewBuilder()
			var buf []byte
			// Warm up: the first filter grows the builder's scratch and the
			// output buffer; later ones reuse them.
			for i := uint32(0); i < benchKeysPerFilter; i++ {
				bld.Add(benchHash(1<<31, i))
			}
			buf = bld.Finish(buf)
			b.ReportAllocs()
			for f := uint32(0); b.Loop(); f++ {
				for i := uint32(0); i < benchKeysPerFilter; i++ {
					bld.Add(benchHash(f, i))
				}
				buf = bld.Finish(buf[:0])
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchKeysPerFilter, "ns/key")
		})
	}
}

// BenchmarkQuery measures one key per op, half of them added keys, in the
// modes of cmd/sqlbench filter: one hot filter, a random filter per key, and
// batches of 8 keys per random filter answered by a loop of MayContain
// ("unprepared") or by MayContainBatch ("prepared").
func BenchmarkQuery(b *testing.B) {
	for _, typ := range []Type{Bloom, Ribbon} {
		s := getBenchSet(b, typ)
		nf := uint32(len(s.readers))
		b.Run(fmt.Sprintf("%s/single", typ), func(b *testing.B) {
			rng, hits := rng32(1), 0
			r := &s.readers[0]
			for b.Loop() {
				i := rng.below(benchKeysPerFilter) | rng.next()&(1<<31)
				hits += b2i(r.MayContain(benchHash(0, i)))
			}
			sinkInt = hits
		})
		b.Run(fmt.Sprintf("%s/random", typ), func(b *testing.B) {
			rng, hits := rng32(1), 0
			for b.Loop() {
				f := rng.below(nf)
				i := rng.below(benchKeysPerFilter) | rng.next()&(1<<31)
				hits += b2i(s.readers[f].MayContain(benchHash(f, i)))
			}
			sinkInt = hits
		})
		batchModes := []struct {
			name string
			fn   func(r *Reader, h []uint64, out []bool)
		}{
			{"batch-unprepared", func(r *Reader, h []uint64, out []bool) {
				for i := range h {
					out[i] = r.MayContain(h[i])
				}
			}},
			{"batch-prepared", (*Reader).MayContainBatch},
		}
		for _, m := range batchModes {
			b.Run(fmt.Sprintf("%s/%s", typ, m.name), func(b *testing.B) {
				rng, hits := rng32(1), 0
				var hs [benchBatch]uint64
				var out [benchBatch]bool
				for b.Loop() {
					f := rng.below(nf)
					outside := rng.next() & (1 << 31)
					for j := range hs {
						hs[j] = benchHash(f, rng.below(benchKeysPerFilter)|outside)
					}
					m.fn(&s.readers[f], hs[:], out[:])
					for _, ok := range out {
						hits += b2i(ok)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchBatch, "ns/key")
				sinkInt = hits
			})
		}
	}
}

var sinkInt int

// b2i counts a bool without a branch on it (the compiler emits a
// conditional move), so that the benchmark loop does not mispredict on
// every other answer.
func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
}
