package sqlstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/strata-db/strata/mysqlcompat"
	"github.com/strata-db/strata/sqlstore/codec"
)

// Sorting and DISTINCT in plan templates.
//
// A prepared range read with ORDER BY over a column the index does not
// order (SELECT c ... WHERE id BETWEEN ? AND ? ORDER BY c) spent a third
// of its time in GMS's Sort: sort.Stable over the rows, each comparison
// evaluating both rows' sort expressions and calling the column type's
// Compare, which converts both values and, for strings, walks the
// collation rune by rune. With DISTINCT, GMS's Distinct hashes each row
// by printing its values with fmt. A template (plantemplate.go) has these
// operators (a Sort, a TopN, a Distinct, and Projects of plain columns
// right around them) replaced by one node, keySort, that computes each
// row's sort key once, as the memcomparable key of each sort column
// (codec.AppendKey, whose byte order is the column type's Compare,
// collation included) into one buffer, and sorts row numbers by the keys'
// first 8 bytes, then bytes.Compare of the keys, the row number breaking
// ties as a stable sort does. DISTINCT keeps the first row of each key of
// all its columns, in a hash set of offsets into the same kind of buffer.
// A TopN (ORDER BY ... LIMIT n) keeps the first n rows whenever 2n have
// come. The buffers are reused from statement to statement.
//
// It replaces only what it reproduces exactly:
//
//   - sort fields that are columns of the input, of integer, string or
//     binary-string types, NULLs first ascending and last descending (as
//     MySQL and GMS's default order);
//   - DISTINCT over columns whose keys are equal exactly when GMS's
//     Distinct finds the values equal: integers, and strings under the
//     binary and code-point collations (utf8mb4_0900_bin, utf8mb4_bin,
//     binary). Under a case- or accent-insensitive collation GMS's
//     Distinct keeps 'a' and 'A' apart where MySQL keeps one: such a
//     statement stays with GMS's operators rather than answer otherwise
//     than the general path.
//
// The rows it keeps are charged to the statement's memory quota as the
// quotaNode under a Sort charges them (memquota.go).

// keySort is the node that replaces a Sort, with the Distinct right under
// it when there is one, or a Distinct alone.
type keySort struct {
	child    sql.Node // the input: what was under the Sort's quotaNode or the Distinct
	fields   []keyField
	distinct bool
	exec     sql.NodeExecBuilder
	orig     sql.Node // the replaced operators, for printing

	// in and out are the columns of Projects of plain columns absorbed
	// below (in: the rows sorted are the input's columns in) and above
	// (out: the rows returned) the replaced operators, nil for none, with
	// the schemas they give. A row is projected in place, in the memory
	// the input returned it in (a row of the table's, nothing else holds
	// it), where GMS's Project allocates a new row for each.
	in, out       []int
	inSch, outSch sql.Schema

	// limit, for a TopN, is how many rows to return: the sort keeps at
	// most twice as many (and at least 64 more) at any time, and, as
	// GMS's TopN, does not charge them to the memory quota.
	limit *expression.Literal
}

// keyField is one sort field: the input column and its direction.
type keyField struct {
	col int
	typ sql.Type
	dir codec.Direction
}

var (
	_ sql.ExecSourceRel      = (*keySort)(nil)
	_ sql.CollationCoercible = (*keySort)(nil)
)

