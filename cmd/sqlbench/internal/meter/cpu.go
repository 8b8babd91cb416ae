package meter

import (
	"time"

	"golang.org/x/sys/unix"
)

// ProcessCPU returns the CPU time the process has used, zero when the
// clock cannot be read.
func ProcessCPU() time.Duration {
	d, _ := CPUClock(unix.CLOCK_PROCESS_CPUTIME_ID)
	return d
}

// CPUClock reads one of the CPU-time clocks (the process's, the calling
// thread's); ok is false when it cannot.
func CPUClock(id int32) (d time.Duration, ok bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(id, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
