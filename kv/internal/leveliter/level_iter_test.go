package leveliter

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/stretchr/testify/require"
)

// level is a test level: files whose Data is their index, the contents of
// each, and a record of what the Iter did with them.
type level struct {
	files    []File
	contents [][]base.KV

	events  []string              // "open 1", "close 0", ...
	open    map[int]int           // open iterators per file
	opened  []int                 // every file ever opened, in order
	current base.InternalIterator // the iterator opened last

	openFailAt int // the open call numbered so (from 1) fails
	opens      int
	fileFailAt func() int // failAt for each new file iterator
	fires      int        // injected failures so far
	closeErr   error      // returned by every file iterator's Close
	settable   bool       // file iterators take new bounds (BoundsSetter)
	// bounded: file iterators hold only their entries inside the bounds
	// they were opened with, and say so (base.BoundsApplier).
	bounded   bool
	setBounds int // SetBounds calls on file iterators
}

// settableIter is a file iterator that takes new bounds. Like sliceIter it
// ignores them: the Iter applies the bounds of files that straddle them.
type settableIter struct {
	*sliceIter
	l *level
	i int
}

func (s *settableIter) SetBounds(lower, upper []byte) {
	s.l.setBounds++
	ev := fmt.Sprintf("bounds %d", s.i)
	if lower != nil {
		ev += fmt.Sprintf(" lower=%s", lower)
	}
	if upper != nil {
		ev += fmt.Sprintf(" upper=%s", upper)
	}
	s.l.events = append(s.l.events, ev)
}

func (l *level) openFile(f *File, lower, upper []byte) (base.InternalIterator, error) {
	i := f.Data.(int)
	l.opens++
	if l.opens == l.openFailAt {
		l.fires++
		return nil, errInjected
	}
	ev := fmt.Sprintf("open %d", i)
	if lower != nil {
		ev += fmt.Sprintf(" lower=%s", lower)
	}
	if upper != nil {
		ev += fmt.Sprintf(" upper=%s", upper)
	}
	l.events = append(l.events, ev)
	if l.open == nil {
		l.open = map[int]int{}
	}
	l.open[i]++
	l.opened = append(l.opened, i)
	kvs := l.contents[i]
	if l.bounded {
		kvs = nil
		for _, kv := range l.contents[i] {
			if (lower == nil || bytes.Compare(kv.UserKey(), lower) >= 0) && (upper == nil || bytes.Compare(kv.UserKey(), upper) < 0) {
				kvs = append(kvs, kv)
			}
		}
	}
	s := newSliceIter(kvs)
	if l.fileFailAt != nil {
		s.failAt = l.fileFailAt()
	}
	s.onFail = func() { l.fires++ }
	s.onClose = func() error {
		l.open[i]--
		l.events = append(l.events, fmt.Sprintf("close %d", i))
		return l.closeErr
	}
	l.current = s
	if l.settable {
		return &settableIter{sliceIter: s, l: l, i: i}, nil
	}
	if l.bounded {
		b := &boundedIter{s}
		l.current = b
		return b, nil
	}
	return s, nil
}

// boundedIter is a file iterator that applies its bounds (it holds only
// the entries inside them): the Iter compares none of its entries with a
// bound.
type boundedIter struct{ *sliceIter }

func (b *boundedIter) AppliesBounds() bool { return true }

func (l *level) numOpen() int {
	n := 0
	for _, c := range l.open {
		n += c
	}
	return n
}