// sortByKeys returns n with every Sort, TopN and Distinct that keySort
// reproduces replaced by one; exec builds the iterators of their inputs.
func sortByKeys(n sql.Node, exec sql.NodeExecBuilder) sql.Node {
	if exec == nil {
		return n
	}
	out, _, err := transform.Node(n, func(c sql.Node) (sql.Node, transform.TreeIdentity, error) {
		switch c := c.(type) {
		case *plan.Sort:
			if q, ok := c.Child.(*quotaNode); ok {
				if ks := newKeySort(c, c.SortFields, q.child, exec); ks != nil {
					return ks, transform.NewTree, nil
				}
			}
		case *plan.TopN:
			// GMS's TopN keeps the first Limit rows in the order of the
			// fields and then of arrival, as keySort with a limit does.
			if lit, ok := c.Limit.(*expression.Literal); ok && !c.CalcFoundRows {
				if ks := newKeySort(c, c.Fields, c.Child, exec); ks != nil {
					ks.limit = lit
					return ks, transform.NewTree, nil
				}
			}
		case *plan.Distinct:
			ks := &keySort{child: c.Child, distinct: true, exec: exec, orig: c}
			ks.absorbInput()
			if distinctByKeys(ks.sortSchema()) {
				return ks, transform.NewTree, nil
			}
		case *plan.Project:
			// A Project of plain columns over a sort: the rows are
			// projected in place.
			if ks, ok := c.Child.(*keySort); ok && ks.out == nil && readsTable(ks.child) {
				if cols, ok := plainColumns(c, ks.Schema()); ok {
					nk := *ks
					nk.out, nk.outSch = cols, c.Schema()
					return &nk, transform.NewTree, nil
				}
			}
		default:
			// mysqlcompat's Distinct by keys, which keySort's keys equal.
			in, ok := mysqlcompat.DistinctInput(c)
			if !ok {
				break
			}
			ks := &keySort{child: in, distinct: true, exec: exec, orig: c}
			ks.absorbInput()
			if distinctByKeys(ks.sortSchema()) {
				return ks, transform.NewTree, nil
			}
		}
		return c, transform.SameTree, nil
	})
	if err != nil {
		return n
	}
	return out
}

// newKeySort returns the keySort of a Sort or TopN s by fields over
// input, or nil when it does not reproduce s exactly (see the top of this
// file).
func newKeySort(s sql.Node, fields sql.SortFields, input sql.Node, exec sql.NodeExecBuilder) *keySort {
	ks := &keySort{child: input, exec: exec, orig: s}
	if in, ok := mysqlcompat.DistinctInput(input); ok {
		// mysqlcompat's Distinct by keys, which keySort's keys equal.
		input = plan.NewDistinct(in)
	}
	switch c := input.(type) {
	case *plan.Distinct:
		ks.child, ks.distinct = c.Child, true
		ks.absorbInput()
	case *keySort:
		// transform.Node replaced the Distinct first.
		if !c.distinct || len(c.fields) > 0 || c.out != nil {
			return nil
		}
		ks.child, ks.distinct, ks.in, ks.inSch = c.child, true, c.in, c.inSch
	default:
		ks.absorbInput()
	}
	sch := ks.sortSchema()
	if ks.distinct && !distinctByKeys(sch) {
		return nil
	}
	for _, f := range fields {
		col := f.Column
		if in, ok := mysqlcompat.KeyedColumn(col); ok {
			// mysqlcompat sorts PAD SPACE strings by their keys, as
			// keySort does.
			col = in
		}
		gf, ok := col.(*expression.GetField)
		if !ok || gf.Index() < 0 || gf.Index() >= len(sch) || f.NullOrdering != sql.NullsFirst {
			return nil
		}
		typ := sch[gf.Index()].Type
		if !sortableByKey(typ) || !typ.Equals(gf.Type()) {
			return nil
		}
		dir := codec.Asc
		if f.Order == sql.Descending {
			dir = codec.Desc
		}
		ks.fields = append(ks.fields, keyField{col: gf.Index(), typ: typ, dir: dir})
	}
	if len(ks.fields) == 0 {
		return nil
	}
	return ks
}

// absorbInput takes a Project of plain columns right under the operators
// k replaces into k.
func (k *keySort) absorbInput() {
	pr, ok := k.child.(*plan.Project)
	if !ok || !readsTable(pr.Child) {
		return
	}
	if cols, ok := plainColumns(pr, pr.Child.Schema()); ok {
		k.child, k.in, k.inSch = pr.Child, cols, pr.Schema()
	}
}

// readsTable reports whether n is a table access, whose rows are decoded
// for the caller alone: nothing else holds them, so they can be projected
// in place.
func readsTable(n sql.Node) bool {
	_, ok := n.(*plan.IndexedTableAccess)
	return ok
}

