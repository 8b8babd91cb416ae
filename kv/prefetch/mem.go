package prefetch

import (
	"math/bits"
	"sync"

	"github.com/strata-db/strata/kv/vfs"
)

// Buffer memory
//
// Prefetch regions are large (up to a window of 256 KiB by default) and
// short-lived (one iterator), so they come from pools by size class: powers
// of two and the midpoints between them (4, 6, 8, 12, 16, 24 KiB ...), so
// that a region never holds more than half again what it needs (a 1 MiB
// window plus its block takes 1.5 MiB, not 2). Memory is aligned to
// memAlign so that it serves buffered and direct I/O alike (every device
// alignment we meet divides 4096). A pool holds *memBuf, not []byte, so
// that returning memory does not allocate.

const (
	memAlign    = 4096
	minMemShift = 12 // 4 KiB
	maxMemShift = 26 // 64 MiB: MaxReadaheadSize plus room for a block
)

// memBuf is one piece of pooled memory. b is aligned to memAlign (or to the
// larger alignment it was made for) and has the length of its class.
type memBuf struct {
	b     []byte
	class int // index into memPools; -1 for memory that is not pooled
}

var memPools [2*(maxMemShift-minMemShift) + 1]sync.Pool

// memClass returns the size class of n bytes: its size and pool index.
// ok is false past the largest class.
func memClass(n int) (size, class int, ok bool) {
	shift := max(bits.Len(uint(max(n, 1)-1)), minMemShift) // 1<<shift >= n
	if shift > maxMemShift {
		return 0, 0, false
	}
	size, class = 1<<shift, 2*(shift-minMemShift)
	if shift > minMemShift && n <= 3<<(shift-2) {
		size, class = 3<<(shift-2), class-1
	}
	return size, class, true
}

// getMem returns memory of at least n bytes whose address is a multiple of
// align (a power of two).
func getMem(n, align int) *memBuf {
	size, c, ok := memClass(n)
	if !ok || align > memAlign {
		a := max(align, 1)
		return &memBuf{b: vfs.Prefault(vfs.AlignedBuffer(int(vfs.AlignUp(int64(n), a)), a)), class: -1}
	}
	if m, ok := memPools[c].Get().(*memBuf); ok {
		return m
	}
	return &memBuf{b: vfs.Prefault(vfs.AlignedBuffer(size, memAlign)), class: c}
}

// Mem is a piece of pooled read memory, for readers outside the package
// (a prepared scan's reads).
type Mem = memBuf

// GetMem returns pooled memory of at least n bytes whose address is a
// multiple of align (a power of two). Return it with PutMem.
func GetMem(n, align int) *Mem { return getMem(n, align) }

// PutMem returns m to its pool; m and its bytes must not be used
// afterwards. A nil m is ignored.
func PutMem(m *Mem) { putMem(m) }

// Bytes returns the memory, at least as long as asked for.
func (m *memBuf) Bytes() []byte { return m.b }

// putMem returns m to its pool. m must not be used afterwards.
func putMem(m *memBuf) {
	if m != nil && m.class >= 0 {
		memPools[m.class].Put(m)
	}
}