// TestDataDriven runs testdata/level_iter. Commands:
//
//	define               one file per input line:
//	                     "smallest..largest: ukey#seq,KIND:value ..."
//	iter [lower=] [upper=]
//	                     a new Iter over the files; iterator commands, one
//	                     per line; each output line shows the entry, the
//	                     file it came from and the files opened and closed
func TestDataDriven(t *testing.T) {
	var l *level
	datadriven.RunTest(t, "testdata/level_iter", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "define":
			l = &level{}
			for line := range strings.SplitSeq(strings.TrimSpace(d.Input), "\n") {
				bounds, entries, _ := strings.Cut(line, ":")
				sm, lg, ok := strings.Cut(strings.TrimSpace(bounds), "..")
				require.True(t, ok, "bad file bounds %q", bounds)
				f := File{Data: len(l.files)}
				var err error
				f.Smallest, err = parseKey(sm)
				require.NoError(t, err)
				f.Largest, err = parseKey(lg)
				require.NoError(t, err)
				var kvs []base.KV
				for e := range strings.FieldsSeq(entries) {
					kv, err := parseKV(e)
					require.NoError(t, err)
					kvs = append(kvs, kv)
				}
				l.files = append(l.files, f)
				l.contents = append(l.contents, kvs)
			}
			if err := CheckFiles(l.files); err != nil {
				return err.Error() + "\n"
			}
			return ""
		case "iter":
			var lower, upper []byte
			for _, arg := range d.CmdArgs {
				switch arg.Key {
				case "lower":
					lower = []byte(arg.SingleVal(t))
				case "upper":
					upper = []byte(arg.SingleVal(t))
				}
			}
			l.events = nil
			it := New(l.files, l.openFile, lower, upper)
			out := runIterCmds(t, it, l, d.Input)
			require.NoError(t, it.Close())
			require.Zero(t, l.numOpen())
			return out
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

func runIterCmds(t *testing.T, it *Iter, l *level, input string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(strings.TrimSpace(input), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		var kv *base.KV
		switch fields[0] {
		case "first":
			kv = it.First()
		case "last":
			kv = it.Last()
		case "next":
			kv = it.Next()
		case "prev":
			kv = it.Prev()
		case "seek-ge", "seek-lt":
			require.Len(t, fields, 2, line)
			key := base.MakeSearchKey(nil, []byte(fields[1]), base.SeqNumMax)
			if strings.Contains(fields[1], "#") {
				var err error
				key, err = parseKey(fields[1])
				require.NoError(t, err)
			}
			if fields[0] == "seek-ge" {
				kv = it.SeekGE(key)
			} else {
				kv = it.SeekLT(key)
			}
		default:
			t.Fatalf("unknown iterator command %q", fields[0])
		}
		fmt.Fprintf(&b, "%s: %s", line, formatKV(kv))
		if f := it.CurrentFile(); f != nil {
			fmt.Fprintf(&b, " file=%d", f.Data)
		}
		if err := it.Error(); err != nil {
			fmt.Fprintf(&b, " err=%v", err)
		}
		if len(l.events) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(l.events, ", "))
			l.events = l.events[:0]
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// entry is one entry of the model with the file it belongs to.
type entry struct {
	kv   base.KV
	file int
}

// randomLevel builds a random valid level over a small key space: files
// that split the versions of one user key, files whose largest key is a
// range deletion sentinel, files whose smallest key is a range tombstone's
// start, and files with no point entries at all.
func randomLevel(rng *rand.Rand) *level {
	ukeySet := map[string]bool{}
	for range rng.IntN(30) {
		k := string(rune('a' + rng.IntN(6)))
		if rng.IntN(2) == 0 {
			k += string(rune('a' + rng.IntN(3)))
		}
		ukeySet[k] = true
	}
	var ukeys []string
	for k := range ukeySet {
		ukeys = append(ukeys, k)
	}
	sort.Strings(ukeys)
	var all []base.KV
	for _, u := range ukeys {
		seq := 1 + rng.IntN(5)
		for range 1 + rng.IntN(3) {
			all = append(all, base.KV{K: base.AppendKey(nil, []byte(u), base.SeqNum(seq), base.KindSet)})
			seq += 1 + rng.IntN(3)
		}
	}
	sort.Slice(all, func(i, j int) bool { return base.Compare(all[i].K, all[j].K) < 0 })

	var groups [][]base.KV
	for i, kv := range all {
		if i == 0 || rng.IntN(4) == 0 {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], kv)
	}
	l := &level{}
	for g, kvs := range groups {
		f := File{Smallest: kvs[0].K, Largest: kvs[len(kvs)-1].K, Data: g}
		first, last := kvs[0].UserKey(), kvs[len(kvs)-1].UserKey()
		if g > 0 && !bytes.Equal(base.UserKey(groups[g-1][len(groups[g-1])-1].K), first) && rng.IntN(4) == 0 {
			f.Smallest = base.AppendKey(nil, first, base.SeqNumMax-1, base.KindRangeDelete)
		}
		if rng.IntN(3) == 0 {
			switch {
			case g+1 < len(groups) && !bytes.Equal(groups[g+1][0].UserKey(), last):
				f.Largest = base.MakeRangeDeleteSentinel(nil, groups[g+1][0].UserKey())
			case g+1 == len(groups):
				f.Largest = base.MakeRangeDeleteSentinel(nil, append([]byte(last), '~'))
			}
		}
		var contents []base.KV
		if rng.IntN(6) != 0 {
			for i, kv := range kvs {
				contents = append(contents, base.KV{K: kv.K, V: fmt.Appendf(nil, "f%d.%d", g, i)})
			}
		}
		l.files = append(l.files, f)
		l.contents = append(l.contents, contents)
	}
	return l
}

func randomUserKey(rng *rand.Rand) []byte {
	k := []byte{byte('a' - 1 + rng.IntN(8))}
	if rng.IntN(2) == 0 {
		k = append(k, byte('a'+rng.IntN(3)))
	}
	return k
}

func randomSearchKey(rng *rand.Rand) []byte {
	switch rng.IntN(3) {
	case 0:
		return base.MakeSearchKey(nil, randomUserKey(rng), base.SeqNumMax)
	case 1:
		return base.MakeSearchKey(nil, randomUserKey(rng), base.SeqNum(rng.IntN(14)))
	}
	return base.AppendKey(nil, randomUserKey(rng), base.SeqNum(1+rng.IntN(12)), base.KindSet)
}

// TestRandomized checks random moves and seeks over random levels and bounds
// against the concatenation of the files' contents, filtered by the bounds.
// Along the way it checks that at most one file is open, that the open file
// is the current entry's, that no file wholly outside the bounds is ever
// opened, and, in runs with injected failures in opening or reading files,
// that every failure surfaces through Error and stops the Iter until a seek.
func TestRandomized(t *testing.T) {
	const unpositioned = -2
	fired := 0
	for seed := range 400 {
		rng := rand.New(rand.NewPCG(uint64(seed), 99))
		l := randomLevel(rng)
		require.NoError(t, CheckFiles(l.files), "seed %d", seed)
		var lower, upper []byte
		if rng.IntN(2) == 0 {
			lower = randomUserKey(rng)
		}
		if rng.IntN(2) == 0 {
			upper = randomUserKey(rng)
		}
		if rng.IntN(3) == 0 {
			l.openFailAt = 1 + rng.IntN(60)
		}
		l.bounded = rng.IntN(2) == 0
		if rng.IntN(3) == 0 {
			l.fileFailAt = func() int {
				if rng.IntN(8) == 0 {
					return 1 + rng.IntN(10)
				}
				return 0
			}
		}
		var model []entry
		for i, kvs := range l.contents {
			for _, kv := range kvs {
				if (lower == nil || bytes.Compare(kv.UserKey(), lower) >= 0) &&
					(upper == nil || bytes.Compare(kv.UserKey(), upper) < 0) {
					model = append(model, entry{kv, i})
				}
			}
		}
		n := len(model)
		search := func(key []byte) int {
			return sort.Search(n, func(i int) bool { return base.Compare(model[i].kv.K, key) >= 0 })
		}

		it := New(l.files, l.openFile, lower, upper)
		pos, failed := unpositioned, false
		var trace []string
		for range 300 {
			var kv *base.KV
			var desc string
			firesBefore := l.fires
			switch op := rng.IntN(20); {
			case op < 7:
				desc, kv = "next", it.Next()
				if !failed {
					switch {
					case pos == unpositioned || pos == -1:
						pos = 0
					case pos < n:
						pos++
					}
				}
			case op < 14:
				desc, kv = "prev", it.Prev()
				if !failed {
					switch {
					case pos == unpositioned || pos == n:
						pos = n - 1
					case pos >= 0:
						pos--
					}
				}
			case op < 16:
				key := randomSearchKey(rng)
				desc, kv = "seek-ge "+formatKey(key), it.SeekGE(key)
				pos, failed = search(key), false
			case op < 18:
				key := randomSearchKey(rng)
				desc, kv = "seek-lt "+formatKey(key), it.SeekLT(key)
				pos, failed = search(key)-1, false
			case op < 19:
				desc, kv = "first", it.First()
				pos, failed = 0, false
			default:
				desc, kv = "last", it.Last()
				pos, failed = n-1, false
			}
			trace = append(trace, desc+" -> "+formatKV(kv))
			msg := lazyMsg(func() string {
				return fmt.Sprintf("seed %d lower=%q upper=%q\n%s", seed, lower, upper, strings.Join(trace, "\n"))
			})
			require.LessOrEqual(t, l.numOpen(), 1, msg)
			if l.fires > firesBefore {
				require.Nil(t, kv, msg)
				require.ErrorIs(t, it.Error(), errInjected, msg)
				require.Nil(t, it.CurrentFile(), msg)
				failed = true
				fired++
				continue
			}
			if failed {
				require.Nil(t, kv, msg)
				require.ErrorIs(t, it.Error(), errInjected, msg)
				continue
			}
			require.NoError(t, it.Error(), msg)
			if pos < 0 || pos >= n {
				require.Nil(t, kv, msg)
				require.Nil(t, it.CurrentFile(), msg)
				continue
			}
			require.NotNil(t, kv, msg)
			require.Equal(t, formatKV(&model[pos].kv), formatKV(kv), msg)
			f := it.CurrentFile()
			require.NotNil(t, f, msg)
			require.Equal(t, model[pos].file, f.Data, msg)
			require.Equal(t, 1, l.open[model[pos].file], msg)
			require.Same(t, l.current, it.iter, msg)
		}
		require.Equal(t, failed, it.Close() != nil)
		require.Zero(t, l.numOpen(), "seed %d: a file iterator was left open", seed)
		// No file wholly outside the bounds was ever opened.
		for _, i := range l.opened {
			f := &l.files[i]
			require.False(t, lower != nil && below(f, lower), "seed %d: opened file %d below lower", seed, i)
			require.False(t, upper != nil && bytes.Compare(base.UserKey(f.Smallest), upper) >= 0,
				"seed %d: opened file %d above upper", seed, i)
		}
	}
	require.Greater(t, fired, 50, "too few runs hit their injected failure")
}

// lazyMsg is a failure message built only when a check fails.
type lazyMsg func() string

func (l lazyMsg) String() string { return l() }

func TestErrors(t *testing.T) {
	mk := func(s string) []byte {
		k, err := parseKey(s)
		require.NoError(t, err)
		return k
	}
	files := []File{
		{Smallest: mk("a#1"), Largest: mk("b#1"), Data: 0},
		{Smallest: mk("c#1"), Largest: mk("d#1"), Data: 1},
	}
	contents := [][]base.KV{{{K: mk("a#1")}, {K: mk("b#1")}}, {{K: mk("c#1")}, {K: mk("d#1")}}}

	t.Run("open", func(t *testing.T) {
		it := New(files, func(f *File, _, _ []byte) (base.InternalIterator, error) {
			if f.Data == 1 {
				return nil, errors.New("no such file")
			}
			return newSliceIter(contents[0]), nil
		}, nil, nil)
		require.NotNil(t, it.First())
		require.NotNil(t, it.Next())
		require.Nil(t, it.Next())
		require.EqualError(t, it.Error(), `leveliter: opening file "c"#1,SET-"d"#1,SET: no such file`)
		require.Nil(t, it.Next())
		require.Nil(t, it.Prev())
		require.Nil(t, it.CurrentFile())
		// A seek clears the error.
		require.NotNil(t, it.SeekGE(mk("a#1")))
		require.NoError(t, it.Error())
		require.NoError(t, it.Close())
	})
	t.Run("nil iterator", func(t *testing.T) {
		it := New(files, func(*File, []byte, []byte) (base.InternalIterator, error) { return nil, nil }, nil, nil)
		require.Nil(t, it.Last())
		require.ErrorIs(t, it.Error(), ErrNoIterator)
		require.ErrorIs(t, it.Close(), ErrNoIterator)
	})
	t.Run("close", func(t *testing.T) {
		closeErr := errors.New("bad close")
		it := New(files, func(f *File, _, _ []byte) (base.InternalIterator, error) {
			s := newSliceIter(contents[f.Data.(int)])
			s.onClose = func() error { return closeErr }
			return s, nil
		}, nil, nil)
		require.NotNil(t, it.First())
		require.NotNil(t, it.Next())
		// Leaving file 0 closes it; its Close error stops the Iter.
		require.Nil(t, it.Next())
		require.ErrorIs(t, it.Error(), closeErr)
		require.ErrorIs(t, it.Close(), closeErr)
	})
	t.Run("bad seek key", func(t *testing.T) {
		it := New(files, func(f *File, _, _ []byte) (base.InternalIterator, error) {
			return newSliceIter(contents[f.Data.(int)]), nil
		}, nil, nil)
		require.Nil(t, it.SeekGE([]byte("a")))
		require.Error(t, it.Error())
		require.Nil(t, it.SeekLT(nil))
		require.Error(t, it.Error())
		require.NotNil(t, it.First())
		require.NoError(t, it.Close())
	})
}

func TestCheckFiles(t *testing.T) {
	mk := func(s string) []byte {
		k, err := parseKey(s)
		require.NoError(t, err)
		return k
	}
	for _, tc := range []struct {
		name  string
		files []File
		err   string
	}{
		{"empty", nil, ""},
		{"ok", []File{{Smallest: mk("a#2"), Largest: mk("a#1")}, {Smallest: mk("b#9"), Largest: mk("c#max,RANGEDEL")}, {Smallest: mk("c#3"), Largest: mk("c#3")}}, ""},
		{"short key", []File{{Smallest: []byte("a"), Largest: mk("b#1")}}, "not internal keys"},
		{"inverted", []File{{Smallest: mk("b#1"), Largest: mk("a#1")}}, "smallest"},
		{"overlap", []File{{Smallest: mk("a#1"), Largest: mk("c#1")}, {Smallest: mk("b#1"), Largest: mk("d#1")}}, "overlaps"},
		{"shared key", []File{{Smallest: mk("a#1"), Largest: mk("b#5")}, {Smallest: mk("b#5"), Largest: mk("d#1")}}, "overlaps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckFiles(tc.files)
			if tc.err == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tc.err)
			}
		})
	}
}

