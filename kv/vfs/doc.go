// Package vfs is the engine's only door to files. Every file the engine
// reads or writes goes through an [FS], so that tests can run the engine on
// memory, simulate a crash that loses unsynced bytes ([MemFS.CrashClone]),
// and inject faults, and so that direct I/O and kernel hints (fadvise,
// readahead) live in one place.
//
// Two implementations: [Default] is the operating system's filesystem on
// golang.org/x/sys/unix (pread, fdatasync, flock, fadvise, O_DIRECT), and
// [NewMem] is an in-memory filesystem that remembers what was synced.
//
// # Concurrency
//
// An FS is safe for concurrent use. A File is safe for concurrent ReadAt;
// Write and Sync must come from one goroutine at a time (the owner of a file
// being written), as with *os.File.
package vfs
