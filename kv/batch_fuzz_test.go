package kv

import (
	"testing"

	"github.com/strata-db/strata/kv/internal/base"
)

// FuzzBatchDecode feeds arbitrary bytes to the decoder of WAL batch
// records: it must never panic, and a record it accepts must decode into
// exactly the count its header declares.
func FuzzBatchDecode(f *testing.F) {
	b := &Batch{data: make([]byte, batchHeaderLen)}
	b.Set([]byte("key"), []byte("value"))
	b.Delete([]byte("gone"))
	b.DeleteRange([]byte("a"), []byte("b"))
	b.setSeq(42)
	f.Add(b.data)
	f.Add([]byte{})
	f.Add(make([]byte, batchHeaderLen))
	f.Fuzz(func(t *testing.T, repr []byte) {
		seq, count, err := validateBatch(repr)
		if err != nil {
			return
		}
		var n uint32
		if err := forEachEntry(repr[batchHeaderLen:], func(kind base.Kind, key, value []byte) error {
			n++
			return nil
		}); err != nil {
			t.Fatalf("validated batch does not decode: %v", err)
		}
		if n != count || (count > 0 && seq == 0) {
			t.Fatalf("validated batch: count %d, decoded %d, seq %d", count, n, seq)
		}
	})
}
