package vfs

import "unsafe"

// AlignedBuffer returns a zeroed slice of length n whose first byte sits at
// an address that is a multiple of align (a power of two). Go's collector
// does not move heap objects, so the alignment holds for the slice's life.
func AlignedBuffer(n, align int) []byte {
	if align <= 1 {
		return make([]byte, n)
	}
	b := make([]byte, n+align)
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) & uintptr(align-1))
	if off != 0 {
		off = align - off
	}
	return b[off : off+n : off+n]
}

// IsAligned reports whether p's address and length are multiples of align.
func IsAligned(p []byte, align int) bool {
	if align <= 1 {
		return true
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(p)))&uintptr(align-1) == 0 && len(p)%align == 0
}

// AlignDown rounds off down to a multiple of align (a power of two).
func AlignDown(off int64, align int) int64 { return off &^ int64(align-1) }

// AlignUp rounds off up to a multiple of align (a power of two).
func AlignUp(off int64, align int) int64 { return (off + int64(align-1)) &^ int64(align-1) }
