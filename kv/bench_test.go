package kv

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/strata-db/strata/kv/vfs"
)

func benchKey(buf []byte, n uint64) []byte {
	buf = buf[:0]
	buf = binary.BigEndian.AppendUint64(buf, n)
	for len(buf) < 16 {
		buf = append(buf, '0')
	}
	return buf
}

func benchValue(rng *rand.Rand, n int) []byte {
	v := make([]byte, n)
	for i := 0; i < n/2; i++ {
		v[i] = byte('a' + rng.IntN(26))
	}
	for i := n / 2; i < n; i++ {
		v[i] = 'x'
	}
	return v
}

func benchDB(b *testing.B) *DB {
	d, err := Open(b.TempDir(), &Options{FS: vfs.Default})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	return d
}

func BenchmarkFillRandom(b *testing.B) {
	d := benchDB(b)
	rng := rand.New(rand.NewPCG(1, 2))
	val := benchValue(rng, 400)
	var key []byte
	b.SetBytes(416)
	b.ReportAllocs()
	for b.Loop() {
		key = benchKey(key, rng.Uint64()%8_000_000)
		if err := d.Set(key, val, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFillSeq(b *testing.B) {
	d := benchDB(b)
	rng := rand.New(rand.NewPCG(1, 2))
	val := benchValue(rng, 400)
	var key []byte
	b.SetBytes(416)
	b.ReportAllocs()
	i := uint64(0)
	for b.Loop() {
		key = benchKey(key, i)
		i++
		if err := d.Set(key, val, nil); err != nil {
			b.Fatal(err)
		}
	}
}
