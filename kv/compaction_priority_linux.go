package kv

import (
	"fmt"

	"golang.org/x/sys/unix"
)

const threadPrioritySupported = true

// The I/O priority encoding of ioprio_set(2) (linux/ioprio.h).
const (
	ioprioWhoProcess = 1
	ioprioClassShift = 13
	ioprioClassBE    = 2
	ioprioLowestBE   = ioprioClassBE<<ioprioClassShift | 7
)

// lowerThreadPriority lowers the CPU and I/O priority of the calling
// thread, which the caller has locked to its goroutine. Lowering needs no
// privilege. The I/O priority is the lowest of the best-effort class, not
// the idle class: a compaction's reads then still get the disk while scans
// keep it busy (the idle class gained the scans nothing measurable).
func lowerThreadPriority(p CompactionPriority) error {
	tid := unix.Gettid()
	switch p {
	case CompactionPriorityLow:
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, 19); err != nil {
			return fmt.Errorf("setpriority: %w", err)
		}
	case CompactionPriorityIdle:
		attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}
		if err := unix.SchedSetAttr(tid, &attr, 0); err != nil {
			return fmt.Errorf("sched_setattr SCHED_IDLE: %w", err)
		}
	default:
		return nil
	}
	// who 0 is the calling thread: I/O priorities are per thread.
	if _, _, errno := unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, 0, ioprioLowestBE); errno != 0 {
		return fmt.Errorf("ioprio_set: %w", errno)
	}
	return nil
}