func TestZeroAllocs(t *testing.T) {
	var files []File
	var contents [][]base.KV
	for f := range 8 {
		var kvs []base.KV
		for i := range 100 {
			kvs = append(kvs, base.KV{K: base.AppendKey(nil, fmt.Appendf(nil, "%02d%03d", f, i), 1, base.KindSet)})
		}
		files = append(files, File{Smallest: kvs[0].K, Largest: kvs[len(kvs)-1].K, Data: f})
		contents = append(contents, kvs)
	}
	iters := make([]*sliceIter, len(files))
	for i := range iters {
		iters[i] = newSliceIter(contents[i])
	}
	// The opener reuses one iterator per file, so that only the Iter's own
	// allocations are counted.
	open := func(f *File, _, _ []byte) (base.InternalIterator, error) {
		s := iters[f.Data.(int)]
		s.closed = false
		return s, nil
	}
	for _, bounds := range [][2][]byte{{nil, nil}, {[]byte("00050"), []byte("07050")}} {
		it := New(files, open, bounds[0], bounds[1])
		require.NotNil(t, it.First())
		require.Zero(t, testing.AllocsPerRun(2000, func() {
			if it.Next() == nil {
				it.First()
			}
		}), "Next, bounds %q", bounds)
		require.Zero(t, testing.AllocsPerRun(2000, func() {
			if it.Prev() == nil {
				it.Last()
			}
		}), "Prev, bounds %q", bounds)
		key := base.MakeSearchKey(nil, []byte("03050"), base.SeqNumMax)
		require.Zero(t, testing.AllocsPerRun(200, func() { it.SeekGE(key); it.SeekLT(key) }), "seeks")
		require.NoError(t, it.Close())
	}
}

