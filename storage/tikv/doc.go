// Package tikv is the storage contract (package storage) over a TiKV
// cluster, through client-go's transactional API: what lets several
// Strata processes serve the same databases.
//
// Reads are TiKV snapshots: at the transaction's start timestamp for the
// transaction and its snapshot, at a fresh timestamp from PD for the
// latest state. MultiGet is one BatchGet (client-go splits it by region
// and sends the parts concurrently); an iterator is a Scan whose batch
// size comes from the read's readahead; a MultiScan fetches the first
// batch of each of its ranges concurrently.
//
// A transaction's writes stay in the process until Commit (overlay.go):
// the contract's positions, statement views and rollbacks need more than
// client-go's membuffer offers. Commit puts the final state of every key
// into a client-go transaction and commits it by two-phase commit; a range
// deletion becomes a deletion of each key the latest state holds in the
// range, and a guarded range is compared with the snapshot first. Key locks
// (storage.Locker) are TiKV's pessimistic locks, taken by a client-go
// transaction begun at the first lock.
//
// Size estimates (storage.SizeEstimator, sizes.go) are PD's approximate
// region sizes and key counts, read from PD's HTTP API, prorated where a
// range covers a region in part and kept 30 seconds per range; where PD
// gives none (the mock, a range inside one region) they are
// storage.ErrNoEstimate.
//
// Mock is client-go's in-process cluster (mocktikv), for tests and trials:
// engines opened on one Mock share its data as processes sharing a cluster
// do. docs/scale-out.md says what is supported, and how each access path
// maps.
package tikv
