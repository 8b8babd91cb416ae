package kv

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/strata-db/strata/kv/cache"
	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/internal/manifest"
	"github.com/strata-db/strata/kv/prefetch"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/strata-db/strata/kv/wal"
)

// Open opens the database in dirname, creating it unless
// opts.ErrorIfNotExist is set. opts may be nil.
//
// Open replays the manifest, then every write-ahead log newer than the last
// flush, flushes what it replayed into level-0 tables, and starts a new log.
// A torn last record of the last log (a commit interrupted by a crash, never
// acknowledged) is dropped and reported to the Logger; any other damage is
// a corruption error naming the file and offset, unless opts.WALRecovery
// says to skip it. A second Open of the same directory, in this process or
// another, fails with ErrLocked.
func Open(dirname string, opts *Options) (db *DB, err error) {
	o := opts.Clone().EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	fs := o.FS
	if _, err := fs.Stat(dirname); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("kv: open %s: %w", dirname, err)
		}
		if o.ErrorIfNotExist {
			return nil, fmt.Errorf("kv: open %s: no database: %w", dirname, err)
		}
	}
	if err := fs.MkdirAll(dirname, 0o755); err != nil {
		return nil, fmt.Errorf("kv: open %s: %w", dirname, err)
	}
	lock, err := fs.Lock(makeFilename(dirname, fileTypeLock, 0))
	if err != nil {
		if errors.Is(err, vfs.ErrLocked) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, dirname)
		}
		return nil, fmt.Errorf("kv: open %s: lock: %w", dirname, err)
	}

	d := &DB{dirname: dirname, opts: o, fs: fs, lock: lock}
	d.commit.cond.L = &d.commit.mu
	d.mu.cond.L = &d.mu.Mutex
	d.mu.snapshots.init()
	d.mu.pendingOutputs = map[uint64]bool{}
	d.arenas = make(chan []uint64, 1)
	d.cache = o.Cache
	if d.cache == nil {
		d.cache = cache.New(o.CacheSize)
	}
	d.cacheNS = d.cache.NewNamespace()
	d.ioPool = prefetch.NewPool(o.IOQueueDepth)
	if o.DisableIOUring {
		d.ioPool.DisableRings()
	}
	d.tables = newTableCache(d, o.MaxOpenFiles)
	defer func() {
		if err != nil {
			d.tables.close()
			d.ioPool.Close()
			if d.mu.versions != nil {
				d.mu.versions.Close()
			}
			if d.mu.log.w != nil {
				d.mu.log.w.Close()
			}
			lock.Close()
		}
	}()

	mopts := &manifest.Options{MaxManifestSize: o.MaxManifestFileSize, CheckReplayed: d.checkRecoveredState}
	currentName := makeFilename(dirname, fileTypeCurrent, 0)
	if _, serr := fs.Stat(currentName); serr == nil {
		d.mu.versions, err = manifest.Load(fs, dirname, mopts)
	} else if errors.Is(serr, os.ErrNotExist) {
		if o.ErrorIfNotExist {
			return nil, fmt.Errorf("kv: open %s: no database (no CURRENT file)", dirname)
		}
		if err := checkNoData(fs, dirname); err != nil {
			return nil, err
		}
		d.mu.versions, err = manifest.Create(fs, dirname, mopts)
	} else {
		err = serr
	}
	if err != nil {
		return nil, fmt.Errorf("kv: open %s: %w", dirname, err)
	}
	vs := d.mu.versions

	// Find the logs to replay and make sure no number on disk is reused.
	names, err := fs.List(dirname)
	if err != nil {
		return nil, fmt.Errorf("kv: open %s: %w", dirname, err)
	}
	var logs []uint64
	for _, name := range names {
		t, num := parseFilename(name)
		switch t {
		case fileTypeLog:
			vs.MarkFileNumUsed(num)
			if num >= vs.LogNum() {
				logs = append(logs, num)
			}
		case fileTypeTable, fileTypeManifest:
			vs.MarkFileNumUsed(num)
		}
	}
	sort.Slice(logs, func(i, j int) bool { return logs[i] < logs[j] })

	// Replay. Full memtables and what remains at the end become level-0
	// tables, recorded with the new log number in one edit below.
	edit := &manifest.VersionEdit{}
	maxSeq := vs.LastSeq()
	rec := recovery{d: d, edit: edit}
	for i, num := range logs {
		seq, err := rec.replayLog(num, i == len(logs)-1)
		if err != nil {
			return nil, err
		}
		maxSeq = max(maxSeq, seq)
	}
	if err := rec.flush(); err != nil {
		return nil, err
	}

	// A new log for new commits.
	logNum := vs.NewFileNum()
	if !o.DisableWAL {
		if err := d.createLogLocked(logNum); err != nil {
			return nil, err
		}
	}
	edit.LogNum = logNum
	edit.LastSeq = maxSeq
	if err := vs.LogAndApply(edit); err != nil {
		return nil, fmt.Errorf("kv: open %s: %w", dirname, err)
	}
	d.commit.lastSeq = maxSeq
	d.visibleSeq.Store(uint64(maxSeq))
	d.mu.mem = d.newMemTable(o.MemtableSize, logNum)
	d.updateReadStateLocked()

	d.removeStaleFiles(logNum)

	d.bg.flushCh = make(chan struct{}, 1)
	d.bg.compactCh = make(chan struct{}, 1)
	d.bg.walFlushCh = make(chan struct{}, 1)
	d.bg.closing = make(chan struct{})
	d.bg.wg.Add(4)
	go d.flushLoop()
	go d.compactLoop()
	go d.walFlushLoop()
	go d.resumeLoop()
	d.mu.Lock()
	d.maybeScheduleCompactionLocked()
	d.mu.Unlock()
	return d, nil
}

