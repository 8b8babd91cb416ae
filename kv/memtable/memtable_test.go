package memtable

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/stretchr/testify/require"
)

func ik(ukey string, seq base.SeqNum, kind base.Kind) []byte {
	return base.AppendKey(nil, []byte(ukey), seq, kind)
}

func TestNewSizes(t *testing.T) {
	for _, tc := range []struct {
		request, want int
	}{
		{-1, MinArenaSize},
		{0, MinArenaSize},
		{MinArenaSize - 1, MinArenaSize},
		{MinArenaSize + 13, MinArenaSize + 8},
		{1 << 20, 1 << 20},
	} {
		m := New(tc.request)
		require.Equal(t, tc.want, m.Capacity(), "New(%d)", tc.request)
		require.True(t, m.Empty())
		require.False(t, m.HasRangeDeletes())
		require.Greater(t, m.Size(), 0, "the sentinels take space")
		require.Less(t, m.Size(), 1024)
		require.Nil(t, m.NewIter().First())
		require.Nil(t, m.NewIter().Last())
		require.Nil(t, m.NewRangeDelIter().First())
	}
}

func TestAddGet(t *testing.T) {
	m := New(0)
	for _, e := range []struct {
		ukey  string
		seq   base.SeqNum
		kind  base.Kind
		value string
	}{
		{"b", 5, base.KindSet, "b5"},
		{"b", 9, base.KindDelete, ""},
		{"b", 12, base.KindSet, "b12"},
		{"a", 7, base.KindSet, "a7"},
		{"", 3, base.KindSet, "empty key"},
		{"c", 1, base.KindSet, strings.Repeat("x", 5000)},
	} {
		require.NoError(t, m.Add([]byte(e.ukey), e.seq, e.kind, []byte(e.value)))
	}
	require.False(t, m.Empty())
	for _, tc := range []struct {
		ukey  string
		seq   base.SeqNum
		found bool
		kind  base.Kind
		value string
	}{
		{"b", 4, false, 0, ""},
		{"b", 5, true, base.KindSet, "b5"},
		{"b", 8, true, base.KindSet, "b5"},
		{"b", 9, true, base.KindDelete, ""},
		{"b", 11, true, base.KindDelete, ""},
		{"b", 12, true, base.KindSet, "b12"},
		{"b", base.SeqNumMax, true, base.KindSet, "b12"},
		{"a", 6, false, 0, ""},
		{"a", 100, true, base.KindSet, "a7"},
		{"", 3, true, base.KindSet, "empty key"},
		{"", 2, false, 0, ""},
		{"aa", 100, false, 0, ""},
		{"c", 1, true, base.KindSet, strings.Repeat("x", 5000)},
		{"d", 100, false, 0, ""},
	} {
		v, kind, _, found := m.Get([]byte(tc.ukey), tc.seq)
		require.Equal(t, tc.found, found, "Get(%q, %d)", tc.ukey, tc.seq)
		require.Equal(t, tc.kind, kind, "Get(%q, %d)", tc.ukey, tc.seq)
		require.Equal(t, tc.value, string(v), "Get(%q, %d)", tc.ukey, tc.seq)
		if found {
			require.Equal(t, len(v), cap(v), "a value's capacity must end at its length")
		}
	}

	// The iterator yields user key ascending, newest first.
	var got []string
	it := m.NewIter()
	for kv := it.First(); kv != nil; kv = it.Next() {
		require.Equal(t, len(kv.K), cap(kv.K), "a key's capacity must end at its length")
		got = append(got, base.FormatKey(kv.K))
	}
	require.Equal(t, []string{`""#3,SET`, `"a"#7,SET`, `"b"#12,SET`, `"b"#9,DEL`, `"b"#5,SET`, `"c"#1,SET`}, got)
	require.NoError(t, it.Close())
}

