package mysqlcompat

import (
	"math"
	"reflect"
	"strings"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// GROUP_CONCAT bounded by group_concat_max_len
//
// GMS's GROUP_CONCAT keeps every row of its group (the whole row, with the
// value appended) and cuts the result to group_concat_max_len only when the
// group ends, without a warning: over a large join one group holds the
// join. MySQL 8 appends each value to the group's result as it comes and
// stops at group_concat_max_len bytes (the session variable, 1024 by
// default), cutting before a character that would not fit whole, with
//
//	Warning 1260: Row N was cut by GROUP_CONCAT()
//
// once per cut group, where N counts the values the function appended in
// the statement so far, the cut one included (MySQL's row_count, which its
// groups share: one group of 6 values cut at the 6th says "Row 6").
//
// An analyzer rule (AfterJoinsRule, at the end of the once-after batch, so
// that it also runs for subqueries, which that batch finalizes) replaces
// each GMS GroupConcat that is not a window function with a groupConcat,
// whose buffer does as MySQL does:
//
//   - without ORDER BY or DISTINCT the group's result is built as rows
//     arrive and never holds more than group_concat_max_len+1 bytes; a cut
//     group evaluates its arguments and drops them;
//   - with ORDER BY every value must be sorted before any is appended, and
//     with DISTINCT MySQL appends the distinct values in the order of the
//     arguments (it walks its set of seen values), so those keep their
//     values, and their sort keys, until the group ends. What they keep is
//     charged to the statement's memory account (memory.go), so such a
//     group is bounded by the session's memory quota instead (Strata's
//     strata_mem_quota_query). DISTINCT compares the arguments as GMS's
//     grouping does: by collation weights for strings, hashed.
//
// A NULL argument skips the row, and a group with no value left is NULL.
// The result is VARCHAR(group_concat_max_len), or TEXT when that is larger
// than 512, and VARBINARY or BLOB when an argument is a binary string, as
// MySQL types it; the variable is read when the statement is analyzed, as
// MySQL reads it when it resolves the statement. (CREATE TABLE ... SELECT
// types its columns before this rule runs, and keeps GMS's type.)
//
// Targets GMS v0.20.0. Without it, TestGroupConcatSpec
// (testdata/group_concat) fails.

// groupConcatMaxLenVar is the session variable that bounds a result.
const groupConcatMaxLenVar = "group_concat_max_len"

// erCutValueGroupConcat is MySQL's ER_CUT_VALUE_GROUP_CONCAT, which vitess
// does not name.
const erCutValueGroupConcat = 1260

// varcharGroupConcatMax is the largest group_concat_max_len for which the
// result is a VARCHAR (MySQL's CONVERT_IF_BIGGER_TO_BLOB).
const varcharGroupConcatMax = 512

// replaceGroupConcat replaces the GroupConcat aggregations of n with
// groupConcat, and retypes the columns that read their results: GMS typed
// them when it built the plan, with a type of its own. Run again over its
// own output it changes nothing.
func replaceGroupConcat(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	maxLen := uint64(0)
	var typed map[sql.ColumnId]sql.Type
	n, same, err := transform.NodeExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		gc, ok := e.(*aggregation.GroupConcat)
		if !ok || gc.Window() != nil {
			return e, transform.SameTree, nil
		}
		if maxLen == 0 {
			maxLen = sessionGroupConcatMaxLen(ctx)
		}
		g, ok := newGroupConcat(gc, maxLen)
		if !ok {
			return e, transform.SameTree, nil
		}
		if g.id != 0 {
			if typed == nil {
				typed = make(map[sql.ColumnId]sql.Type)
			}
			typed[g.id] = g.typ
		}
		return g, transform.NewTree, nil
	})
	if err != nil || typed == nil {
		return n, same, err
	}
	n, _, err = transform.NodeExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		gf, ok := e.(*expression.GetField)
		if !ok {
			return e, transform.SameTree, nil
		}
		typ, ok := typed[gf.Id()]
		if !ok || gf.Type() == typ {
			return e, transform.SameTree, nil
		}
		ngf := expression.NewGetFieldWithTable(gf.Index(), int(gf.TableId()), typ, gf.Database(), gf.Table(), gf.Name(), true)
		return ngf.WithId(gf.Id()).(*expression.GetField), transform.NewTree, nil
	})
	return n, transform.NewTree, err
}

// sessionGroupConcatMaxLen returns the session's group_concat_max_len, or
// MySQL's default where it cannot be read.
func sessionGroupConcatMaxLen(ctx *sql.Context) uint64 {
	v, err := ctx.GetSessionVariable(ctx, groupConcatMaxLenVar)
	if err != nil {
		return 1024
	}
	if n, ok := IntValue(v); ok {
		return uint64(max(n, 4))
	}
	return 1024
}

// groupConcat is GROUP_CONCAT bounded as MySQL bounds it (see above).
type groupConcat struct {
	orig     *aggregation.GroupConcat // GMS's, for its text and for windows
	distinct bool
	sf       sql.SortFields
	sep      string
	args     []sql.Expression
	maxLen   uint64
	typ      sql.Type
	binary   bool
	id       sql.ColumnId
	// appended counts the values the statement's groups appended, for
	// warning 1260. Copies of the expression share it.
	appended *atomic.Uint64
}

var (
	_ sql.Aggregation               = (*groupConcat)(nil)
	_ sql.FunctionExpression        = (*groupConcat)(nil)
	_ sql.WindowAdaptableExpression = (*groupConcat)(nil)
	_ sql.DebugStringer             = (*groupConcat)(nil)
)

