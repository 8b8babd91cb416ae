package filter_test

import (
	"fmt"

	"github.com/strata-db/strata/kv/filter"
)

func Example() {
	keys := []string{"apple", "banana", "cherry"}

	// Build: hash every key once, serialize the filter into a block.
	b := filter.Policy{Type: filter.Ribbon, BitsPerKey: 10}.NewBuilder()
	for _, k := range keys {
		b.Add(filter.Hash([]byte(k)))
	}
	block := b.Finish(nil)

	// Query: decode the block (no copy) and ask about keys.
	r, err := filter.Decode(block)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, k := range keys {
		fmt.Printf("%s: %v\n", k, r.MayContain(filter.Hash([]byte(k))))
	}
	// Three keys are too few for Ribbon to pay: the builder chose Bloom.
	fmt.Println("type:", r.Type())
	// Output:
	// apple: true
	// banana: true
	// cherry: true
	// type: bloom
}

func ExampleReader_MayContainBatch() {
	b := filter.Policy{Type: filter.Bloom}.NewBuilder()
	for i := range 1000 {
		b.Add(filter.Hash(fmt.Appendf(nil, "user%04d", i)))
	}
	r, err := filter.Decode(b.Finish(nil))
	if err != nil {
		fmt.Println(err)
		return
	}

	hashes := []uint64{
		filter.Hash([]byte("user0007")),
		filter.Hash([]byte("user0999")),
	}
	found := make([]bool, len(hashes))
	r.MayContainBatch(hashes, found)
	fmt.Println(found)
	// Output: [true true]
}
