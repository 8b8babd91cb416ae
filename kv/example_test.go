package kv_test

import (
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/strata-db/strata/kv"
)

// Example opens a database, writes keys one by one and in an atomic batch,
// and reads them back with Get, a bounded iterator and MultiGet.
func Example() {
	dir, err := os.MkdirTemp("", "kv-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	db, err := kv.Open(dir, nil) // nil: default options
	if err != nil {
		log.Fatal(err)
	}

	// A single write. kv.Sync would wait for the log to reach the disk.
	if err := db.Set([]byte("fruit/apple"), []byte("red"), kv.NoSync); err != nil {
		log.Fatal(err)
	}

	// A batch commits all its writes or none.
	b := db.NewBatch()
	for _, kvp := range [][2]string{
		{"fruit/banana", "yellow"},
		{"fruit/cherry", "dark red"},
		{"veg/leek", "green"},
	} {
		if err := b.Set([]byte(kvp[0]), []byte(kvp[1])); err != nil {
			log.Fatal(err)
		}
	}
	if err := b.Commit(kv.Sync); err != nil {
		log.Fatal(err)
	}
	if err := b.Close(); err != nil {
		log.Fatal(err)
	}

	v, err := db.Get([]byte("fruit/apple"), nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("get: %s\n", v)
	if _, err := db.Get([]byte("fruit/durian"), nil); errors.Is(err, kv.ErrNotFound) {
		fmt.Println("get: fruit/durian not found")
	}

	// Every key in [fruit/, fruit0): the upper bound is exclusive.
	it, err := db.NewIter(&kv.IterOptions{
		LowerBound: []byte("fruit/"),
		UpperBound: []byte("fruit0"),
	})
	if err != nil {
		log.Fatal(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Printf("iter: %s = %s\n", it.Key(), it.Value())
	}
	if err := it.Error(); err != nil {
		log.Fatal(err)
	}
	if err := it.Close(); err != nil {
		log.Fatal(err)
	}

	// One call for many keys; a missing key's value is nil.
	keys := [][]byte{[]byte("veg/leek"), []byte("fruit/kiwi"), []byte("fruit/cherry")}
	vals, err := db.MultiGet(keys, nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	for i, v := range vals {
		fmt.Printf("multiget: %s = %q (found: %t)\n", keys[i], v, v != nil)
	}

	if err := db.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// get: red
	// get: fruit/durian not found
	// iter: fruit/apple = red
	// iter: fruit/banana = yellow
	// iter: fruit/cherry = dark red
	// multiget: veg/leek = "green" (found: true)
	// multiget: fruit/kiwi = "" (found: false)
	// multiget: fruit/cherry = "dark red" (found: true)
}
