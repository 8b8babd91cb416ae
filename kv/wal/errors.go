package wal

import "errors"

// ErrClosed is returned by every method of a [Writer] after Close, unless
// the writer had failed before, in which case the failure is returned.
var ErrClosed = errors.New("wal: writer closed")
