package kv

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/memtable"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/wal"
)

// The commit pipeline.
//
// Committers queue up; the one at the head of the queue becomes the leader,
// takes the whole queue (up to maxGroupBytes) as a group, and commits it
// alone: it makes room in the memtable (rotating it, or stalling while
// flushes and compactions catch up), gives every batch its sequence
// numbers, appends the batches to the write-ahead log with one write and at
// most one sync (group commit: concurrent synced commits share a sync),
// applies them to the memtable, and publishes the new visible sequence
// number. The others sleep until the leader marks their batches done.
//
// Two invariants follow from there being one leader at a time:
//   - sequence numbers are assigned, logged and applied in one order, so
//     the WAL replays the same history readers saw;
//   - a batch's writes become visible all at once, when the visible
//     sequence number passes its last entry, and only after they are in the
//     log (and synced, when asked).
type commitPipeline struct {
	mu    sync.Mutex
	cond  sync.Cond
	queue []*Batch
	// queued is len(queue), for the leader's choice of who writes its log
	// bytes (logUnsynced) without taking mu. Written under mu.
	queued atomic.Int32
	group  []*Batch // scratch for the leader; REQUIRES: being the leader
	live   []*Batch // scratch for writeGroup; REQUIRES: being the leader
	// lastSeq is the last sequence number assigned. REQUIRES: being the
	// leader (or Open, before any commit).
	lastSeq base.SeqNum
	// lastUnsynced is when the last group that did not sync was logged,
	// on the monotonic clock (commitClock), for logUnsynced's choice.
	// REQUIRES: being the leader.
	lastUnsynced time.Duration
	// leftAt is when a leader left buffered log bytes to the next leader,
	// zero when none are left so (see logUnsynced). REQUIRES: being the
	// leader.
	leftAt time.Duration
	// groups counts the groups committed, for tests. Guarded by mu.
	groups uint64
}

// maxGroupBytes bounds one commit group, so that a burst of large batches
// does not hold every committer behind one huge write.
const maxGroupBytes = 4 << 20

// maxCheckedGroupEntries bounds the entries of a commit group that a batch
// with a conflict check may join, and that batch's own entries and guarded
// ranges (each bound apart, so a group holds at most twice as many): its
// check compares each key it writes and each range it guards with every
// entry of the batches before it in the group (see checkGroup), which
// stays cheap only while both are few. Autocommit
// transactions, a few entries each, are what gains from sharing a group.
const maxCheckedGroupEntries = 64

// maxUnflushedLog bounds the log bytes buffered for the flusher; past it the
// commit leader writes them itself.
const maxUnflushedLog = 1 << 20

// flushHandoffGap is how soon after the previous group a group that does
// not sync must come, when no other commit waits, for the leader to leave
// its log bytes to the log flusher (see logUnsynced): soon enough that
// several more commits come while the flusher wakes up, as from a loop of
// writes in one goroutine. One client's commits over the wire, one per
// round trip, come further apart.
const flushHandoffGap = 10 * time.Microsecond

// maxLeftDelay bounds how long leaders may leave log bytes to the next
// leader (see logUnsynced): under a steady queue of committers every
// leader finds another waiting, and without it the bytes would wait for
// maxUnflushedLog.
const maxLeftDelay = 100 * time.Microsecond

// commitEpoch is the origin of commitClock.
var commitEpoch = time.Now()

// commitClock reads the monotonic clock.
func commitClock() time.Duration { return time.Since(commitEpoch) }

// Apply commits b atomically: after Apply returns nil every write of b is
// visible to new reads and, with wo.Sync, durable. A batch can be committed
// once (Reset makes it reusable).
func (d *DB) Apply(b *Batch, wo *WriteOptions) error {
	if err := b.usable(); err != nil {
		return err
	}
	if b.db != d {
		return errors.New("kv: batch belongs to another database")
	}
	if wo == nil {
		wo = NoSync
	}
	if b.count == 0 && b.precondition == nil {
		b.committed = true
		return nil
	}
	b.sync = wo.Sync && !d.opts.DisableWAL
	b.done, b.commitErr = false, nil
	return d.enqueueCommit(b)
}

