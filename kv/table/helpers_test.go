package table

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

// entry is one point entry of a test table.
type entry struct {
	k, v []byte // internal key, value
}

func ikey(ukey string, seq base.SeqNum, k base.Kind) []byte {
	return base.AppendKey(nil, []byte(ukey), seq, k)
}

// randomEntries returns n sorted entries over user keys drawn from a small
// alphabet (so keys share prefixes), with several versions of some keys,
// deletions, empty values and, when big is set, a few values larger than
// most block sizes.
func randomEntries(rng *rand.Rand, n int, big bool) []entry {
	seen := map[string]bool{}
	var es []entry
	for len(es) < n {
		l := 1 + rng.IntN(12)
		u := make([]byte, l)
		for i := range u {
			u[i] = "abcdxyz\x00\xff"[rng.IntN(9)]
		}
		versions := 1
		if rng.IntN(4) == 0 {
			versions = 2 + rng.IntN(4)
		}
		for range versions {
			seq := base.SeqNum(1 + rng.IntN(1000))
			kind := base.KindSet
			if rng.IntN(5) == 0 {
				kind = base.KindDelete
			}
			k := base.AppendKey(nil, u, seq, kind)
			if seen[string(base.AppendKey(nil, u, seq, 0))] {
				continue
			}
			seen[string(base.AppendKey(nil, u, seq, 0))] = true
			var v []byte
			if kind == base.KindSet {
				vl := rng.IntN(40)
				if big && rng.IntN(50) == 0 {
					vl = 3000 + rng.IntN(5000)
				}
				v = make([]byte, vl)
				for i := range v {
					v[i] = byte('a' + rng.IntN(3)) // compressible
				}
			}
			es = append(es, entry{k, v})
		}
	}
	slices.SortFunc(es, func(a, b entry) int { return base.Compare(a.k, b.k) })
	return es
}

// writeTable writes es and ts into name on fs and returns the metadata.
func writeTable(t testing.TB, fs vfs.FS, name string, es []entry, ts []Tombstone, opts WriterOptions) *Metadata {
	t.Helper()
	f, err := fs.Create(name)
	require.NoError(t, err)
	w := NewWriter(f, name, opts)
	for _, e := range es {
		require.NoError(t, w.Add(e.k, e.v))
	}
	for _, tb := range ts {
		require.NoError(t, w.AddRangeDelete(tb.Start, tb.End, tb.Seq))
	}
	require.NoError(t, w.Close())
	md, err := w.Metadata()
	require.NoError(t, err)
	return md
}

// buildTable writes a table into memory and returns its bytes.
func buildTable(t testing.TB, es []entry, ts []Tombstone, opts WriterOptions) []byte {
	t.Helper()
	fs := vfs.NewMem()
	writeTable(t, fs, "t.sst", es, ts, opts)
	b, err := vfs.ReadFile(fs, "t.sst")
	require.NoError(t, err)
	return b
}

// openBytes opens a reader over data held in a fresh in-memory file.
func openBytes(data []byte, opts ReaderOptions) (*Reader, error) {
	fs := vfs.NewMem()
	if err := vfs.WriteFileSync(fs, "", "t.sst", data); err != nil {
		return nil, err
	}
	f, err := fs.Open("t.sst")
	if err != nil {
		return nil, err
	}
	return NewReader(f, "t.sst", opts)
}

// model is the reference the table iterator is checked against: the
// entries inside the bounds, and a position in them (-1 before the first,
// len after the last, -2 never positioned).
type model struct {
	es  []entry
	pos int
}

func newModel(es []entry, lower, upper []byte) *model {
	m := &model{pos: -2}
	for _, e := range es {
		u := base.UserKey(e.k)
		if lower != nil && bytes.Compare(u, lower) < 0 || upper != nil && bytes.Compare(u, upper) >= 0 {
			continue
		}
		m.es = append(m.es, e)
	}
	return m
}

