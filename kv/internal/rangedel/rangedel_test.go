package rangedel

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/stretchr/testify/require"
)

// TestDataDriven runs every file in testdata. Commands:
//
//	build                    tombstones "start-end#seq", one per line; prints
//	                         the fragments
//	query                    lines "ukey@snapshot": MaxCoveringSeq
//	truncate [lower=] [upper=]
//	compact [snapshots=(s1,...)] [bottommost]
//	drop-point [snapshots=(s1,...)]
//	                         lines "ukey#seq": ShouldDropPoint
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var s *Set
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "build":
				var ts []Tombstone
				for line := range strings.SplitSeq(strings.TrimSpace(d.Input), "\n") {
					ts = append(ts, parseTombstone(t, line))
				}
				s = NewSet(ts)
				return formatFragments(s.Fragments())
			case "query":
				var b strings.Builder
				for line := range strings.SplitSeq(strings.TrimSpace(d.Input), "\n") {
					ukey, snap, ok := strings.Cut(line, "@")
					require.True(t, ok, "bad query %q", line)
					fmt.Fprintf(&b, "%s: %d\n", line, s.MaxCoveringSeq([]byte(ukey), parseSeq(t, snap)))
				}
				return b.String()
			case "truncate":
				var lower, upper []byte
				if d.HasArg("lower") {
					lower = []byte(d.CmdArgs[argIndex(d, "lower")].SingleVal(t))
				}
				if d.HasArg("upper") {
					upper = []byte(d.CmdArgs[argIndex(d, "upper")].SingleVal(t))
				}
				return formatTombstones(s.Truncate(lower, upper))
			case "compact":
				return formatTombstones(Compact(s.Fragments(), snapshotsArg(t, d), d.HasArg("bottommost")))
			case "drop-point":
				snaps := snapshotsArg(t, d)
				var b strings.Builder
				for line := range strings.SplitSeq(strings.TrimSpace(d.Input), "\n") {
					ukey, seq, ok := strings.Cut(line, "#")
					require.True(t, ok, "bad point %q", line)
					verdict := "keep"
					if ShouldDropPoint(s.Covering([]byte(ukey)), parseSeq(t, seq), snaps) {
						verdict = "drop"
					}
					fmt.Fprintf(&b, "%s: %s\n", line, verdict)
				}
				return b.String()
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

func argIndex(d *datadriven.TestData, key string) int {
	for i, a := range d.CmdArgs {
		if a.Key == key {
			return i
		}
	}
	return -1
}

func snapshotsArg(t *testing.T, d *datadriven.TestData) []base.SeqNum {
	var snaps []base.SeqNum
	if i := argIndex(d, "snapshots"); i >= 0 {
		for _, v := range d.CmdArgs[i].Vals {
			snaps = append(snaps, parseSeq(t, v))
		}
	}
	return snaps
}

func parseSeq(t testing.TB, s string) base.SeqNum {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	require.NoError(t, err)
	return base.SeqNum(n)
}

// parseTombstone parses "start-end#seq".
func parseTombstone(t testing.TB, s string) Tombstone {
	span, seq, ok := strings.Cut(strings.TrimSpace(s), "#")
	require.True(t, ok, "bad tombstone %q", s)
	start, end, ok := strings.Cut(span, "-")
	require.True(t, ok, "bad tombstone %q", s)
	return Tombstone{Start: []byte(start), End: []byte(end), Seq: parseSeq(t, seq)}
}

func formatFragments(frags []Fragment) string {
	var b strings.Builder
	for _, f := range frags {
		fmt.Fprintf(&b, "[%s, %s) %v\n", f.Start, f.End, f.Seqs)
	}
	return b.String()
}

func formatTombstones(ts []Tombstone) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "%s-%s#%d\n", t.Start, t.End, t.Seq)
	}
	return b.String()
}

// The randomized tests draw keys from every string of length <= 2 over
// "abcdef", and sequence numbers from 1 to maxSeq.
const maxSeq = 12

var probeKeys = func() [][]byte {
	keys := [][]byte{{}}
	for a := byte('a'); a <= 'f'; a++ {
		keys = append(keys, []byte{a})
		for b := byte('a'); b <= 'f'; b++ {
			keys = append(keys, []byte{a, b})
		}
	}
	slices.SortFunc(keys, bytes.Compare)
	return keys
}()

func randomKey(rng *rand.Rand) []byte { return probeKeys[rng.IntN(len(probeKeys))] }

