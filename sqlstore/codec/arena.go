package codec

import (
	"sync"
	"unsafe"

	"github.com/dolthub/go-mysql-server/sql"
)

// An Arena hands out the memory of decoded rows in chunks. Decoding a row
// on its own allocates its slice of values and a copy of each string; a
// scan decodes thousands of rows, and these allocations were a quarter of
// its decoding time. Through an Arena, the value slices of many rows come
// from one allocation, and so do the bytes of their strings and the
// interfaces that box their values (box.go).
//
// The rows stay valid for as long as anything refers to them, like rows
// decoded without an Arena (go-mysql-server may keep them): a row keeps its
// chunk alive, which is the price (at most a chunk per row kept). Strings
// from an Arena point into a chunk that nothing writes again. The zero
// Arena is ready for use; an Arena is not safe for concurrent use.
//
// Chunks start small and double up to a limit, so that a statement that
// decodes one row does not allocate and clear memory for hundreds. Better,
// a statement takes an Arena from a pool (GetArena) and gives it back when
// done (Release): what its rows left of the chunks serves the next
// statements, so that most statements allocate no chunk, and the chunks
// are the largest size from the start.
type Arena struct {
	slots []any
	bytes []byte
	// words and strs are the slots values are boxed in (see box.go).
	words []uint64
	strs  []string
	// nslots, nbytes, nwords and nstrs are the sizes of the last chunks
	// made.
	nslots, nbytes, nwords, nstrs int

	// rows counts the rows decoded. The first is decoded as without an
	// Arena but for its slice and strings: slabs and kinds pay off from
	// the second row on, and a statement that reads one row (a point
	// select) should not pay for them.
	rows int

	// kinds are the column kinds of the schema whose columns are at
	// kindsSch (schemas are not modified once made).
	kinds    []kind
	kindsSch **sql.Column
}

// Chunk sizes: from a row or two of a few columns and 512 bytes of strings
// up to about 64 rows and 10 KiB. A string longer than a quarter of the
// current byte chunk gets its own allocation, as does a row wider than a
// quarter of the largest value chunk.
//
// The largest sizes are chosen for Go's allocator: 10 KiB, not 8, since an
// 8 KiB object takes a span of its own, which the runtime must find, set
// up and sweep for each chunk; 10 KiB objects come four to a span, and
// cost about two thirds as much per byte.
const (
	arenaFirstSlots = 16
	arenaSlots      = 256
	arenaFirstBytes = 512
	arenaBytes      = 10 << 10
)

var arenaPool = sync.Pool{New: func() any { return new(Arena) }}

// GetArena returns an Arena from a pool. Its chunks may hold rows of
// earlier statements, which stay valid: nothing an Arena hands out is
// written again, and a statement only takes what is left. Release it when
// its statement is done.
func GetArena() *Arena { return arenaPool.Get().(*Arena) }

// Release returns a to the pool GetArena takes from. The rows a decoded
// stay valid; a itself must not be used again.
func (a *Arena) Release() { arenaPool.Put(a) }

// DecodeRow is DecodeRow with the row and its strings taken from a.
func (a *Arena) DecodeRow(b []byte, sch sql.Schema) (sql.Row, error) {
	a.rows++
	return decodeRow(b, sch, a.row(len(sch)), a)
}

// DecodeRowColumns is DecodeRowColumns with the row and its strings taken
// from a.
func (a *Arena) DecodeRowColumns(b []byte, sch sql.Schema, cols []int) (sql.Row, error) {
	a.rows++
	return decodeRowColumns(b, sch, cols, a.row(len(cols)), a)
}

// row returns an empty row with capacity n that no other row shares.
func (a *Arena) row(n int) sql.Row {
	if n > arenaSlots/4 {
		return make(sql.Row, 0, n)
	}
	if len(a.slots) < n {
		a.nslots = min(max(2*a.nslots, arenaFirstSlots, n), arenaSlots)
		a.slots = make([]any, a.nslots)
	}
	r := a.slots[:0:n]
	a.slots = a.slots[n:]
	return r
}

// string returns a string holding a copy of b.
func (a *Arena) string(b []byte) string {
	n := len(b)
	if n == 0 {
		return ""
	}
	if n > arenaBytes/4 {
		return string(b)
	}
	if len(a.bytes) < n {
		a.nbytes = min(max(2*a.nbytes, arenaFirstBytes), arenaBytes)
		if n > a.nbytes/4 {
			// Too long to share this chunk size; the next chunk is larger.
			return string(b)
		}
		a.bytes = make([]byte, a.nbytes)
	}
	c := a.bytes[:n:n]
	a.bytes = a.bytes[n:]
	copy(c, b)
	return unsafe.String(unsafe.SliceData(c), n)
}