// plainColumns returns the input columns of a Project that only picks
// columns of its input schema sch, no more of them than sch has (so that
// a row can be projected in place).
func plainColumns(pr *plan.Project, sch sql.Schema) ([]int, bool) {
	if len(pr.Projections) > len(sch) {
		return nil, false
	}
	cols := make([]int, len(pr.Projections))
	for i, x := range pr.Projections {
		gf, ok := x.(*expression.GetField)
		if !ok || gf.Index() < 0 || gf.Index() >= len(sch) || !gf.Type().Equals(sch[gf.Index()].Type) {
			return nil, false
		}
		cols[i] = gf.Index()
	}
	return cols, true
}

// sortSchema is the schema of the rows sorted: the input's, projected.
func (k *keySort) sortSchema() sql.Schema {
	if k.in != nil {
		return k.inSch
	}
	return k.child.Schema()
}

// project projects row to cols in place.
func project(row sql.Row, cols []int, tmp *[]any) sql.Row {
	t := (*tmp)[:0]
	for _, c := range cols {
		t = append(t, row[c])
	}
	*tmp = t
	row = row[:len(cols)]
	copy(row, t)
	return row
}

// sortableByKey reports whether keys of typ order its values as
// typ.Compare does, equal keys for equal values.
func sortableByKey(typ sql.Type) bool {
	switch {
	case types.IsInteger(typ):
		return true
	case types.IsText(typ), types.IsBinaryType(typ):
		_, err := codec.AppendKey(nil, typ, "", codec.Asc)
		return err == nil
	}
	return false
}

// distinctByKeys reports whether the rows of sch are equal under GMS's
// Distinct exactly when their keys are.
func distinctByKeys(sch sql.Schema) bool {
	if len(sch) == 0 {
		return false
	}
	for _, c := range sch {
		switch {
		case types.IsInteger(c.Type):
		case types.IsBinaryType(c.Type):
		case types.IsText(c.Type):
			st, ok := c.Type.(sql.StringType)
			if !ok {
				return false
			}
			switch st.Collation() {
			case sql.Collation_binary, sql.Collation_utf8mb4_0900_bin, sql.Collation_utf8mb4_bin:
			default:
				return false
			}
		default:
			return false
		}
	}
	return true
}

func (k *keySort) Schema() sql.Schema {
	if k.out != nil {
		return k.outSch
	}
	return k.sortSchema()
}

func (k *keySort) Children() []sql.Node { return []sql.Node{k.child} }
func (k *keySort) Resolved() bool       { return k.child.Resolved() }
func (k *keySort) IsReadOnly() bool     { return k.child.IsReadOnly() }
func (k *keySort) String() string       { return k.orig.String() }
func (k *keySort) DebugString() string  { return sql.DebugString(k.orig) }

func (k *keySort) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, k.child)
}

func (k *keySort) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(k, len(children), 1)
	}
	nk := *k
	nk.child = children[0]
	return &nk, nil
}

// RowIter implements sql.ExecSourceRel.
func (k *keySort) RowIter(ctx *sql.Context, row sql.Row) (sql.RowIter, error) {
	child, err := k.exec.Build(ctx, k.child, row)
	if err != nil {
		return nil, err
	}
	it := &keySortIter{k: k, child: child, s: sortScratchPool.Get().(*sortScratch), limit: -1}
	if k.limit != nil {
		if it.limit, err = limitValue(ctx, k.limit); err != nil {
			_ = it.Close(ctx)
			return nil, err
		}
	} else if len(k.fields) > 0 {
		it.acct = memAccountOf(ctx)
	}
	return it, nil
}

// limitValue returns the value of a LIMIT.
func limitValue(ctx *sql.Context, lit *expression.Literal) (int64, error) {
	v, err := lit.Eval(ctx, nil)
	if err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint64:
		return int64(min(x, 1<<62)), nil
	}
	return 0, fmt.Errorf("sqlstore: LIMIT of type %T", v)
}

// sortScratch is the memory of one keySortIter, pooled.
type sortScratch struct {
	rows  []sql.Row
	keys  []byte      // sort keys, one after another
	ends  []int32     // the end of row i's sort key in keys
	order []sortEntry // the rows, sorted

	seed  maphash.Seed
	dkeys []byte  // DISTINCT keys of the rows kept
	dends []int32 // the end of kept row i's DISTINCT key in dkeys
	slots []int32 // hash set of kept rows: 1 + row number, 0 empty
	used  int

	tmp []any // a row's values while it is projected

	// The kept rows while a TopN drops the others (keep).
	keys2 []byte
	ends2 []int32
	rows2 []sql.Row
}