func BenchmarkNext(b *testing.B) {
	var files []File
	var iters []*sliceIter
	for f := range 16 {
		var kvs []base.KV
		for i := range 1000 {
			kvs = append(kvs, base.KV{K: base.AppendKey(nil, fmt.Appendf(nil, "%02d%04d", f, i), 1, base.KindSet)})
		}
		files = append(files, File{Smallest: kvs[0].K, Largest: kvs[len(kvs)-1].K, Data: f})
		iters = append(iters, newSliceIter(kvs))
	}
	open := func(f *File, _, _ []byte) (base.InternalIterator, error) {
		s := iters[f.Data.(int)]
		s.closed = false
		return s, nil
	}
	it := New(files, open, nil, nil)
	it.First()
	b.ReportAllocs()
	for b.Loop() {
		if it.Next() == nil {
			it.First()
		}
	}
}

// TestSetBounds moves one Iter from bounds to bounds over random levels and
// checks, after each SetBounds, that seeks and moves return what a new Iter
// with those bounds returns, and that no file wholly outside the bounds is
// opened: a scan that reaches the upper bound stops there.
func TestSetBounds(t *testing.T) {
	settable := 0
	for seed := range 300 {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		l := randomLevel(rng)
		l.settable = seed%2 == 1
		ref := &level{files: l.files, contents: l.contents}
		it := New(l.files, l.openFile, nil, nil)
		for round := range 20 {
			var lower, upper []byte
			if rng.IntN(4) != 0 {
				lower = randomUserKey(rng)
			}
			if rng.IntN(4) != 0 {
				upper = randomUserKey(rng)
			}
			it.SetBounds(lower, upper)
			l.opened = l.opened[:0]
			want := New(ref.files, ref.openFile, lower, upper)
			var got, exp []string
			record := func(dst *[]string, kv *base.KV) { *dst = append(*dst, formatKV(kv)) }
			switch rng.IntN(3) {
			case 0:
				key := randomSearchKey(rng)
				record(&got, it.SeekGE(key))
				record(&exp, want.SeekGE(key))
			case 1:
				record(&got, it.First())
				record(&exp, want.First())
			default:
				record(&got, it.Last())
				record(&exp, want.Last())
			}
			forward := rng.IntN(3) != 0
			for range 1 + rng.IntN(8) {
				if forward {
					record(&got, it.Next())
					record(&exp, want.Next())
				} else {
					record(&got, it.Prev())
					record(&exp, want.Prev())
				}
			}
			require.Equal(t, exp, got, "seed %d round %d bounds [%s, %s)", seed, round, lower, upper)
			require.NoError(t, it.Error())
			require.NoError(t, want.Close())
			for _, i := range l.opened {
				f := &l.files[i]
				outside := (upper != nil && bytes.Compare(base.UserKey(f.Smallest), upper) >= 0) ||
					(lower != nil && below(f, lower))
				require.False(t, outside, "seed %d round %d: opened file %d outside [%s, %s)", seed, round, i, lower, upper)
			}
		}
		require.NoError(t, it.Close())
		require.Zero(t, l.numOpen(), "seed %d", seed)
		settable += l.setBounds
	}
	require.Positive(t, settable, "file iterators took new bounds")
}

