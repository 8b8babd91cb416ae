package sqlstore

import (
	"bytes"
	"fmt"
	"io"

	"github.com/dolthub/go-mysql-server/sql"
)

var (
	_ sql.RowIter       = (*rowIter)(nil)
	_ sql.Partition     = scanPartition{}
	_ sql.Partition     = (*lookupPartition)(nil)
	_ sql.PartitionIter = (*partitionIter)(nil)
)

// Partitions: a table is read as one partition (GMS v0.20.0 reads
// partitions one after another, so splitting buys nothing). A full scan is a
// scanPartition; an index lookup is a lookupPartition carrying its encoded
// spans.

// Both remember the statement view's boundary when GMS asked for them
// (at = -1: none), so that a cursor reads the table as it was at OPEN.
type scanPartition struct{ at int }

func (scanPartition) Key() []byte { return []byte("scan") }

type lookupPartition struct {
	plan *lookupPlan
	at   int
}

func (*lookupPartition) Key() []byte { return []byte("lookup") }

// partitionIter yields one partition.
type partitionIter struct {
	p    sql.Partition
	done bool
}

func (it *partitionIter) Next(*sql.Context) (sql.Partition, error) {
	if it.done {
		return nil, io.EOF
	}
	it.done = true
	return it.p, nil
}

func (it *partitionIter) Close(*sql.Context) error { return nil }

// rowIter reads the rows of a table: a full scan of the primary index, or
// the spans of a lookup. It creates its engine iterators when it is made,
// so it sees the transaction as of that moment (txnIter).
//
// For a secondary index it reads the entries of each span and fetches each
// row from the primary index by key, through a second iterator made at the
// same moment, so that both see the same state. The fetches are one seek
// each for now; batching them (MultiGet) is the planner's job.
type rowIter struct {
	t     *Table // the table, with its projection
	d     *tableDef
	ix    *indexDef // nil for a full scan
	spans []span
	rev   bool
	own   func() // releases a transaction made for this iterator

	it  *txnIter // over the index read (the primary one for a full scan)
	pit *txnIter // over the primary index, for secondary lookups
	cur int      // current span
	pos bool     // positioned within spans[cur]

	pkBuf []byte
	full  sql.Row // scratch for residual checks
}

func (t *Table) newRowIter(ctx *sql.Context, plan *lookupPlan) (*rowIter, error) {
	return t.newRowIterAt(ctx, plan, -1)
}

// newRowIterAt is newRowIter reading the statement view as of boundary at
// (-1: the current one).
func (t *Table) newRowIterAt(ctx *sql.Context, plan *lookupPlan, at int) (*rowIter, error) {
	tx, release := t.store.view(ctx)
	d := t.def
	ri := &rowIter{t: t, d: d, own: release}
	primaryPrefix := appendIndexPrefix(nil, d.id, primaryIndexID)
	if plan == nil {
		ri.spans = []span{{start: primaryPrefix, end: prefixEnd(primaryPrefix)}}
		ri.ix = d.primary
	} else {
		ri.spans, ri.ix, ri.rev = plan.spans, plan.ix, plan.reverse
	}
	if len(ri.spans) == 0 {
		return ri, nil
	}
	// GMS sorts most collections of ranges, not all (boxes that overlap in
	// their first column come in any order): bound the iterator by all.
	lower, upper := ri.spans[0].start, ri.spans[0].end
	for _, sp := range ri.spans[1:] {
		if bytes.Compare(sp.start, lower) < 0 {
			lower = sp.start
		}
		if upper != nil && (sp.end == nil || bytes.Compare(sp.end, upper) > 0) {
			upper = sp.end
		}
	}
	newIter := func(lower, upper []byte) (*txnIter, error) { return tx.newStmtIterAt(lower, upper, at) }
	if t.readsCurrent {
		newIter = tx.newIter
	}
	var err error
	if ri.it, err = newIter(lower, upper); err != nil {
		release()
		return nil, err
	}
	if !ri.ix.primary {
		if ri.pit, err = newIter(primaryPrefix, prefixEnd(primaryPrefix)); err != nil {
			_ = ri.it.Close()
			release()
			return nil, err
		}
	}
	return ri, nil
}

