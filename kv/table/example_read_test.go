package table_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-db/strata/kv/cache"
	"github.com/strata-db/strata/kv/filter"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/prefetch"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/table"
	"github.com/strata-db/strata/kv/vfs"
)

// exampleReader writes 1,000 keys "k0000" ... "k0999" (values "v0".."v999"
// at seq 1, and "k0500" deleted at seq 2) and opens the table.
func exampleReader(ro table.ReaderOptions) *table.Reader {
	fs := vfs.NewMem()
	f, _ := fs.Create("000002.sst")
	w := table.NewWriter(f, "000002.sst", table.WriterOptions{BlockSize: 512, FilterPolicy: filter.Policy{Type: filter.Bloom}})
	for i := range 1000 {
		k := fmt.Appendf(nil, "k%04d", i)
		if i == 500 {
			w.Add(base.AppendKey(nil, k, 2, base.KindDelete), nil)
		}
		if err := w.Add(base.AppendKey(nil, k, 1, base.KindSet), fmt.Appendf(nil, "v%d", i)); err != nil {
			panic(err)
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	rf, _ := fs.Open("000002.sst")
	r, err := table.NewReader(rf, "000002.sst", ro)
	if err != nil {
		panic(err)
	}
	return r
}

// MultiGet resolves a sorted batch of keys; values land in one arena.
func ExampleReader_MultiGet() {
	c := cache.New(1 << 20)
	st := &stats.Counters{}
	r := exampleReader(table.ReaderOptions{Cache: c, CacheNS: c.NewNamespace(), FileNum: 2})
	defer r.Close()

	keys := [][]byte{[]byte("k0010"), []byte("k0011"), []byte("k0012"), []byte("k0500"), []byte("nope")}
	hashes := make([]uint64, len(keys))
	for i, k := range keys {
		hashes[i] = filter.Hash(k) // once per key, for every table of the batch
	}
	res := make([]table.GetResult, len(keys))
	arena, err := r.MultiGet(keys, hashes, base.SeqNumMax, res, nil, st)
	if err != nil {
		panic(err)
	}
	for i, g := range res {
		switch {
		case !g.Done:
			fmt.Printf("%s: not found\n", keys[i])
		case g.Kind == base.KindDelete:
			fmt.Printf("%s: deleted at %d\n", keys[i], g.Seq)
		default:
			fmt.Printf("%s: %s\n", keys[i], g.Value(arena))
		}
	}
	fmt.Println("block lookups:", st.Get(stats.BlockCacheHit)+st.Get(stats.BlockCacheMiss))
	// Output:
	// k0010: v10
	// k0011: v11
	// k0012: v12
	// k0500: deleted at 2
	// nope: not found
	// block lookups: 2
}

// PrepareScan loads the blocks of several ranges in few reads; iterating
// them then reads nothing.
func ExampleReader_PrepareScan() {
	pool := prefetch.NewPool(4) // one per database
	defer pool.Close()
	st := &stats.Counters{}
	r := exampleReader(table.ReaderOptions{Pool: pool, Stats: st})
	defer r.Close()

	ranges := []table.ScanRange{
		{Start: []byte("k0100"), End: []byte("k0103")},
		{Start: []byte("k0200"), End: []byte("k0202")},
		{Start: []byte("k0998"), End: nil},
	}
	p, err := r.PrepareScan(context.Background(), ranges, table.PrepareOptions{Async: true})
	if err != nil {
		panic(err)
	}
	reads := st.Get(stats.FileReadCount)
	it := p.NewIter(table.IterOptions{})
	for _, rg := range ranges {
		var row []string
		for kv := it.SeekGE(base.MakeSearchKey(nil, rg.Start, base.SeqNumMax)); kv != nil; kv = it.Next() {
			row = append(row, fmt.Sprintf("%s=%s", kv.UserKey(), kv.V))
		}
		fmt.Println(strings.Join(row, " "))
	}
	if err := it.Close(); err != nil {
		panic(err)
	}
	fmt.Println("reads while iterating:", st.Get(stats.FileReadCount)-reads)
	if err := p.Close(); err != nil {
		panic(err)
	}
	// Output:
	// k0100=v100 k0101=v101 k0102=v102
	// k0200=v200 k0201=v201
	// k0998=v998 k0999=v999
	// reads while iterating: 0
}
