package manifest

import "errors"

var (
	// ErrFailed is returned by LogAndApply when a write or sync of the
	// MANIFEST (or of CURRENT during a rotation) fails, and by every later
	// LogAndApply. The in-memory state is the one before the failed edit;
	// whether that edit reached the disk is unknown, so the set takes no
	// further edits and the engine must go read-only. The returned error
	// also wraps the failure itself.
	ErrFailed = errors.New("manifest: MANIFEST write failed; no further edits are accepted")

	// ErrClosed is returned by LogAndApply after Close.
	ErrClosed = errors.New("manifest: version set closed")

	// ErrExists is returned by Create when the directory already holds a
	// CURRENT file: Create never overwrites a database.
	ErrExists = errors.New("manifest: database already exists")

	// ErrInvalidEdit is returned by Builder.Apply, Builder.Finish and
	// LogAndApply for an edit that cannot apply to the version: a deleted
	// file that is not there, a file added twice, a file number that was
	// never allocated, a log number or sequence number moving backwards, or
	// a result that breaks the level invariants. Nothing is written and the
	// set stays usable.
	ErrInvalidEdit = errors.New("manifest: invalid version edit")
)
