package server

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// hungUp reports whether the peer of a socket closed or reset it. It
// never blocks and consumes no data.
func hungUp(raw syscall.RawConn) bool {
	gone := false
	err := raw.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
		n, err := unix.Poll(fds, 0)
		gone = err == nil && n > 0 && fds[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0
	})
	// A socket already closed on this side has no statement left to save.
	return err != nil || gone
}
