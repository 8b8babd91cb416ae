package cache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

func key(i int) Key { return Key{NS: 1, File: uint64(i % 7), Offset: uint64(i)} }

func TestGetSetRelease(t *testing.T) {
	c := New(1 << 20)
	_, ok := c.Get(key(1))
	require.False(t, ok)
	h := c.Set(key(1), []byte("one"))
	require.Equal(t, "one", string(h.Value()))
	require.EqualValues(t, 1, c.Pinned())
	h2, ok := c.Get(key(1))
	require.True(t, ok)
	require.Equal(t, "one", string(h2.Value()))
	h3 := h2.Clone()
	require.EqualValues(t, 3, c.Pinned())
	h.Release()
	h2.Release()
	h3.Release()
	require.EqualValues(t, 0, c.Pinned())
	h4, ok := c.Get(key(1))
	require.True(t, ok)
	h4.Release()
	Handle{}.Release() // zero handle: no-op
}

func TestEvictionRespectsCapacityAndPins(t *testing.T) {
	const block = 4096
	c := New(64 * (block + entryOverhead)) // small: one shard
	require.Len(t, c.shards, 1)
	pinned := c.Set(key(0), make([]byte, block))
	for i := 1; i < 1000; i++ {
		c.Set(key(i), make([]byte, block)).Release()
	}
	require.LessOrEqual(t, c.Usage(), c.Capacity()+block+entryOverhead)
	// The pinned block survived everything.
	h, ok := c.Get(key(0))
	require.True(t, ok)
	require.Len(t, h.Value(), block)
	h.Release()
	pinned.Release()
	// The most recent blocks are resident, the oldest unpinned ones are not.
	_, ok = c.Get(key(1))
	require.False(t, ok)
	h, ok = c.Get(key(999))
	require.True(t, ok)
	h.Release()
}

// TestClockSecondChance: a block hit since it was inserted outlives older
// blocks that were not, and a block read once, by a scan, does not push
// out a block that keeps being hit.
func TestClockSecondChance(t *testing.T) {
	const block = 4096
	c := New(64 * (block + entryOverhead))
	require.Len(t, c.shards, 1)
	for i := range 64 {
		c.Set(key(i), make([]byte, block)).Release()
	}
	h, ok := c.Get(key(0))
	require.True(t, ok)
	h.Release()
	c.Set(key(64), make([]byte, block)).Release()
	resident := func(i int) bool {
		c.shards[0].mu.Lock()
		defer c.shards[0].mu.Unlock()
		return c.shards[0].entries[key(i)] != nil
	}
	require.True(t, resident(0), "hit: a second chance")
	require.False(t, resident(1), "the oldest block not hit")

	// A scan of many new blocks, with one block hit between each.
	for i := 100; i < 1000; i++ {
		c.Set(key(i), make([]byte, block)).Release()
		h, ok := c.Get(key(0))
		require.True(t, ok, "the hot block was evicted by block %d", i)
		h.Release()
	}
	require.LessOrEqual(t, c.Usage(), c.Capacity())
}

func TestPinnedBeyondCapacity(t *testing.T) {
	c := New(0)
	var hs []Handle
	for i := range 10 {
		hs = append(hs, c.Set(key(i), make([]byte, 100)))
	}
	for i, h := range hs {
		require.Len(t, h.Value(), 100, "pinned block %d lost its bytes", i)
		h.Release()
	}
	require.Zero(t, c.Usage())
}

func TestReplace(t *testing.T) {
	c := New(1 << 20)
	old := c.Set(key(5), []byte("old"))
	c.Set(key(5), []byte("new")).Release()
	require.Equal(t, "old", string(old.Value()), "a held handle keeps its bytes after replacement")
	old.Release()
	h, _ := c.Get(key(5))
	require.Equal(t, "new", string(h.Value()))
	h.Release()
}

func TestGetOrLoadSingleFlight(t *testing.T) {
	c := New(1 << 20)
	var loads atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	var hits atomic.Int32
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, hit, err := c.GetOrLoad(key(3), func() ([]byte, error) {
				loads.Add(1)
				<-release
				return []byte("v"), nil
			})
			require.NoError(t, err)
			require.Equal(t, "v", string(h.Value()))
			if hit {
				hits.Add(1)
			}
			h.Release()
		}()
	}
	close(release)
	wg.Wait()
	require.EqualValues(t, 1, loads.Load())
	require.EqualValues(t, 7, hits.Load())
	require.Zero(t, c.Pinned())
}

func TestGetOrLoadError(t *testing.T) {
	c := New(1 << 20)
	boom := errors.New("boom")
	_, _, err := c.GetOrLoad(key(1), func() ([]byte, error) { return nil, boom })
	require.ErrorIs(t, err, boom)
	h, hit, err := c.GetOrLoad(key(1), func() ([]byte, error) { return []byte("ok"), nil })
	require.NoError(t, err)
	require.False(t, hit)
	require.Equal(t, "ok", string(h.Value()))
	h.Release()
}

// TestConcurrent hammers the cache from several goroutines (run with -race)
// and checks that every handle sees the bytes of its own key.
func TestConcurrent(t *testing.T) {
	c := New(200 * 1024)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			var held []Handle
			for range 20000 {
				i := rng.IntN(500)
				want := fmt.Sprintf("block-%d", i)
				h, _, err := c.GetOrLoad(key(i), func() ([]byte, error) {
					b := make([]byte, 1024)
					copy(b, want)
					return b, nil
				})
				require.NoError(t, err)
				require.Equal(t, want, string(h.Value()[:len(want)]))
				held = append(held, h)
				if len(held) > 8 || rng.IntN(3) == 0 {
					j := rng.IntN(len(held))
					held[j].Release()
					held = append(held[:j], held[j+1:]...)
				}
			}
			for _, h := range held {
				h.Release()
			}
		}()
	}
	wg.Wait()
	require.Zero(t, c.Pinned())
	require.LessOrEqual(t, c.Usage(), c.Capacity())
}

func BenchmarkGetHit(b *testing.B) {
	c := New(64 << 20)
	for i := range 1024 {
		c.Set(key(i), make([]byte, 4096)).Release()
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			h, _ := c.Get(key(i & 1023))
			h.Release()
			i++
		}
	})
}

// BenchmarkGetHitLarge hits random blocks of a cache with more entries
// than the CPU's caches hold, as a large database's block cache has: the
// cost is the memory a hit and its release touch.
func BenchmarkGetHitLarge(b *testing.B) {
	const n = 1 << 18
	c := New(n * (64 + entryOverhead) * 2)
	for i := range n {
		c.Set(key(i), make([]byte, 64)).Release()
	}
	rng := rand.New(rand.NewPCG(1, 1))
	b.ReportAllocs()
	for b.Loop() {
		h, ok := c.Get(key(rng.IntN(n)))
		if !ok {
			b.Fatal("miss")
		}
		h.Release()
	}
}

// BenchmarkPinnedBeyondCapacity pins many more blocks than the cache holds,
// as a large prepared scan does, then releases them: eviction must not walk
// the pinned entries again for every insert and release.
func BenchmarkPinnedBeyondCapacity(b *testing.B) {
	const n = 20000
	hs := make([]Handle, n)
	for b.Loop() {
		c := New(1 << 20)
		for i := range hs {
			hs[i] = c.Set(key(i), make([]byte, 4096))
		}
		for _, h := range hs {
			h.Release()
		}
		if c.Usage() > c.Capacity() {
			b.Fatal("over capacity after the releases")
		}
	}
}