// batchPool recycles the batches of single writes (Set, Delete,
// DeleteRange), which do not escape the call.
var batchPool = sync.Pool{New: func() any { return &Batch{data: make([]byte, batchHeaderLen, 512)} }}

func (d *DB) applySingle(fill func(b *Batch) error, wo *WriteOptions) error {
	b := batchPool.Get().(*Batch)
	b.db = d
	err := fill(b)
	if err == nil {
		err = d.Apply(b, wo)
	}
	b.Reset()
	b.db = nil
	if cap(b.data) <= 64<<10 {
		batchPool.Put(b)
	}
	return err
}

// Set writes value under key.
func (d *DB) Set(key, value []byte, wo *WriteOptions) error {
	return d.applySingle(func(b *Batch) error { return b.Set(key, value) }, wo)
}

// Delete deletes key.
func (d *DB) Delete(key []byte, wo *WriteOptions) error {
	return d.applySingle(func(b *Batch) error { return b.Delete(key) }, wo)
}

// DeleteRange deletes every key in [start, end).
func (d *DB) DeleteRange(start, end []byte, wo *WriteOptions) error {
	return d.applySingle(func(b *Batch) error { return b.DeleteRange(start, end) }, wo)
}

func (d *DB) enqueueCommit(b *Batch) error {
	c := &d.commit
	c.mu.Lock()
	c.queue = append(c.queue, b)
	c.queued.Store(int32(len(c.queue)))
	for !b.done && c.queue[0] != b {
		c.cond.Wait()
	}
	if b.done {
		err := b.commitErr
		c.mu.Unlock()
		return err
	}
	// b leads: take the group.
	group := c.group[:0]
	size, entries := 0, 0
	for _, q := range c.queue {
		if len(group) > 0 && size+len(q.data) > maxGroupBytes {
			break
		}
		if len(group) > 0 && q.precondition != nil &&
			(!q.groupable || entries > maxCheckedGroupEntries || int(q.count)+len(q.guards) > maxCheckedGroupEntries) {
			// Any other batch with a precondition leads its own group, so
			// that its check sees every batch before it committed; a
			// conflict check that also checks the group's earlier batches
			// joins while they are few enough to compare with.
			break
		}
		group = append(group, q)
		size += len(q.data)
		entries += int(q.count)
	}
	c.groups++
	c.mu.Unlock()

	err := d.commitGroup(group)

	c.mu.Lock()
	for _, q := range group {
		if q.commitErr == nil {
			q.commitErr = err
		}
		q.committed = q.commitErr == nil
		q.done = true
	}
	n := copy(c.queue, c.queue[len(group):])
	clear(c.queue[n:])
	c.queue = c.queue[:n]
	c.queued.Store(int32(n))
	clear(group)
	c.group = group[:0]
	c.cond.Broadcast()
	err = b.commitErr
	c.mu.Unlock()
	return err
}

// commitGroup writes and applies a group. Batches whose precondition fails
// get that error and are skipped, in the group's order: a batch's
// precondition sees the batches before it that passed theirs; an error
// returned applies to every other batch of the group. REQUIRES: being the
// leader.
func (d *DB) commitGroup(group []*Batch) error {
	for _, b := range group {
		if b.resume {
			b.commitErr = d.resume()
		}
	}
	if err := d.writeGroup(group); err != nil {
		return err
	}
	for _, b := range group {
		if b.rotate {
			d.mu.Lock()
			if !d.mu.mem.Empty() {
				if err := d.rotateMemtableLocked(0); err != nil {
					d.mu.Unlock()
					return err
				}
			}
			if n := len(d.mu.imms); n > 0 {
				b.rotated = d.mu.imms[n-1]
			}
			d.mu.Unlock()
			// One rotation serves every flush request of the group.
			for _, q := range group {
				if q.rotate {
					q.rotated = b.rotated
				}
			}
			break
		}
	}
	return nil
}