// randomTombstones returns up to 15 tombstones, some empty or inverted, with
// distinct sequence numbers (as the engine writes them) unless dupSeqs.
func randomTombstones(rng *rand.Rand, dupSeqs bool) []Tombstone {
	seqs := rng.Perm(maxSeq)
	var ts []Tombstone
	for i := range rng.IntN(16) {
		seq := base.SeqNum(1 + seqs[i%maxSeq])
		if dupSeqs {
			seq = base.SeqNum(1 + rng.IntN(maxSeq))
		}
		a, b := randomKey(rng), randomKey(rng)
		if rng.IntN(8) != 0 && bytes.Compare(a, b) > 0 {
			a, b = b, a
		}
		ts = append(ts, Tombstone{Start: a, End: b, Seq: seq})
	}
	return ts
}

func randomSnapshots(rng *rand.Rand) []base.SeqNum {
	var snaps []base.SeqNum
	for s := base.SeqNum(1); s <= maxSeq; s++ {
		if rng.IntN(5) == 0 {
			snaps = append(snaps, s)
		}
	}
	return snaps
}

// bruteSeqs returns the distinct sequence numbers of the tombstones of ts
// that cover ukey, descending.
func bruteSeqs(ts []Tombstone, ukey []byte) []base.SeqNum {
	var seqs []base.SeqNum
	for _, t := range ts {
		if bytes.Compare(t.Start, ukey) <= 0 && bytes.Compare(ukey, t.End) < 0 && !slices.Contains(seqs, t.Seq) {
			seqs = append(seqs, t.Seq)
		}
	}
	slices.Sort(seqs)
	slices.Reverse(seqs)
	return seqs
}

// bruteMax returns the largest Seq <= snapshot of a tombstone of ts that
// covers ukey, 0 if none.
func bruteMax(ts []Tombstone, ukey []byte, snapshot base.SeqNum) base.SeqNum {
	var m base.SeqNum
	for _, t := range ts {
		if bytes.Compare(t.Start, ukey) <= 0 && bytes.Compare(ukey, t.End) < 0 && t.Seq <= snapshot && t.Seq > m {
			m = t.Seq
		}
	}
	return m
}

func TestFragmentsRandomized(t *testing.T) {
	for seed := range 2000 {
		rng := rand.New(rand.NewPCG(uint64(seed), 1))
		ts := randomTombstones(rng, seed%2 == 0)
		orig := slices.Clone(ts)
		frags := Fragments(ts)
		msg := lazyMsg(func() string {
			return fmt.Sprintf("seed %d\n%s->\n%s", seed, formatTombstones(ts), formatFragments(frags))
		})
		require.Equal(t, orig, ts, "input modified")
		_, err := NewSetFromFragments(frags)
		require.NoError(t, err, msg)
		s := NewSet(ts)
		for _, k := range probeKeys {
			want := bruteSeqs(ts, k)
			var got []base.SeqNum
			if f := s.Covering(k); f != nil {
				got = f.Seqs
			}
			require.Equal(t, len(want), len(got), "%s: key %q", msg, k)
			if len(want) > 0 {
				require.Equal(t, want, got, "%s: key %q", msg, k)
			}
		}
		// Fragments are as coarse as the input allows: every boundary is
		// some tombstone's Start or End.
		for _, f := range frags {
			for _, b := range [][]byte{f.Start, f.End} {
				require.True(t, slices.ContainsFunc(ts, func(t Tombstone) bool {
					return bytes.Compare(t.Start, t.End) < 0 && (bytes.Equal(t.Start, b) || bytes.Equal(t.End, b))
				}), msg)
			}
		}
	}
}

func TestMaxCoveringSeqRandomized(t *testing.T) {
	for seed := range 500 {
		rng := rand.New(rand.NewPCG(uint64(seed), 2))
		ts := randomTombstones(rng, seed%3 == 0)
		s := NewSet(ts)
		for range 200 {
			k := randomKey(rng)
			snap := base.SeqNum(rng.IntN(maxSeq + 2))
			seq := base.SeqNum(rng.IntN(maxSeq + 2))
			want := bruteMax(ts, k, snap)
			require.Equal(t, want, s.MaxCoveringSeq(k, snap), "seed %d key %q snapshot %d", seed, k, snap)
			require.Equal(t, want > seq, s.Covers(k, seq, snap), "seed %d key %q seq %d snapshot %d", seed, k, seq, snap)
		}
	}
}