// createLogLocked creates and installs a new write-ahead log. The
// directory is synced so that the log survives a crash as soon as a synced
// commit is in it. REQUIRES: d.mu held (or Open).
func (d *DB) createLogLocked(num uint64) error {
	name := makeFilename(d.dirname, fileTypeLog, num)
	f, err := d.fs.Create(name)
	if err != nil {
		return fmt.Errorf("kv: create log %s: %w", name, err)
	}
	if err := vfs.SyncDir(d.fs, d.dirname); err != nil {
		f.Close()
		return fmt.Errorf("kv: create log %s: %w", name, err)
	}
	d.mu.log.w = wal.NewWriterLogID(f, name, uint32(num))
	d.mu.log.num = num
	d.logW.Store(d.mu.log.w)
	return nil
}

// recovery replays write-ahead logs into memtables at Open.
type recovery struct {
	d    *DB
	edit *manifest.VersionEdit
	mem  *memTable
}

// replayLog applies one log's batches and returns the largest sequence
// number it held.
func (r *recovery) replayLog(num uint64, last bool) (base.SeqNum, error) {
	d := r.d
	name := makeFilename(d.dirname, fileTypeLog, num)
	f, err := d.fs.Open(name)
	if err != nil {
		return 0, fmt.Errorf("kv: open log %s: %w", name, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return 0, fmt.Errorf("kv: open log %s: %w", name, err)
	}
	rd := wal.NewReaderLogID(f, size, name, uint32(num))
	var maxSeq base.SeqNum
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if base.IsCorruption(err) && d.opts.WALRecovery == WALRecoverySkipCorrupt {
				dropped := rd.SkipCorrupt()
				d.opts.Logger.Errorf("kv: recovery: %v; skipped %d bytes", err, dropped)
				continue
			}
			return 0, fmt.Errorf("kv: recovery: %w", err)
		}
		seq, _, verr := validateBatch(rec)
		if verr != nil {
			err := base.Corruptf(name, rd.Offset(), "batch record: %v", verr)
			if d.opts.WALRecovery == WALRecoverySkipCorrupt {
				d.opts.Logger.Errorf("kv: recovery: %v; skipped the record", err)
				continue
			}
			return 0, fmt.Errorf("kv: recovery: %w", err)
		}
		b := &Batch{data: rec}
		b.seq = seq
		if err := forEachEntry(rec[batchHeaderLen:], func(kind base.Kind, key, value []byte) error {
			b.count++
			b.memSize += entrySize(key, value)
			return nil
		}); err != nil {
			return 0, err
		}
		if err := r.apply(b); err != nil {
			return 0, err
		}
		maxSeq = max(maxSeq, seq+base.SeqNum(b.count)-1)
	}
	if off, reason, torn := rd.TornTail(); torn {
		if !last && d.opts.WALRecovery != WALRecoverySkipCorrupt {
			// Logs before the last were synced when the next one started: a
			// damaged end there lost acknowledged commits.
			return 0, fmt.Errorf("kv: recovery: %w",
				base.Corruptf(name, off, "log ends early (%s) but a newer log follows", reason))
		}
		d.opts.Logger.Infof("kv: recovery: %s: dropped the torn tail at offset %d (%s): a commit the crash interrupted, never acknowledged", name, off, reason)
	}
	return maxSeq, nil
}