func (m *model) at() *entry {
	if m.pos < 0 || m.pos >= len(m.es) {
		return nil
	}
	return &m.es[m.pos]
}

func (m *model) seekGE(k []byte) *entry {
	m.pos, _ = slices.BinarySearchFunc(m.es, k, func(e entry, k []byte) int { return base.Compare(e.k, k) })
	return m.at()
}

func (m *model) seekLT(k []byte) *entry {
	i, _ := slices.BinarySearchFunc(m.es, k, func(e entry, k []byte) int { return base.Compare(e.k, k) })
	m.pos = i - 1
	return m.at()
}

func (m *model) first() *entry { m.pos = 0; return m.at() }
func (m *model) last() *entry  { m.pos = len(m.es) - 1; return m.at() }

func (m *model) next() *entry {
	if m.pos == -2 {
		return m.first()
	}
	if m.pos < len(m.es) {
		m.pos++
	}
	return m.at()
}

func (m *model) prev() *entry {
	if m.pos >= len(m.es) || m.pos == -2 {
		return m.last()
	}
	if m.pos >= 0 {
		m.pos--
	}
	return m.at()
}

// getTruth returns the truth for Get(ukey, seq): the first entry at or
// after the search key, if it has that user key.
// requireScan scans it from First to the end and checks that it returns
// exactly es, in order.
func requireScan(t testing.TB, it *Iter, es []entry) {
	t.Helper()
	n := 0
	for kv := it.First(); kv != nil; kv = it.Next() {
		require.Less(t, n, len(es), "more entries than written")
		require.Equal(t, es[n].k, kv.K)
		require.True(t, bytes.Equal(es[n].v, kv.V))
		n++
	}
	require.NoError(t, it.Error())
	require.Equal(t, len(es), n)
}

func getTruth(es []entry, ukey []byte, seq base.SeqNum) *entry {
	k := base.MakeSearchKey(nil, ukey, seq)
	i, _ := slices.BinarySearchFunc(es, k, func(e entry, k []byte) int { return base.Compare(e.k, k) })
	if i < len(es) && bytes.Equal(base.UserKey(es[i].k), ukey) {
		return &es[i]
	}
	return nil
}

func fmtEntry(e *entry) string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s=%q", base.FormatKey(e.k), e.v)
}

func fmtKV(kv *base.KV) string {
	if kv == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s=%q", base.FormatKey(kv.K), kv.V)
}

// randomSearchKey returns an internal search key near the entries: a user
// key of some entry (or a mutation of it) with a random trailer.
func randomSearchKey(rng *rand.Rand, es []entry) []byte {
	var u []byte
	if len(es) > 0 && rng.IntN(4) != 0 {
		u = slices.Clone(base.UserKey(es[rng.IntN(len(es))].k))
		switch rng.IntN(4) {
		case 0:
			u = append(u, 'm')
		case 1:
			if len(u) > 0 {
				u = u[:len(u)-1]
			}
		}
	} else {
		u = make([]byte, rng.IntN(6))
		for i := range u {
			u[i] = "abcdxyz\x00\xff"[rng.IntN(9)]
		}
	}
	switch rng.IntN(3) {
	case 0:
		return base.MakeSearchKey(nil, u, base.SeqNumMax)
	case 1:
		return base.AppendKey(nil, u, base.SeqNum(rng.IntN(1000)), base.KindSet)
	}
	return base.MakeSearchKey(nil, u, base.SeqNum(rng.IntN(1000)))
}

// openMapped writes a table's bytes to a new file and opens it memory-
// mapped, as the database opens its tables; it returns the file's name.
func openMapped(t *testing.T, data []byte) (vfs.File, string) {
	t.Helper()
	name := filepath.Join(t.TempDir(), "000001.sst")
	require.NoError(t, os.WriteFile(name, data, 0o644))
	f, err := vfs.Default.Open(name, vfs.MemoryMap)
	require.NoError(t, err)
	return f, name
}
