package base

import (
	"errors"
	"fmt"
)

// ErrCorruption is the marker of every corruption error: a durable file (WAL,
// SST, manifest) holds bytes the engine did not write or cannot decode.
// Test for it with errors.Is or [IsCorruption].
var ErrCorruption = errors.New("kv: corruption")

// CorruptionError describes a corruption: which file, where, and what was
// expected versus found. errors.Is(err, ErrCorruption) holds for it.
type CorruptionError struct {
	File   string // the file's name; "" when unknown
	Offset int64  // byte offset in the file; -1 when unknown
	Detail string // what was expected and what was found
}

// Error implements error.
func (e *CorruptionError) Error() string {
	switch {
	case e.File == "":
		return "kv: corruption: " + e.Detail
	case e.Offset < 0:
		return fmt.Sprintf("kv: corruption in %s: %s", e.File, e.Detail)
	}
	return fmt.Sprintf("kv: corruption in %s at offset %d: %s", e.File, e.Offset, e.Detail)
}

// Is makes errors.Is(err, ErrCorruption) true.
func (e *CorruptionError) Is(target error) bool { return target == ErrCorruption }

// Corruptf returns a *CorruptionError for file at offset (-1 if unknown)
// with a formatted detail.
func Corruptf(file string, offset int64, format string, args ...any) error {
	return &CorruptionError{File: file, Offset: offset, Detail: fmt.Sprintf(format, args...)}
}

// IsCorruption reports whether err is or wraps a corruption error.
func IsCorruption(err error) bool { return errors.Is(err, ErrCorruption) }
