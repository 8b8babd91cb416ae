package prefetch

import (
	"testing"

	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

// TestMemClass checks the size classes: large enough, at most a third
// more than asked beyond the smallest, and aligned.
func TestMemClass(t *testing.T) {
	prev := 0
	for _, n := range []int{1, 4096, 4097, 6144, 6145, 8192, 1<<20 + 4101, 3 << 20, 64 << 20} {
		size, class, ok := memClass(n)
		require.True(t, ok)
		require.GreaterOrEqual(t, size, n)
		if n > 4096 {
			require.LessOrEqual(t, size, n+n/2, "n=%d", n)
		}
		require.GreaterOrEqual(t, class, prev)
		prev = class
		m := getMem(n, 4096)
		require.GreaterOrEqual(t, len(m.b), n)
		require.True(t, vfs.IsAligned(m.b[:4096], 4096))
		putMem(m)
	}
	_, _, ok := memClass(64<<20 + 1)
	require.False(t, ok)
	m := getMem(64<<20+1, 512)
	require.Equal(t, -1, m.class)
	require.GreaterOrEqual(t, len(m.b), 64<<20+1)
}