// TestCursorRandomized drives cursors through runs of ascending and
// descending keys, repeated keys and random jumps, and checks every answer
// against the Set's.
func TestCursorRandomized(t *testing.T) {
	for seed := range 500 {
		rng := rand.New(rand.NewPCG(uint64(seed), 3))
		ts := randomTombstones(rng, false)
		s := NewSet(ts)
		var c Cursor // the zero Cursor works on an empty Set
		if s.Len() > 0 || rng.IntN(2) == 0 {
			c = MakeCursor(s)
		}
		ki := rng.IntN(len(probeKeys))
		for range 300 {
			switch op := rng.IntN(10); {
			case op < 4:
				ki += rng.IntN(4)
			case op < 8:
				ki -= rng.IntN(4)
			default:
				ki = rng.IntN(len(probeKeys))
			}
			ki = min(max(ki, 0), len(probeKeys)-1)
			k := probeKeys[ki]
			snap := base.SeqNum(rng.IntN(maxSeq + 2))
			require.Equal(t, s.Covering(k), c.Covering(k), "seed %d key %q", seed, k)
			require.Equal(t, s.MaxCoveringSeq(k, snap), c.MaxCoveringSeq(k, snap), "seed %d key %q", seed, k)
			require.Equal(t, s.Covers(k, 3, snap), c.Covers(k, 3, snap), "seed %d key %q", seed, k)
		}
	}
}

func TestTruncateRandomized(t *testing.T) {
	for seed := range 1000 {
		rng := rand.New(rand.NewPCG(uint64(seed), 4))
		ts := randomTombstones(rng, false)
		var lower, upper []byte
		if rng.IntN(4) != 0 {
			lower = randomKey(rng)
		}
		if rng.IntN(4) != 0 {
			upper = randomKey(rng)
		}
		out := NewSet(ts).Truncate(lower, upper)
		msg := fmt.Sprintf("seed %d [%q, %q)\n%s->\n%s", seed, lower, upper, formatTombstones(ts), formatTombstones(out))
		for i, o := range out {
			require.Negative(t, bytes.Compare(o.Start, o.End), msg)
			require.True(t, lower == nil || bytes.Compare(o.Start, lower) >= 0, msg)
			require.True(t, upper == nil || bytes.Compare(o.End, upper) <= 0, msg)
			if i > 0 {
				c := bytes.Compare(out[i-1].Start, o.Start)
				require.True(t, c < 0 || (c == 0 && out[i-1].Seq > o.Seq), "not sorted: %s", msg)
			}
		}
		for _, k := range probeKeys {
			inRange := (lower == nil || bytes.Compare(k, lower) >= 0) && (upper == nil || bytes.Compare(k, upper) < 0)
			want := []base.SeqNum(nil)
			if inRange {
				want = bruteSeqs(ts, k)
			}
			require.Equal(t, len(want), len(bruteSeqs(out, k)), "%s\nkey %q", msg, k)
			if len(want) > 0 {
				require.Equal(t, want, bruteSeqs(out, k), "%s\nkey %q", msg, k)
			}
		}
	}
}

// TestCompactRandomized checks that Compact and ShouldDropPoint together
// preserve what every reader sees. For every key, every point sequence
// number and every reader (each snapshot, and the latest state), a point
// the reader can see is hidden before the compaction exactly when it is
// hidden after: before, by the input tombstones; after, by being dropped
// or by the tombstones Compact kept.
func TestCompactRandomized(t *testing.T) {
	for seed := range 800 {
		rng := rand.New(rand.NewPCG(uint64(seed), 5))
		ts := randomTombstones(rng, false)
		snaps := randomSnapshots(rng)
		bottommost := rng.IntN(2) == 0
		s := NewSet(ts)
		out := Compact(s.Fragments(), snaps, bottommost)
		msg := lazyMsg(func() string {
			return fmt.Sprintf("seed %d snapshots %v bottommost %t\n%s->\n%s",
				seed, snaps, bottommost, formatFragments(s.Fragments()), formatTombstones(out))
		})
		readers := append(slices.Clone(snaps), base.SeqNumMax)
		stripes := len(snaps) + 1
		if bottommost {
			stripes--
		}
		for _, k := range probeKeys {
			// No more than one tombstone per stripe survives for any key.
			require.LessOrEqual(t, len(bruteSeqs(out, k)), stripes, msg)
			require.LessOrEqual(t, len(bruteSeqs(out, k)), len(bruteSeqs(ts, k)), msg)
			f := s.Covering(k)
			for seq := base.SeqNum(0); seq <= maxSeq+1; seq++ {
				dropped := ShouldDropPoint(f, seq, snaps)
				for _, r := range readers {
					if seq > r {
						continue // the reader cannot see the point anyway
					}
					before := bruteMax(ts, k, r) > seq
					after := dropped || bruteMax(out, k, r) > seq
					require.Equal(t, before, after, "%s\nkey %q seq %d reader %d dropped %t", msg, k, seq, r, dropped)
				}
			}
		}
		// Same-Seq tombstones in the output do not overlap, and the output
		// is sorted.
		for i := 1; i < len(out); i++ {
			c := bytes.Compare(out[i-1].Start, out[i].Start)
			require.True(t, c < 0 || (c == 0 && out[i-1].Seq > out[i].Seq), "not sorted: %s", msg)
		}
	}
}