// lettersLevel returns a level of three files: a-c, d-f and g-h, one
// version of each key.
func lettersLevel(settable bool) *level {
	l := &level{settable: settable}
	for i, keys := range [][]string{{"a", "b", "c"}, {"d", "e", "f"}, {"g", "h"}} {
		kvs := letterKVs(keys...)
		l.files = append(l.files, File{Smallest: kvs[0].K, Largest: kvs[len(kvs)-1].K, Data: i})
		l.contents = append(l.contents, kvs)
	}
	return l
}

// letterKVs returns one version of each key, its value the key.
func letterKVs(keys ...string) []base.KV {
	var kvs []base.KV
	for _, k := range keys {
		kvs = append(kvs, base.KV{K: base.AppendKey(nil, []byte(k), 1, base.KindSet), V: []byte(k)})
	}
	return kvs
}

// seekUser seeks it to the first entry of user key k.
func seekUser(it *Iter, k string) *base.KV {
	return it.SeekGE(base.MakeSearchKey(nil, []byte(k), base.SeqNumMax))
}

// TestSetBoundsKeepsFile: moving the bounds within one file that lies
// wholly inside them does not reopen it; a file that straddles the new
// bounds is reopened with them.
func TestSetBoundsKeepsFile(t *testing.T) {
	l := lettersLevel(false)
	it := New(l.files, l.openFile, nil, nil)
	require.Equal(t, "d#1,SET:d", formatKV(seekUser(it, "d")))
	require.Equal(t, []string{"open 1"}, l.events)
	l.events = nil

	// File 1 lies inside [c, g): kept.
	it.SetBounds([]byte("c"), []byte("g"))
	require.Equal(t, "e#1,SET:e", formatKV(seekUser(it, "e")))
	require.Empty(t, l.events)

	// The end of the bounds ends the scan without opening file 2.
	require.Equal(t, "f#1,SET:f", formatKV(it.Next()))
	require.Nil(t, it.Next())
	require.Equal(t, []string{"close 1"}, l.events)
	l.events = nil

	// File 1 straddles [d, e): opened with the bound it straddles.
	it.SetBounds([]byte("d"), []byte("e"))
	require.Equal(t, "d#1,SET:d", formatKV(seekUser(it, "a")))
	require.Nil(t, it.Next())
	require.Equal(t, []string{"open 1 upper=e"}, l.events)
	require.NoError(t, it.Close())
}

