package manifest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/kv/internal/base"
)

// TestPick runs testdata/pick. Commands:
//
//	define                       a version (see parseVersion); prints it
//	pick [opts] [mark]           Pick over the version; mark marks the
//	                             result compacting and records it as running
//	pick-manual level=N [lower=k] [upper=k] [opts] [mark]
//	scores [opts]                LevelScores
//	finish                       apply the oldest running compaction as if it
//	                             wrote one output file per input range, and
//	                             clear its marks
//
// opts: l0-trigger=N lbase=N multiplier=F target=N.
func TestPick(t *testing.T) {
	var v *Version
	var running []*Compaction
	parseOpts := func(d *datadriven.TestData) PickerOptions {
		opts := PickerOptions{LBaseMaxBytes: 100, TargetFileSize: 10}
		if d.HasArg("l0-trigger") {
			d.ScanArgs(t, "l0-trigger", &opts.L0CompactionTrigger)
		}
		if d.HasArg("lbase") {
			d.ScanArgs(t, "lbase", &opts.LBaseMaxBytes)
		}
		if d.HasArg("multiplier") {
			d.ScanArgs(t, "multiplier", &opts.LevelMultiplier)
		}
		if d.HasArg("target") {
			d.ScanArgs(t, "target", &opts.TargetFileSize)
		}
		return opts
	}
	result := func(d *datadriven.TestData, c *Compaction) string {
		if c == nil {
			return "no compaction\n"
		}
		if d.HasArg("mark") {
			c.MarkCompacting(true)
			running = append(running, c)
		}
		return c.String()
	}
	datadriven.RunTest(t, "testdata/pick", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "define":
			v = parseVersion(t, d.Input)
			running = nil
			if err := v.CheckOrdering(); err != nil {
				return err.Error() + "\n"
			}
			return v.String()
		case "pick":
			return result(d, Pick(v, parseOpts(d)))
		case "pick-manual":
			var level int
			d.ScanArgs(t, "level", &level)
			var lower, upper []byte
			if d.HasArg("lower") {
				var s string
				d.ScanArgs(t, "lower", &s)
				lower = []byte(s)
			}
			if d.HasArg("upper") {
				var s string
				d.ScanArgs(t, "upper", &s)
				upper = []byte(s)
			}
			return result(d, PickManual(v, level, lower, upper, parseOpts(d)))
		case "scores":
			s := LevelScores(v, parseOpts(d))
			var b strings.Builder
			for level, x := range s {
				fmt.Fprintf(&b, "L%d: %.2f\n", level, x)
			}
			return b.String()
		case "finish":
			if len(running) == 0 {
				return "nothing running\n"
			}
			c := running[0]
			running = running[1:]
			c.MarkCompacting(false)
			ve := c.NewEdit()
			if !c.TrivialMove {
				ve.NewFiles = append(ve.NewFiles, NewFile{Level: c.OutputLevel, Meta: &FileMetadata{
					FileNum: nextTestFileNum(v), Size: c.InputSize(), Smallest: c.Smallest, Largest: c.Largest,
					SmallestSeq: 0, LargestSeq: 0,
				}})
			}
			b := NewBuilder(v)
			if err := b.Apply(ve); err != nil {
				return err.Error() + "\n"
			}
			nv, err := b.Finish()
			if err != nil {
				return err.Error() + "\n"
			}
			v = nv
			return v.String()
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

func nextTestFileNum(v *Version) uint64 {
	var n uint64
	for _, files := range v.Levels {
		for _, f := range files {
			n = max(n, f.FileNum)
		}
	}
	return n + 100
}

// TestPickRandom checks the picker's promises on random versions: inputs
// are never compacting, no user key is split at either level, the output
// level inputs are exactly what overlaps, and the version that results from
// the compaction (one output file spanning the inputs) is valid.
func TestPickRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	picked := 0
	for iter := 0; iter < 3000; iter++ {
		v := randomVersion(rng)
		require.NoError(t, v.CheckOrdering())
		opts := PickerOptions{L0CompactionTrigger: 2, LBaseMaxBytes: 30, LevelMultiplier: 2, TargetFileSize: 10}
		var c *Compaction
		if rng.IntN(4) == 0 {
			lo := []byte{byte('a' + rng.IntN(26))}
			hi := []byte{lo[0] + byte(rng.IntN(5))}
			c = PickManual(v, rng.IntN(NumLevels), lo, hi, opts)
		} else {
			c = Pick(v, opts)
		}
		if c == nil {
			continue
		}
		picked++
		checkCompaction(t, v, c)
	}
	require.Greater(t, picked, 1000)
}

func checkCompaction(t *testing.T, v *Version, c *Compaction) {
	t.Helper()
	desc := v.String() + c.String()
	require.NotEmpty(t, c.Inputs[0], desc)
	for _, files := range c.Inputs {
		for _, f := range files {
			require.False(t, f.Compacting, desc)
		}
	}
	levels := [2]int{c.Level, c.OutputLevel}
	for i, files := range c.Inputs {
		if i == 1 && c.OutputLevel == c.Level {
			require.Empty(t, files)
			continue
		}
		level := levels[i]
		in := map[*FileMetadata]bool{}
		for _, f := range files {
			in[f] = true
		}
		if level == 0 {
			// Every L0 file overlapping an input is an input.
			for _, g := range v.Levels[0] {
				for _, f := range files {
					if !in[g] {
						require.False(t, overlapsBounds(g, f.Smallest, f.Largest), "%s left behind overlapping %s\n%s", g, f, desc)
					}
				}
			}
			continue
		}
		// No user key split between an input and a file left behind.
		all := v.Levels[level]
		for k := 1; k < len(all); k++ {
			if in[all[k-1]] != in[all[k]] {
				require.False(t, sharesBoundary(all[k-1], all[k]), "split at %s|%s\n%s", all[k-1], all[k], desc)
			}
		}
	}
	// Everything at the output level overlapping the range is an input.
	if c.OutputLevel != c.Level {
		i, j := overlapIndices(v.Levels[c.OutputLevel], c.Smallest, c.Largest)
		require.Equal(t, j-i, len(c.Inputs[1]), desc)
	}
	// Bottommost iff nothing below overlaps.
	below := false
	for l := c.OutputLevel + 1; l < NumLevels; l++ {
		for _, f := range v.Levels[l] {
			below = below || overlapsBounds(f, c.Smallest, c.Largest)
		}
	}
	require.Equal(t, !below, c.Bottommost, desc)

	// Apply the compaction: the result must be a valid version.
	ve := c.NewEdit()
	if !c.TrivialMove {
		ve.NewFiles = append(ve.NewFiles, NewFile{Level: c.OutputLevel, Meta: &FileMetadata{
			FileNum: 1 << 40, Size: c.InputSize(), Smallest: c.Smallest, Largest: c.Largest,
		}})
	}
	b := NewBuilder(v)
	require.NoError(t, b.Apply(ve), desc)
	nv, err := b.Finish()
	require.NoError(t, err, desc)
	require.NoError(t, nv.CheckOrdering())
}

// randomVersion builds a valid random version over single-letter user keys,
// with boundary-sharing neighbours, sentinels and compacting files.
func randomVersion(rng *rand.Rand) *Version {
	v := &Version{}
	num := uint64(1)
	seq := base.SeqNum(1000)
	for level := NumLevels - 1; level >= 0; level-- {
		if rng.IntN(3) == 0 {
			continue
		}
		if level == 0 {
			for n := rng.IntN(6); n > 0; n-- {
				a := byte('a' + rng.IntN(26))
				b := a + byte(rng.IntN(int('z'-a)+1))
				m := &FileMetadata{FileNum: num, Size: uint64(1 + rng.IntN(20)),
					Smallest:   base.AppendKey(nil, []byte{a}, seq+1, base.KindSet),
					Largest:    base.AppendKey(nil, []byte{b}, seq, base.KindSet),
					Compacting: rng.IntN(8) == 0}
				if a == b {
					m.Largest = base.AppendKey(nil, []byte{b}, seq+1, base.KindDelete)
				}
				m.SmallestSeq, m.LargestSeq = seq, seq+1
				seq += 2
				num++
				v.Levels[0] = append(v.Levels[0], m)
			}
			continue
		}
		k := byte('a' + rng.IntN(3))
		s := uint64(100000)
		for k <= 'z' {
			end := k + byte(rng.IntN(4))
			if end > 'z' {
				end = 'z'
			}
			m := &FileMetadata{FileNum: num, Size: uint64(1 + rng.IntN(20)), Compacting: rng.IntN(10) == 0}
			num++
			m.Smallest = base.AppendKey(nil, []byte{k}, base.SeqNum(s), base.KindSet)
			switch rng.IntN(4) {
			case 0: // next file starts with the same user key
				m.Largest = base.AppendKey(nil, []byte{end}, base.SeqNum(s-1), base.KindSet)
				s -= 2
				if base.Compare(m.Smallest, m.Largest) > 0 {
					m.Largest = m.Smallest
				}
			case 1: // ends with a sentinel, next starts at the same key
				if end == k {
					end++
				}
				if end > 'z' {
					m.Largest = base.AppendKey(nil, []byte{k}, base.SeqNum(s-1), base.KindSet)
					end = 'z' + 1
					break
				}
				m.Largest = base.MakeRangeDeleteSentinel(nil, []byte{end})
			default:
				m.Largest = base.AppendKey(nil, []byte{end}, base.SeqNum(s), base.KindSet)
				end++
			}
			m.SmallestSeq, m.LargestSeq = 1, base.SeqNum(s+10)
			if rng.IntN(3) != 0 {
				v.Levels[level] = append(v.Levels[level], m)
			}
			k = end + byte(rng.IntN(2))
		}
	}
	return v
}

// TestPickConcurrent picks and marks compactions until none is left, then
// installs them in a random order. It checks the claim Pick's documentation
// makes: compactions into the same level never have overlapping key ranges,
// so installing them in any order always gives a valid version.
func TestPickConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	maxRunning := 0
	for iter := 0; iter < 2000; iter++ {
		v := randomVersion(rng)
		for _, files := range v.Levels {
			for _, f := range files {
				f.Compacting = false
			}
		}
		opts := PickerOptions{L0CompactionTrigger: 1, LBaseMaxBytes: 10, LevelMultiplier: 2, TargetFileSize: 10}
		var running []*Compaction
		for {
			var c *Compaction
			if rng.IntN(3) == 0 {
				lo := []byte{byte('a' + rng.IntN(26))}
				c = PickManual(v, rng.IntN(NumLevels), lo, []byte{lo[0] + byte(rng.IntN(4))}, opts)
			} else {
				c = Pick(v, opts)
			}
			if c == nil {
				break
			}
			for _, other := range running {
				if other.OutputLevel == c.OutputLevel {
					f := &FileMetadata{Smallest: other.Smallest, Largest: other.Largest}
					require.False(t, overlapsBounds(f, c.Smallest, c.Largest), "%s%s%s", v, other, c)
				}
			}
			c.MarkCompacting(true)
			running = append(running, c)
		}
		maxRunning = max(maxRunning, len(running))
		num := uint64(1 << 40)
		for _, k := range rng.Perm(len(running)) {
			c := running[k]
			c.MarkCompacting(false)
			ve := c.NewEdit()
			if !c.TrivialMove {
				num++
				ve.NewFiles = append(ve.NewFiles, NewFile{Level: c.OutputLevel, Meta: &FileMetadata{
					FileNum: num, Size: c.InputSize(), Smallest: c.Smallest, Largest: c.Largest,
				}})
			}
			b := NewBuilder(v)
			require.NoError(t, b.Apply(ve))
			nv, err := b.Finish()
			require.NoError(t, err, "%s%s", v, c)
			v = nv
		}
	}
	require.Greater(t, maxRunning, 3)
}

