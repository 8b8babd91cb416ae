package mysqlcompat

import (
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/shopspring/decimal"
)

// Memory accounting
//
// The values a correction holds for a statement (GROUP_CONCAT's, with ORDER
// BY or DISTINCT, until its group ends) are charged to the statement's
// memory account when its session keeps one (MemoryAccounter), so that a
// bound on a statement's memory bounds them too. A session without an
// account charges nothing, as GMS does.

// MemoryAccount is the account of the memory a running statement's
// operators hold. They may run on several goroutines.
type MemoryAccount interface {
	// Charge adds n bytes, and fails when they take the account past its
	// bound: the statement fails with that error.
	Charge(ctx *sql.Context, n int64) error
	// Release gives back n bytes charged.
	Release(n int64)
}

// MemoryAccounter is a session that keeps an account of its running
// statement's memory.
type MemoryAccounter interface {
	StatementMemory() MemoryAccount
}

// memoryAccountOf returns the account of ctx's session, nil when it keeps
// none.
func memoryAccountOf(ctx *sql.Context) MemoryAccount {
	if ctx == nil {
		return nil
	}
	if s, ok := ctx.Session.(MemoryAccounter); ok {
		return s.StatementMemory()
	}
	return nil
}

// Sizes of what holds a row in memory, on 64-bit platforms.
const (
	rowHeaderBytes = 24 + 24 // the row's slice header, and its entry in the operator's slice
	valueBytes     = 16      // an interface
	boxedBytes     = 8       // what a boxed number points to
)

// RowBytes estimates the memory a buffered row holds, as charged to a
// MemoryAccount. It allocates nothing.
func RowBytes(row sql.Row) int64 {
	n := int64(rowHeaderBytes + valueBytes*len(row))
	for _, v := range row {
		switch v := v.(type) {
		case nil:
		case string:
			n += 16 + int64(len(v))
		case []byte:
			n += 24 + int64(len(v))
		case decimal.Decimal:
			n += 40
		case time.Time:
			n += 24
		case sql.StringWrapper, sql.BytesWrapper, sql.JSONWrapper:
			n += 64
		default:
			n += boxedBytes
		}
	}
	return n
}
