package kv

import "context"

// Reader is what the SQL layer reads through: the database, or an indexed
// batch over it. ReadOptions.Snapshot picks the state read.
type Reader interface {
	Get(key []byte, ro *ReadOptions) ([]byte, error)
	NewIter(o *IterOptions) (*Iterator, error)
	MultiGet(keys [][]byte, ro *ReadOptions, dst [][]byte) ([][]byte, error)
	NewMultiScan(ctx context.Context, ranges []ScanRange, o *IterOptions) (*MultiScan, error)
}

var (
	_ Reader = (*DB)(nil)
	_ Reader = (*Batch)(nil)
)
