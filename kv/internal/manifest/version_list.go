package manifest

import "sync"

// versionList tracks the versions of a VersionSet that still have
// references, and the files that no such version contains any more.
//
// Its mutex is a leaf lock: Unref takes it from any goroutine, and nothing
// is called while it is held.
type versionList struct {
	mu sync.Mutex
	// root is the sentinel of a circular list of live versions, oldest
	// first. Guarded by mu.
	root Version
	// obsolete holds files whose last version was released, waiting for
	// TakeObsolete. Guarded by mu.
	obsolete []*FileMetadata
}

func (l *versionList) init() {
	l.root.prev = &l.root
	l.root.next = &l.root
}

// pushBack adds v, which holds its first reference, as the newest version.
func (l *versionList) pushBack(v *Version) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v.list = l
	v.prev = l.root.prev
	v.next = &l.root
	v.prev.next = v
	v.next.prev = v
}

// removeLocked unlinks v. REQUIRES: l.mu held.
func (l *versionList) removeLocked(v *Version) {
	if v.prev == nil {
		return
	}
	v.prev.next = v.next
	v.next.prev = v.prev
	v.prev, v.next = nil, nil
}

// liveFiles returns the numbers of the files of every live version.
func (l *versionList) liveFiles() map[uint64]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	live := make(map[uint64]bool)
	for v := l.root.next; v != &l.root; v = v.next {
		for _, files := range v.Levels {
			for _, f := range files {
				live[f.FileNum] = true
			}
		}
	}
	return live
}

// takeObsolete returns and forgets the queued obsolete files.
func (l *versionList) takeObsolete() []*FileMetadata {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.obsolete
	l.obsolete = nil
	return out
}
