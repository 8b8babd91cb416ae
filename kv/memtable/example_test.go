package memtable_test

import (
	"fmt"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/memtable"
)

func Example() {
	m := memtable.New(1 << 20)

	// The engine reserves room for a whole batch before applying it.
	batch := []struct {
		key, value string
		kind       base.Kind
	}{
		{"apple", "red", base.KindSet},
		{"banana", "yellow", base.KindSet},
		{"apple", "", base.KindDelete},
	}
	need := 0
	for _, e := range batch {
		need += memtable.EntrySize(len(e.key), len(e.value))
	}
	if !m.Reserve(need) {
		fmt.Println("memtable full: rotate")
		return
	}
	for i, e := range batch {
		if err := m.Add([]byte(e.key), base.SeqNum(10+i), e.kind, []byte(e.value)); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := m.AddRangeDelete([]byte("c"), []byte("d"), 13); err != nil {
		fmt.Println(err)
		return
	}

	// A read at snapshot 11 does not see the delete at 12.
	v, kind, _, ok := m.Get([]byte("apple"), 11)
	fmt.Println(string(v), kind, ok)
	_, kind, _, ok = m.Get([]byte("apple"), 12)
	fmt.Println(kind, ok)

	it := m.NewIter()
	for kv := it.First(); kv != nil; kv = it.Next() {
		fmt.Printf("%s = %q\n", base.FormatKey(kv.K), kv.V)
	}
	rd := m.NewRangeDelIter()
	for kv := rd.First(); kv != nil; kv = rd.Next() {
		fmt.Printf("range delete [%s, %s) at %d\n", kv.UserKey(), kv.V, kv.Seq())
	}
	// Output:
	// red SET true
	// DEL true
	// "apple"#12,DEL = ""
	// "apple"#10,SET = "red"
	// "banana"#11,SET = "yellow"
	// range delete [c, d) at 13
}
