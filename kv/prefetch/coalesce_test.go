package prefetch

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCoalesce(t *testing.T) {
	const th = 100
	for _, tc := range []struct {
		name    string
		extents []Extent
		gap     int64
		align   int
		want    []IORange
	}{
		{"empty", nil, th, 1, nil},
		{"one", []Extent{{10, 50}}, th, 1, []IORange{{10, 50, 0, 1}}},
		{"adjacent", []Extent{{0, 50}, {50, 50}, {100, 20}}, th, 1, []IORange{{0, 120, 0, 3}}},
		{"gap below threshold", []Extent{{0, 50}, {149, 10}}, th, 1, []IORange{{0, 159, 0, 2}}},
		{"gap at threshold", []Extent{{0, 50}, {150, 10}}, th, 1, []IORange{{0, 160, 0, 2}}},
		{"gap above threshold", []Extent{{0, 50}, {151, 10}}, th, 1, []IORange{{0, 50, 0, 1}, {151, 10, 1, 1}}},
		{"zero threshold merges adjacent only", []Extent{{0, 50}, {50, 10}, {61, 5}}, 0, 1,
			[]IORange{{0, 60, 0, 2}, {61, 5, 2, 1}}},
		{"negative threshold merges nothing", []Extent{{0, 50}, {50, 10}}, -1, 1,
			[]IORange{{0, 50, 0, 1}, {50, 10, 1, 1}}},
		{"runs", []Extent{{0, 10}, {20, 10}, {1000, 10}, {1050, 10}, {5000, 1}}, th, 1,
			[]IORange{{0, 30, 0, 2}, {1000, 60, 2, 2}, {5000, 1, 4, 1}}},
		{"direct I/O rounds out", []Extent{{5000, 3000}}, th, 4096, []IORange{{4096, 4096, 0, 1}}},
		{"direct I/O across a unit", []Extent{{4000, 200}}, th, 4096, []IORange{{0, 8192, 0, 1}}},
		{"direct I/O shares a unit above threshold", []Extent{{0, 100}, {3000, 100}}, th, 4096,
			[]IORange{{0, 4096, 0, 2}}},
		{"direct I/O merged", []Extent{{100, 4000}, {4150, 4000}}, th, 4096, []IORange{{0, 8192, 0, 2}}},
		{"direct I/O apart", []Extent{{0, 100}, {8192, 100}}, th, 4096,
			[]IORange{{0, 4096, 0, 1}, {8192, 4096, 1, 1}}},
		{"bad alignment means none", []Extent{{5, 10}}, th, 3, []IORange{{5, 10, 0, 1}}},
		{"unsorted starts anew", []Extent{{1000, 10}, {0, 10}, {15, 10}}, th, 1,
			[]IORange{{1000, 10, 0, 1}, {0, 25, 1, 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Coalesce(tc.extents, tc.gap, tc.align))
		})
	}
}

func TestCoalesceAdjacent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		extents []Extent
		max     int64
		want    []IORange
	}{
		{"empty", nil, 100, nil},
		{"adjacent", []Extent{{0, 40}, {40, 40}, {80, 20}}, 100, []IORange{{0, 100, 0, 3}}},
		{"gap", []Extent{{0, 40}, {41, 40}}, 100, []IORange{{0, 40, 0, 1}, {41, 40, 1, 1}}},
		{"limit", []Extent{{0, 40}, {40, 40}, {80, 40}, {120, 40}}, 100,
			[]IORange{{0, 80, 0, 2}, {80, 80, 2, 2}}},
		{"too long alone", []Extent{{0, 40}, {40, 200}, {240, 10}}, 100,
			[]IORange{{0, 40, 0, 1}, {40, 200, 1, 1}, {240, 10, 2, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, CoalesceAdjacent(nil, tc.extents, tc.max))
		})
	}
}

// TestCoalesceCovers checks on random sorted extents that every extent lies
// in its read, reads are aligned and ordered, and gaps between reads exceed
// the threshold.
func TestCoalesceCovers(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for range 500 {
		var es []Extent
		off := int64(rng.IntN(5000))
		for range rng.IntN(40) {
			n := int64(1 + rng.IntN(10000))
			es = append(es, Extent{off, n})
			off += n + int64(rng.IntN(3)*rng.IntN(20000))
		}
		gap := int64(rng.IntN(3) * 8192)
		align := []int{1, 512, 4096}[rng.IntN(3)]
		rs := Coalesce(es, gap, align)
		next := 0
		for k, r := range rs {
			require.Equal(t, next, r.First)
			require.Positive(t, r.Count)
			require.Zero(t, r.Off%int64(align))
			require.Zero(t, r.Len%int64(align))
			for _, e := range es[r.First : r.First+r.Count] {
				require.GreaterOrEqual(t, e.Off, r.Off)
				require.LessOrEqual(t, e.End(), r.End())
			}
			if k > 0 {
				prev := es[r.First-1]
				require.Greater(t, es[r.First].Off-prev.End(), gap)
				require.GreaterOrEqual(t, r.Off, rs[k-1].End())
			}
			next = r.First + r.Count
		}
		require.Equal(t, len(es), next)
	}
}