// Next implements sql.RowIter.
func (ri *rowIter) Next(ctx *sql.Context) (sql.Row, error) {
	for ri.cur < len(ri.spans) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sp := &ri.spans[ri.cur]
		var ok bool
		if !ri.pos {
			ri.pos = true
			if ri.rev {
				if sp.end == nil {
					ok = ri.it.Last()
				} else {
					ok = ri.it.SeekLT(sp.end)
				}
			} else {
				ok = ri.it.SeekGE(sp.start)
			}
		} else if ri.rev {
			ok = ri.it.Prev()
		} else {
			ok = ri.it.Next()
		}
		if ok {
			k := ri.it.Key()
			if ri.rev {
				ok = bytes.Compare(k, sp.start) >= 0
			} else {
				ok = sp.end == nil || bytes.Compare(k, sp.end) < 0
			}
		}
		if !ok {
			if err := ri.it.Error(); err != nil {
				return nil, wrapf(err, "sqlstore: reading %s", ri.d.name)
			}
			ri.cur++
			ri.pos = false
			continue
		}
		row, found, err := ri.rowAt(ctx, sp)
		if err != nil {
			return nil, err
		}
		if found {
			return row, nil
		}
	}
	return nil, io.EOF
}

// rowAt decodes the row the iterator is on, fetching it from the primary
// index for a secondary one, and applies the span's residual checks; found
// is false when the row does not pass them.
func (ri *rowIter) rowAt(ctx *sql.Context, sp *span) (sql.Row, bool, error) {
	value := ri.it.Value()
	if !ri.ix.primary {
		prefixLen := len(appendIndexPrefix(ri.pkBuf[:0], ri.d.id, ri.ix.id))
		pk, err := ri.d.splitIndexKey(ri.ix, ri.it.Key()[prefixLen:], value)
		if err != nil {
			return nil, false, err
		}
		ri.pkBuf = appendIndexPrefix(ri.pkBuf[:0], ri.d.id, primaryIndexID)
		ri.pkBuf = append(ri.pkBuf, pk...)
		if !ri.pit.SeekGE(ri.pkBuf) || !bytes.Equal(ri.pit.Key(), ri.pkBuf) {
			if err := ri.pit.Error(); err != nil {
				return nil, false, wrapf(err, "sqlstore: reading %s", ri.d.name)
			}
			return nil, false, fmt.Errorf("%w: table %s index %s: entry %x has no row", ErrCorruptCatalog, ri.d.name, ri.ix.name, ri.it.Key())
		}
		value = ri.pit.Value()
	}
	return ri.t.decodeRow(ctx, value, sp, ri.ix, &ri.full)
}

// decodeRow decodes a stored row into the table's projection, after the
// span's residual checks (sp may be nil).
func (t *Table) decodeRow(ctx *sql.Context, value []byte, sp *span, ix *indexDef, scratch *sql.Row) (sql.Row, bool, error) {
	d := t.def
	if sp != nil && len(sp.residual) > 0 {
		full, err := d.decodeRow(value, (*scratch)[:0])
		if err != nil {
			return nil, false, err
		}
		*scratch = full
		ok, err := sp.matches(ctx, d, ix, full)
		if err != nil || !ok {
			return nil, false, err
		}
		if t.proj == nil {
			return append(sql.Row(nil), full...), true, nil
		}
		out := make(sql.Row, len(t.proj))
		for i, o := range t.proj {
			out[i] = full[o]
		}
		return out, true, nil
	}
	if t.proj == nil {
		row, err := d.decodeRow(value, nil)
		if err != nil {
			return nil, false, err
		}
		return row, true, nil
	}
	row, err := d.decodeColumns(value, t.proj, nil)
	if err != nil {
		return nil, false, err
	}
	return row, true, nil
}

// Close implements sql.RowIter.
func (ri *rowIter) Close(*sql.Context) error {
	var err error
	if ri.it != nil {
		err = ri.it.Close()
		ri.it = nil
	}
	if ri.pit != nil {
		if cerr := ri.pit.Close(); err == nil {
			err = cerr
		}
		ri.pit = nil
	}
	if ri.own != nil {
		ri.own()
		ri.own = nil
	}
	return err
}