func TestAddErrors(t *testing.T) {
	m := New(0)
	require.NoError(t, m.Add([]byte("k"), 10, base.KindSet, []byte("first")))
	size := m.Size()
	for _, tc := range []struct {
		name string
		add  func() error
		want error
	}{
		{"duplicate", func() error { return m.Add([]byte("k"), 10, base.KindSet, []byte("second")) }, ErrExists},
		{"kind max", func() error { return m.Add([]byte("k"), 11, base.KindMax, nil) }, ErrInvalid},
		{"range delete kind", func() error { return m.Add([]byte("k"), 11, base.KindRangeDelete, nil) }, ErrInvalid},
		{"seq max", func() error { return m.Add([]byte("k"), base.SeqNumMax, base.KindSet, nil) }, ErrInvalid},
		{"seq overflow", func() error { return m.Add([]byte("k"), base.SeqNumMax+1, base.KindSet, nil) }, ErrInvalid},
		{"value larger than arena", func() error { return m.Add([]byte("k"), 12, base.KindSet, make([]byte, 1<<20)) }, ErrArenaFull},
		{"empty range", func() error { return m.AddRangeDelete([]byte("b"), []byte("b"), 11) }, ErrInvalid},
		{"inverted range", func() error { return m.AddRangeDelete([]byte("c"), []byte("b"), 11) }, ErrInvalid},
		{"range seq max", func() error { return m.AddRangeDelete([]byte("a"), []byte("b"), base.SeqNumMax) }, ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorIs(t, tc.add(), tc.want)
			v, kind, _, ok := m.Get([]byte("k"), base.SeqNumMax)
			require.True(t, ok)
			require.Equal(t, base.KindSet, kind)
			require.Equal(t, "first", string(v))
			require.False(t, m.HasRangeDeletes())
		})
	}
	// Only the rejected duplicate reached the arena: one node of some height
	// holding "k" and "second". Validation failures and the oversized value
	// consumed nothing.
	delta := uint64(m.Size() - size)
	var heights []int
	for h := 1; h <= maxHeight; h++ {
		if nodeSize(h, 1+base.TrailerLen, uint64(len("second"))) == delta {
			heights = append(heights, h)
		}
	}
	require.Len(t, heights, 1, "arena grew by %d bytes", delta)
	require.LessOrEqual(t, int(delta), EntrySize(1, len("second")))

	// A duplicate range tombstone is refused like a duplicate point.
	require.NoError(t, m.AddRangeDelete([]byte("a"), []byte("b"), 20))
	require.ErrorIs(t, m.AddRangeDelete([]byte("a"), []byte("c"), 20), ErrExists)
}

func TestIterInvalidSearchKey(t *testing.T) {
	m := New(0)
	require.NoError(t, m.Add([]byte("a"), 1, base.KindSet, nil))
	it := m.NewIter()
	for _, seek := range []func([]byte) *base.KV{it.SeekGE, it.SeekLT} {
		require.NotNil(t, it.First())
		require.Nil(t, seek([]byte("short")))
		require.ErrorIs(t, it.Error(), ErrInvalid)
		require.Nil(t, it.Next(), "an error is sticky")
		require.Nil(t, it.Prev(), "an error is sticky")
		require.ErrorIs(t, it.Error(), ErrInvalid)
		require.NotNil(t, it.SeekGE(ik("a", 5, base.KindMax)), "a good seek clears the error")
		require.NoError(t, it.Error())
	}
	require.Nil(t, it.SeekLT(nil))
	require.ErrorIs(t, it.Close(), ErrInvalid)
	require.NoError(t, it.Close())
	require.NotNil(t, it.Next(), "a closed iterator restarts before the first entry")
	require.NoError(t, new(Iter).Close(), "closing a zero Iter is harmless")
}

func TestRangeDeletes(t *testing.T) {
	m := New(0)
	tombstones := []struct {
		start, end string
		seq        base.SeqNum
	}{
		{"a", "c", 10},
		{"b", "d", 12},
		{"a", "z", 3},
		{"m", "m\x00", 7},
		{"", "a", 1},
		{"b", "c", 20},
	}
	rng := rand.New(rand.NewPCG(5, 5))
	md := &model{}
	for _, i := range rng.Perm(len(tombstones)) {
		ts := tombstones[i]
		require.NoError(t, m.AddRangeDelete([]byte(ts.start), []byte(ts.end), ts.seq))
		md.add(ik(ts.start, ts.seq, base.KindRangeDelete), []byte(ts.end))
	}
	require.True(t, m.HasRangeDeletes())
	require.False(t, m.Empty())
	require.Nil(t, m.NewIter().First(), "tombstones are not point entries")
	_, _, _, found := m.Get([]byte("a"), base.SeqNumMax)
	require.False(t, found)

	it := m.NewRangeDelIter()
	md.requireScan(t, it)
	var got []string
	for kv := it.First(); kv != nil; kv = it.Next() {
		require.Equal(t, base.KindRangeDelete, kv.Kind())
		got = append(got, fmt.Sprintf("[%s,%s)#%d", kv.UserKey(), kv.V, kv.Seq()))
	}
	require.Equal(t, []string{"[,a)#1", "[a,c)#10", "[a,z)#3", "[b,c)#20", "[b,d)#12", "[m,m\x00)#7"}, got)

	kv := it.SeekGE(base.MakeSearchKey(nil, []byte("b"), 15))
	require.Equal(t, "[b,d)#12", fmt.Sprintf("[%s,%s)#%d", kv.UserKey(), kv.V, kv.Seq()))
	kv = it.SeekLT(base.MakeSearchKey(nil, []byte("b"), base.SeqNumMax))
	require.Equal(t, "[a,z)#3", fmt.Sprintf("[%s,%s)#%d", kv.UserKey(), kv.V, kv.Seq()))
	require.NoError(t, it.Close())

	// Points and tombstones share the arena but not the lists.
	require.NoError(t, m.Add([]byte("a"), 11, base.KindSet, []byte("v")))
	md.requireScan(t, m.NewRangeDelIter())
}