var sortScratchPool = sync.Pool{New: func() any { return &sortScratch{seed: maphash.MakeSeed()} }}

// maxPooledScratch is the largest scratch memory (key bytes) given back to
// the pool: a sort of a million rows should not pin its buffers.
const maxPooledScratch = 1 << 20

// keySortIter sorts (or makes distinct) the rows of child.
type keySortIter struct {
	k       *keySort
	child   sql.RowIter
	s       *sortScratch
	acct    *memAccount
	charged int64
	limit   int64 // -1: none
	sorted  bool
	pos     int
}

func (it *keySortIter) Next(ctx *sql.Context) (sql.Row, error) {
	if it.s == nil {
		return nil, io.EOF
	}
	if len(it.k.fields) == 0 {
		return it.nextDistinct(ctx)
	}
	if !it.sorted {
		if err := it.sort(ctx); err != nil {
			return nil, err
		}
		it.sorted = true
	}
	s := it.s
	if it.pos >= len(s.order) {
		return nil, io.EOF
	}
	row := s.rows[s.order[it.pos].row]
	it.pos++
	if it.k.out != nil {
		row = project(row, it.k.out, &s.tmp)
	}
	return row, nil
}

// nextDistinct returns the next row of child not seen before.
func (it *keySortIter) nextDistinct(ctx *sql.Context) (sql.Row, error) {
	for {
		row, err := it.child.Next(ctx)
		if err != nil {
			return nil, err
		}
		if it.k.in != nil {
			row = project(row, it.k.in, &it.s.tmp)
		}
		fresh, err := it.s.add(row, it.k.sortSchema())
		if err != nil {
			return nil, err
		}
		if fresh {
			if it.k.out != nil {
				row = project(row, it.k.out, &it.s.tmp)
			}
			return row, nil
		}
	}
}

// sort reads every row of child and orders them.
func (it *keySortIter) sort(ctx *sql.Context) error {
	s := it.s
	sch := it.k.sortSchema()
	for {
		row, err := it.child.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if it.k.in != nil {
			row = project(row, it.k.in, &s.tmp)
		}
		if it.k.distinct {
			fresh, err := s.add(row, sch)
			if err != nil {
				return err
			}
			if !fresh {
				continue
			}
		}
		if it.acct != nil {
			n := mysqlcompat.RowBytes(row)
			it.charged += n
			if err := it.acct.Charge(ctx, n); err != nil {
				return err
			}
		}
		for _, f := range it.k.fields {
			if s.keys, err = codec.AppendKey(s.keys, f.typ, row[f.col], f.dir); err != nil {
				return sql.ErrUnableSort.Wrap(err)
			}
		}
		if len(s.keys) > 1<<31-1 {
			return fmt.Errorf("sqlstore: sort keys of more than 2 GiB")
		}
		s.ends = append(s.ends, int32(len(s.keys)))
		s.rows = append(s.rows, row)
		if it.limit >= 0 && int64(len(s.rows)) >= max(2*it.limit, it.limit+64) {
			s.order = s.sortRows(s.order[:0])
			s.keep(int(it.limit))
		}
	}
	s.order = s.sortRows(s.order[:0])
	if it.limit >= 0 && int64(len(s.order)) > it.limit {
		s.order = s.order[:it.limit]
	}
	return nil
}

// sortRows appends the rows to order, sorted by their keys, the earlier
// first among equal keys.
func (s *sortScratch) sortRows(order []sortEntry) []sortEntry {
	for i := range s.rows {
		k := s.key(int32(i))
		var b [8]byte
		copy(b[:], k)
		order = append(order, sortEntry{prefix: binary.BigEndian.Uint64(b[:]), row: int32(i)})
	}
	slices.SortFunc(order, func(a, b sortEntry) int {
		if a.prefix != b.prefix {
			if a.prefix < b.prefix {
				return -1
			}
			return 1
		}
		if c := bytes.Compare(s.key(a.row), s.key(b.row)); c != 0 {
			return c
		}
		return int(a.row - b.row) // stable
	})
	return order
}

