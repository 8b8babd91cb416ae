package wal_test

import (
	"fmt"
	"io"

	"github.com/strata-db/strata/kv/vfs"
	"github.com/strata-db/strata/kv/wal"
)

func Example() {
	fs := vfs.NewMem()
	f, err := fs.Create("000042.log")
	if err != nil {
		panic(err)
	}
	w := wal.NewWriterLogID(f, "000042.log", 42)
	for _, rec := range []string{"put a=1", "put b=2", "delete a"} {
		if _, err := w.WriteRecord([]byte(rec)); err != nil {
			panic(err)
		}
	}
	if err := w.Sync(); err != nil { // one Write, then fsync
		panic(err)
	}
	// A crash while the next record is half written.
	if _, err := w.WriteRecord([]byte("put c=3")); err != nil {
		panic(err)
	}
	if err := w.Flush(); err != nil {
		panic(err)
	}
	data, _ := vfs.ReadFile(fs, "000042.log")
	torn := data[:len(data)-3]

	r := wal.NewReaderLogID(&byteFile{torn}, int64(len(torn)), "000042.log", 42)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err) // corruption or I/O: stop, or SkipCorrupt to salvage
		}
		fmt.Printf("%d: %s\n", r.Offset(), rec)
	}
	off, reason, isTorn := r.TornTail()
	fmt.Println(off, isTorn, reason)
	// Output:
	// 0: put a=1
	// 22: put b=2
	// 44: delete a
	// 67 true chunk at offset 67: expected a 7-byte payload, found the end of the file after 4 bytes
}

type byteFile struct{ b []byte }

func (f *byteFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(f.b)) {
		return 0, io.EOF
	}
	n := copy(p, f.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
