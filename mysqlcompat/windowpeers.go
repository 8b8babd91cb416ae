package mysqlcompat

import (
	"io"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// Peers in window functions
//
// Rows whose ORDER BY values are equal are peers: RANK gives them one rank,
// and an aggregate over a window with ORDER BY and no frame (RANGE from the
// partition's start to the current row, in SQL's and MySQL's default)
// includes all the current row's peers. GMS falls short twice:
//
//   - It finds peers by comparing the values with Go's !=. Two equal
//     DECIMALs are distinct values there (each holds its own big.Int), so
//     RANK over a DECIMAL (a price, or an exact SUM) gave tied rows
//     different ranks; and []byte values (VARBINARY, BLOB) cannot be
//     compared so at all, so a RANK over them failed.
//   - Its default frame for an aggregate is ROWS, one row at a time: a
//     running SUM over ORDER BY gave tied rows different sums.
//
// windowPeers fixes both in the window definitions of a Window node. Each
// ORDER BY expression is wrapped in a peerKey, which hands out equal
// DECIMALs as one value and []byte as a string; sorting is unchanged, as it
// compares through the column's type, which takes either. An aggregate
// without a frame gets peersFrame, which ends each row's frame after its
// last peer.
//
// Targets GMS v0.20.0. Without it, TestWindowPeers fails.

// windowPeers returns exprs, a Window node's expressions, with the window
// definitions fixed as above; ok is false when nothing changed.
func windowPeers(exprs []sql.Expression) ([]sql.Expression, bool) {
	var out []sql.Expression
	for i, e := range exprs {
		alias, _ := e.(*expression.Alias)
		inner := e
		if alias != nil {
			inner = alias.Child
		}
		wa, ok := inner.(sql.WindowAdaptableExpression)
		if !ok {
			continue
		}
		w := wa.Window()
		if w == nil || len(w.OrderBy) == 0 {
			continue
		}
		nw := *w
		nw.OrderBy = make(sql.SortFields, len(w.OrderBy))
		changed := false
		for j, sf := range w.OrderBy {
			if _, done := sf.Column.(*peerKey); !done {
				sf.Column = &peerKey{child: sf.Column}
				changed = true
			}
			nw.OrderBy[j] = sf
		}
		if _, agg := inner.(sql.Aggregation); agg && nw.Frame == nil {
			nw.Frame = peersFrame{}
			changed = true
		}
		if !changed {
			continue
		}
		var ne sql.Expression = wa.WithWindow(sql.NewWindowDefinition(nw.PartitionBy, nw.OrderBy, nw.Frame, nw.Ref, nw.Name))
		if alias != nil {
			na := *alias
			na.Child = ne
			ne = &na
		}
		if out == nil {
			out = append([]sql.Expression(nil), exprs...)
		}
		out[i] = ne
	}
	return out, out != nil
}

// peerKey evaluates its child and returns a value that Go's == finds equal
// to the previous one when the two are equal DECIMALs or JSON documents,
// and a string for []byte. Peers are adjacent once sorted, which is when GMS compares them,
// so remembering the last DECIMAL handed out is enough. The mutex keeps a
// plan that two statements might share free of data races.
type peerKey struct {
	child    sql.Expression
	mu       sync.Mutex
	last     decimal.Decimal
	valid    bool
	lastJSON sql.JSONWrapper
}

var _ sql.Expression = (*peerKey)(nil)

func (k *peerKey) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := k.child.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case decimal.Decimal:
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.valid && k.last.Equal(v) {
			return k.last, nil
		}
		k.last, k.valid = v, true
		return v, nil
	case []byte:
		return string(v), nil
	case sql.JSONWrapper:
		return k.json(v)
	}
	return v, nil
}

