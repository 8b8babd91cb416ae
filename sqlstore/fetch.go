package sqlstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/strata-db/strata/planner"
	"github.com/strata-db/strata/storage"
)

// fetcher is the second step of a secondary-index plan: it turns the
// index entries of the row iterator's source into rows of the primary
// index. With kind MultiGet it collects the primary keys of up to batch
// entries, reads their rows with one MultiGet and returns them in index
// order; with Get it reads each row with a Get. With pit set (the reader
// may change under the statement, access.go), it seeks pit to each key
// instead.
type fetcher struct {
	ri    *rowIter
	kind  planner.Kind
	batch int
	r     storage.Reader
	ro    *storage.ReadOptions
	pit   *txnIter
	// runs, for an index with a prefix-length column, is told the full
	// values of each row returned, to order runs of equal prefixes.
	runs *prefixRuns

	// A batch: keys[i] (in arena) is the primary key of the entry of span
	// spans[i]; vals[i] its row.
	arena []byte
	ends  []int
	keys  [][]byte
	spans []int
	vals  [][]byte
	i     int
	// first is the memory of the batch slices above until a batch
	// outgrows it: a lookup on a secondary index usually fetches one row
	// or a few, and appending to empty slices would allocate five times
	// for the first row and again for each doubling.
	first struct {
		arena [80]byte
		ends  [fetchFirst]int
		spans [fetchFirst]int
		keys  [fetchFirst][]byte
		vals  [fetchFirst][]byte
	}
}

// fetchFirst is the number of rows a fetcher's first memory holds.
const fetchFirst = 4

// pkKey appends the primary index key of the source's current entry.
func (f *fetcher) pkKey(dst []byte) ([]byte, error) {
	ri := f.ri
	key, value, _ := ri.src.entry()
	prefixLen := indexPrefixLen(ri.d.id, ri.ix.id)
	pk, err := ri.d.splitIndexKey(ri.ix, key[prefixLen:], value)
	if err != nil {
		return dst, err
	}
	dst = appendIndexPrefix(dst, ri.d.id, primaryIndexID)
	return append(dst, pk...), nil
}

// indexPrefixLen returns the length of the prefix of an index's keys.
func indexPrefixLen(table uint64, index uint32) int {
	var buf [24]byte
	return len(appendIndexPrefix(buf[:0], table, index))
}

func (f *fetcher) next(ctx *sql.Context) (sql.Row, error) {
	if f.kind == planner.MultiGet && f.pit == nil {
		return f.nextBatched(ctx)
	}
	ri := f.ri
	for {
		ok, err := ri.src.next(ctx)
		if err != nil {
			return nil, wrapf(err, "sqlstore: reading %s", ri.d.name)
		}
		if !ok {
			return nil, io.EOF
		}
		_, _, sp := ri.src.entry()
		if f.arena == nil {
			f.arena = f.first.arena[:0]
		}
		if f.arena, err = f.pkKey(f.arena[:0]); err != nil {
			return nil, err
		}
		value, err := f.get(f.arena)
		if err != nil {
			return nil, err
		}
		row, found, err := ri.t.decodeRow(ctx, value, &ri.spans[sp], ri.ix, &ri.full, ri.rowArena())
		if err != nil {
			return nil, err
		}
		if found {
			return row, f.noteRun(value)
		}
	}
}

// noteRun tells runs, when set, about the row stored as value.
func (f *fetcher) noteRun(value []byte) error {
	if f.runs == nil {
		return nil
	}
	return f.runs.note(value)
}

// get reads the row of primary key key, which must exist.
func (f *fetcher) get(key []byte) ([]byte, error) {
	if f.pit != nil {
		if !f.pit.SeekGE(key) || !bytes.Equal(f.pit.Key(), key) {
			if err := f.pit.Error(); err != nil {
				return nil, wrapf(err, "sqlstore: reading %s", f.ri.d.name)
			}
			return nil, f.missing(key)
		}
		return f.pit.Value(), nil
	}
	v, err := f.r.Get(key, f.ro)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, f.missing(key)
	}
	if err != nil {
		return nil, wrapf(err, "sqlstore: reading %s", f.ri.d.name)
	}
	return v, nil
}

func (f *fetcher) missing(key []byte) error {
	return fmt.Errorf("%w: table %s index %s: an entry points at primary key %x, which has no row", ErrCorruptCatalog, f.ri.d.name, f.ri.ix.name, key)
}

// nextBatched returns the next row of the current batch, reading the next
// batch when it is used up.
func (f *fetcher) nextBatched(ctx *sql.Context) (sql.Row, error) {
	ri := f.ri
	for {
		for f.i < len(f.vals) {
			i := f.i
			f.i++
			if f.vals[i] == nil {
				return nil, f.missing(f.keys[i])
			}
			row, found, err := ri.t.decodeRow(ctx, f.vals[i], &ri.spans[f.spans[i]], ri.ix, &ri.full, ri.rowArena())
			if err != nil {
				return nil, err
			}
			if found {
				return row, f.noteRun(f.vals[i])
			}
		}
		n, err := f.fill(ctx)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, io.EOF
		}
	}
}

// fill reads the next batch and returns its size.
func (f *fetcher) fill(ctx *sql.Context) (int, error) {
	ri := f.ri
	if f.ends == nil {
		x := &f.first
		f.arena, f.ends, f.spans, f.keys, f.vals = x.arena[:0], x.ends[:0], x.spans[:0], x.keys[:0], x.vals[:0]
	}
	f.arena, f.ends, f.spans = f.arena[:0], f.ends[:0], f.spans[:0]
	f.i = 0
	for len(f.spans) < f.batch {
		ok, err := ri.src.next(ctx)
		if err != nil {
			return 0, wrapf(err, "sqlstore: reading %s", ri.d.name)
		}
		if !ok {
			break
		}
		_, _, sp := ri.src.entry()
		if f.arena, err = f.pkKey(f.arena); err != nil {
			return 0, err
		}
		f.ends = append(f.ends, len(f.arena))
		f.spans = append(f.spans, sp)
	}
	f.keys = f.keys[:0]
	start := 0
	for _, end := range f.ends {
		f.keys = append(f.keys, f.arena[start:end:end])
		start = end
	}
	switch len(f.keys) {
	case 0:
		f.vals = f.vals[:0]
		return 0, nil
	case 1:
		// One row (the usual equality on a secondary index): a Get is
		// cheaper than a MultiGet of one key.
		v, err := f.r.Get(f.keys[0], f.ro)
		if errors.Is(err, storage.ErrNotFound) {
			v, err = nil, nil
		}
		if err != nil {
			return 0, wrapf(err, "sqlstore: reading %s", ri.d.name)
		}
		f.vals = append(f.vals[:0], v)
		return 1, nil
	}
	vals, err := multiGet(f.r, f.keys, f.ro, f.vals)
	if err != nil {
		return 0, wrapf(err, "sqlstore: reading %s", ri.d.name)
	}
	f.vals = vals
	return len(f.keys), nil
}

func (f *fetcher) close() error {
	if f.pit == nil {
		return nil
	}
	err := f.pit.Close()
	f.pit = nil
	return err
}
