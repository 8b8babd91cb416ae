package base

import (
	"bytes"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCompareOrder(t *testing.T) {
	keys := [][]byte{
		AppendKey(nil, []byte(""), 5, KindSet),
		AppendKey(nil, []byte("a"), SeqNumMax, KindMax),
		AppendKey(nil, []byte("a"), 9, KindSet),
		AppendKey(nil, []byte("a"), 9, KindDelete),
		AppendKey(nil, []byte("a"), 3, KindSet),
		MakeRangeDeleteSentinel(nil, []byte("ab")),
		AppendKey(nil, []byte("ab"), 100, KindSet),
		AppendKey(nil, []byte("b"), 1, KindSet),
	}
	for i := range keys {
		for j := range keys {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			require.Equal(t, want, Compare(keys[i], keys[j]), "%s vs %s", FormatKey(keys[i]), FormatKey(keys[j]))
		}
	}
}

func TestSeparatorSuccessor(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	randKey := func() []byte {
		b := make([]byte, rng.IntN(6))
		for i := range b {
			b[i] = byte(rng.IntN(4)) * 85 // 0, 85, 170, 255
		}
		return AppendKey(nil, b, SeqNum(rng.IntN(10)), Kind(rng.IntN(2)))
	}
	for range 20000 {
		a, b := randKey(), randKey()
		if Compare(a, b) >= 0 {
			a, b = b, a
		}
		if Compare(a, b) == 0 {
			continue
		}
		s := Separator([]byte("pre"), a, b)[3:]
		require.True(t, Compare(a, s) <= 0 && Compare(s, b) < 0, "sep(%s,%s)=%s", FormatKey(a), FormatKey(b), FormatKey(s))
		require.LessOrEqual(t, len(UserKey(s)), len(UserKey(a)))
		u := Successor(nil, a)
		require.True(t, Compare(a, u) <= 0, "succ(%s)=%s", FormatKey(a), FormatKey(u))
	}
	s := Separator(nil, AppendKey(nil, []byte("abcdefg"), 1, KindSet), AppendKey(nil, []byte("abzz"), 1, KindSet))
	require.Equal(t, []byte("abd"), UserKey(s))
}

func TestSortStable(t *testing.T) {
	var ks [][]byte
	for i := range 100 {
		ks = append(ks, AppendKey(nil, []byte{byte(i % 7)}, SeqNum(i), KindSet))
	}
	sort.Slice(ks, func(i, j int) bool { return Compare(ks[i], ks[j]) < 0 })
	for i := 1; i < len(ks); i++ {
		c := bytes.Compare(UserKey(ks[i-1]), UserKey(ks[i]))
		require.True(t, c < 0 || (c == 0 && Seq(ks[i-1]) > Seq(ks[i])))
	}
}

func TestCorruption(t *testing.T) {
	err := Corruptf("000001.sst", 4096, "checksum mismatch: expected %#x, found %#x", 1, 2)
	require.True(t, IsCorruption(err))
	require.Equal(t, "kv: corruption in 000001.sst at offset 4096: checksum mismatch: expected 0x1, found 0x2", err.Error())
}
