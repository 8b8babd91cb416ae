package manifest

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/strata-db/strata/kv/wal"
)

// VersionSet owns the current version of a database and the MANIFEST that
// records how it came to be.
//
// Concurrency: the engine holds its mutex around every method, except
// LiveFiles and TakeObsolete, which may be called from any goroutine (see
// the package documentation). LogAndApply does I/O while the caller holds
// that mutex; edits are rare (flushes and compactions) and must be ordered
// anyway.
type VersionSet struct {
	fs   vfs.FS
	dir  string
	opts Options

	list    versionList
	current *Version // holds one reference while current

	logNum      uint64
	nextFileNum uint64
	lastSeq     base.SeqNum

	manifestNum uint64
	manifest    *wal.Writer
	// rotateAt is the manifest size at which the next LogAndApply rotates.
	rotateAt int64

	// err is the failure that poisoned the set; see ErrFailed.
	err error
	// tornTail describes the last record Load dropped, if any.
	tornTail string
	closed   bool
	buf      []byte // reused edit encoding
}

func newVersionSet(fs vfs.FS, dir string, opts *Options) (*VersionSet, error) {
	o, err := prepare(opts)
	if err != nil {
		return nil, err
	}
	vs := &VersionSet{fs: fs, dir: dir, opts: o}
	vs.list.init()
	return vs, nil
}

// Create makes the MANIFEST of a new, empty database in dir: MANIFEST-000001
// holding a snapshot, and CURRENT naming it. It fails with ErrExists if dir
// already has a CURRENT file. opts may be nil.
func Create(fs vfs.FS, dir string, opts *Options) (*VersionSet, error) {
	vs, err := newVersionSet(fs, dir, opts)
	if err != nil {
		return nil, err
	}
	if _, err := fs.Stat(join(dir, currentName)); err == nil {
		return nil, fmt.Errorf("%w: %s", ErrExists, join(dir, currentName))
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	empty, err := NewBuilder(nil).Finish()
	if err != nil {
		return nil, err
	}
	vs.install(empty)
	vs.nextFileNum = 1
	num := vs.NewFileNum()
	if err := vs.rotate(vs.current, vs.snapshotCounters(), num); err != nil {
		return nil, err
	}
	return vs, nil
}

// Load opens the MANIFEST of an existing database: it reads CURRENT,
// replays every edit of the MANIFEST it names and builds the current
// version. A torn last record (an edit whose LogAndApply never returned) is
// dropped; damage before it, or an edit that does not apply, is a
// corruption error (base.IsCorruption) naming the file and offset. A
// missing CURRENT is an error for which errors.Is(err, os.ErrNotExist)
// holds; a CURRENT naming a missing MANIFEST is corruption.
//
// Load then starts a new MANIFEST holding a snapshot, points CURRENT at it
// and removes every other MANIFEST in dir: appending to the old one could
// put new records after a torn one. opts may be nil.
func Load(fs vfs.FS, dir string, opts *Options) (*VersionSet, error) {
	vs, err := newVersionSet(fs, dir, opts)
	if err != nil {
		return nil, err
	}
	currentPath := join(dir, currentName)
	cur, err := vfs.ReadFile(fs, currentPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("manifest: %s: no CURRENT file, not a database: %w", dir, err)
		}
		return nil, fmt.Errorf("manifest: reading %s: %w", currentPath, err)
	}
	num, err := parseCurrent(cur, currentPath)
	if err != nil {
		return nil, err
	}
	if err := vs.replay(num); err != nil {
		return nil, err
	}
	if vs.opts.CheckReplayed != nil {
		if err := vs.opts.CheckReplayed(vs); err != nil {
			return nil, err
		}
	}
	num = vs.NewFileNum()
	if err := vs.rotate(vs.current, vs.snapshotCounters(), num); err != nil {
		return nil, err
	}
	vs.removeStale()
	return vs, nil
}