// writeGroup logs and applies the batches of a group. REQUIRES: being the
// leader.
func (d *DB) writeGroup(group []*Batch) error {
	memSize, sync := 0, false
	// live collects the batches to be committed, in order: a
	// precondition is given those before its batch.
	live := d.commit.live[:0]
	defer func() {
		clear(live)
		d.commit.live = live[:0]
	}()
	for _, b := range group {
		if b.resume {
			continue
		}
		if b.precondition != nil {
			if err := b.precondition(live); err != nil {
				b.commitErr = err
				continue
			}
		}
		if b.count == 0 {
			continue
		}
		live = append(live, b)
		memSize += b.memSize
		sync = sync || b.sync
	}
	if len(live) == 0 {
		// Nothing to log, but an earlier leader may have left its bytes
		// to this one.
		return d.settleLog(len(group))
	}

	// The leader alone changes the mutable memtable and the log (under
	// d.mu, when rotating), so it may read them without d.mu; the fast path
	// takes no lock when the memtable has room and nothing asks for a stall.
	var err error
	mem, log := d.mu.mem, d.mu.log.w
	if d.readOnly.Load() || d.closed.Load() || int(d.l0Files.Load()) >= d.opts.L0SlowdownWritesTrigger ||
		!mem.Reserve(memSize) {
		// Bytes an earlier leader left to this one (see logUnsynced) must
		// not wait through a stall: they are acknowledged commits.
		if log != nil && log.Buffered() > 0 {
			if err := log.Flush(); err != nil {
				return d.walFailed(err)
			}
		}
		d.mu.Lock()
		err = d.makeRoomForWriteLocked(memSize)
		mem, log = d.mu.mem, d.mu.log.w
		d.mu.Unlock()
		if err != nil {
			return err
		}
	}

	if log == nil && !d.opts.DisableWAL {
		// Every path that leaves the database without a log also leaves a
		// write error; a commit that found none must still not be
		// acknowledged without its record.
		return d.walFailed(errors.New("kv: no write-ahead log to commit to"))
	}

	seq := d.commit.lastSeq + 1
	var userBytes int64
	for _, b := range group {
		if b.commitErr != nil || b.count == 0 {
			continue
		}
		b.setSeq(seq)
		seq += base.SeqNum(b.count)
		userBytes += b.userBytes
	}
	last := seq - 1

	if log != nil {
		var walBytes int64
		for _, b := range group {
			if b.commitErr != nil || b.count == 0 {
				continue
			}
			if _, err := log.WriteRecord(b.data); err != nil {
				return d.walFailed(err)
			}
			walBytes += int64(len(b.data))
		}
		if sync {
			if err := log.Sync(); err != nil {
				return d.walFailed(err)
			}
			d.stats.Add(stats.WALSyncs, 1)
		} else if err := d.settleLog(len(group)); err != nil {
			return err
		}
		d.stats.Add(stats.WALBytes, walBytes)
	}

	for _, b := range group {
		if b.commitErr != nil || b.count == 0 {
			continue
		}
		if err := applyToMemtable(mem, b); err != nil {
			// The reservation guarantees room; a failure here is a bug that
			// would lose acknowledged writes if we went on.
			return d.walFailed(fmt.Errorf("kv: applying batch to memtable: %w", err))
		}
	}
	d.commit.lastSeq = last
	d.visibleSeq.Store(uint64(last))
	d.stats.Add(stats.Commits, int64(len(live)))
	d.stats.Add(stats.BytesWritten, userBytes)
	return nil
}

// settleLog writes the current log's buffered bytes now if logUnsynced says
// the leader of a group of n batches must, and otherwise leaves them.
// REQUIRES: being the leader.
func (d *DB) settleLog(n int) error {
	log := d.logW.Load()
	if log == nil || log.Buffered() == 0 || !d.logUnsynced(log, n) {
		return nil
	}
	if err := log.Flush(); err != nil {
		return d.walFailed(err)
	}
	return nil
}

