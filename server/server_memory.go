package server

import (
	"errors"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/dolthub/vitess/go/mysql"
)

// The Go runtime gives the memory a large statement freed back to the
// system only gradually, over minutes. A statement stopped for its size
// (past strata_mem_quota_query, 3170) or killed (1317) has usually just
// dropped the most memory any statement holds, and a server that keeps
// gigabytes resident after it looks, to the machine and its operator, as
// if it still held them. So after such a statement the connection that
// ran it returns the free heap at once (debug.FreeOSMemory: a collection
// and a scavenge), at most once per releaseInterval for the whole server.

// releaseInterval bounds how often statements' failures force the
// collection.
const releaseInterval = time.Second

// lastRelease is when memory was last returned, in Unix nanoseconds.
var lastRelease atomic.Int64

// erCapacityExceeded is MySQL's ER_CAPACITY_EXCEEDED, the error of a
// statement past its memory quota; vitess does not name it.
const erCapacityExceeded = 3170

// releaseMemory returns the free heap to the system when err says that
// the statement was stopped for its size or killed.
func releaseMemory(err error) {
	if err == nil {
		return
	}
	var se *mysql.SQLError
	if !errors.As(err, &se) || (se.Num != erCapacityExceeded && se.Num != mysql.ERQueryInterrupted) {
		return
	}
	now := time.Now().UnixNano()
	last := lastRelease.Load()
	if now-last < int64(releaseInterval) || !lastRelease.CompareAndSwap(last, now) {
		return
	}
	debug.FreeOSMemory()
}
