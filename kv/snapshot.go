package kv

import (
	"github.com/strata-db/strata/kv/internal/base"
)

// Snapshot is a consistent, read-only view of the database: reads through
// it see exactly the commits made before it was taken. Compactions keep the
// versions a live snapshot needs, so close snapshots when done.
//
// A Snapshot is safe for concurrent use.
type Snapshot struct {
	db  *DB
	seq base.SeqNum
	// Guarded by DB.mu.
	prev, next *Snapshot
	closed     bool
}

// snapshotList is a list of the open snapshots, oldest first (sequence
// numbers only grow, so appending keeps it sorted). Guarded by DB.mu.
type snapshotList struct {
	root Snapshot // sentinel
	n    int
}

func (l *snapshotList) init() { l.root.next, l.root.prev = &l.root, &l.root }

func (l *snapshotList) pushBack(s *Snapshot) {
	s.prev, s.next = l.root.prev, &l.root
	s.prev.next = s
	l.root.prev = s
	l.n++
}

func (l *snapshotList) remove(s *Snapshot) {
	s.prev.next = s.next
	s.next.prev = s.prev
	s.prev, s.next = nil, nil
	l.n--
}

// seqs returns the sequence numbers of the open snapshots, ascending.
func (l *snapshotList) seqs() []base.SeqNum {
	out := make([]base.SeqNum, 0, l.n)
	for s := l.root.next; s != &l.root; s = s.next {
		if len(out) == 0 || out[len(out)-1] != s.seq {
			out = append(out, s.seq)
		}
	}
	return out
}

// NewSnapshot returns a snapshot of the current committed state.
func (d *DB) NewSnapshot() *Snapshot {
	s := &Snapshot{}
	d.initSnapshot(s)
	return s
}

// initSnapshot makes s, a zero Snapshot, a snapshot of the current
// committed state, for callers that hold the Snapshot in a struct of
// their own.
func (d *DB) initSnapshot(s *Snapshot) {
	s.db = d
	d.mu.Lock()
	s.seq = base.SeqNum(d.visibleSeq.Load())
	d.mu.snapshots.pushBack(s)
	d.mu.Unlock()
}

// Seq returns the sequence number of the last commit the snapshot sees.
// Commits after it have larger sequence numbers.
func (s *Snapshot) Seq() uint64 { return uint64(s.seq) }

// Get reads key as of the snapshot.
func (s *Snapshot) Get(key []byte) ([]byte, error) {
	return s.db.Get(key, &ReadOptions{Snapshot: s})
}

// NewIter returns an iterator over the snapshot. o.Snapshot is ignored.
func (s *Snapshot) NewIter(o *IterOptions) (*Iterator, error) {
	var c IterOptions
	if o != nil {
		c = *o
	}
	c.Snapshot = s
	return s.db.NewIter(&c)
}

// Close releases the snapshot. Closing twice is harmless.
func (s *Snapshot) Close() error {
	d := s.db
	d.mu.Lock()
	defer d.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	d.mu.snapshots.remove(s)
	return nil
}
