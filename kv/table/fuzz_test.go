package table

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-db/strata/kv/filter"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/stretchr/testify/require"
)

// The seed corpora under testdata/fuzz/ hold real blocks, footers, index
// blocks and files; regenerate them with
//
//	go test ./kv/table -run TestFuzzSeeds -gen-fuzz-seeds
var genFuzzSeeds = flag.Bool("gen-fuzz-seeds", false, "rewrite the fuzz seed corpora under testdata/fuzz")

// fuzzKeys are the search keys fuzz targets seek to.
var fuzzKeys = [][]byte{
	base.MakeSearchKey(nil, nil, base.SeqNumMax),
	base.MakeSearchKey(nil, []byte("a"), 5),
	base.MakeSearchKey(nil, []byte("b"), base.SeqNumMax),
	base.AppendKey(nil, []byte("c"), 1, base.KindSet),
	base.MakeSearchKey(nil, []byte("x"), 0),
	base.MakeSearchKey(nil, []byte("\xff\xff"), base.SeqNumMax),
}

// FuzzBlockIter feeds arbitrary bytes to BlockIter.Init and then runs the
// moves the second argument spells. It must never panic, and every key it
// returns must be an internal key.
func FuzzBlockIter(f *testing.F) {
	f.Add(buildBlock([]entry{{ikey("a", 1, base.KindSet), []byte("v")}}, 1), []byte{0, 4, 4, 5, 1, 5})
	f.Fuzz(func(t *testing.T, data, moves []byte) {
		var it BlockIter
		if it.Init(data) != nil {
			return
		}
		for i, m := range moves {
			var kv *base.KV
			switch k := fuzzKeys[i%len(fuzzKeys)]; m % 6 {
			case 0:
				kv = it.First()
			case 1:
				kv = it.Last()
			case 2:
				kv = it.SeekGE(k)
			case 3:
				kv = it.SeekLT(k)
			case 4:
				kv = it.Next()
			case 5:
				kv = it.Prev()
			}
			if kv != nil && !base.Valid(kv.K) {
				t.Fatalf("move %d returned a key of %d bytes", i, len(kv.K))
			}
			if kv == nil && it.Error() != nil && !base.IsCorruption(it.Error()) {
				t.Fatalf("error is not a corruption: %v", it.Error())
			}
		}
	})
}

// FuzzFooter decodes the last FooterLen bytes of arbitrary data as the
// footer of a file of that length; a footer that decodes re-encodes to the
// same bytes.
func FuzzFooter(f *testing.F) {
	ft := footer{checksumType: ChecksumCRC32C, version: FormatVersion, baseCtx: 7,
		metaindex: BlockHandle{Offset: 10, Length: 5}, index: BlockHandle{Offset: 0, Length: 5}}
	f.Add(ft.encode(make([]byte, 20), 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < FooterLen {
			if _, err := decodeFooter(data, "f", uint64(len(data))); err == nil {
				t.Fatal("a short file decoded")
			}
			return
		}
		b := data[len(data)-FooterLen:]
		off := uint64(len(data) - FooterLen)
		ft, err := decodeFooter(b, "f", uint64(len(data)))
		if err != nil {
			if !base.IsCorruption(err) {
				t.Fatalf("error is not a corruption: %v", err)
			}
			return
		}
		if enc := ft.encode(nil, off); !bytes.Equal(enc, b) {
			t.Fatalf("footer re-encodes to %x, not %x", enc, b)
		}
	})
}

// FuzzIndex decodes arbitrary bytes as an index block. What decodes must
// satisfy the index invariants the reader relies on.
func FuzzIndex(f *testing.F) {
	var bw blockWriter
	bw.init(1)
	bw.add(ikey("b", base.SeqNumMax, base.KindMax), appendIndexValue(nil, BlockHandle{0, 10}, ikey("a", 1, base.KindSet)))
	f.Add(bw.finish())
	f.Fuzz(func(t *testing.T, data []byte) {
		es, end, err := decodeIndex(data, "f", 0)
		if err != nil {
			if !base.IsCorruption(err) {
				t.Fatalf("error is not a corruption: %v", err)
			}
			return
		}
		var next uint64
		for i, e := range es {
			if e.h.Offset != next || base.Compare(e.first, e.sep) > 0 {
				t.Fatalf("entry %d: %s first %s sep %s", i, e.h, base.FormatKey(e.first), base.FormatKey(e.sep))
			}
			if i > 0 && base.Compare(es[i-1].sep, e.sep) >= 0 {
				t.Fatalf("entry %d: separators out of order", i)
			}
			next = e.h.End()
		}
		if next != end {
			t.Fatalf("data end %d, blocks end at %d", end, next)
		}
	})
}

