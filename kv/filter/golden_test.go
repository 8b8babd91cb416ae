package filter

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/golden and the fuzz seed corpus")

// goldenFilter is a filter whose exact bytes are frozen in testdata/golden:
// any change to the hash, the layouts or the trailers changes them and
// fails TestGoldenFilters. Such a change breaks every filter on disk.
type goldenFilter struct {
	name   string
	policy Policy
	keys   int
}

func goldenFilters() []goldenFilter {
	return []goldenFilter{
		{"bloom-10bpk-100keys", Policy{Type: Bloom, BitsPerKey: 10}, 100},
		{"bloom-empty", Policy{Type: Bloom}, 0},
		{"ribbon-10bpk-2000keys", Policy{Type: Ribbon, BitsPerKey: 10}, 2000},
		{"ribbon-fp30-300keys", Policy{Type: Ribbon, FPRate: 0.3}, 300},
		{"ribbon-fp1e-4-1500keys", Policy{Type: Ribbon, FPRate: 1e-4}, 1500},
		{"ribbon-small-falls-back-to-bloom", Policy{Type: Ribbon, BitsPerKey: 10}, 20},
	}
}

func goldenKey(i int) []byte { return fmt.Appendf(nil, "key%06d", i) }

func (g goldenFilter) build() []byte {
	b := g.policy.NewBuilder()
	for i := range g.keys {
		b.Add(Hash(goldenKey(i)))
	}
	return b.Finish(nil)
}

func TestGoldenFilters(t *testing.T) {
	if *update {
		writeGolden(t)
	}
	for _, g := range goldenFilters() {
		t.Run(g.name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "golden", g.name))
			require.NoError(t, err)
			require.True(t, bytes.Equal(want, g.build()), "filter bytes changed: the durable format must not change")
			r, err := Decode(want)
			require.NoError(t, err)
			for i := range g.keys {
				require.True(t, r.MayContain(Hash(goldenKey(i))), "key %d", i)
			}
		})
	}
	// Spot-check the hash itself (XXH64, seed 0).
	require.Equal(t, uint64(0xef46db3751d8e999), Hash(nil))
	require.Equal(t, uint64(0x44bc2cf5ad770999), Hash([]byte("abc")))
}

func writeGolden(t *testing.T) {
	dir := filepath.Join("testdata", "golden")
	corpus := filepath.Join("testdata", "fuzz", "FuzzDecode")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.MkdirAll(corpus, 0o755))
	for _, g := range goldenFilters() {
		data := g.build()
		require.NoError(t, os.WriteFile(filepath.Join(dir, g.name), data, 0o644))
		entry := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		require.NoError(t, os.WriteFile(filepath.Join(corpus, g.name), []byte(entry), 0o644))
	}
}
