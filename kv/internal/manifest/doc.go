// Package manifest records which SST files form the database, at which
// level, and decides which of them to compact next.
//
// # Versions
//
// A [Version] is an immutable snapshot of the LSM tree: for each of the
// [NumLevels] levels, the files that hold it. A version never changes once
// built. The next version is made by a [Builder] from the current one and
// one or more [VersionEdit]s; unchanged files are shared between versions by
// pointer, so a new version costs one slice per changed level.
//
// Level invariants, checked by [Version.CheckOrdering] after every edit:
//
//   - L0 files may overlap each other. They are ordered oldest first: by
//     LargestSeq ascending, then SmallestSeq, then FileNum. A reader wanting
//     newest first walks L0 backwards.
//   - In L1 and below, files are sorted by Smallest and do not overlap as
//     internal keys: each file's Largest sorts before the next file's
//     Smallest. Two neighbours may share a boundary user key (the older
//     versions of that key continue in the next file); the compaction picker
//     never splits such a pair.
//   - A file number appears at most once in a version.
//
// Readers hold a version with [Version.Ref] while they read and drop it with
// [Version.Unref]. Every file carries a count of the versions that contain
// it; when the last version holding a file is dropped, the file becomes
// obsolete and the [VersionSet] queues it for [VersionSet.TakeObsolete], so
// the engine can delete it. A file moved between levels keeps its
// *FileMetadata and never passes through zero.
//
// # The MANIFEST
//
// The [VersionSet] owns the current version and makes every change durable
// before it is visible: [VersionSet.LogAndApply] appends the edit to the
// MANIFEST, syncs it, and only then installs the new version. The MANIFEST
// is a record log (package kv/wal framing, checksummed records) whose first
// record is a header and whose second is a snapshot edit holding the whole
// state; every later record is one edit. The file CURRENT names the live
// MANIFEST. The layouts are described beside their constants in
// version_edit.go and filenames.go.
//
// When the MANIFEST grows past [Options.MaxManifestSize] (and past twice its
// starting snapshot) the next LogAndApply rotates: it writes a new MANIFEST
// holding a snapshot of the new state, syncs it, points CURRENT at it
// atomically (CURRENT.tmp, sync, rename, directory sync) and removes the old
// one. [Load] always rotates, because the tail of the old MANIFEST may be
// torn and new records must never follow a torn one.
//
// A failed write or sync leaves the in-memory state as it was and poisons
// the set: every later LogAndApply returns [ErrFailed]. Nothing is retried,
// since a retried fsync can report success for data the kernel already
// dropped.
//
// # Compaction picking
//
// [Pick] and [PickManual] are pure functions of a version, the
// [PickerOptions] and the compactions already running. They implement
// leveled compaction: L0 is scored by file count, L1 and below by bytes
// against a target that grows by LevelMultiplier per level, and the highest
// score of at least 1 wins.
//
// # Concurrency
//
// The engine holds its own mutex around every call into a VersionSet and
// around Pick, PickManual, MarkCompacting and ComputeMetrics (they read or
// write the Compacting flags); none of these lock anything themselves. Safe
// without the engine's mutex: the methods of a Version (Ref, Unref,
// Overlaps, LevelSize, NumFiles, CheckOrdering), which never changes once
// built, and [VersionSet.LiveFiles] and [VersionSet.TakeObsolete], which
// share one small leaf lock with Unref so that readers can drop versions
// from any goroutine.
//
// # Usage
//
//	vs, err := manifest.Load(fs, dir, nil)
//	...
//	num := vs.NewFileNum()                // name the new SST
//	// ... write the SST ...
//	err = vs.LogAndApply(&manifest.VersionEdit{
//		NewFiles: []manifest.NewFile{{Level: 0, Meta: meta}},
//	})
//	v := vs.Current()
//	v.Ref()
//	defer v.Unref()
//	if c := manifest.Pick(v, opts); c != nil {
//		c.MarkCompacting(true)
//		...
//	}
package manifest
