package kv

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// The fault policy.
//
// A failed write-ahead-log write or sync fails the commits of its group and
// puts the database into a read-only error state: the log is never written
// again and a failed fsync is never retried, because the kernel may have
// dropped the pages it could not write and a later fsync would report
// success for them. A failed flush or compaction stops background work and
// makes every later write fail with its error (DB.BackgroundError, and the
// background.errors counter). Reads keep working throughout.
//
// Resume leaves that state once the cause is gone: it moves the memtable
// aside, starts a new log, and flushes every memtable to tables, which makes
// every acknowledged commit durable without the failed log (its records are
// in the memtables, whether or not the log holds them). When the fault was a
// full disk (ENOSPC), the database calls Resume by itself every
// Options.ResumeInterval, so that it carries on once space is freed. Other
// faults (EIO) need an explicit Resume or a reopen. Reopening always
// recovers every acknowledged commit that reached a synced log or a table.

// Resume tries to leave the read-only error state (see the fault policy
// above). It returns nil when the database accepts writes again, or the
// error that keeps it read-only.
func (d *DB) Resume() error {
	b := &Batch{db: d, data: make([]byte, batchHeaderLen), resume: true}
	return d.enqueueCommit(b)
}

// resume runs in the commit pipeline, as the leader, so that no commit
// touches the memtable or the log meanwhile.
func (d *DB) resume() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed {
		return ErrClosed
	}
	if d.mu.writeErr == nil && d.mu.bgErr == nil {
		return nil
	}
	for d.mu.flushing || d.mu.compacting > 0 {
		d.mu.cond.Wait()
	}
	// The memtable that the failed log served is set aside for a flush, and
	// a new one starts for the next log. That log is created only after
	// every memtable reached a table: until then the failed log stays the
	// newest on disk, so a reopen after a failed Resume reads its torn
	// tail as the end of the database's history, not as corruption.
	if d.mu.log.w != nil {
		d.logW.Store(nil)
		// The log is retired whether it failed (its error is known) or is
		// healthy (Resume after a failed flush or compaction): every record
		// it holds is also in the memtables the flush below writes to
		// tables, so an error from Close loses nothing that the flush keeps.
		d.mu.log.w.Close()
		d.mu.log.w = nil
	}
	num := d.mu.mem.logNum
	if d.mu.log.num == num { // the memtable's log exists: start a new one
		num = d.mu.versions.NewFileNum()
		d.mu.imms = append(d.mu.imms, d.mu.mem)
		d.mu.mem = d.newMemTable(d.opts.MemtableSize, num)
		d.updateReadStateLocked()
	}

	saved := d.mu.bgErr
	d.mu.bgErr = nil
	d.flushPendingLocked()
	if d.mu.bgErr != nil || len(d.mu.imms) > 0 {
		if d.mu.bgErr == nil {
			d.mu.bgErr = saved
		}
		return fmt.Errorf("%w: resume: %w", ErrReadOnly, d.mu.bgErr)
	}
	if !d.opts.DisableWAL {
		if err := d.createLogLocked(num); err != nil {
			// Without a log no commit may go on: the failure becomes the
			// write error (the flush and compaction errors were cleared
			// above), and the next Resume creates the log again. Left
			// unrecorded, a Resume that began from a failed flush or
			// compaction alone would leave no error at all, and commits
			// would be acknowledged from the memtable with nothing logged.
			if d.mu.writeErr == nil {
				d.mu.writeErr = err
			}
			d.mu.cond.Broadcast()
			return fmt.Errorf("%w: resume: %w", ErrReadOnly, err)
		}
	}
	d.mu.writeErr = nil
	d.readOnly.Store(false)
	d.opts.Logger.Infof("kv: resumed after the fault; every memtable flushed, writes accepted again")
	d.mu.cond.Broadcast()
	d.maybeScheduleCompactionLocked()
	return nil
}

// resumeLoop retries Resume after a disk-full fault.
func (d *DB) resumeLoop() {
	defer d.bg.wg.Done()
	t := time.NewTicker(d.opts.ResumeInterval)
	defer t.Stop()
	for {
		select {
		case <-d.bg.closing:
			return
		case <-t.C:
		}
		d.mu.Lock()
		err := d.mu.writeErr
		if err == nil {
			err = d.mu.bgErr
		}
		d.mu.Unlock()
		if err != nil && errors.Is(err, syscall.ENOSPC) {
			d.Resume()
		}
	}
}
