//go:build unix

package main

import (
	"syscall"
	"time"
)

// kvProcessCPU returns the CPU time the process has used so far, user and
// system, over all its threads; 0 where the system does not say.
func kvProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
