package codec

import "unsafe"

// Int64s boxes int64 values without an allocation per value, as an Arena
// does for the values it decodes (box.go): each value is written once into
// a slot of a slab that many values share, and the interface points at its
// slot. A caller that converts narrower integers to int64 for its own
// callers (sqlstore.Rows, for database/sql) would otherwise allocate an
// 8-byte copy for every value. The zero Int64s is ready to use; it is not
// safe for concurrent use.
type Int64s struct {
	words []int64
	n     int
}

// Box returns v as an interface.
func (w *Int64s) Box(v int64) any {
	if len(w.words) == 0 {
		w.n = min(max(2*w.n, arenaFirstWords), arenaWords)
		w.words = make([]int64, w.n)
	}
	p := &w.words[0]
	w.words = w.words[1:]
	*p = v
	return makeAny(int64Type, unsafe.Pointer(p))
}