// apply inserts a replayed batch into the recovery memtable, flushing it
// to a level-0 table when full.
func (r *recovery) apply(b *Batch) error {
	d := r.d
	if r.mem == nil || !r.mem.Reserve(b.memSize) {
		if err := r.flush(); err != nil {
			return err
		}
		r.mem = d.newMemTable(max(d.opts.MemtableSize, b.memSize+b.memSize/8+(1<<20)), 0)
		if !r.mem.Reserve(b.memSize) {
			return fmt.Errorf("kv: recovery: a batch of %d bytes does not fit a memtable", b.memSize)
		}
	}
	return applyToMemtable(r.mem, b)
}

// flush writes the recovery memtable, if any, to a level-0 table and adds
// it to the edit.
func (r *recovery) flush() error {
	if r.mem == nil || r.mem.Empty() {
		return nil
	}
	d := r.d
	num := d.mu.versions.NewFileNum()
	meta, err := d.writeMemtable(num, r.mem)
	if err != nil {
		return fmt.Errorf("kv: recovery: %w", err)
	}
	if meta != nil {
		r.edit.NewFiles = append(r.edit.NewFiles, manifest.NewFile{Level: 0, Meta: meta})
	}
	r.mem.unref()
	r.mem = nil
	return nil
}

// checkNoData refuses to start a new database in a directory without a
// CURRENT file that still holds tables or logs. A new database's first
// Open would delete them as stale (removeStaleFiles), so a lost CURRENT,
// which is damage to an existing database, would become the silent loss of
// all of it. A lone MANIFEST is no such sign: a crash during the very
// first Open leaves one behind before CURRENT is written, and no table or
// log exists yet.
func checkNoData(fs vfs.FS, dirname string) error {
	names, err := fs.List(dirname)
	if err != nil {
		return fmt.Errorf("kv: open %s: %w", dirname, err)
	}
	var found []string
	for _, name := range names {
		if t, _ := parseFilename(name); t == fileTypeTable || t == fileTypeLog {
			found = append(found, name)
		}
	}
	if len(found) == 0 {
		return nil
	}
	sort.Strings(found)
	more := ""
	if len(found) > 3 {
		more = fmt.Sprintf(" and %d more", len(found)-3)
		found = found[:3]
	}
	return fmt.Errorf("kv: open %s: %w: no CURRENT file, but the directory holds a database's files (%s%s); "+
		"restore CURRENT (one line naming the MANIFEST) instead of starting a new database over them",
		dirname, ErrCorruption, strings.Join(found, ", "), more)
}

