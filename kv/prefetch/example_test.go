package prefetch_test

import (
	"fmt"

	"github.com/strata-db/strata/kv/prefetch"
)

// Coalesce plans the reads of a MultiScan: blocks closer than the threshold
// share one read.
func ExampleCoalesce() {
	blocks := []prefetch.Extent{
		{Off: 0, Len: 4101},      // block 0
		{Off: 4101, Len: 4101},   // block 1, adjacent
		{Off: 20000, Len: 4101},  // block 5, after a gap of 11,798 bytes
		{Off: 100000, Len: 4101}, // far away
	}
	for _, r := range prefetch.Coalesce(blocks, prefetch.DefaultCoalesceThreshold, 1) {
		fmt.Printf("read [%d, %d): blocks %d to %d\n", r.Off, r.End(), r.First, r.First+r.Count-1)
	}
	// Output:
	// read [0, 24101): blocks 0 to 2
	// read [100000, 104101): blocks 3 to 3
}

// A clean forward scan of 4 KiB blocks: the windows automatic readahead
// takes at each read past the previous window.
func ExampleReadahead() {
	ra := prefetch.MakeReadahead(prefetch.DefaultInitialReadahead, prefetch.DefaultMaxReadahead)
	var covered int64
	for off := int64(0); off < 2<<20; off += 4096 {
		if w := ra.Observe(off, 4096, off+4096 <= covered); w > 0 {
			fmt.Printf("at %7d read %3d KiB ahead\n", off, w>>10)
			covered = off + 4096 + w
		}
	}
	// Output:
	// at    8192 read   8 KiB ahead
	// at   20480 read  16 KiB ahead
	// at   40960 read  32 KiB ahead
	// at   77824 read  64 KiB ahead
	// at  147456 read 128 KiB ahead
	// at  282624 read 256 KiB ahead
	// at  548864 read 256 KiB ahead
	// at  815104 read 256 KiB ahead
	// at 1081344 read 256 KiB ahead
	// at 1347584 read 256 KiB ahead
	// at 1613824 read 256 KiB ahead
	// at 1880064 read 256 KiB ahead
}