func TestEmptyAndHasRangeDeletes(t *testing.T) {
	for _, tc := range []struct {
		name          string
		points, dels  bool
		empty, hasDel bool
	}{
		{"nothing", false, false, true, false},
		{"points only", true, false, false, false},
		{"tombstones only", false, true, false, true},
		{"both", true, true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(0)
			if tc.points {
				require.NoError(t, m.Add([]byte("k"), 1, base.KindDelete, nil))
			}
			if tc.dels {
				require.NoError(t, m.AddRangeDelete([]byte("a"), []byte("b"), 2))
			}
			require.Equal(t, tc.empty, m.Empty())
			require.Equal(t, tc.hasDel, m.HasRangeDeletes())
		})
	}
}

// TestZeroAllocs checks that adding and every positioning call allocate
// nothing on the Go heap.
func TestZeroAllocs(t *testing.T) {
	m := New(16 << 20)
	key := make([]byte, 16)
	value := make([]byte, 100)
	var seq base.SeqNum
	add := func() {
		seq++
		binary.BigEndian.PutUint64(key[8:], uint64(seq)*0x9e3779b97f4a7c15)
		if err := m.Add(key, seq, base.KindSet, value); err != nil {
			t.Fatal(err)
		}
	}
	for range 10000 {
		add()
	}
	require.Zero(t, testing.AllocsPerRun(1000, add), "Add")

	it := m.NewIter()
	search := base.MakeSearchKey(nil, key, base.SeqNumMax)
	var n uint64
	reseek := func() {
		n++
		binary.BigEndian.PutUint64(search[8:16], n*0x9e3779b97f4a7c15)
	}
	for _, tc := range []struct {
		name string
		op   func()
	}{
		{"SeekGE", func() { reseek(); it.SeekGE(search) }},
		{"SeekLT", func() { reseek(); it.SeekLT(search) }},
		{"First", func() { it.First() }},
		{"Last", func() { it.Last() }},
		{"Next", func() {
			if it.Next() == nil {
				it.First()
			}
		}},
		{"Prev", func() {
			if it.Prev() == nil {
				it.Last()
			}
		}},
		{"Get", func() { reseek(); m.Get(search[:16], base.SeqNumMax) }},
		{"Reserve", func() { m.Reserve(1) }},
		{"InitIter", func() { m.InitIter(it) }},
	} {
		require.Zero(t, testing.AllocsPerRun(1000, tc.op), tc.name)
	}
}

func TestArenaRecycle(t *testing.T) {
	m := New(MinArenaSize)
	for i := range 200 {
		require.NoError(t, m.Add([]byte(fmt.Sprintf("key%03d", i)), base.SeqNum(i+1), base.KindSet, []byte("value")))
	}
	words := m.TakeArena()
	for _, w := range words {
		require.Zero(t, w, "a recycled arena is cleared")
	}
	m2 := NewFromArena(words)
	require.True(t, m2.Empty())
	require.NoError(t, m2.Add([]byte("a"), 1, base.KindSet, []byte("b")))
	v, _, _, ok := m2.Get([]byte("a"), 1)
	require.True(t, ok)
	require.Equal(t, "b", string(v))
	_, _, _, ok = m2.Get([]byte("key001"), 10)
	require.False(t, ok)
}

// TestGetterMatchesGet: a Getter's finger search finds what Get finds, for
// keys asked in ascending order (runs of absent keys falling in one gap,
// present keys with versions above and below the read's sequence number),
// repeated, and out of order.
func TestGetterMatchesGet(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := New(1 << 22)
	for i := range 20000 {
		k := fmt.Sprintf("k%06d", rng.IntN(30000)*2) // even keys only
		kind := base.KindSet
		if rng.IntN(8) == 0 {
			kind = base.KindDelete
		}
		err := m.Add([]byte(k), base.SeqNum(1+i), kind, []byte(fmt.Sprint(i)))
		require.NoError(t, err)
	}
	for round := range 200 {
		var keys []string
		start := rng.IntN(60000)
		for range 1 + rng.IntN(64) {
			switch rng.IntN(10) {
			case 0:
				keys = append(keys, fmt.Sprintf("k%06d", rng.IntN(60000))) // out of order
			case 1:
				if len(keys) > 0 {
					keys = append(keys, keys[len(keys)-1]) // again
				}
			default:
				start += rng.IntN(40)
				keys = append(keys, fmt.Sprintf("k%06d", start))
			}
		}
		seq := base.SeqNum(rng.IntN(22000))
		var g Getter
		g.Init(m)
		for _, k := range keys {
			wv, wk, ws, wf := m.Get([]byte(k), seq)
			gv, gk, gs, gf := g.Get([]byte(k), seq)
			require.Equal(t, wf, gf, "round %d key %s seq %d", round, k, seq)
			require.Equal(t, string(wv), string(gv), "round %d key %s", round, k)
			require.Equal(t, wk, gk, "round %d key %s", round, k)
			require.Equal(t, ws, gs, "round %d key %s", round, k)
		}
	}
}