// removeStaleFiles deletes, at Open, the logs older than the live one,
// tables no version references (left by a crash during a flush or
// compaction), and temporary files.
func (d *DB) removeStaleFiles(liveLog uint64) {
	names, err := d.fs.List(d.dirname)
	if err != nil {
		return
	}
	live := d.mu.versions.LiveFiles()
	for _, name := range names {
		t, num := parseFilename(name)
		remove := false
		switch t {
		case fileTypeLog:
			remove = num < liveLog
		case fileTypeTable:
			remove = !live[num]
		case fileTypeTemp:
			remove = true
		}
		if remove {
			if err := d.fs.Remove(makeFilenameRaw(d.dirname, name)); err != nil {
				d.opts.Logger.Errorf("kv: removing stale file %s: %v", name, err)
			}
		}
	}
}

// checkRecoveredState verifies, before anything is replayed or deleted,
// that the files the manifest's state needs are there: every live table,
// and, when the manifest's last record was dropped, the log the state
// starts from. A crash during a manifest write leaves an incomplete last
// record whose edit never took effect, so everything the previous state
// needs is still on disk; damage to a complete last record looks the same
// to the manifest but has the files its edit retired already deleted, and
// replaying on would silently lose acknowledged writes.
//
// It runs inside manifest.Load, before Load writes anything.
func (d *DB) checkRecoveredState(vs *manifest.VersionSet) error {
	names, err := d.fs.List(d.dirname)
	if err != nil {
		return fmt.Errorf("kv: open %s: %w", d.dirname, err)
	}
	manifestName := filepath.Join(d.dirname, manifest.ManifestName(vs.ManifestFileNum()))
	onDisk := map[string]bool{}
	var newerLogs, tables int
	for _, n := range names {
		onDisk[n] = true
		switch t, num := parseFilename(n); t {
		case fileTypeLog:
			if num > vs.LogNum() {
				newerLogs++
			}
		case fileTypeTable:
			tables++
		}
	}
	v := vs.Current()
	for level, files := range v.Levels {
		for _, f := range files {
			path := makeFilename(d.dirname, fileTypeTable, f.FileNum)
			name := filepath.Base(path)
			if !onDisk[name] {
				return fmt.Errorf("kv: open %s: %w", d.dirname, base.Corruptf(manifestName, -1,
					"expected table %s of level %d to exist, found it missing", name, level))
			}
			// A table cut short, or another table's file in its place,
			// would otherwise be found only by the read that reaches it.
			st, err := d.fs.Stat(path)
			if err != nil {
				return fmt.Errorf("kv: open %s: %w", d.dirname, err)
			}
			if st.Size() != int64(f.Size) {
				return fmt.Errorf("kv: open %s: %w", d.dirname, base.Corruptf(path, -1,
					"table of level %d is %d bytes, the manifest recorded %d", level, st.Size(), f.Size))
			}
		}
	}
	torn := vs.TornTail()
	if torn != "" {
		d.opts.Logger.Infof("kv: recovery: manifest %s", torn)
	} else {
		torn = "it ends cleanly"
	}
	// A manifest cut at a record boundary ends cleanly yet may have lost
	// edits too, so these checks do not depend on a torn tail. Only logs
	// older than the one the state starts from are ever deleted, and a
	// newer log is created only after the edit naming the state's log
	// (Resume names a log it creates once its flush succeeded), so a newer
	// log beside a missing state log means an edit was lost.
	lost := false
	switch logNum := vs.LogNum(); {
	case logNum == 0:
		// Only the first Open's edit can be lost this way, before any table
		// was written.
		lost = tables > 0
	case newerLogs > 0:
		lost = !onDisk[filepath.Base(makeFilename(d.dirname, fileTypeLog, logNum))]
	}
	if lost {
		return fmt.Errorf("kv: open %s: %w", d.dirname, base.Corruptf(manifestName, -1,
			"the files its state needs are gone (last record: %s): an edit that had taken effect was lost", torn))
	}
	return nil
}
