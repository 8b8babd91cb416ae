package uring

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's ABI (include/uapi/linux/io_uring.h).
const (
	sysSetup = 425
	sysEnter = 426

	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000

	featSingleMmap = 1 << 0
	enterGetEvents = 1 << 0
	opRead         = 22
)

type sqRingOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqRingOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqRingOffsets
	cqOff                                                                  cqRingOffsets
}

// sqe is a submission queue entry, 64 bytes.
type sqe struct {
	opcode, flags         uint8
	ioprio                uint16
	fd                    int32
	off, addr             uint64
	len, rwFlags          uint32
	userData              uint64
	bufIndex, personality uint16
	spliceFdIn            int32
	addr3, pad            uint64
}

// cqe is a completion queue entry, 16 bytes.
type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// Ring is one io_uring instance with its submission and completion queues
// mapped into the process.
type Ring struct {
	fd       int
	sqMap    []byte
	cqMap    []byte // the same mapping as sqMap with featSingleMmap
	sqeMap   []byte
	sqHead   *uint32
	sqTail   *uint32
	sqMask   uint32
	sqArray  []uint32
	sqes     []sqe
	cqHead   *uint32
	cqTail   *uint32
	cqMask   uint32
	cqes     []cqe
	single   bool // sqMap and cqMap are one mapping
	inFlight int
	// pinned holds the buffer of every read in flight, with its userData:
	// the kernel writes it after Read returns, so it must stay allocated
	// however its owner fares (an iterator that is never closed).
	pinned []pinnedBuf
}

type pinnedBuf struct {
	userData uint64
	buf      []byte
}

// New sets up a ring with room for entries reads in flight (rounded up to
// a power of two by the kernel).
func New(entries uint32) (*Ring, error) {
	var p params
	fd, _, errno := unix.Syscall(sysSetup, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		err := error(errno)
		if errno == unix.ENOSYS || errno == unix.EPERM {
			err = fmt.Errorf("%w: %w", errors.ErrUnsupported, errno)
		}
		return nil, fmt.Errorf("uring: setup: %w", err)
	}
	r := &Ring{fd: int(fd)}
	if err := r.mapQueues(&p); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Ring) mapQueues(p *params) error {
	sqSize := int(p.sqOff.array) + int(p.sqEntries)*4
	cqSize := int(p.cqOff.cqes) + int(p.cqEntries)*int(unsafe.Sizeof(cqe{}))
	prot, flags := unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE
	var err error
	if p.features&featSingleMmap != 0 {
		if r.sqMap, err = unix.Mmap(r.fd, offSQRing, max(sqSize, cqSize), prot, flags); err != nil {
			return fmt.Errorf("uring: mapping the queues: %w", err)
		}
		r.cqMap, r.single = r.sqMap, true
	} else {
		if r.sqMap, err = unix.Mmap(r.fd, offSQRing, sqSize, prot, flags); err != nil {
			return fmt.Errorf("uring: mapping the submission queue: %w", err)
		}
		if r.cqMap, err = unix.Mmap(r.fd, offCQRing, cqSize, prot, flags); err != nil {
			return fmt.Errorf("uring: mapping the completion queue: %w", err)
		}
	}
	if r.sqeMap, err = unix.Mmap(r.fd, offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(sqe{})), prot, flags); err != nil {
		return fmt.Errorf("uring: mapping the submission entries: %w", err)
	}
	sq, cq := r.sqMap, r.cqMap
	r.sqHead = (*uint32)(unsafe.Pointer(&sq[p.sqOff.head]))
	r.sqTail = (*uint32)(unsafe.Pointer(&sq[p.sqOff.tail]))
	r.sqMask = *(*uint32)(unsafe.Pointer(&sq[p.sqOff.ringMask]))
	r.sqArray = unsafe.Slice((*uint32)(unsafe.Pointer(&sq[p.sqOff.array])), p.sqEntries)
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&r.sqeMap[0])), p.sqEntries)
	r.cqHead = (*uint32)(unsafe.Pointer(&cq[p.cqOff.head]))
	r.cqTail = (*uint32)(unsafe.Pointer(&cq[p.cqOff.tail]))
	r.cqMask = *(*uint32)(unsafe.Pointer(&cq[p.cqOff.ringMask]))
	r.cqes = unsafe.Slice((*cqe)(unsafe.Pointer(&cq[p.cqOff.cqes])), p.cqEntries)
	r.pinned = make([]pinnedBuf, 0, p.sqEntries)
	return nil
}