// logUnsynced decides who hands the buffered log bytes of a group of n
// batches that did not ask for a sync to the operating system: it reports
// true when the leader must write them itself now, and otherwise leaves
// them to the next leader or signals the log flusher.
//
// A commit that comes alone (a server's, one per client round trip) gains
// nothing from a hand-off: its record is written alone either way, and
// waking the flusher (a thread woken, switched to and put back to sleep,
// on both sides of the hand-over) costs more CPU than the write system
// call it saves the committer. So the leader writes, as RocksDB writes
// every group, unless
//   - another committer already waits behind the group: it leads next and
//     writes these bytes with its own, or leaves them again while the
//     first were left less than maxLeftDelay ago; nobody is woken but the
//     next leader, who is woken anyway. A leader that stalls first writes
//     them (writeGroup), so that they do not wait through the stall;
//   - the group comes within flushHandoffGap of the previous one, as a loop
//     of writes in one goroutine does: then the flusher is signalled, and
//     the records of the commits made while it wakes go out in one write.
//
// The buffer past maxUnflushedLog is written by the leader in any case, so
// that a flusher that falls behind holds committers back instead of
// growing it. A leader that writes does so before its group is
// acknowledged; bytes left to the flusher reach the operating system
// within its wake-up. REQUIRES: being the leader.
func (d *DB) logUnsynced(log *wal.Writer, n int) (writeNow bool) {
	now := commitClock()
	streaming := now-d.commit.lastUnsynced < flushHandoffGap
	d.commit.lastUnsynced = now
	left := d.commit.leftAt
	d.commit.leftAt = 0
	if log.Buffered() > maxUnflushedLog {
		return true
	}
	if int(d.commit.queued.Load()) > n && (left == 0 || now-left < maxLeftDelay) {
		if left == 0 {
			left = now
		}
		d.commit.leftAt = left
		return false
	}
	if !streaming {
		return true
	}
	select {
	case d.bg.walFlushCh <- struct{}{}:
	default:
	}
	return false
}

// applyToMemtable inserts a batch whose header carries its sequence number.
// An indexed batch (a transaction's) is applied in key order, walking its
// index, through one memtable.Inserter: each entry is searched for from
// where the last one went, which for the clustered keys of a bulk insert
// (a table's rows, each index's entries) is a few comparisons instead of a
// search from the head. Each entry keeps the sequence number of its place
// in the batch, so the order of application changes nothing a reader can
// see: nothing is visible until the commit publishes the batch's last
// sequence number. Other batches are applied in their own order, through
// the inserter too, which costs one comparison per entry out of order.
func applyToMemtable(mem *memTable, b *Batch) error {
	var ins memtable.Inserter
	ins.Init(mem.Memtable)
	seq := b.seq
	if x := b.index; x != nil {
		for _, r := range b.rangeDels {
			start, end := b.rangeDel(r)
			if err := mem.AddRangeDelete(start, end, seq+base.SeqNum(r.ord)); err != nil {
				return err
			}
		}
		for n := x.head.next[0]; n != nil; n = n.next[0] {
			kind, key, value, _, err := decodeEntry(b.data[n.off:])
			if err != nil {
				return err
			}
			if err := ins.Add(key, seq+base.SeqNum(n.ord), kind, value); err != nil {
				return err
			}
		}
		return nil
	}
	return forEachEntry(b.data[batchHeaderLen:], func(kind base.Kind, key, value []byte) error {
		var err error
		if kind == base.KindRangeDelete {
			err = mem.AddRangeDelete(key, value, seq)
		} else {
			err = ins.Add(key, seq, kind, value)
		}
		seq++
		return err
	})
}

// walFailed puts the database into the read-only error state after a
// write-ahead-log failure and returns the error for the failed commit. A
// failed write or sync is never retried: the kernel may have dropped the
// dirty pages, and a later successful fsync would pretend they were
// written.
func (d *DB) walFailed(err error) error {
	d.mu.Lock()
	d.walFailedLocked(err)
	d.mu.Unlock()
	return fmt.Errorf("kv: commit failed: %w", err)
}

