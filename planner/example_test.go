package planner_test

import (
	"fmt"

	"github.com/strata-db/strata/planner"
)

// An IN list of primary keys, a long BETWEEN and two short ones on a
// secondary index that does not cover the query.
func Example() {
	pk := planner.Index{Primary: true, Unique: true, Covering: true}
	var in []planner.KeyRange
	for _, k := range []string{"a", "b", "c"} {
		in = append(in, planner.KeyRange{Start: []byte(k), End: []byte(k + "\x00"), Point: true})
	}
	fmt.Println(planner.Choose(in, pk, planner.Hints{}, planner.Options{}))

	long := []planner.KeyRange{{Start: []byte("a"), End: []byte("m"), EstBytes: 8 << 20}}
	fmt.Println(planner.Choose(long, pk, planner.Hints{}, planner.Options{}))

	short := []planner.KeyRange{
		{Start: []byte("a"), End: []byte("b"), EstBytes: 4096},
		{Start: []byte("c"), End: []byte("d"), EstBytes: 4096},
	}
	fmt.Println(planner.Choose(short, planner.Index{}, planner.Hints{}, planner.Options{}))
	fmt.Println(planner.Choose(short, planner.Index{}, planner.Hints{}, planner.Options{Mode: planner.Naive}))
	// Output:
	// MultiGet(keys=3, batch=32)
	// Range(readahead=2MiB, async, no cache fill)
	// MultiScan(ranges=2, async) then MultiGet(batch=32) by primary key
	// Scans(ranges=2, readahead=auto, iterator per range) then Get per row by primary key
}