// ErrClosed is returned by Read on a closed Ring.
var ErrClosed = errors.New("uring: ring closed")

// ErrFull is returned by Read when the ring already has as many reads in
// flight as it has room for.
var ErrFull = errors.New("uring: ring full")

// Read starts reading len(buf) bytes of the file fd at off into buf. The
// completion carries userData, which must differ from that of every other
// read in flight. The caller must not touch buf, and must keep fd open,
// until the completion has been collected: the kernel writes buf after
// Read returns. The ring keeps buf allocated until then.
func (r *Ring) Read(fd int, buf []byte, off int64, userData uint64) error {
	if r.fd < 0 {
		return ErrClosed
	}
	if len(buf) == 0 {
		return errors.New("uring: empty read")
	}
	if r.inFlight >= len(r.sqes) || r.inFlight >= len(r.cqes) {
		return ErrFull
	}
	tail := atomic.LoadUint32(r.sqTail)
	i := tail & r.sqMask
	r.sqes[i] = sqe{
		opcode:   opRead,
		fd:       int32(fd),
		off:      uint64(off),
		addr:     uint64(uintptr(unsafe.Pointer(&buf[0]))),
		len:      uint32(len(buf)),
		userData: userData,
	}
	r.sqArray[i] = i
	atomic.StoreUint32(r.sqTail, tail+1) // publishes the entry to the kernel
	for {
		n, _, errno := unix.Syscall6(sysEnter, uintptr(r.fd), 1, 0, 0, 0, 0)
		switch {
		case errno == unix.EINTR:
			continue
		case errno != 0 || n != 1:
			if atomic.LoadUint32(r.sqHead) != tail {
				// The kernel took the entry: its completion reports
				// how the read went.
				break
			}
			// Take the entry back, so that the next Read does not
			// submit it twice.
			atomic.StoreUint32(r.sqTail, tail)
			if errno == 0 {
				errno = unix.EAGAIN
			}
			return fmt.Errorf("uring: submitting a read: %w", errno)
		}
		r.inFlight++
		r.pinned = append(r.pinned, pinnedBuf{userData, buf})
		return nil
	}
}

// unpin forgets the buffer of the finished read with userData.
func (r *Ring) unpin(userData uint64) {
	for i, p := range r.pinned {
		if p.userData == userData {
			last := len(r.pinned) - 1
			r.pinned[i] = r.pinned[last]
			r.pinned[last] = pinnedBuf{}
			r.pinned = r.pinned[:last]
			return
		}
	}
}

// InFlight returns the number of reads started and not yet collected.
func (r *Ring) InFlight() int { return r.inFlight }

// Completion returns the next finished read: its userData and its result,
// the number of bytes read or a negative errno. With wait it blocks until
// a read finishes; without, ok is false when none has.
func (r *Ring) Completion(wait bool) (userData uint64, res int32, ok bool, err error) {
	for {
		head := atomic.LoadUint32(r.cqHead)
		if head != atomic.LoadUint32(r.cqTail) {
			c := r.cqes[head&r.cqMask]
			atomic.StoreUint32(r.cqHead, head+1) // frees the entry for the kernel
			r.inFlight--
			r.unpin(c.userData)
			return c.userData, c.res, true, nil
		}
		if !wait || r.inFlight == 0 {
			return 0, 0, false, nil
		}
		_, _, errno := unix.Syscall6(sysEnter, uintptr(r.fd), 0, 1, enterGetEvents, 0, 0)
		if errno != 0 && errno != unix.EINTR {
			return 0, 0, false, fmt.Errorf("uring: waiting for a read: %w", errno)
		}
	}
}

// Close waits for the reads in flight, then releases the ring: the
// kernel must not write into buffers that their owner reuses after Close.
// Close is idempotent.
func (r *Ring) Close() error {
	if r.fd < 0 {
		return nil
	}
	for r.inFlight > 0 && r.sqes != nil {
		if _, _, _, err := r.Completion(true); err != nil {
			break
		}
	}
	if r.sqeMap != nil {
		_ = unix.Munmap(r.sqeMap)
	}
	if r.cqMap != nil && !r.single {
		_ = unix.Munmap(r.cqMap)
	}
	if r.sqMap != nil {
		_ = unix.Munmap(r.sqMap)
	}
	*r = Ring{fd: -1}
	return nil
}

// ErrnoError turns a negative completion result into an error.
func ErrnoError(res int32) error {
	if res >= 0 {
		return nil
	}
	return unix.Errno(-res)
}
