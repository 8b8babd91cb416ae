package kv

import (
	"errors"
	"fmt"
)

// Close flushes the memtable to a table, stops background work, and
// releases every file. Commits in flight finish first; later calls fail
// with ErrClosed. Iterators and snapshots must be closed before.
//
// The flush leaves the write-ahead log holding nothing the tables lack, so
// that a cleanly closed database does not depend on its log: a log lost,
// emptied or damaged afterwards (which recovery could not tell from a torn
// write, and a log written without syncs proves nothing) loses nothing.
// When the flush fails (a full disk), Close goes on and the log keeps the
// writes for the next Open to replay.
func (d *DB) Close() error {
	var flushErr error
	if !d.closed.Load() && !d.readOnly.Load() {
		flushErr = d.Flush()
	}
	d.mu.Lock()
	if d.mu.closed {
		d.mu.Unlock()
		return ErrClosed
	}
	d.mu.closed = true
	d.closed.Store(true)
	d.mu.cond.Broadcast()
	d.mu.Unlock()

	// Let queued commits finish (they fail fast now), then stop background
	// work; a running compaction notices and aborts.
	d.commit.mu.Lock()
	for len(d.commit.queue) > 0 {
		d.commit.cond.Wait()
	}
	d.commit.mu.Unlock()
	close(d.bg.closing)
	d.bg.wg.Wait()

	var errs []error
	if flushErr != nil {
		errs = append(errs, fmt.Errorf("kv: close: flushing the memtable (its writes stay in the log): %w", flushErr))
	}
	d.mu.Lock()
	d.logW.Store(nil)
	if d.mu.log.w != nil {
		if err := d.mu.log.w.Close(); err != nil && d.mu.writeErr == nil {
			errs = append(errs, err)
		}
		d.mu.log.w = nil
	}
	d.rsMu.Lock()
	rs := d.readState
	d.readState = nil
	d.rsMu.Unlock()
	d.mu.Unlock()
	if rs != nil {
		rs.unref()
	}
	if err := d.tables.close(); err != nil {
		errs = append(errs, err)
	}
	if err := d.ioPool.Close(); err != nil {
		errs = append(errs, err)
	}
	d.mu.Lock()
	if err := d.mu.versions.Close(); err != nil {
		errs = append(errs, err)
	}
	d.mu.Unlock()
	if err := d.lock.Close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// deleteObsoleteFiles removes the tables no live version references. It
// may run on any goroutine, with or without d.mu held: it touches only the
// version set's obsolete list (safe for concurrent use), the table cache
// and the filesystem.
func (d *DB) deleteObsoleteFiles() {
	for _, f := range d.mu.versions.TakeObsolete() {
		d.tables.evict(f.FileNum)
		name := makeFilename(d.dirname, fileTypeTable, f.FileNum)
		if err := d.fs.Remove(name); err != nil {
			d.opts.Logger.Errorf("kv: removing obsolete table %s: %v", name, err)
		}
	}
}
