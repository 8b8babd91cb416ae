package manifest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/kv/internal/base"
)

// TestVersion runs testdata/version. Commands:
//
//	define            a version (see parseVersion), unchecked; prints it or
//	                  the CheckOrdering error
//	overlaps level=N [lower=k] [upper=k]
//	apply             edits (see parseEdit), one Builder; "---" separates
//	                  edits applied in turn; prints the result or the error
//	metrics
func TestVersion(t *testing.T) {
	var v *Version
	datadriven.RunTest(t, "testdata/version", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "define":
			v = parseVersion(t, d.Input)
			if err := v.CheckOrdering(); err != nil {
				return err.Error() + "\n"
			}
			return v.String()
		case "overlaps":
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
			var b strings.Builder
			for _, f := range v.Overlaps(level, lower, upper) {
				fmt.Fprintf(&b, "%s\n", f)
			}
			if b.Len() == 0 {
				return "none\n"
			}
			return b.String()
		case "apply":
			b := NewBuilder(v)
			for _, part := range strings.Split(d.Input, "---") {
				if err := b.Apply(parseEdit(t, part)); err != nil {
					return err.Error() + "\n"
				}
			}
			nv, err := b.Finish()
			if err != nil {
				return err.Error() + "\n"
			}
			// Unchanged levels share the base's slice.
			for level := range nv.Levels {
				if len(v.Levels[level]) > 0 && len(nv.Levels[level]) == len(v.Levels[level]) &&
					&v.Levels[level][0] == &nv.Levels[level][0] {
					require.True(t, slices.Equal(v.Levels[level], nv.Levels[level]))
				}
			}
			v = nv
			return v.String()
		case "metrics":
			m := ComputeMetrics(v, PickerOptions{LBaseMaxBytes: 100})
			return m.String()
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

func TestOverlapsMatchesLinearScan(t *testing.T) {
	rng := newRand(21)
	for range 2000 {
		v := randomVersion(rng)
		for level := range v.Levels {
			var lower, upper []byte
			if rng.IntN(5) > 0 {
				lower = []byte{byte('a' + rng.IntN(27))}
			}
			if rng.IntN(5) > 0 {
				upper = []byte{byte('a' + rng.IntN(27))}
			}
			var want []*FileMetadata
			if lower == nil || upper == nil || string(lower) <= string(upper) {
				for _, f := range v.Levels[level] {
					if f.Overlaps(lower, upper) {
						want = append(want, f)
					}
				}
			}
			require.Equal(t, want, v.Overlaps(level, lower, upper), "L%d [%q, %q]\n%s", level, lower, upper, v)
		}
	}
}

// file returns the metadata of a file with user keys [a, b] at seq.
func file(num uint64, a, b string, seq base.SeqNum) *FileMetadata {
	return &FileMetadata{
		FileNum: num, Size: 100,
		Smallest:    base.AppendKey(nil, []byte(a), seq, base.KindSet),
		Largest:     base.AppendKey(nil, []byte(b), seq, base.KindSet),
		SmallestSeq: seq, LargestSeq: seq,
	}
}

func fileNums(files []*FileMetadata) []uint64 {
	var out []uint64
	for _, f := range files {
		out = append(out, f.FileNum)
	}
	slices.Sort(out)
	return out
}

// TestRefcounts follows files through versions: a file becomes obsolete
// exactly when the last version holding it is released, a moved file never
// does, and a version that was built but never installed reports nothing.
func TestRefcounts(t *testing.T) {
	var l versionList
	l.init()
	build := func(base *Version, ve *VersionEdit) *Version {
		b := NewBuilder(base)
		require.NoError(t, b.Apply(ve))
		v, err := b.Finish()
		require.NoError(t, err)
		l.pushBack(v)
		return v
	}
	f1, f2, f3 := file(1, "a", "b", 1), file(2, "c", "d", 2), file(3, "e", "f", 3)
	v1 := build(nil, &VersionEdit{NewFiles: []NewFile{{0, f1}, {0, f2}}})
	require.Equal(t, int32(1), f1.Refs())

	// A reader holds v1 while v2 replaces it: f1 moves to L1 (given as a
	// fresh copy of its metadata, as a replayed edit would), f2 goes.
	v1.Ref()
	moved := *file(1, "a", "b", 1)
	v2 := build(v1, &VersionEdit{
		DeletedFiles: map[DeletedFile]bool{{0, 1}: true, {0, 2}: true},
		NewFiles:     []NewFile{{1, &moved}, {1, f3}},
	})
	require.Same(t, f1, v2.Levels[1][0], "a moved file keeps its metadata")
	v1.Unref() // the VersionSet's reference
	require.Empty(t, l.takeObsolete())
	require.Equal(t, map[uint64]bool{1: true, 2: true, 3: true}, l.liveFiles())
	v1.Unref() // the reader's
	require.Equal(t, []uint64{2}, fileNums(l.takeObsolete()))
	require.Equal(t, map[uint64]bool{1: true, 3: true}, l.liveFiles())
	require.Equal(t, int32(1), f1.Refs())

	// A version built and discarded (a failed LogAndApply) leaves the
	// counts as they were and reports nothing.
	b := NewBuilder(v2)
	require.NoError(t, b.Apply(&VersionEdit{DeletedFiles: map[DeletedFile]bool{{1, 3}: true}, NewFiles: []NewFile{{2, file(4, "x", "y", 4)}}}))
	v3, err := b.Finish()
	require.NoError(t, err)
	v3.release(false)
	require.Equal(t, int32(1), f3.Refs())
	require.Empty(t, l.takeObsolete())

	v2.Unref()
	require.Equal(t, []uint64{1, 3}, fileNums(l.takeObsolete()))
	require.Empty(t, l.liveFiles())
	require.Panics(t, func() { v2.Unref() })
	require.Panics(t, func() { v2.Ref() })
}

// TestUnrefConcurrent drops references from many goroutines at once, as
// readers do without the engine's mutex: every file is reported once.
func TestUnrefConcurrent(t *testing.T) {
	var l versionList
	l.init()
	var vs []*Version
	var prev *Version
	for i := range 50 {
		b := NewBuilder(prev)
		require.NoError(t, b.Apply(&VersionEdit{NewFiles: []NewFile{{6, file(uint64(i+1), fmt.Sprintf("k%03d", i), fmt.Sprintf("k%03d", i), 1)}}}))
		v, err := b.Finish()
		require.NoError(t, err)
		l.pushBack(v)
		for range 3 {
			v.Ref()
		}
		vs = append(vs, v)
		prev = v
	}
	var wg sync.WaitGroup
	for _, v := range vs {
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v.Unref()
			}()
		}
	}
	wg.Wait()
	obsolete := fileNums(l.takeObsolete())
	require.Len(t, obsolete, 50)
	for i, n := range obsolete {
		require.Equal(t, uint64(i+1), n)
	}
	require.Empty(t, l.liveFiles())
}