func TestLevelTargetsDynamic(t *testing.T) {
	mk := func(level int, size uint64, n uint64, lo, hi string) *FileMetadata {
		return &FileMetadata{FileNum: n, Size: size,
			Smallest: base.AppendKey(nil, []byte(lo), 1, base.KindSet), Largest: base.AppendKey(nil, []byte(hi), 1, base.KindSet)}
	}
	opts := PickerOptions{DynamicLevelBytes: true, LBaseMaxBytes: 64 << 20, LevelMultiplier: 10}
	var v Version
	base0, _ := LevelTargets(&v, opts)
	require.Equal(t, NumLevels-1, base0, "an empty tree compacts L0 straight to the last level")

	v.Levels[6] = []*FileMetadata{mk(6, 2<<30, 1, "a", "z")} // 2 GiB at the bottom
	baseLevel, targets := LevelTargets(&v, opts)
	// 2 GiB at L6, 205 MiB at L5, and L4 the first level whose share
	// (20 MiB) is within LBaseMaxBytes: the base level.
	require.Equal(t, 4, baseLevel)
	require.EqualValues(t, int64(2<<30), targets[6])
	require.InDelta(t, float64(2<<30)/10, float64(targets[5]), 1)
	require.EqualValues(t, 64<<20, targets[4])
	require.Zero(t, targets[3])

	// Static sizing is unchanged.
	baseLevel, targets = LevelTargets(&v, PickerOptions{LBaseMaxBytes: 64 << 20, LevelMultiplier: 10})
	require.Equal(t, 1, baseLevel)
	require.EqualValues(t, 64<<20, targets[1])

	// L0 compacts into the base level.
	v.Levels[0] = []*FileMetadata{mk(0, 1<<20, 2, "b", "c"), mk(0, 1<<20, 3, "b", "d"), mk(0, 1<<20, 4, "e", "f"), mk(0, 1<<20, 5, "a", "b")}
	for i, f := range v.Levels[0] {
		f.LargestSeq = base.SeqNum(i + 1)
	}
	opts.L0CompactionTrigger = 2
	c := Pick(&v, opts)
	require.NotNil(t, c)
	require.Equal(t, 0, c.Level)
	require.Equal(t, 4, c.OutputLevel)
}
