package memtable

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-db/strata/kv/internal/base"
)

const (
	benchKeyLen   = 16 // "userkey:" + 8-byte big-endian number
	benchValueLen = 64
	benchArena    = 64 << 20
)

// scramble maps i to a pseudo-random 64-bit number, one to one.
func scramble(i uint64) uint64 {
	i ^= i >> 33
	i *= 0xff51afd7ed558ccd
	i ^= i >> 33
	return i
}

func benchKey(dst []byte, n uint64) []byte {
	dst = append(dst[:0], "userkey:"...)
	return binary.BigEndian.AppendUint64(dst, n)
}

// cpuMeter sums the process's CPU time over the timed parts of a benchmark
// and reports it per operation (cpu-ns/op): on a shared machine the wall time
// also counts the time the benchmark waited for a CPU, which the CPU time
// leaves out.
type cpuMeter struct {
	start, sum time.Duration
}

func (c *cpuMeter) resume() { c.start = processCPU() }
func (c *cpuMeter) pause()  { c.sum += processCPU() - c.start }

func (c *cpuMeter) report(b *testing.B) {
	if b.N > 0 {
		b.ReportMetric(float64(c.sum.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// processCPU is the CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAdd inserts 16-byte keys with 64-byte values, in key order
// (seq) or in random order (random), from one or two goroutines. A fresh
// 64 MiB memtable is made, untimed, whenever the previous one could be full.
func BenchmarkAdd(b *testing.B) {
	for _, order := range []string{"seq", "random"} {
		for _, goroutines := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/goroutines=%d", order, goroutines), func(b *testing.B) {
				benchmarkAdd(b, order == "random", goroutines)
			})
		}
	}
}

func benchmarkAdd(b *testing.B, random bool, goroutines int) {
	perMemtable := (benchArena - 1024) / EntrySize(benchKeyLen, benchValueLen)
	value := make([]byte, benchValueLen)
	keys := make([][]byte, goroutines)
	for g := range keys {
		keys[g] = make([]byte, 0, benchKeyLen)
	}
	b.SetBytes(benchKeyLen + benchValueLen)
	b.ReportAllocs()
	b.ResetTimer()
	var seq uint64
	var cpu cpuMeter
	defer cpu.report(b)
	for done := 0; done < b.N; {
		n := min(b.N-done, perMemtable)
		b.StopTimer()
		m := New(benchArena)
		b.StartTimer()
		cpu.resume()
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				key := keys[g]
				for i := g; i < n; i += goroutines {
					s := seq + uint64(i) + 1
					k := s
					if random {
						k = scramble(s)
					}
					key = benchKey(key, k)
					if err := m.Add(key, base.SeqNum(s), base.KindSet, value); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		cpu.pause()
		done += n
		seq += uint64(n)
	}
}

// benchMemtable returns a memtable of n random keys and search keys that hit
// them in random order.
func benchMemtable(b *testing.B, n int) (*Memtable, [][]byte) {
	m := New(n*EntrySize(benchKeyLen, benchValueLen) + MinArenaSize)
	value := make([]byte, benchValueLen)
	var key []byte
	search := make([][]byte, n)
	for i := range n {
		key = benchKey(key, scramble(uint64(i)))
		if err := m.Add(key, base.SeqNum(i+1), base.KindSet, value); err != nil {
			b.Fatal(err)
		}
		search[int(scramble(uint64(i)+12345)%uint64(n))] = base.MakeSearchKey(nil, key, base.SeqNumMax)
	}
	for i := range search {
		if search[i] == nil {
			search[i] = base.MakeSearchKey(nil, benchKey(nil, uint64(i)), base.SeqNumMax) // a miss
		}
	}
	return m, search
}

var benchSizes = []int{1 << 10, 1 << 18}

func BenchmarkSeekGE(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint("entries=", n), func(b *testing.B) {
			m, search := benchMemtable(b, n)
			it := m.NewIter()
			b.ReportAllocs()
			b.ResetTimer()
			var cpu cpuMeter
			cpu.resume()
			for i := 0; i < b.N; i++ {
				it.SeekGE(search[i%n])
			}
			cpu.pause()
			cpu.report(b)
		})
	}
}

func BenchmarkGet(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint("entries=", n), func(b *testing.B) {
			m, search := benchMemtable(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			var cpu cpuMeter
			cpu.resume()
			for i := 0; i < b.N; i++ {
				m.Get(base.UserKey(search[i%n]), base.SeqNumMax)
			}
			cpu.pause()
			cpu.report(b)
		})
	}
}

func BenchmarkNext(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint("entries=", n), func(b *testing.B) {
			m, _ := benchMemtable(b, n)
			it := m.NewIter()
			it.First()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if it.Next() == nil {
					it.First()
				}
			}
		})
	}
}

func BenchmarkPrev(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint("entries=", n), func(b *testing.B) {
			m, _ := benchMemtable(b, n)
			it := m.NewIter()
			it.Last()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if it.Prev() == nil {
					it.Last()
				}
			}
		})
	}
}

// BenchmarkSortedBatches inserts batches of 1,000 random keys, each batch
// sorted, as a commit applies a transaction's batch, into a memtable that
// fills up to 200,000 entries: through one Inserter per batch (inserter) or
// Add (add).
func BenchmarkSortedBatches(b *testing.B) {
	const batch, perMemtable = 1000, 200_000
	keys := make([][]byte, batch)
	for i := range keys {
		keys[i] = make([]byte, 0, benchKeyLen)
	}
	value := make([]byte, benchValueLen)
	for _, mode := range []string{"add", "inserter"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			var m *Memtable
			var seq uint64
			var cpu cpuMeter
			defer cpu.report(b)
			filled := perMemtable
			for done := 0; done < b.N; done += batch {
				b.StopTimer()
				if filled >= perMemtable {
					m, filled = New(benchArena), 0
				}
				for i := range keys {
					keys[i] = benchKey(keys[i], scramble(seq+uint64(i)+1))
				}
				slices.SortFunc(keys, bytes.Compare)
				b.StartTimer()
				cpu.resume()
				var ins Inserter
				ins.Init(m)
				for i, k := range keys {
					s := base.SeqNum(seq + uint64(i) + 1)
					var err error
					if mode == "add" {
						err = m.Add(k, s, base.KindSet, value)
					} else {
						err = ins.Add(k, s, base.KindSet, value)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				cpu.pause()
				seq += batch
				filled += batch
			}
		})
	}
}
