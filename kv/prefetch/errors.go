package prefetch

import "errors"

// Errors returned by this package.
var (
	// ErrPoolClosed is returned by Pool.Submit after Close, and by a second
	// Close. A Buffer whose pool is closed reads on its own goroutine.
	ErrPoolClosed = errors.New("prefetch: pool closed")
	// ErrClosed is returned by Buffer.Read after Close.
	ErrClosed = errors.New("prefetch: buffer closed")
)