// TestSetBoundsSettableFile: a file iterator that takes new bounds stays
// open while the file overlaps them, and gets the bounds the file
// straddles.
func TestSetBoundsSettableFile(t *testing.T) {
	l := lettersLevel(true)
	it := New(l.files, l.openFile, nil, nil)
	require.Equal(t, "d#1,SET:d", formatKV(seekUser(it, "d")))
	l.events = nil

	// [e, f) lies inside file 1: it stays open with both bounds.
	it.SetBounds([]byte("e"), []byte("f"))
	require.Equal(t, []string{"bounds 1 lower=e upper=f"}, l.events)
	l.events = nil
	require.Equal(t, "e#1,SET:e", formatKV(seekUser(it, "a")))
	require.Nil(t, it.Next())
	require.Empty(t, l.events, "no file opened past the bound")

	// [c, e) still overlaps file 1, which now straddles only the upper bound.
	it.SetBounds([]byte("c"), []byte("e"))
	require.Equal(t, []string{"bounds 1 upper=e"}, l.events)
	l.events = nil

	// [g, h) does not: the next seek closes file 1.
	it.SetBounds([]byte("g"), []byte("h"))
	require.Empty(t, l.events)
	require.Equal(t, "g#1,SET:g", formatKV(seekUser(it, "a")))
	require.Equal(t, []string{"close 1", "open 2 upper=h"}, l.events)
	require.NoError(t, it.Close())
}

