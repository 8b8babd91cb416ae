//go:build !linux

package uring

import (
	"errors"
	"fmt"
)

// Ring is unavailable on this system; New always fails.
type Ring struct{}

// ErrClosed is returned by Read on a closed Ring.
var ErrClosed = errors.New("uring: ring closed")

// ErrFull is returned by Read when the ring has no room.
var ErrFull = errors.New("uring: ring full")

// New reports that io_uring is not available.
func New(entries uint32) (*Ring, error) {
	return nil, fmt.Errorf("uring: %w", errors.ErrUnsupported)
}

// Read fails: see New.
func (r *Ring) Read(fd int, buf []byte, off int64, userData uint64) error { return ErrClosed }

// InFlight returns 0.
func (r *Ring) InFlight() int { return 0 }

// Completion never finds a read.
func (r *Ring) Completion(wait bool) (userData uint64, res int32, ok bool, err error) {
	return 0, 0, false, nil
}

// Close does nothing.
func (r *Ring) Close() error { return nil }

// ErrnoError returns nil: no ring reports errors here.
func ErrnoError(res int32) error { return nil }
