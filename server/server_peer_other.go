//go:build !linux

package server

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// hungUp reports whether the peer of a socket closed or reset it. Without
// POLLRDHUP, it peeks at one byte: end of file or a reset means the peer
// is gone, a byte is a request sent ahead, left unread. It never blocks.
func hungUp(raw syscall.RawConn) bool {
	gone := false
	err := raw.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		switch {
		case err == nil:
			gone = n == 0
		case errors.Is(err, unix.EAGAIN):
		default:
			gone = true
		}
	})
	return err != nil || gone
}
