// Package uring issues positional file reads through a Linux io_uring, so
// that the goroutine that needs a read can start it and go on working
// until it needs the bytes.
//
// A background read on a goroutine of its own costs a hand-off: the
// reading goroutine must be woken on another thread, and on a machine with
// few CPUs that thread competes with the one that submitted the read. On
// the 2-vCPU VM the benchmarks run on, a scan that reads ahead this way
// ran no faster than one that waits for every read, while the same scan
// submitting its reads to a ring ran 1.3 to 1.6 times faster (see
// docs/benchmarks.md). A ring moves no work to another goroutine: the
// submitter makes one system call, the device fills the buffer, and the
// submitter collects the completion when it wants the bytes.
//
// A Ring is owned by one goroutine at a time; it is not safe for
// concurrent use. On systems without io_uring (or where it is disabled)
// New returns an error wrapping errors.ErrUnsupported and callers read
// another way.
package uring