// json hands out equal JSON documents as one pointer: a JSONDocument holds
// maps and slices, which != cannot compare, and GMS's JSON comparison
// takes a pointer to one as well.
func (k *peerKey) json(v sql.JSONWrapper) (any, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.lastJSON != nil {
		c, err := types.CompareJSON(k.lastJSON, v)
		if err != nil {
			return nil, err
		}
		if c == 0 {
			return k.lastJSON, nil
		}
	}
	if doc, ok := v.(types.JSONDocument); ok {
		v = &doc
	}
	k.lastJSON = v
	return v, nil
}

func (k *peerKey) Type() sql.Type             { return k.child.Type() }
func (k *peerKey) IsNullable() bool           { return k.child.IsNullable() }
func (k *peerKey) Resolved() bool             { return k.child.Resolved() }
func (k *peerKey) String() string             { return k.child.String() }
func (k *peerKey) Children() []sql.Expression { return []sql.Expression{k.child} }

func (k *peerKey) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(k, len(children), 1)
	}
	return &peerKey{child: children[0]}, nil
}

// peersFrame is RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW, with
// peers judged by every ORDER BY expression in its direction's
// indifference: equal values, or both NULL.
type peersFrame struct{}

var _ sql.WindowFrame = peersFrame{}

func (peersFrame) NewFramer(w *sql.WindowDefinition) (sql.WindowFramer, error) {
	return &peersFramer{orderBy: w.OrderBy.ToExpressions()}, nil
}

func (peersFrame) String() string {
	return "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
}
func (peersFrame) UnboundedFollowing() bool        { return false }
func (peersFrame) UnboundedPreceding() bool        { return true }
func (peersFrame) StartCurrentRow() bool           { return false }
func (peersFrame) EndCurrentRow() bool             { return true }
func (peersFrame) StartNPreceding() sql.Expression { return nil }
func (peersFrame) StartNFollowing() sql.Expression { return nil }
func (peersFrame) EndNPreceding() sql.Expression   { return nil }
func (peersFrame) EndNFollowing() sql.Expression   { return nil }

// peersFramer frames row i of a partition as [partition start, end of i's
// peers).
type peersFramer struct {
	orderBy    []sql.Expression
	start, end int // the partition
	idx        int // the next row
	peersEnd   int // where the current peer group ends
	frame      sql.WindowInterval
	set        bool
}

func (f *peersFramer) NewFramer(iv sql.WindowInterval) (sql.WindowFramer, error) {
	return &peersFramer{orderBy: f.orderBy, start: iv.Start, end: iv.End, idx: iv.Start, peersEnd: iv.Start, set: true}, nil
}

func (f *peersFramer) Next(ctx *sql.Context, buf sql.WindowBuffer) (sql.WindowInterval, error) {
	if !f.set || f.idx >= f.end {
		return sql.WindowInterval{}, io.EOF
	}
	if f.idx >= f.peersEnd {
		j := f.idx + 1
		for j < f.end {
			same, err := f.peers(ctx, buf[f.idx], buf[j])
			if err != nil {
				return sql.WindowInterval{}, err
			}
			if !same {
				break
			}
			j++
		}
		f.peersEnd = j
	}
	f.frame = sql.WindowInterval{Start: f.start, End: f.peersEnd}
	f.idx++
	return f.frame, nil
}

func (f *peersFramer) peers(ctx *sql.Context, a, b sql.Row) (bool, error) {
	for _, e := range f.orderBy {
		va, err := e.Eval(ctx, a)
		if err != nil {
			return false, err
		}
		vb, err := e.Eval(ctx, b)
		if err != nil {
			return false, err
		}
		if va == nil || vb == nil {
			if va != nil || vb != nil {
				return false, nil
			}
			continue
		}
		c, err := e.Type().Compare(ctx, va, vb)
		if err != nil {
			return false, err
		}
		if c != 0 {
			return false, nil
		}
	}
	return true, nil
}

func (f *peersFramer) FirstIdx() int { return f.frame.Start }
func (f *peersFramer) LastIdx() int  { return f.frame.End }

func (f *peersFramer) Interval() (sql.WindowInterval, error) {
	if !f.set {
		return sql.WindowInterval{}, io.EOF
	}
	return f.frame, nil
}