// newGroupConcat returns gc as a groupConcat bounded by maxLen bytes. ok is
// false when gc's parts cannot be read: GMS keeps them unexported, and they
// are read by reflection, so a GMS whose GroupConcat differs keeps its own.
func newGroupConcat(gc *aggregation.GroupConcat, maxLen uint64) (*groupConcat, bool) {
	v := reflect.ValueOf(gc).Elem()
	distinct, sep, sfv := v.FieldByName("distinct"), v.FieldByName("separator"), v.FieldByName("sf")
	if distinct.Kind() != reflect.String || sep.Kind() != reflect.String || sfv.Kind() != reflect.Slice {
		return nil, false
	}
	children := gc.Children()
	nsf := sfv.Len()
	if nsf >= len(children) {
		return nil, false
	}
	sf := make(sql.SortFields, nsf)
	for i := range sf {
		f := sfv.Index(i)
		order, nulls := f.FieldByName("Order"), f.FieldByName("NullOrdering")
		if order.Kind() != reflect.Uint8 || nulls.Kind() != reflect.Uint8 {
			return nil, false
		}
		col := children[i]
		col2, _ := col.(sql.Expression2)
		sf[i] = sql.SortField{Column: col, Column2: col2, Order: sql.SortOrder(order.Uint()), NullOrdering: sql.NullOrdering(nulls.Uint())}
	}
	g := &groupConcat{
		orig:     gc,
		distinct: strings.TrimSpace(distinct.String()) != "",
		sf:       sf,
		sep:      sep.String(),
		args:     children[nsf:],
		maxLen:   maxLen,
		id:       gc.Id(),
		appended: new(atomic.Uint64),
	}
	g.setType()
	return g, true
}

// setType types the result as MySQL does: a binary string when an
// argument is one, VARCHAR up to 512 characters, TEXT beyond.
func (g *groupConcat) setType() {
	g.binary = false
	for _, a := range g.args {
		if a.Resolved() && isBinaryString(a.Type()) {
			g.binary = true
		}
	}
	coll, short, long, mbmax := sql.Collation_Default, sqltypes.VarChar, sqltypes.Text, uint64(4)
	if g.binary {
		coll, short, long, mbmax = sql.Collation_binary, sqltypes.VarBinary, sqltypes.Blob, 1
	}
	var err error
	if g.maxLen <= varcharGroupConcatMax {
		g.typ, err = types.CreateString(short, int64(g.maxLen), coll)
	} else {
		n := uint64(types.LongTextBlobMax)
		if g.maxLen <= n/mbmax {
			n = g.maxLen * mbmax
		}
		g.typ, err = types.CreateString(long, int64(n), coll)
	}
	if err != nil {
		g.typ = types.LongText
		if g.binary {
			g.typ = types.LongBlob
		}
	}
}

// isBinaryString reports whether t is BINARY, VARBINARY or a BLOB.
func isBinaryString(t sql.Type) bool {
	switch t.Type() {
	case sqltypes.Binary, sqltypes.VarBinary, sqltypes.Blob:
		return true
	}
	return false
}

func (g *groupConcat) FunctionName() string { return "group_concat" }

func (g *groupConcat) Description() string {
	return "returns a string result with the concatenated non-NULL values from a group."
}

func (g *groupConcat) String() string      { return g.orig.String() }
func (g *groupConcat) DebugString() string { return g.orig.String() }
func (g *groupConcat) Type() sql.Type      { return g.typ }
func (g *groupConcat) IsNullable() bool    { return true }

func (g *groupConcat) Resolved() bool {
	for i := range g.sf {
		if !g.sf[i].Column.Resolved() {
			return false
		}
	}
	for _, e := range g.args {
		if !e.Resolved() {
			return false
		}
	}
	return true
}

// Children are the ORDER BY expressions, then the arguments, as GMS's.
func (g *groupConcat) Children() []sql.Expression {
	out := make([]sql.Expression, 0, len(g.sf)+len(g.args))
	out = append(out, g.sf.ToExpressions()...)
	return append(out, g.args...)
}

func (g *groupConcat) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != len(g.sf)+len(g.args) {
		return nil, sql.ErrInvalidChildrenNumber.New(g, len(children), len(g.sf)+len(g.args))
	}
	orig, err := g.orig.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	ng := *g
	ng.orig = orig.(*aggregation.GroupConcat)
	ng.sf = g.sf.FromExpressions(children[:len(g.sf)]...)
	ng.args = children[len(g.sf):]
	ng.setType()
	return &ng, nil
}

func (g *groupConcat) Eval(*sql.Context, sql.Row) (any, error) {
	return nil, aggregation.ErrEvalUnsupportedOnAggregation.New("GroupConcat")
}

func (g *groupConcat) Id() sql.ColumnId { return g.id }

func (g *groupConcat) WithId(id sql.ColumnId) sql.IdExpression {
	ng := *g
	ng.id = id
	return &ng
}

// WithWindow returns GMS's GroupConcat over the window: a window frame
// is GMS's to bound.
func (g *groupConcat) WithWindow(w *sql.WindowDefinition) sql.WindowAdaptableExpression {
	return g.orig.WithWindow(w)
}

func (g *groupConcat) Window() *sql.WindowDefinition { return nil }

// NewWindowFunction serves a GROUP_CONCAT a Window node evaluates over the
// whole partition, as GMS does.
func (g *groupConcat) NewWindowFunction() (sql.WindowFunction, error) {
	return g.orig.NewWindowFunction()
}

func (g *groupConcat) NewBuffer() (sql.AggregationBuffer, error) {
	limit := math.MaxInt32 * 64 // far beyond any string a process holds
	if g.maxLen < uint64(limit) {
		limit = int(g.maxLen)
	}
	return &groupConcatBuffer{g: g, limit: limit, keep: len(g.sf) > 0 || g.distinct}, nil
}