// keep keeps the first n rows of s.order, renumbered in that order (their
// order of arrival among equal keys, before any row still to come).
func (s *sortScratch) keep(n int) {
	n = min(n, len(s.order))
	s.keys2, s.ends2, s.rows2 = s.keys2[:0], s.ends2[:0], s.rows2[:0]
	for _, e := range s.order[:n] {
		s.keys2 = append(s.keys2, s.key(e.row)...)
		s.ends2 = append(s.ends2, int32(len(s.keys2)))
		s.rows2 = append(s.rows2, s.rows[e.row])
	}
	clear(s.rows)
	s.keys, s.keys2 = s.keys2, s.keys
	s.ends, s.ends2 = s.ends2, s.ends
	s.rows, s.rows2 = s.rows2, s.rows
	s.order = s.order[:0]
}

// sortEntry is a row to sort: its number and the first 8 bytes of its
// key (zero-padded), which decide most comparisons without reaching for
// the keys.
type sortEntry struct {
	prefix uint64
	row    int32
}

// key returns the sort key of row i.
func (s *sortScratch) key(i int32) []byte {
	start := int32(0)
	if i > 0 {
		start = s.ends[i-1]
	}
	return s.keys[start:s.ends[i]]
}

// dkey returns the DISTINCT key of kept row i.
func (s *sortScratch) dkey(i int32) []byte {
	start := int32(0)
	if i > 0 {
		start = s.dends[i-1]
	}
	return s.dkeys[start:s.dends[i]]
}

// add reports whether no row with row's DISTINCT key was added before,
// and keeps it when none was.
func (s *sortScratch) add(row sql.Row, sch sql.Schema) (bool, error) {
	start := len(s.dkeys)
	var err error
	for i, c := range sch {
		if s.dkeys, err = codec.AppendKey(s.dkeys, c.Type, row[i], codec.Asc); err != nil {
			s.dkeys = s.dkeys[:start]
			return false, err
		}
	}
	key := s.dkeys[start:]
	if (s.used+1)*2 > len(s.slots) {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for h := maphash.Bytes(s.seed, key) & mask; ; h = (h + 1) & mask {
		j := s.slots[h]
		if j == 0 {
			s.dends = append(s.dends, int32(len(s.dkeys)))
			s.used++
			s.slots[h] = int32(s.used)
			return true, nil
		}
		if bytes.Equal(s.dkey(j-1), key) {
			s.dkeys = s.dkeys[:start]
			return false, nil
		}
	}
}

// grow doubles the hash set (at least 64 slots) and adds the kept rows
// again.
func (s *sortScratch) grow() {
	n := max(64, 2*len(s.slots))
	if cap(s.slots) >= n {
		s.slots = s.slots[:n]
		clear(s.slots)
	} else {
		s.slots = make([]int32, n)
	}
	mask := uint64(n - 1)
	for i := int32(0); i < int32(s.used); i++ {
		h := maphash.Bytes(s.seed, s.dkey(i)) & mask
		for s.slots[h] != 0 {
			h = (h + 1) & mask
		}
		s.slots[h] = i + 1
	}
}

// reset empties s for the next statement.
func (s *sortScratch) reset() {
	clear(s.rows) // the rows' memory is the statement's
	s.rows, s.keys, s.ends, s.order = s.rows[:0], s.keys[:0], s.ends[:0], s.order[:0]
	s.dkeys, s.dends, s.used = s.dkeys[:0], s.dends[:0], 0
	clear(s.slots)
	clear(s.tmp)
	clear(s.rows2)
	s.keys2, s.ends2, s.rows2 = s.keys2[:0], s.ends2[:0], s.rows2[:0]
}

func (it *keySortIter) Close(ctx *sql.Context) error {
	if it.acct != nil {
		it.acct.Release(it.charged)
		it.charged = 0
	}
	if s := it.s; s != nil {
		it.s = nil
		if cap(s.keys)+cap(s.keys2)+cap(s.dkeys) <= maxPooledScratch && cap(s.rows) <= maxPooledScratch/64 {
			s.reset()
			sortScratchPool.Put(s)
		}
	}
	return it.child.Close(ctx)
}