// walFailedLocked is walFailed's state change. REQUIRES: d.mu held.
func (d *DB) walFailedLocked(err error) {
	if d.mu.writeErr == nil {
		d.mu.writeErr = fmt.Errorf("write-ahead log: %w", err)
		d.readOnly.Store(true)
		d.opts.Logger.Errorf("kv: write-ahead log failed, database is now read-only: %v", err)
	}
	d.mu.cond.Broadcast()
}

// writeErrLocked returns the error writes fail with, if any. REQUIRES: d.mu
// held.
func (d *DB) writeErrLocked() error {
	switch {
	case d.mu.closed:
		return ErrClosed
	case d.mu.writeErr != nil:
		return fmt.Errorf("%w: %w", ErrReadOnly, d.mu.writeErr)
	case d.mu.bgErr != nil:
		return fmt.Errorf("%w: %w", ErrReadOnly, d.mu.bgErr)
	}
	return nil
}

// makeRoomForWriteLocked makes sure the mutable memtable has n bytes
// reserved for the leader's group, rotating it when full and stalling while
// too many memtables wait for a flush or level 0 has too many files.
// REQUIRES: d.mu held, being the commit leader.
func (d *DB) makeRoomForWriteLocked(n int) error {
	delayed := false
	var stallStart time.Time
	defer func() {
		if !stallStart.IsZero() {
			d.stats.Add(stats.StallMicros, time.Since(stallStart).Microseconds())
		}
	}()
	stall := func() {
		if stallStart.IsZero() {
			stallStart = time.Now()
			d.stats.Add(stats.Stalls, 1)
		}
		d.maybeScheduleFlushLocked()
		d.maybeScheduleCompactionLocked()
		d.mu.cond.Wait()
	}
	for {
		if err := d.writeErrLocked(); err != nil {
			return err
		}
		l0 := d.mu.versions.Current().NumFiles(0)
		if !delayed && l0 >= d.opts.L0SlowdownWritesTrigger && l0 < d.opts.L0StopWritesTrigger {
			// Slow down: one millisecond per group lets compactions catch up
			// before writes have to stop.
			delayed = true
			d.stats.Add(stats.Stalls, 1)
			d.mu.Unlock()
			time.Sleep(time.Millisecond)
			d.stats.Add(stats.StallMicros, 1000)
			d.mu.Lock()
			continue
		}
		if d.mu.mem.Reserve(n) {
			return nil
		}
		if len(d.mu.imms)+1 >= d.opts.MemtableStopWritesThreshold {
			stall()
			continue
		}
		if l0 >= d.opts.L0StopWritesTrigger {
			stall()
			continue
		}
		if err := d.rotateMemtableLocked(n); err != nil {
			return err
		}
	}
}

// walFlushLoop writes buffered log records to the operating system after
// commits that did not ask for a sync, so that a commit does not pay for a
// write system call: the records of commits made meanwhile go out together.
// A commit without Sync can therefore be lost by a crash of the process (not
// only of the machine) if it comes within the moment before the flusher
// runs; commits with Sync never are.
func (d *DB) walFlushLoop() {
	defer d.bg.wg.Done()
	for {
		select {
		case <-d.bg.closing:
			return
		case <-d.bg.walFlushCh:
		}
		d.flushLog(d.logW.Load())
	}
}

// flushLog writes log's buffered records to the operating system. log is
// the log that was current when the flusher loaded it, without d.mu; by the
// time it is written it may have been retired, and its failure then is not
// the database's: a rotation closed it (and Close, waiting for this flush,
// reported a failure of it), or Resume replaced it after its failure and
// flushed its memtables to tables. Only a failure of the current log puts
// the database into the error state; a stale log's sticky error, recorded
// again after a Resume, would make the resumed database read-only with an
// error it has already recovered from.
func (d *DB) flushLog(log *wal.Writer) {
	if log == nil {
		return
	}
	err := log.Flush()
	if err == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.log.w == log {
		d.walFailedLocked(err)
	}
}
