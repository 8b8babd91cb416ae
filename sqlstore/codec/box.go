package codec

import (
	"unsafe"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Boxing without an allocation per value
//
// GMS rows are []any, and putting a string or an integer of more than a
// byte into an interface allocates a copy of it: 16 bytes for a string
// header, 8 for an int64, each its own small object for the garbage
// collector. A scan of short rows spent as long on those copies as on
// decoding. An Arena keeps slabs of string headers and of 8-byte words and
// builds each interface by hand, pointing at its slot in a slab: the same
// two words the compiler would build, with the data in memory the Arena
// allocated for many values at once.
//
// This is sound because an interface only needs its data pointer to point
// at a value of its dynamic type that nothing modifies: a slot is written
// once, before the interface is made, and never again (slabs are only ever
// consumed from the front). A slot keeps its slab alive, as a string keeps
// its chunk.

// eface is the layout of an interface with no methods (any).
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// typeOf returns the type word of v's interface.
func typeOf(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

// The type words of the values an Arena boxes.
var (
	stringType   = typeOf("")
	int16Type    = typeOf(int16(0))
	int32Type    = typeOf(int32(0))
	int64Type    = typeOf(int64(0))
	uint16Type   = typeOf(uint16(0))
	uint32Type   = typeOf(uint32(0))
	uint64Type   = typeOf(uint64(0))
	float32Type  = typeOf(float32(0))
	float64Type  = typeOf(float64(0))
	timespanType = typeOf(types.Timespan(0))
)

// makeAny returns the interface of dynamic type typ whose value is at data.
func makeAny(typ, data unsafe.Pointer) (v any) {
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = typ, data
	return v
}

// Slab sizes, in values: they start small and double, like the other
// chunks, to 4 KiB of words and 10 KiB of string headers (sizes Go's
// allocator serves several to a span, see arenaBytes).
const (
	arenaFirstWords = 16
	arenaWords      = 512
	arenaStrs       = 640
)

// word returns an unused 8-byte slot.
func (a *Arena) word() unsafe.Pointer {
	if len(a.words) == 0 {
		a.nwords = min(max(2*a.nwords, arenaFirstWords), arenaWords)
		a.words = make([]uint64, a.nwords)
	}
	p := unsafe.Pointer(&a.words[0])
	a.words = a.words[1:]
	return p
}

// box boxes v, a value of at most 8 bytes without pointers whose type word
// is typ: in a slot of a when a is not nil, else as Go does.
func box[T int16 | int32 | int64 | uint16 | uint32 | uint64 | float32 | float64 | types.Timespan](a *Arena, typ unsafe.Pointer, v T) any {
	if a == nil {
		return v
	}
	p := a.word()
	*(*T)(p) = v
	return makeAny(typ, p)
}

// boxString boxes s in a slot of a.
func (a *Arena) boxString(s string) any {
	if len(a.strs) == 0 {
		a.nstrs = min(max(2*a.nstrs, arenaFirstWords), arenaStrs)
		a.strs = make([]string, a.nstrs)
	}
	p := &a.strs[0]
	a.strs = a.strs[1:]
	*p = s
	return makeAny(stringType, unsafe.Pointer(p))
}

// boxer returns a when the values of the row being decoded are to be boxed
// in its slabs (from its second row on), else nil.
func (a *Arena) boxer() *Arena {
	if a == nil || a.rows < 2 {
		return nil
	}
	return a
}

// kindsOf returns the kinds of sch's columns, computed once for the
// schema a decodes the rows of (a scan decodes one schema's rows), or nil
// when a is nil or decodes its first row.
func (a *Arena) kindsOf(sch sql.Schema) []kind {
	if len(sch) == 0 || a.boxer() == nil {
		return nil
	}
	if len(a.kinds) == len(sch) && a.kindsSch == unsafe.SliceData(sch) {
		return a.kinds
	}
	a.kinds = a.kinds[:0]
	for _, c := range sch {
		a.kinds = append(a.kinds, kindOf(c.Type))
	}
	a.kindsSch = unsafe.SliceData(sch)
	return a.kinds
}

// kindAt returns the kind of column i of type typ: kinds[i] when the kinds
// were computed (kindsOf), else from typ.
func kindAt(kinds []kind, i int, typ sql.Type) kind {
	if kinds != nil {
		return kinds[i]
	}
	return kindOf(typ)
}
