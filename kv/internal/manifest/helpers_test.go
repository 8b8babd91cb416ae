package manifest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-db/strata/kv/internal/base"
)

// parseKey parses "a#5,SET" (or "a#max,RANGEDEL" for a sentinel) into an
// internal key.
func parseKey(t testing.TB, s string) []byte {
	t.Helper()
	uk, rest, ok := strings.Cut(s, "#")
	if !ok {
		t.Fatalf("key %q: want ukey#seq,KIND", s)
	}
	seqStr, kindStr, ok := strings.Cut(rest, ",")
	if !ok {
		t.Fatalf("key %q: want ukey#seq,KIND", s)
	}
	seq := base.SeqNumMax
	if seqStr != "max" {
		n, err := strconv.ParseUint(seqStr, 10, 64)
		if err != nil {
			t.Fatalf("key %q: %v", s, err)
		}
		seq = base.SeqNum(n)
	}
	var kind base.Kind
	switch kindStr {
	case "SET":
		kind = base.KindSet
	case "DEL":
		kind = base.KindDelete
	case "RANGEDEL":
		kind = base.KindRangeDelete
	default:
		t.Fatalf("key %q: unknown kind %q", s, kindStr)
	}
	return base.AppendKey(nil, []byte(uk), seq, kind)
}

// parseFile parses "000005:a#5,SET-c#3,SET [size=N] [seqs=A-B] [compacting]".
func parseFile(t testing.TB, line string) *FileMetadata {
	t.Helper()
	fields := strings.Fields(line)
	numStr, rng, ok := strings.Cut(fields[0], ":")
	if !ok {
		t.Fatalf("file %q: want num:smallest-largest", line)
	}
	num, err := strconv.ParseUint(numStr, 10, 64)
	if err != nil {
		t.Fatalf("file %q: %v", line, err)
	}
	rng = strings.TrimSuffix(strings.TrimPrefix(rng, "["), "]")
	sStr, lStr, ok := strings.Cut(rng, "-")
	if !ok {
		t.Fatalf("file %q: want smallest-largest", line)
	}
	m := &FileMetadata{FileNum: num, Size: 1, Smallest: parseKey(t, sStr), Largest: parseKey(t, lStr)}
	seqs := []base.SeqNum{base.Seq(m.Smallest)}
	if !base.IsRangeDeleteSentinel(m.Largest) {
		seqs = append(seqs, base.Seq(m.Largest))
	}
	m.SmallestSeq, m.LargestSeq = min(seqs[0], seqs[len(seqs)-1]), max(seqs[0], seqs[len(seqs)-1])
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "size":
			m.Size, err = strconv.ParseUint(v, 10, 64)
		case "seqs":
			a, b, _ := strings.Cut(v, "-")
			var x, y uint64
			x, err = strconv.ParseUint(a, 10, 64)
			if err == nil {
				y, err = strconv.ParseUint(b, 10, 64)
			}
			m.SmallestSeq, m.LargestSeq = base.SeqNum(x), base.SeqNum(y)
		case "compacting":
			m.Compacting = true
		default:
			t.Fatalf("file %q: unknown field %q", line, f)
		}
		if err != nil {
			t.Fatalf("file %q: %v", line, err)
		}
	}
	return m
}

// parseLevel parses "L3".
func parseLevel(t testing.TB, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimPrefix(s, "L"))
	if err != nil || !strings.HasPrefix(s, "L") {
		t.Fatalf("level %q: want L<n>", s)
	}
	return n
}

// parseVersion builds a Version literal from lines of the form
//
//	L0
//	  000005:a#5,SET-c#3,SET size=10
//	compact-pointer L1 b#3,SET
//
// keeping the files in the order given, unchecked.
func parseVersion(t testing.TB, input string) *Version {
	t.Helper()
	v := &Version{}
	level := -1
	for _, line := range strings.Split(input, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "compact-pointer"):
			f := strings.Fields(line)
			v.compactPointers[parseLevel(t, f[1])] = parseKey(t, f[2])
		case line[0] == 'L':
			level = parseLevel(t, line)
		default:
			if level < 0 {
				t.Fatalf("file %q before any level line", line)
			}
			v.Levels[level] = append(v.Levels[level], parseFile(t, line))
		}
	}
	return v
}

// parseEdit parses lines "del L1 000005", "add L2 <file>", "pointer L1
// <key>", "log 5", "next 9", "seq 100".
func parseEdit(t testing.TB, input string) *VersionEdit {
	t.Helper()
	ve := &VersionEdit{}
	for _, line := range strings.Split(input, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "del":
			num, err := strconv.ParseUint(f[2], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if ve.DeletedFiles == nil {
				ve.DeletedFiles = map[DeletedFile]bool{}
			}
			ve.DeletedFiles[DeletedFile{Level: parseLevel(t, f[1]), FileNum: num}] = true
		case "add":
			ve.NewFiles = append(ve.NewFiles, NewFile{Level: parseLevel(t, f[1]), Meta: parseFile(t, strings.Join(f[2:], " "))})
		case "pointer":
			ve.CompactPointers = append(ve.CompactPointers, CompactPointer{Level: parseLevel(t, f[1]), Key: parseKey(t, f[2])})
		case "log", "next", "seq":
			n, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			switch f[0] {
			case "log":
				ve.LogNum = n
			case "next":
				ve.NextFileNum = n
			case "seq":
				ve.LastSeq = base.SeqNum(n)
			}
		default:
			t.Fatalf("edit line %q: unknown", line)
		}
	}
	return ve
}

// formatEdit renders an edit in parseEdit's syntax, canonical order.
func formatEdit(ve *VersionEdit) string {
	var b strings.Builder
	if ve.LogNum != 0 {
		fmt.Fprintf(&b, "log %d\n", ve.LogNum)
	}
	if ve.NextFileNum != 0 {
		fmt.Fprintf(&b, "next %d\n", ve.NextFileNum)
	}
	if ve.LastSeq != 0 {
		fmt.Fprintf(&b, "seq %d\n", ve.LastSeq)
	}
	for _, cp := range ve.CompactPointers {
		fmt.Fprintf(&b, "pointer L%d %s\n", cp.Level, formatKey(cp.Key))
	}
	for _, df := range ve.sortedDeleted() {
		fmt.Fprintf(&b, "del L%d %06d\n", df.Level, df.FileNum)
	}
	for _, nf := range ve.NewFiles {
		m := nf.Meta
		fmt.Fprintf(&b, "add L%d %s size=%d seqs=%d-%d entries=%d/%d/%d\n", nf.Level, m, m.Size,
			m.SmallestSeq, m.LargestSeq, m.NumEntries, m.NumDeletions, m.NumRangeDeletes)
	}
	return b.String()
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed)) }
