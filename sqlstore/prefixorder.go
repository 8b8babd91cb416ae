package sqlstore

import (
	"bytes"
	"io"
	"sort"

	"github.com/dolthub/go-mysql-server/sql"
)

// prefixRuns puts the rows of a scan over an index with a prefix-length
// column (KEY (v(2))) in the order of the columns' full values.
//
// Such an index orders its entries by the prefixes and then by primary
// key, so rows whose indexed prefixes are equal ('hello', 'he', 'hez')
// come in primary key order. The index declares no order (Index.Order),
// but when a lookup reads through it GMS drops an ORDER BY over its
// columns all the same, trusting the index's expressions. So the scan
// sorts each run of rows with equal indexed prefixes by the full values,
// which puts the whole scan in order; a run is buffered whole, and it
// holds the rows that share a prefix, which a prefix long enough to be
// worth indexing keeps short.
//
// (Collations that expand a character into several weights, where 'ß'
// sorts as 'ss', can order two prefixes unlike their full values; MySQL
// never reads such an index in place of a sort. That case is not handled.)
//
// Targets GMS v0.20.0. Without it, TestPrefixIndexOrder fails.
type prefixRuns struct {
	d   *tableDef
	ix  *indexDef
	rev bool // the scan runs backwards: each run sorts descending

	// The indexed prefix and full index column values of the last row the
	// fetcher returned (note).
	key  []byte
	vals sql.Row

	run     []runRow // the current run, sorted
	i       int      // the next row of run to return
	pending runRow   // the first row of the next run, read ahead
	ahead   bool     // pending holds a row
	done    bool     // the fetcher is exhausted
}

type runRow struct {
	key  []byte  // the encoded indexed prefix
	vals sql.Row // the index columns' full values
	row  sql.Row // the row returned
}

// note records the indexed prefix and the full index values of the row
// stored as value, which the fetcher is about to return.
func (p *prefixRuns) note(value []byte) error {
	full, err := p.d.decodeRow(value, nil, nil)
	if err != nil {
		return err
	}
	if p.key, _, err = p.d.appendIndexCols(nil, p.ix, full); err != nil {
		return err
	}
	p.vals = make(sql.Row, len(p.ix.cols))
	for i, o := range p.ix.cols {
		p.vals[i] = full[o]
	}
	return nil
}

// next returns the next row of f in the order of the full values.
func (p *prefixRuns) next(ctx *sql.Context, f *fetcher) (sql.Row, error) {
	for p.i >= len(p.run) {
		if p.done && !p.ahead {
			return nil, io.EOF
		}
		clear(p.run)
		p.run, p.i = p.run[:0], 0
		if p.ahead {
			p.run, p.ahead = append(p.run, p.pending), false
		}
		for !p.done {
			row, err := f.next(ctx)
			if err == io.EOF {
				p.done = true
				break
			}
			if err != nil {
				return nil, err
			}
			r := runRow{key: p.key, vals: p.vals, row: row}
			if len(p.run) > 0 && !bytes.Equal(r.key, p.run[0].key) {
				p.pending, p.ahead = r, true
				break
			}
			p.run = append(p.run, r)
		}
		if err := p.sortRun(ctx); err != nil {
			return nil, err
		}
	}
	r := p.run[p.i]
	p.i++
	return r.row, nil
}

// sortRun sorts the current run by the full index values, ascending, or
// descending for a backward scan. Rows with equal values keep the index's
// order.
func (p *prefixRuns) sortRun(ctx *sql.Context) error {
	if len(p.run) < 2 {
		return nil
	}
	var cmpErr error
	sort.SliceStable(p.run, func(a, b int) bool {
		for i, o := range p.ix.cols {
			c, err := p.d.schema[o].Type.Compare(ctx, p.run[a].vals[i], p.run[b].vals[i])
			if err != nil {
				if cmpErr == nil {
					cmpErr = err
				}
				return false
			}
			if c != 0 {
				return (c < 0) != p.rev
			}
		}
		return false
	})
	if cmpErr != nil {
		return wrapf(cmpErr, "sqlstore: ordering index %s of %s", p.ix.name, p.d.name)
	}
	return nil
}
