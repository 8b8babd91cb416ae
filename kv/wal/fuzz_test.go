package wal

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/stretchr/testify/require"
)

// FuzzReader reads arbitrary bytes as a log, salvaging past every
// corruption: the reader must not panic, must make progress, and every
// record it returns must be made of intact chunks of the log, in sequence,
// exactly as the format defines them.
func FuzzReader(f *testing.F) {
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, known := range []bool{false, true} {
			var r *Reader
			if known {
				r = NewReaderLogID(bytes.NewReader(data), int64(len(data)), "fuzz", 0x5eed)
			} else {
				r = NewReader(bytes.NewReader(data), int64(len(data)), "fuzz")
			}
			last := int64(-1)
			for steps := 0; ; steps++ {
				require.LessOrEqual(t, steps, len(data)+1, "no progress")
				rec, err := r.Next()
				if err == io.EOF {
					off, reason, torn := r.TornTail()
					require.GreaterOrEqual(t, off, int64(0))
					require.LessOrEqual(t, off, int64(len(data)))
					if !torn {
						require.EqualValues(t, len(data), off)
						require.Empty(t, reason)
					} else {
						require.NotEmpty(t, reason)
					}
					break
				}
				if err != nil {
					require.True(t, base.IsCorruption(err), "%v", err)
					require.Positive(t, r.SkipCorrupt(), "salvage drops something")
					continue
				}
				off := r.Offset()
				require.Greater(t, off, last)
				last = off
				want, ok := refRecord(data, off)
				require.True(t, ok, "record at %d is not intact", off)
				require.True(t, bytes.Equal(want, rec), "record at %d differs", off)
				if id, _ := r.LogID(); known {
					require.EqualValues(t, 0x5eed, id)
				}
			}
		}
	})
}

// fuzzSeeds returns the seed corpus of FuzzReader: real logs, whole and
// damaged.
func fuzzSeeds(t testing.TB) map[string][]byte {
	rng := rand.New(rand.NewPCG(21, 22))
	small := randRecs(rng, 12, func() int { return rng.IntN(40) })
	smallLog := writeLog(t, small, writeOpts{id: 0x5eed, syncEach: true})
	spanRecs := append(randRecs(rng, 3, func() int { return 30 }), randRecs(rng, 1, func() int { return maxPayload + 200 })...)
	spanRecs = append(spanRecs, []byte("after"), nil)
	span := writeLog(t, spanRecs, writeOpts{id: 0x5eed})

	corrupt := bytes.Clone(smallLog.data)
	corrupt[smallLog.starts[2]+headerSize/2] ^= 0x40
	seeds := map[string][]byte{
		"empty":     {},
		"small":     smallLog.data,
		"spanning":  span.data,
		"torn":      smallLog.data[:smallLog.starts[7]+headerSize+1],
		"corrupt":   corrupt,
		"zeros":     append(bytes.Clone(smallLog.data), make([]byte, 64)...),
		"cut-first": span.data[:blockSize+3],
	}
	return seeds
}

// TestFuzzSeeds keeps the committed seed corpus in step with the format;
// -rewrite regenerates it.
func TestFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzReader")
	for name, data := range fuzzSeeds(t) {
		var b strings.Builder
		fmt.Fprintf(&b, "go test fuzz v1\n[]byte(%q)\n", data)
		path := filepath.Join(dir, name)
		if *rewrite {
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err, "run go test -run TestFuzzSeeds -rewrite")
		require.Equal(t, b.String(), string(got), "seed %s is stale: run go test -run TestFuzzSeeds -rewrite", name)
	}
}
