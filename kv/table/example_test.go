package table_test

import (
	"fmt"

	"github.com/strata-db/strata/kv/cache"
	"github.com/strata-db/strata/kv/filter"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/table"
	"github.com/strata-db/strata/kv/vfs"
)

func Example() {
	fs := vfs.NewMem()

	// Write a table: internal keys in increasing order.
	f, _ := fs.Create("000001.sst")
	w := table.NewWriter(f, "000001.sst", table.WriterOptions{
		Compression:  table.SnappyCompression,
		FilterPolicy: filter.Policy{Type: filter.Bloom},
	})
	for _, kv := range []struct {
		key   string
		seq   base.SeqNum
		kind  base.Kind
		value string
	}{
		{"apple", 7, base.KindSet, "red"},
		{"apple", 3, base.KindSet, "green"},
		{"banana", 5, base.KindDelete, ""},
		{"cherry", 2, base.KindSet, "dark"},
	} {
		if err := w.Add(base.AppendKey(nil, []byte(kv.key), kv.seq, kv.kind), []byte(kv.value)); err != nil {
			panic(err)
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}

	// Read it back through a block cache.
	rf, _ := fs.Open("000001.sst")
	c := cache.New(1 << 20)
	r, err := table.NewReader(rf, "000001.sst", table.ReaderOptions{Cache: c, CacheNS: c.NewNamespace(), FileNum: 1})
	if err != nil {
		panic(err)
	}
	defer r.Close()

	it := r.NewIter(table.IterOptions{})
	for kv := it.First(); kv != nil; kv = it.Next() {
		fmt.Printf("%s#%d,%s = %q\n", kv.UserKey(), kv.Seq(), kv.Kind(), kv.V)
	}
	if err := it.Close(); err != nil {
		panic(err)
	}

	v, _, _, found, _ := r.Get([]byte("apple"), 5, nil, nil)
	fmt.Printf("apple at seq 5: %q %v\n", v, found)
	_, kind, _, found, _ := r.Get([]byte("banana"), 9, nil, nil)
	fmt.Printf("banana at seq 9: %v %v\n", kind, found)
	fmt.Println("entries:", r.Properties().NumEntries)
	// Output:
	// apple#7,SET = "red"
	// apple#3,SET = "green"
	// banana#5,DEL = ""
	// cherry#2,SET = "dark"
	// apple at seq 5: "green" true
	// banana at seq 9: DEL true
	// entries: 4
}
