package filter

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRibbonLayout(t *testing.T) {
	for _, tc := range []struct{ blocks, segments uint64 }{
		{2, 1}, {2, 13}, {2, 64}, {3, 20}, {100, 678}, {813, 5691}, {ribbonMaxBlocks, ribbonMaxBlocks * 7},
	} {
		t.Run(fmt.Sprintf("%d/%d", tc.blocks, tc.segments), func(t *testing.T) {
			l, ok := makeRibbonLayout(tc.blocks, tc.segments)
			require.True(t, ok)
			require.Equal(t, uint32(tc.blocks*128-127), l.numStarts)
			// Blocks tile the segments exactly, lower blocks first.
			next := uint32(0)
			for k := uint32(0); k < l.numBlocks; k++ {
				seg, cols := l.block(k)
				require.Equal(t, next, seg, "block %d", k)
				if k < l.upperStart {
					require.Equal(t, l.upperCols-1, cols)
				} else {
					require.Equal(t, l.upperCols, cols)
				}
				next += cols
				if k > 1000 && k < l.numBlocks-1000 {
					k = l.numBlocks - 1000 // skip the middle of huge layouts
					next = (k+1)*l.upperCols - min(k+1, l.upperStart)
				}
			}
			require.Equal(t, uint32(tc.segments), next)
		})
	}
	for _, bad := range []struct{ blocks, segments uint64 }{{0, 0}, {2, 0}, {2, 65}, {ribbonMaxBlocks + 1, ribbonMaxBlocks + 1}} {
		_, ok := makeRibbonLayout(bad.blocks, bad.segments)
		require.False(t, ok, "%d blocks, %d segments", bad.blocks, bad.segments)
	}
}

func TestRibbonNumSlots(t *testing.T) {
	require.Equal(t, uint32(256), ribbonNumSlots(1))
	require.Equal(t, uint32(256), ribbonNumSlots(248))
	prev := uint32(0)
	for _, n := range []int{249, 500, 1000, 4000, 10_000, 63_447, 100_000, 140_000, 1 << 20, 1e8, ribbonMaxKeys} {
		s := ribbonNumSlots(n)
		require.Zero(t, s%ribbonBlockSlots)
		require.GreaterOrEqual(t, s, prev, "monotone")
		prev = s
		overhead := float64(s) / float64(n)
		require.Greater(t, overhead, 1.0, "n=%d", n)
		if n >= 1000 { // below, whole blocks round up a lot
			require.Less(t, overhead, 1.12, "n=%d", n)
		}
		require.LessOrEqual(t, uint64(s)/ribbonBlockSlots, uint64(ribbonMaxBlocks))
	}
	// About 3.6% more slots than keys at 100,000 keys.
	require.InDelta(t, 1.036, float64(ribbonNumSlots(100_000))/100_000, 0.003)
}

func TestRibbonNumSegments(t *testing.T) {
	const slots = 128 * 1000
	tests := []struct {
		oneIn    float64
		min, max uint32
	}{
		{1.0 / 0.009535, 6700, 6800}, // 22% of blocks with 6 columns, the rest 7
		{64, 6000, 6001},             // exactly 6 columns (the last block gets 7)
		{128, 7000, 7001},
		{1.5, 1, 1000},       // 0 or 1 column
		{1e12, 32000, 32000}, // capped at 32 columns
		{1, 1, 1},
	}
	for _, tc := range tests {
		for _, bias := range []uint32{0, 1 << 31, ^uint32(0)} {
			got := ribbonNumSegments(slots, tc.oneIn, bias)
			require.GreaterOrEqual(t, got, tc.min, "1/%v", tc.oneIn)
			require.LessOrEqual(t, got, tc.max, "1/%v", tc.oneIn)
			_, ok := makeRibbonLayout(1000, uint64(got))
			require.True(t, ok)
		}
	}
}

func TestRibbonSmallFallsBackToBloom(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, tc := range []struct {
		n    int
		want Type
	}{{1, Bloom}, {10, Bloom}, {100, Bloom}, {2000, Ribbon}, {50_000, Ribbon}} {
		data, r := build(t, ribbon10, randomHashes(rng, tc.n))
		require.Equal(t, tc.want, r.Type(), "n=%d", tc.n)
		if tc.want == Bloom {
			require.Len(t, data, bloomPayloadLen(tc.n, 10000)+trailerLen)
		}
	}
}

func TestRibbonRawSeedDistinct(t *testing.T) {
	seen := map[uint64]bool{}
	for s := range 256 {
		raw := ribbonRawSeed(uint8(s))
		require.False(t, seen[raw], "seed %d", s)
		require.LessOrEqual(t, raw, uint64(^uint32(0)))
		seen[raw] = true
	}
	require.Equal(t, uint64(0), ribbonRawSeed(0))
}