// replay reads MANIFEST num and installs the state it records.
func (vs *VersionSet) replay(num uint64) error {
	path := join(vs.dir, ManifestName(num))
	f, err := vs.fs.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return base.Corruptf(join(vs.dir, currentName), 0, "expected it to name an existing MANIFEST, found %s, which does not exist", ManifestName(num))
		}
		return fmt.Errorf("manifest: %w", err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return fmt.Errorf("manifest: %s: %w", path, err)
	}
	r := wal.NewReaderLogID(f, size, path, uint32(num))
	rec, err := r.Next()
	switch {
	case err == io.EOF:
		return base.Corruptf(path, 0, "expected a header record, found no intact record")
	case err != nil:
		return fmt.Errorf("manifest: replaying: %w", err)
	}
	if err := checkHeader(rec, path, r.Offset()); err != nil {
		return err
	}
	b := NewBuilder(nil)
	var logNum, nextFileNum uint64
	var lastSeq base.SeqNum
	edits := 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("manifest: replaying: %w", err)
		}
		var ve VersionEdit
		if err := ve.Decode(rec); err != nil {
			return rehome(err, path, r.Offset())
		}
		if err := b.Apply(&ve); err != nil {
			return base.Corruptf(path, r.Offset(), "expected an edit that applies, found one that does not: %v", err)
		}
		logNum = max(logNum, ve.LogNum)
		nextFileNum = max(nextFileNum, ve.NextFileNum)
		lastSeq = max(lastSeq, ve.LastSeq)
		edits++
	}
	if edits == 0 {
		return base.Corruptf(path, r.Offset(), "expected a snapshot edit after the header, found no intact record")
	}
	if off, reason, torn := r.TornTail(); torn {
		vs.tornTail = fmt.Sprintf("%s: dropped a damaged or incomplete last record at offset %d (%s)", path, off, reason)
	}
	v, err := b.Finish()
	if err != nil {
		return base.Corruptf(path, -1, "expected a consistent version after replay: %v", err)
	}
	// Numbers this large cannot have been allocated; the +1 below must not
	// wrap.
	const limit = math.MaxUint64 - 1<<20
	maxNum := max(logNum, nextFileNum, num)
	for _, files := range v.Levels {
		for _, f := range files {
			maxNum = max(maxNum, f.FileNum)
		}
	}
	if maxNum > limit {
		v.release(false)
		return base.Corruptf(path, -1, "expected file numbers below %d, found %d", uint64(limit), maxNum)
	}
	vs.install(v)
	vs.logNum, vs.lastSeq, vs.manifestNum = logNum, lastSeq, num
	// Every number below nextFileNum may be in use; so are the numbers the
	// state itself names, whatever a damaged counter said.
	vs.nextFileNum = max(nextFileNum, num+1, logNum+1)
	for _, files := range v.Levels {
		for _, f := range files {
			vs.nextFileNum = max(vs.nextFileNum, f.FileNum+1)
		}
	}
	return nil
}

// rehome moves a corruption error that names no file to file and offset.
func rehome(err error, file string, offset int64) error {
	var ce *base.CorruptionError
	if errors.As(err, &ce) && ce.File == "" {
		return base.Corruptf(file, offset, "%s", ce.Detail)
	}
	return err
}

// install makes v, which holds one reference, the current version; the
// set's reference on the previous current version is dropped.
func (vs *VersionSet) install(v *Version) {
	vs.list.pushBack(v)
	old := vs.current
	vs.current = v
	if old != nil {
		old.Unref()
	}
}

// counters are the scalars a snapshot records beside the files.
type counters struct {
	logNum, nextFileNum uint64
	lastSeq             base.SeqNum
}

func (vs *VersionSet) snapshotCounters() counters {
	return counters{logNum: vs.logNum, nextFileNum: vs.nextFileNum, lastSeq: vs.lastSeq}
}

// snapshotEdit returns an edit that builds v from nothing.
func snapshotEdit(v *Version, c counters) *VersionEdit {
	ve := &VersionEdit{LogNum: c.logNum, NextFileNum: c.nextFileNum, LastSeq: c.lastSeq}
	for level, p := range v.compactPointers {
		if p != nil {
			ve.CompactPointers = append(ve.CompactPointers, CompactPointer{Level: level, Key: p})
		}
	}
	for level, files := range v.Levels {
		for _, f := range files {
			ve.NewFiles = append(ve.NewFiles, NewFile{Level: level, Meta: f})
		}
	}
	return ve
}

