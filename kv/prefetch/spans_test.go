package prefetch

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSpans checks the set of used ranges against a bitmap.
func TestSpans(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for range 200 {
		var s spans
		var bits [2000]bool
		for range 1 + rng.IntN(30) {
			if rng.IntN(6) == 0 {
				x := int64(rng.IntN(2000))
				var want int64
				for i := range x {
					if bits[i] {
						want++
						bits[i] = false
					}
				}
				require.Equal(t, want, s.trimBelow(x))
			} else {
				off, n := int64(rng.IntN(1900)), int64(1+rng.IntN(100))
				var want int64
				for i := off; i < off+n; i++ {
					if !bits[i] {
						want++
						bits[i] = true
					}
				}
				require.Equal(t, want, s.add(off, n))
			}
			var total int64
			for _, b := range bits {
				if b {
					total++
				}
			}
			require.Equal(t, total, s.total())
			for i := 1; i < len(s); i++ {
				require.Less(t, s[i-1].End(), s[i].Off, "sorted, disjoint, merged: %v", s)
			}
		}
	}
}
