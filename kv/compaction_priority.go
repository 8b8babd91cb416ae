package kv

import (
	"fmt"
	"runtime"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/internal/manifest"
)

// CompactionPriority is the CPU and I/O priority of the OS threads that
// compactions run on (Options.CompactionPriority). A compaction reads,
// merges, compresses and writes on one goroutine; on a machine with few
// CPUs it takes one of them from the scans and lookups beside it. At a
// lower priority the kernel hands the CPU to the process's foreground
// threads first. Only Linux sets thread priorities; elsewhere every
// priority runs compactions as CompactionPriorityNormal does.
type CompactionPriority int8

const (
	// CompactionPriorityNormal (the default) runs compactions on the
	// goroutine that asks for them, at the priority of the process.
	CompactionPriorityNormal CompactionPriority = iota
	// CompactionPriorityLow runs each compaction on a thread of its own at
	// nice 19 and the lowest best-effort I/O priority (RocksDB's lowered
	// background threads). A nice-19 thread keeps its CPU share and is not
	// always preempted when a scan's read completes; scans beside it keep
	// less of their rate than beside an idle one.
	CompactionPriorityLow
	// CompactionPriorityIdle runs each compaction on a thread of its own in
	// the SCHED_IDLE scheduling class, at the lowest best-effort I/O
	// priority. The kernel gives such a thread the least CPU weight there
	// is (3, against 1,024 for nice 0) and preempts it whenever another
	// thread wakes up: a scan that waited for its reads gets the CPU at
	// once. It is not the default: while other threads keep the CPUs busy
	// (other processes too) the thread waits, holding one of the Go
	// scheduler's processors, and a garbage collection's stop-the-world
	// phase waits for it to reach a safe point; compactions fall behind
	// and writes stall on level 0.
	CompactionPriorityIdle
)

func (p CompactionPriority) String() string {
	switch p {
	case CompactionPriorityLow:
		return "low"
	case CompactionPriorityNormal:
		return "normal"
	case CompactionPriorityIdle:
		return "idle"
	}
	return fmt.Sprintf("CompactionPriority(%d)", int8(p))
}

// testHookCompactionThread, when set, runs on the thread of each
// compaction before it merges (tests read the thread's priority).
var testHookCompactionThread func()

type compactionResult struct {
	outputs []*manifest.FileMetadata
	nums    []uint64
	err     error
}

// compact merges the inputs of c into new tables at c.OutputLevel, at the
// priority Options.CompactionPriority asks for.
//
// At a lowered priority the merge runs on a goroutine locked to its OS
// thread that returns without unlocking it: the runtime then ends the
// thread, so its priority never passes to other goroutines. Threads the
// runtime starts while the goroutine is locked are started by a template
// thread, not cloned from this one, so they do not inherit it either.
// Everything the compaction does (reading its inputs with synchronous
// readahead, merging, compressing blocks, writing and syncing its outputs)
// runs on that goroutine; only the kernel's writeback of the outputs' dirty
// pages and the garbage collector run elsewhere, at normal priority.
func (d *DB) compact(c *manifest.Compaction, snapshots []base.SeqNum) ([]*manifest.FileMetadata, []uint64, error) {
	prio := d.opts.CompactionPriority
	if prio == CompactionPriorityNormal || !threadPrioritySupported {
		if testHookCompactionThread != nil {
			testHookCompactionThread()
		}
		return d.compactInputs(c, snapshots)
	}
	done := make(chan compactionResult, 1)
	go func() {
		runtime.LockOSThread()
		// No UnlockOSThread: see above.
		if err := lowerThreadPriority(prio); err != nil {
			// The compaction is still right at the normal priority.
			d.opts.Logger.Infof("kv: compaction priority %s: %v", prio, err)
		}
		if testHookCompactionThread != nil {
			testHookCompactionThread()
		}
		var r compactionResult
		r.outputs, r.nums, r.err = d.compactInputs(c, snapshots)
		done <- r
	}()
	r := <-done
	return r.outputs, r.nums, r.err
}