// TestExhaustedAtBoundKeepsFile: a scan that runs out at the upper bound
// inside a file that reaches past it (its iterator returns nothing more,
// as a prepared or bounded table iterator does) ends there with the file
// still open, and a seek under new bounds in the same file reuses it.
func TestExhaustedAtBoundKeepsFile(t *testing.T) {
	l := &level{settable: true}
	kvs := letterKVs("a", "b", "c")
	// Point keys a..c, and a range tombstone to e.
	l.files = []File{{Smallest: kvs[0].K, Largest: base.MakeRangeDeleteSentinel(nil, []byte("e")), Data: 0}}
	l.contents = [][]base.KV{kvs}
	it := New(l.files, l.openFile, nil, nil)
	it.SetBounds([]byte("b"), []byte("d"))
	require.Equal(t, "b#1,SET:b", formatKV(seekUser(it, "b")))
	require.Equal(t, "c#1,SET:c", formatKV(it.Next()))
	require.Nil(t, it.Next())
	require.Nil(t, it.Next())
	require.Equal(t, []string{"open 0 lower=b upper=d"}, l.events)
	l.events = nil
	it.SetBounds([]byte("a"), []byte("b"))
	require.Equal(t, "a#1,SET:a", formatKV(it.First()))
	require.Equal(t, []string{"bounds 0 upper=b"}, l.events)
	require.NoError(t, it.Close())
	require.Zero(t, l.numOpen())
}

// TestSetBoundsCloseError: a file left behind by SetBounds is closed by the
// next seek, which reports the close's error.
func TestSetBoundsCloseError(t *testing.T) {
	l := lettersLevel(false)
	it := New(l.files, l.openFile, nil, nil)
	require.Equal(t, "b#1,SET:b", formatKV(seekUser(it, "b")))
	l.closeErr = errInjected
	it.SetBounds([]byte("d"), []byte("e"))
	require.Nil(t, seekUser(it, "d"))
	require.ErrorIs(t, it.Error(), errInjected)
	l.closeErr = nil
	require.Equal(t, "d#1,SET:d", formatKV(seekUser(it, "d")))
	require.NoError(t, it.Close())
	require.Zero(t, l.numOpen())
}
