package kv

import (
	"encoding/binary"
	"runtime"
	"sync/atomic"
	"testing"
)

// BenchmarkCommitChecked commits autocommit transactions from eight
// goroutines at once, as a server's eight clients' single-row INSERTs: each
// a snapshot, an indexed batch of a row (an ascending key, a 200-byte
// value) and an index entry (a scattered key), committed with
// CommitIfNoConflict without a sync, into a log on disk. It reports the
// process's CPU time per commit (cpu-ns/op), which on a shared machine
// says more than the wall time, and the commits per group.
//
//	go test ./kv -run '^$' -bench CommitChecked -benchtime 100000x
func BenchmarkCommitChecked(b *testing.B) {
	d := benchDB(b)
	value := make([]byte, 200)
	par := (8 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)
	var next atomic.Uint64
	b.ReportAllocs()
	b.SetParallelism(par)
	groups0, cpu0 := groups(d), processCPU()
	b.RunParallel(func(pb *testing.PB) {
		var row [16]byte
		var idx [17]byte // 'i', the scattered value, the row id
		row[0], idx[0] = 'r', 'i'
		batch := d.NewIndexedBatch()
		defer batch.Close()
		for pb.Next() {
			i := next.Add(1)
			binary.BigEndian.PutUint64(row[1:], i)
			binary.BigEndian.PutUint64(idx[1:], i*7919%100000)
			binary.BigEndian.PutUint64(idx[9:], i)
			batch.Reset()
			snap := d.NewSnapshot()
			err := batch.Set(row[:9], value)
			if err == nil {
				err = batch.Set(idx[:], nil)
			}
			if err == nil {
				err = batch.CommitIfNoConflict(snap, NoSync)
			}
			snap.Close()
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	if b.N > 0 {
		b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(b.N)/float64(max(groups(d)-groups0, 1)), "commits/group")
	}
}
