package mysqlcompat

import (
	"io"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// INTERSECT and EXCEPT by collation keys
//
// GMS's INTERSECT and EXCEPT match the rows of their sides by sql.HashOf,
// the hash of the values printed (as its Distinct does, keydistinct.go),
// and deduplicate their result with its Distinct: under a PAD SPACE or
// case-insensitive collation 'a' INTERSECT 'A  ' was empty and 'a' EXCEPT
// 'a ' kept 'a', where MySQL compares the rows as = does; NULL and the
// string '<nil>' matched. keySetOpNode replaces such a set operation by a
// keySetOp, which matches rows by their memcomparable keys (appendRowKey):
// INTERSECT keeps each left row that a right row matches, EXCEPT each that
// none does, ALL with multiplicity (a right row matches one left row),
// DISTINCT the first row of each key once. The set operation's ORDER BY,
// LIMIT and OFFSET apply over it, as over a UNION (distinctNode).
//
// Targets GMS v0.20.0 (rowexec/rel.go buildSetOp, iters.IntersectIter and
// ExceptIter). Without it, TestPlanningSpec/pad_space fails.

// keySetOpNode returns the plan of x, an INTERSECT or EXCEPT, over a
// keySetOp, when GMS's matching of its rows could be wrong.
func keySetOpNode(exec sql.NodeExecBuilder, x *plan.SetOp) (sql.Node, bool) {
	if (x.SetOpType != plan.IntersectType && x.SetOpType != plan.ExceptType) || !printsAmbiguously(x.Schema()) {
		return x, false
	}
	op := &keySetOp{left: x.Left(), right: x.Right(), except: x.SetOpType == plan.ExceptType, distinct: x.Distinct, exec: exec}
	return setOpTail(x, op), true
}

// keySetOp is an INTERSECT or EXCEPT that matches rows by their keys.
type keySetOp struct {
	left, right sql.Node
	except      bool
	distinct    bool
	exec        sql.NodeExecBuilder
}

var (
	_ sql.ExecSourceRel      = (*keySetOp)(nil)
	_ sql.CollationCoercible = (*keySetOp)(nil)
)

// RowIter implements sql.ExecSourceRel. It reads the right side whole
// first, as GMS does.
func (s *keySetOp) RowIter(ctx *sql.Context, row sql.Row) (sql.RowIter, error) {
	r, err := s.exec.Build(ctx, s.right, row)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	sch := s.Schema()
	var key []byte
	for {
		rr, err := r.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			_ = r.Close(ctx)
			return nil, err
		}
		if key, err = appendRowKey(ctx, key[:0], sch, rr); err != nil {
			_ = r.Close(ctx)
			return nil, err
		}
		counts[string(key)]++
	}
	if err := r.Close(ctx); err != nil {
		return nil, err
	}
	l, err := s.exec.Build(ctx, s.left, row)
	if err != nil {
		return nil, err
	}
	it := &keySetOpIter{left: l, sch: sch, counts: counts, except: s.except}
	if s.distinct {
		it.seen = map[string]struct{}{}
	}
	return it, nil
}

func (s *keySetOp) Schema() sql.Schema   { return s.left.Schema() }
func (s *keySetOp) Children() []sql.Node { return []sql.Node{s.left, s.right} }
func (s *keySetOp) Resolved() bool       { return s.left.Resolved() && s.right.Resolved() }
func (s *keySetOp) IsReadOnly() bool     { return s.left.IsReadOnly() && s.right.IsReadOnly() }

func (s *keySetOp) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 2 {
		return nil, sql.ErrInvalidChildrenNumber.New(s, len(children), 2)
	}
	ns := *s
	ns.left, ns.right = children[0], children[1]
	return &ns, nil
}

func (s *keySetOp) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, s.left)
}

func (s *keySetOp) name() string {
	op := "Intersect"
	if s.except {
		op = "Except"
	}
	if s.distinct {
		return op + " distinct"
	}
	return op + " all"
}

func (s *keySetOp) String() string {
	p := sql.NewTreePrinter()
	_ = p.WriteNode("%s", s.name())
	_ = p.WriteChildren(s.left.String(), s.right.String())
	return p.String()
}

func (s *keySetOp) DebugString() string {
	p := sql.NewTreePrinter()
	_ = p.WriteNode("%s", s.name())
	_ = p.WriteChildren(sql.DebugString(s.left), sql.DebugString(s.right))
	return p.String()
}

// keySetOpIter returns the left rows the right side's keys (counts) let
// through.
type keySetOpIter struct {
	left   sql.RowIter
	sch    sql.Schema
	counts map[string]int
	except bool
	seen   map[string]struct{} // DISTINCT: the keys returned
	key    []byte
}

func (it *keySetOpIter) Next(ctx *sql.Context) (sql.Row, error) {
	for {
		row, err := it.left.Next(ctx)
		if err != nil {
			return nil, err
		}
		if it.key, err = appendRowKey(ctx, it.key[:0], it.sch, row); err != nil {
			return nil, err
		}
		if it.seen != nil {
			if _, dup := it.seen[string(it.key)]; dup {
				continue
			}
		}
		n := it.counts[string(it.key)]
		switch {
		case it.seen != nil && it.except:
			if n > 0 {
				continue
			}
		case it.seen != nil:
			if n == 0 {
				continue
			}
		case it.except:
			// ALL: each right row removes one left row.
			if n > 0 {
				it.counts[string(it.key)] = n - 1
				continue
			}
		default:
			if n == 0 {
				continue
			}
			it.counts[string(it.key)] = n - 1
		}
		if it.seen != nil {
			it.seen[string(it.key)] = struct{}{}
		}
		return row, nil
	}
}

func (it *keySetOpIter) Close(ctx *sql.Context) error {
	it.counts, it.seen = nil, nil
	return it.left.Close(ctx)
}