// LogAndApply makes ve durable and installs the version it produces.
//
// The edit is checked first: a log number or sequence number moving
// backwards, a new file whose number was never allocated, or changes that
// do not apply to the current version fail with ErrInvalidEdit and change
// nothing. Then zero LogNum and LastSeq are filled from the set, and
// NextFileNum is set to the set's (or kept when the edit's is larger), so
// the edit records all three; ve is modified.
//
// Then the edit is appended to the MANIFEST and synced, rotating to a new
// MANIFEST first when the current one is long enough, and only then does
// the new version become current. If a write or sync fails, the in-memory
// state is unchanged, the error wraps ErrFailed, and every later
// LogAndApply fails the same way: the engine must stop writing.
//
// REQUIRES: the engine's mutex held.
func (vs *VersionSet) LogAndApply(ve *VersionEdit) error {
	if vs.closed {
		return ErrClosed
	}
	if vs.err != nil {
		return fmt.Errorf("%w: %w", ErrFailed, vs.err)
	}
	c := vs.snapshotCounters()
	switch {
	case ve.LogNum == 0:
	case ve.LogNum < vs.logNum:
		return fmt.Errorf("%w: log number moves back from %d to %d", ErrInvalidEdit, vs.logNum, ve.LogNum)
	case ve.LogNum >= vs.nextFileNum:
		return fmt.Errorf("%w: log number %d was never allocated (next file number is %d)", ErrInvalidEdit, ve.LogNum, vs.nextFileNum)
	default:
		c.logNum = ve.LogNum
	}
	switch {
	case ve.LastSeq == 0:
	case ve.LastSeq < vs.lastSeq:
		return fmt.Errorf("%w: last sequence number moves back from %d to %d", ErrInvalidEdit, vs.lastSeq, ve.LastSeq)
	default:
		c.lastSeq = ve.LastSeq
	}
	c.nextFileNum = max(ve.NextFileNum, vs.nextFileNum)
	for _, nf := range ve.NewFiles {
		if nf.Meta != nil && nf.Meta.FileNum >= vs.nextFileNum {
			return fmt.Errorf("%w: new file %06d was never allocated (next file number is %d)", ErrInvalidEdit, nf.Meta.FileNum, vs.nextFileNum)
		}
	}
	b := NewBuilder(vs.current)
	if err := b.Apply(ve); err != nil {
		return err
	}
	v, err := b.Finish()
	if err != nil {
		return err
	}

	rotating := vs.manifest.Size() >= vs.rotateAt
	var num uint64
	if rotating {
		// The new MANIFEST takes the next file number.
		num = c.nextFileNum
		c.nextFileNum++
	}
	ve.LogNum, ve.NextFileNum, ve.LastSeq = c.logNum, c.nextFileNum, c.lastSeq
	if rotating {
		// The snapshot the new MANIFEST holds records the state after ve.
		if err := vs.rotate(v, c, num); err != nil {
			v.release(false)
			vs.err = err
			return fmt.Errorf("%w: %w", ErrFailed, err)
		}
	} else {
		vs.buf = ve.Encode(vs.buf[:0])
		_, err := vs.manifest.WriteRecord(vs.buf)
		if err == nil {
			err = vs.manifest.Sync()
		}
		if err != nil {
			v.release(false)
			vs.err = err
			return fmt.Errorf("%w: %w", ErrFailed, err)
		}
	}
	vs.install(v)
	vs.logNum, vs.lastSeq = c.logNum, c.lastSeq
	vs.nextFileNum = max(vs.nextFileNum, c.nextFileNum)
	return nil
}

// rotate writes a new MANIFEST numbered num, holding a snapshot of v and c,
// and points CURRENT at it. REQUIRES: num < c.nextFileNum. On success the new
// MANIFEST is the set's and the old one is closed and removed; on failure
// the old one stays in use (the caller decides whether the set is
// poisoned). The new MANIFEST is removed on failure only when CURRENT
// cannot name it.
func (vs *VersionSet) rotate(v *Version, c counters, num uint64) error {
	name := ManifestName(num)
	path := join(vs.dir, name)
	f, err := vs.fs.Create(path)
	if err != nil {
		return fmt.Errorf("manifest: creating %s: %w", path, err)
	}
	w := wal.NewWriterLogID(f, path, uint32(num))
	committed := false
	defer func() {
		if w != nil {
			w.Close()
			if !committed {
				vs.fs.Remove(path)
			}
		}
	}()
	if _, err := w.WriteRecord(encodeHeader(nil)); err != nil {
		return err
	}
	vs.buf = snapshotEdit(v, c).Encode(vs.buf[:0])
	if _, err := w.WriteRecord(vs.buf); err != nil {
		return err
	}
	if err := w.Sync(); err != nil {
		return err
	}
	if err := vfs.SyncDir(vs.fs, vs.dir); err != nil {
		return fmt.Errorf("manifest: syncing %s: %w", vs.dir, err)
	}
	if err := vs.setCurrent(name, &committed); err != nil {
		return err
	}
	old, oldNum := vs.manifest, vs.manifestNum
	vs.manifest, vs.manifestNum = w, num
	vs.rotateAt = max(vs.opts.MaxManifestSize, 2*w.Size())
	w = nil
	if old != nil {
		// Both are best effort: the old MANIFEST is complete and synced,
		// and Load removes any MANIFEST that CURRENT does not name.
		old.Close()
		vs.fs.Remove(join(vs.dir, ManifestName(oldNum)))
	}
	return nil
}

