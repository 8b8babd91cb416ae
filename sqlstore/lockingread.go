package sqlstore

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
)

// Locking reads
//
// SELECT ... FOR UPDATE and LOCK IN SHARE MODE lock the rows they read in
// InnoDB until the transaction ends, so that what the transaction decides
// from them still holds when it commits. GMS parses the clause and drops
// it. Here the key ranges such a statement reads are guarded in its
// transaction instead (txn.guard): the transaction's commit fails with
// 1213 if another transaction changed them after its snapshot. The first
// committer wins, as everywhere in this store, rather than the second
// waiting; write skew between two transactions that read FOR UPDATE and
// then write different rows is prevented the same way. Ranges are exact
// for reads through the primary key; a read through a secondary index
// guards its index ranges and the whole table, since the rows it fetches
// may change in columns the index does not hold. A locking read outside a
// transaction that writes guards nothing, as its locks would end with the
// statement.

// lockingRead reports whether the statement of ctx is a locking read. It
// looks at the statement's text; words inside a string literal may make it
// guard a read it need not, which can only make a commit fail more often.
func lockingRead(ctx *sql.Context) bool {
	if txnOf(ctx) == nil {
		return false
	}
	return stmtLockingOf(ctx).locking
}

// guardLockedRead guards the spans a locking read of table d through index
// ix is about to read (see above).
func guardLockedRead(ctx *sql.Context, d *tableDef, ix *indexDef, spans []span) {
	tx := txnOf(ctx)
	tx.guardSpans(d, ix, spans)
	if ix != d.primary {
		start := appendIndexPrefix(nil, d.id, primaryIndexID)
		tx.guard(start, prefixEnd(start))
	}
}

// containsFold reports whether s contains the lower-case ASCII sub, in any
// case, without allocating.
func containsFold(s, sub string) bool {
	first := sub[0]
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i]|0x20 == first && strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}