// TestCompactMerges checks that fragments left with the same survivors are
// merged back into one tombstone.
func TestCompactMerges(t *testing.T) {
	s := NewSet([]Tombstone{
		{Start: []byte("a"), End: []byte("m"), Seq: 5},
		{Start: []byte("c"), End: []byte("e"), Seq: 3},
		{Start: []byte("g"), End: []byte("z"), Seq: 9},
	})
	require.Equal(t, 5, s.Len())
	require.Equal(t, "a-g#5\ng-z#9\n", formatTombstones(Compact(s.Fragments(), nil, false)))
	require.Equal(t, "a-g#5\ng-m#9\ng-m#5\nm-z#9\n", formatTombstones(Compact(s.Fragments(), []base.SeqNum{6}, false)))
	require.Equal(t, "g-z#9\n", formatTombstones(Compact(s.Fragments(), []base.SeqNum{6}, true)))
	require.Empty(t, Compact(s.Fragments(), nil, true))
	// Unsorted snapshots are sorted first.
	require.Equal(t, Compact(s.Fragments(), []base.SeqNum{4, 6}, false), Compact(s.Fragments(), []base.SeqNum{6, 4}, false))
}

func TestNewSetFromFragments(t *testing.T) {
	b := func(s string) []byte { return []byte(s) }
	for _, tc := range []struct {
		name  string
		frags []Fragment
		err   string
	}{
		{"empty set", nil, ""},
		{"ok", []Fragment{{b("a"), b("c"), []base.SeqNum{5, 2}}, {b("c"), b("d"), []base.SeqNum{1}}, {b("x"), b("y"), []base.SeqNum{7}}}, ""},
		{"empty fragment", []Fragment{{b("c"), b("c"), []base.SeqNum{5}}}, "is empty"},
		{"no seqs", []Fragment{{b("a"), b("c"), nil}}, "no sequence numbers"},
		{"ascending seqs", []Fragment{{b("a"), b("c"), []base.SeqNum{2, 5}}}, "not strictly descending"},
		{"duplicate seqs", []Fragment{{b("a"), b("c"), []base.SeqNum{5, 5}}}, "not strictly descending"},
		{"overlap", []Fragment{{b("a"), b("c"), []base.SeqNum{5}}, {b("b"), b("d"), []base.SeqNum{4}}}, "overlaps"},
		{"unsorted", []Fragment{{b("x"), b("y"), []base.SeqNum{5}}, {b("a"), b("b"), []base.SeqNum{4}}}, "overlaps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSetFromFragments(tc.frags)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, len(tc.frags), s.Len())
		})
	}
}

func TestZeroAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var ts []Tombstone
	for i := range 1000 {
		a, b := randomKey(rng), randomKey(rng)
		if bytes.Compare(a, b) > 0 {
			a, b = b, a
		}
		ts = append(ts, Tombstone{Start: a, End: b, Seq: base.SeqNum(i + 1)})
	}
	s := NewSet(ts)
	c := MakeCursor(s)
	snaps := []base.SeqNum{100, 400, 800}
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		k := probeKeys[i%len(probeKeys)]
		i += 7
		s.MaxCoveringSeq(k, 500)
		s.Covers(k, 10, 500)
		c.MaxCoveringSeq(k, 500)
		c.Covers(k, 10, 500)
		ShouldDropPoint(c.Covering(k), 300, snaps)
	})
	require.Zero(t, allocs)
}

// lazyMsg is a failure message built only when a check fails.
type lazyMsg func() string

func (l lazyMsg) String() string { return l() }

func benchSet(n int) (*Set, [][]byte) {
	var ts []Tombstone
	for i := range n {
		ts = append(ts, Tombstone{
			Start: fmt.Appendf(nil, "%08d", 2*i),
			End:   fmt.Appendf(nil, "%08d", 2*i+1),
			Seq:   base.SeqNum(i + 1),
		})
	}
	var keys [][]byte
	for i := range 4 * n {
		keys = append(keys, fmt.Appendf(nil, "%08d", i/2))
	}
	return NewSet(ts), keys
}

// BenchmarkScan compares the Set's binary search with a Cursor for the keys
// of a forward scan over 10,000 fragments.
func BenchmarkScan(b *testing.B) {
	s, keys := benchSet(10000)
	b.Run("set", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			s.MaxCoveringSeq(keys[i], base.SeqNumMax)
			if i++; i == len(keys) {
				i = 0
			}
		}
	})
	b.Run("cursor", func(b *testing.B) {
		b.ReportAllocs()
		c := MakeCursor(s)
		i := 0
		for b.Loop() {
			c.MaxCoveringSeq(keys[i], base.SeqNumMax)
			if i++; i == len(keys) {
				i = 0
			}
		}
	})
}