// FuzzReader opens a reader on arbitrary bytes and, if that works, reads
// everything it can. Nothing may panic; every error is a corruption.
func FuzzReader(f *testing.F) {
	f.Add([]byte("not a table"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := openBytes(data, ReaderOptions{})
		if err != nil {
			if !base.IsCorruption(err) {
				t.Fatalf("open: error is not a corruption: %v", err)
			}
			return
		}
		defer r.Close()
		check := func(err error) {
			if err != nil && !base.IsCorruption(err) {
				t.Fatalf("error is not a corruption: %v", err)
			}
		}
		it := r.NewIter(IterOptions{})
		n := 0
		for kv := it.First(); kv != nil && n < 10000; kv = it.Next() {
			n++
		}
		check(it.Error())
		for kv := it.Last(); kv != nil && n > 0; kv = it.Prev() {
			n--
		}
		check(it.Error())
		for _, k := range fuzzKeys {
			it.SeekGE(k)
			check(it.Error())
			it.SeekLT(k)
			check(it.Error())
			_, _, _, _, err := r.Get(base.UserKey(k), base.SeqNumMax, nil, nil)
			check(err)
		}
		check(it.Close())
		r.BlocksInRange(nil, nil, nil)
		r.ApproximateOffset([]byte("b"))
	})
}

// TestFuzzSeeds checks that the committed corpora exist and, with
// -gen-fuzz-seeds, rewrites them from freshly written tables.
func TestFuzzSeeds(t *testing.T) {
	if !*genFuzzSeeds {
		for _, name := range []string{"FuzzBlockIter", "FuzzFooter", "FuzzIndex", "FuzzReader"} {
			ents, err := os.ReadDir(filepath.Join("testdata", "fuzz", name))
			require.NoError(t, err)
			require.NotEmpty(t, ents, name)
		}
		return
	}
	rng := rand.New(rand.NewPCG(40, 40))
	seeds := map[string][][][]byte{}
	add := func(target string, args ...[]byte) { seeds[target] = append(seeds[target], args) }

	small := randomEntries(rng, 30, false)
	ts := []Tombstone{{Start: []byte("a"), End: []byte("c"), Seq: 9}}
	for i, opts := range []WriterOptions{
		{BlockSize: 128, RestartInterval: 4},
		{BlockSize: 256, Compression: SnappyCompression, FilterPolicy: filter.Policy{Type: filter.Bloom}},
		{BlockSize: 64, Compression: ZstdCompression, RestartInterval: 2, IndexRestartInterval: 2, FilterPolicy: filter.Policy{Type: filter.Ribbon}},
	} {
		var tomb []Tombstone
		if i > 0 {
			tomb = ts
		}
		data := buildTable(t, small, tomb, opts)
		add("FuzzReader", data)
		add("FuzzFooter", data)
		r, err := openBytes(data, ReaderOptions{})
		require.NoError(t, err)
		hs := r.BlocksInRange(nil, nil, nil)
		for _, h := range hs[:min(2, len(hs))] {
			ref, err := r.ReadBlock(h, nil)
			require.NoError(t, err)
			add("FuzzBlockIter", bytes.Clone(ref.Data()), []byte{0, 4, 4, 1, 5, 5, 2, 4, 3, 5, 4})
			ref.Release()
		}
		// The index block, decoded again from the file's bytes.
		ft, err := decodeFooter(data[len(data)-FooterLen:], "f", uint64(len(data)))
		require.NoError(t, err)
		payload, c, err := verifyBlock(data[ft.index.Offset:ft.index.End()], "f", ft.baseCtx, ft.index.Offset)
		require.NoError(t, err)
		if c != NoCompression {
			payload, err = decompressBlock(c, payload, nil, "f", ft.index.Offset)
			require.NoError(t, err)
		}
		add("FuzzIndex", payload)
		require.NoError(t, r.Close())
	}
	add("FuzzReader", buildTable(t, nil, nil, WriterOptions{}))
	add("FuzzBlockIter", buildBlock(small, 1), []byte{1, 5, 5, 5, 3, 2, 0})

	for target, list := range seeds {
		dir := filepath.Join("testdata", "fuzz", target)
		require.NoError(t, os.RemoveAll(dir))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for i, args := range list {
			var b bytes.Buffer
			b.WriteString("go test fuzz v1\n")
			for _, a := range args {
				fmt.Fprintf(&b, "[]byte(%q)\n", a)
			}
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), b.Bytes(), 0o644))
		}
	}
}
