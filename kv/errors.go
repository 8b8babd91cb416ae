package kv

import (
	"errors"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/storage"
)

// Errors returned by the engine. Each says when it is returned.
var (
	// ErrNotFound is returned by Get when the key has no value. It
	// satisfies errors.Is(err, storage.ErrNotFound).
	ErrNotFound error = &contractError{msg: "kv: not found", target: storage.ErrNotFound}

	// ErrClosed is returned by every call on a closed DB, batch, snapshot or
	// iterator.
	ErrClosed = errors.New("kv: closed")

	// ErrReadOnly is returned by writes after the database stopped accepting
	// them: a write-ahead log write or sync failed, or a flush or compaction
	// failed (see DB.BackgroundError). The error it wraps says why. Reads keep
	// working; reopen the database once the cause is fixed.
	ErrReadOnly = errors.New("kv: database is read-only after an error")

	// ErrLocked is returned by Open when another process (or another DB in
	// this process) has the database open.
	ErrLocked = errors.New("kv: database is locked by another process")

	// ErrBatchCommitted is returned when a committed batch is used again.
	ErrBatchCommitted = errors.New("kv: batch already committed")

	// ErrCorruption marks every corruption error: a durable file holds bytes
	// the engine did not write. errors.Is(err, ErrCorruption) tells them apart;
	// the message names the file and offset.
	ErrCorruption = base.ErrCorruption
)

// IsCorruption reports whether err is or wraps a corruption error.
func IsCorruption(err error) bool { return base.IsCorruption(err) }

// CorruptionError describes a corruption: the file, the offset and what was
// expected versus found.
type CorruptionError = base.CorruptionError

// contractError is an engine error that is also one of the storage
// contract's (errors.Is), keeping the engine's own message.
type contractError struct {
	msg    string
	target error
}

func (e *contractError) Error() string        { return e.msg }
func (e *contractError) Is(target error) bool { return target == e.target }
