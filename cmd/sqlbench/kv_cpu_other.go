//go:build !unix

package main

import "time"

// kvProcessCPU returns 0: the process's CPU time is read only on Unix.
func kvProcessCPU() time.Duration { return 0 }