// setCurrent atomically points CURRENT at the MANIFEST name. *committed is
// set once the rename has been attempted: from then on CURRENT may name the
// new MANIFEST after a crash, so it must not be removed.
func (vs *VersionSet) setCurrent(name string, committed *bool) error {
	tmp := join(vs.dir, currentTmpName)
	if err := vfs.WriteFileSync(vs.fs, vs.dir, tmp, []byte(name+"\n")); err != nil {
		return fmt.Errorf("manifest: writing %s: %w", tmp, err)
	}
	*committed = true
	if err := vs.fs.Rename(tmp, join(vs.dir, currentName)); err != nil {
		return fmt.Errorf("manifest: renaming %s to %s: %w", currentTmpName, currentName, err)
	}
	if err := vfs.SyncDir(vs.fs, vs.dir); err != nil {
		return fmt.Errorf("manifest: syncing %s: %w", vs.dir, err)
	}
	return nil
}

// removeStale removes every MANIFEST other than the current one, and a
// leftover CURRENT.tmp, after Load has pointed CURRENT at a new MANIFEST.
// Best effort: a file that stays is removed by the next Load.
func (vs *VersionSet) removeStale() {
	names, err := vs.fs.List(vs.dir)
	if err != nil {
		return
	}
	for _, name := range names {
		if n, ok := ParseManifestName(name); (ok && n != vs.manifestNum) || name == currentTmpName {
			vs.fs.Remove(join(vs.dir, name))
		}
	}
}

// TornTail returns, after Load, a description of the damaged or incomplete
// last record the replay dropped, or "" when the MANIFEST ended cleanly. A
// crash during a LogAndApply leaves such a record, and then nothing it
// recorded had taken effect; damage to the last record of a MANIFEST that
// was complete looks the same, and then the engine may be missing files or
// logs the lost edit had retired: the engine checks for that.
func (vs *VersionSet) TornTail() string { return vs.tornTail }

// Current returns the current version. It is not referenced for the
// caller: a caller that keeps it beyond the engine's mutex must Ref it.
func (vs *VersionSet) Current() *Version { return vs.current }

// NewFileNum allocates a file number (for a WAL, an SST or a MANIFEST).
// The allocation is made durable by the next LogAndApply, which records the
// next unallocated number.
func (vs *VersionSet) NewFileNum() uint64 {
	n := vs.nextFileNum
	vs.nextFileNum++
	return n
}

// MarkFileNumUsed makes sure n is never allocated, for a file found on disk
// (a WAL written after the last LogAndApply) at open.
func (vs *VersionSet) MarkFileNumUsed(n uint64) {
	if n >= vs.nextFileNum {
		vs.nextFileNum = n + 1
	}
}

// NextFileNum returns the number NewFileNum would allocate next.
func (vs *VersionSet) NextFileNum() uint64 { return vs.nextFileNum }

// LastSeq returns the last sequence number the set knows to be used.
func (vs *VersionSet) LastSeq() base.SeqNum { return vs.lastSeq }

// SetLastSeq records that sequence numbers up to s are used; the next
// LogAndApply makes it durable. It never moves the value back.
func (vs *VersionSet) SetLastSeq(s base.SeqNum) {
	if s > vs.lastSeq {
		vs.lastSeq = s
	}
}

// LogNum returns the number of the oldest WAL that may hold data not in
// any file: WALs numbered below it are obsolete.
func (vs *VersionSet) LogNum() uint64 { return vs.logNum }

// ManifestFileNum returns the number of the MANIFEST in use.
func (vs *VersionSet) ManifestFileNum() uint64 { return vs.manifestNum }

// ManifestSize returns the length of the MANIFEST in use.
func (vs *VersionSet) ManifestSize() int64 {
	if vs.manifest == nil {
		return 0
	}
	return vs.manifest.Size()
}

// LiveFiles returns the numbers of the files that any version still
// referenced (the current one, or one a reader holds) contains. The engine
// may delete any SST not among them that it is not writing. Safe for
// concurrent use.
func (vs *VersionSet) LiveFiles() map[uint64]bool { return vs.list.liveFiles() }

// TakeObsolete returns the files that became obsolete since the last call
// (their last version was released) and forgets them. The engine deletes
// them. Safe for concurrent use.
func (vs *VersionSet) TakeObsolete() []*FileMetadata { return vs.list.takeObsolete() }

// Close closes the MANIFEST. The current version keeps its reference, so
// closing reports no file obsolete. Close after Close returns nil.
func (vs *VersionSet) Close() error {
	if vs.closed {
		return nil
	}
	vs.closed = true
	if vs.manifest == nil {
		return nil
	}
	err := vs.manifest.Close()
	if vs.err != nil {
		return nil // already reported by LogAndApply
	}
	if err != nil {
		return fmt.Errorf("manifest: closing: %w", err)
	}
	return nil
}
