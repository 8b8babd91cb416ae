package kv

import "context"

// Reader is what the database and an indexed batch over it both answer.
// ReadOptions.Snapshot picks the state read. (The SQL layer reads through
// package storage's contract instead; Engine implements it.)
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
