package sqlstore

import (
	"errors"
	"math"
	"strings"
	"sync/atomic"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/strata-db/strata/mysqlcompat"
)

// Prepared writes. As for prepared selects (prepared.go), GMS binds and
// analyzes a prepared write again at every execution, about half the CPU
// of a point UPDATE. For the commonest prepared writes,
//
//	UPDATE t SET <assignments> WHERE c = ?
//	DELETE FROM t WHERE c = ?
//	INSERT INTO t [(<columns>)] VALUES (?, ...)
//
// a PreparedWrite keeps the plan GMS analyzed for one execution and runs
// later executions on it with their own arguments, through GMS's own
// executor: triggers, foreign keys, CHECK constraints, generated columns,
// defaults, conversions and strict mode, counts and LAST_INSERT_ID are
// GMS's (and mysqlcompat's), as in a planned execution. Only binding and
// analysis are skipped.
//
// That is exact only where the analyzed plan depends on the arguments in
// no other way than through the literals they became and, for UPDATE and
// DELETE, through the index lookup of WHERE c = ?. So a plan becomes a
// template only when it provably is one:
//
//   - the plan is analyzed with every argument bound to a literal of this
//     file's making, built as GMS's binder builds it from the argument, and
//     every place an argument went is found by the literal's identity; no
//     other literal in the plan equals an argument (a copy the analysis
//     made would keep the first execution's value);
//   - for UPDATE and DELETE the plan reads one static index lookup of a
//     table of ours, a single point of an integer column (or, for a
//     string argument, a character column: stringtemplate.go) that is the
//     whole of a unique index, and equal to the lookup built here from
//     the same argument;
//   - a template is kept per kind of argument literals (the type GMS gives
//     each: an INT literal of 7 is a TINYINT, of 300 a SMALLINT), so that
//     no analysis decision taken by type is carried to another type; up
//     to maxWriteTemplates kinds per statement.
//
// A template is used while what it was made from holds: the current
// database, sql_mode, and the catalog version the statement's transaction
// reads (any DDL drops every template, checked inside the transaction,
// whose commit is guarded against a concurrent change of the table's
// definition). Arguments of other Go types than integers, strings, bytes,
// booleans and NULL, and integers outside the lookup column's type, go to
// GMS. With strata_plan_reuse OFF every execution is planned. With the
// privilege system on (the MySQL server), a template checks at every
// execution the privilege binding checks, INSERT, UPDATE or DELETE on its
// table (allowed), so that a REVOKE takes effect at the next execution;
// an execution refused is planned, and fails as planning fails it.

// maxWriteTemplates bounds the templates one PreparedWrite keeps, one per
// kind of argument literals.
const maxWriteTemplates = 8

// writeKind is the statement a PreparedWrite runs.
type writeKind uint8

const (
	writeUpdate writeKind = iota + 1
	writeDelete
	writeInsert
)

// PreparedWrite is what a prepared write of the shape above keeps between
// executions. It belongs to one connection: not safe for concurrent use.
type PreparedWrite struct {
	kind  writeKind
	col   string // the WHERE column, lower case (UPDATE, DELETE)
	where string // the WHERE placeholder's name
	names []string
	tmpls []*writeTemplate
	tries int // executions planned in full without a template resulting
	skips int // executions planned by GMS since the last look, past maxLearn
	// notText: a string WHERE argument met a column that is no character
	// column (the plan cache leaves such strings in the text).
	notText bool

	directRuns int // executions run by key without GMS's iterators (tests)

	lits []*expression.Literal // scratch: one execution's literals, by names
}

// writeTemplate is an analyzed write plan and where its arguments are.
type writeTemplate struct {
	root    sql.Node
	exec    sql.NodeExecBuilder   // builds root (its value rules applied)
	flags   *sql.QueryFlags       // root's for FinalizeIters (triggerFlags): see version
	hot     []sql.Node            // the nodes rebuild makes anew (markHot)
	sig     []sql.Type            // each argument's literal type, by names
	slots   []*expression.Literal // the literals bound when it was learned
	ita     *plan.IndexedTableAccess
	index   sql.Index
	typ     sql.Type // the lookup column's type
	point   bool     // GMS's IsPointLookup of the lookup
	str     bool     // the lookup's argument is a string (stringtemplate.go)
	db      string
	sqlMode any
	// fkChecks is foreign_key_checks: the analysis leaves foreign keys
	// out of the plan while it is off.
	fkChecks any
	// version is the catalog version the plan was made at: any DDL, a
	// trigger created or dropped too, makes it stale, so what was read
	// from the plan at learning (flags, the lookup) holds while it serves.
	version uint64
	// direct, when set, runs the template by key without GMS's
	// iterators (writedirect.go).
	direct *directWrite
	// insert, when set, runs the INSERT template without GMS's iterators
	// (insertdirect.go).
	insert *insertDirect
	// autoArg is the argument an INSERT's AUTO_INCREMENT column takes, -1
	// when none: whether the statement generated the value (and so sets
	// LAST_INSERT_ID) is decided by analysis from the literal, so each
	// execution decides it again from its own (generates), under
	// NO_AUTO_VALUE_ON_ZERO as noAutoOnZero says.
	autoArg      int
	autoType     sql.Type // the AUTO_INCREMENT column's, when autoArg >= 0
	noAutoOnZero bool
	// The table written and the privilege it takes, for allowed.
	privDB, privTable string
	priv              sql.PrivilegeType
}

// NewPreparedWrite returns the PreparedWrite of a parsed statement, or nil
// when it does not have one of the shapes above.
func NewPreparedWrite(stmt sqlparser.Statement) *PreparedWrite {
	p := &PreparedWrite{}
	switch s := stmt.(type) {
	case *sqlparser.Update:
		if s.Ignore != "" || s.With != nil || len(s.OrderBy) > 0 || s.Limit != nil || len(s.Returning) > 0 ||
			!singleTable(s.TableExprs) || !p.wherePK(s.Where) {
			return nil
		}
		p.kind = writeUpdate
		for _, a := range s.Exprs {
			if name, ok := placeholder(a.Expr); ok {
				p.names = append(p.names, name)
			}
		}
	case *sqlparser.Delete:
		if len(s.Targets) > 0 || s.With != nil || len(s.Partitions) > 0 || len(s.OrderBy) > 0 || s.Limit != nil ||
			len(s.Returning) > 0 || !singleTable(s.TableExprs) || !p.wherePK(s.Where) {
			return nil
		}
		p.kind = writeDelete
	case *sqlparser.Insert:
		av, ok := s.Rows.(*sqlparser.AliasedValues)
		if !ok || av.As.String() != "" || len(av.Columns) > 0 {
			return nil
		}
		rows := av.Values
		if s.Action == sqlparser.ReplaceStr || s.Ignore != "" || s.With != nil || len(s.Partitions) > 0 ||
			len(s.OnDup) > 0 || len(s.Returning) > 0 || len(rows) != 1 || len(rows[0]) == 0 {
			return nil
		}
		p.kind = writeInsert
		for _, v := range rows[0] {
			name, ok := placeholder(v)
			if !ok {
				return nil
			}
			p.names = append(p.names, name)
		}
	default:
		return nil
	}
	if p.where != "" {
		p.names = append(p.names, p.where)
	}
	// Every placeholder is one of those, each used once, and nothing runs
	// a query of its own.
	args, simple := placeholdersNoSubquery(stmt)
	seen := make(map[string]bool, len(p.names))
	for _, n := range p.names {
		if seen[n] {
			return nil
		}
		seen[n] = true
	}
	if !simple || args != len(p.names) {
		return nil
	}
	p.lits = make([]*expression.Literal, len(p.names))
	return p
}

// maxConnWrites bounds the prepared writes a connection keeps by text.
const maxConnWrites = 64

// preparedWrite returns the PreparedWrite of a statement prepared on c:
// the one kept for the same text and sql_mode, with its templates, or a
// new one. database/sql prepares a statement again in every transaction
// that uses it (Tx.Stmt), and each would otherwise learn its plan anew.
func (c *Conn) preparedWrite(ctx *sql.Context, text string, parsed sqlparser.Statement) *PreparedWrite {
	mode, _ := ctx.GetSessionVariable(ctx, sql.SqlModeSessionVar)
	s, _ := mode.(string)
	key := s + "\x00" + text
	if p, ok := c.writes[key]; ok {
		return p
	}
	p := NewPreparedWrite(parsed)
	if p == nil {
		return nil
	}
	if len(c.writes) >= maxConnWrites {
		for k := range c.writes {
			delete(c.writes, k)
			break
		}
	}
	if c.writes == nil {
		c.writes = make(map[string]*PreparedWrite)
	}
	c.writes[key] = p
	return p
}

// singleTable reports whether a FROM list is one plain table.
func singleTable(te sqlparser.TableExprs) bool {
	if len(te) != 1 {
		return false
	}
	from, ok := te[0].(*sqlparser.AliasedTableExpr)
	if !ok || from.Hints != nil || from.AsOf != nil || from.Lateral || len(from.Partitions) > 0 {
		return false
	}
	_, ok = from.Expr.(sqlparser.TableName)
	return ok
}

// wherePK reads WHERE c = ? (or ? = c).
func (p *PreparedWrite) wherePK(w *sqlparser.Where) bool {
	if w == nil || w.Type != sqlparser.WhereStr {
		return false
	}
	e, ok := w.Expr.(*sqlparser.ComparisonExpr)
	if !ok || e.Operator != sqlparser.EqualStr || e.Escape != nil {
		return false
	}
	col, val := e.Left, e.Right
	if _, isCol := col.(*sqlparser.ColName); !isCol {
		col, val = val, col
	}
	c, ok := col.(*sqlparser.ColName)
	name, isArg := placeholder(val)
	if !ok || !isArg || c.StoredProcVal != nil || !c.Qualifier.IsEmpty() {
		return false
	}
	p.col, p.where = c.Name.Lowered(), name
	return true
}

// Query runs the statement with args: on a template when one fits, else
// planned by GMS (and kept as a template when it is one). bind returns the
// arguments as the engine's bindings for a planned execution.
func (p *PreparedWrite) Query(ctx *sql.Context, e *sqle.Engine, query string, parsed sqlparser.Statement, bind func() (map[string]sqlparser.Expr, error), args []Arg) (sql.Schema, sql.RowIter, error) {
	planned := func() (sql.Schema, sql.RowIter, error) {
		bindings, err := bind()
		if err != nil {
			return nil, nil, err
		}
		return Query(ctx, e, query, parsed, bindings)
	}
	if !planReuse(ctx) || !p.literals(ctx, args) {
		return planned()
	}
	if t := p.find(); t != nil {
		if !t.allowed(ctx, e) {
			// Planning refuses it with the error binding gives.
			return planned()
		}
		if !t.takes(ctx, p.lits) {
			// A string key GMS plans otherwise: planned, the template
			// kept for the others.
			return planned()
		}
		if !t.fits(ctx) {
			p.drop(t)
		} else {
			sql.IncrementStatusVariable(ctx, "Questions", 1)
			var schema sql.Schema
			var iter sql.RowIter
			err := errNotDirect
			if t.direct != nil {
				schema, iter, err = p.runDirect(ctx, e, t, query)
				if err == nil {
					p.directRuns++
				}
			} else if t.insert != nil {
				schema, iter, err = p.runInsertDirect(ctx, e, t, query)
				if err == nil {
					p.directRuns++
				}
			}
			if errors.Is(err, errNotDirect) {
				schema, iter, err = p.run(ctx, e, t, query, func() (sql.Node, error) { return p.with(ctx, t) })
			}
			if !errors.Is(err, errStalePlan) {
				if sess, ok := ctx.Session.(*Session); ok && err == nil {
					sess.plansReused.Add(1)
				}
				return schema, iter, err
			}
			p.tmpls, p.tries = nil, 0 // planned afresh below
			if !p.literals(ctx, args) {
				return planned()
			}
			return p.learnRun(ctx, e, query, parsed)
		}
	}
	if p.tries >= maxLearn {
		if p.skips++; p.skips < relearnEvery {
			return planned()
		}
		p.skips = 0
	}
	sql.IncrementStatusVariable(ctx, "Questions", 1)
	return p.learnRun(ctx, e, query, parsed)
}

// learnRun plans the execution whose literals p.lits holds with them bound
// and runs it, keeping its plan when it is a template.
func (p *PreparedWrite) learnRun(ctx *sql.Context, e *sqle.Engine, query string, parsed sqlparser.Statement) (sql.Schema, sql.RowIter, error) {
	lits := append([]*expression.Literal(nil), p.lits...)
	bound := func(lits []*expression.Literal) (sql.Node, error) {
		bindings := make(map[string]sqlparser.Expr, len(lits))
		for i, name := range p.names {
			bindings[name] = sqlparser.InjectedExpr{Expression: injected{lits[i]}, Auth: literalAuth}
		}
		return e.BoundQueryPlan(ctx, query, parsed, bindings)
	}
	return p.run(ctx, e, nil, query, func() (sql.Node, error) {
		// The template is learned from a plan of sentinel arguments, of
		// the same literal types as the execution's and values no other
		// literal is likely to hold (an argument of 1 in SET k = k + 1
		// WHERE id = ? could not be told from the 1 of the statement),
		// planned first and not run.
		var t *writeTemplate
		if ghosts, ok := sentinels(ctx, lits); ok {
			if g, err := bound(ghosts); err == nil {
				t = p.learn(ctx, e, g, ghosts)
			}
			ctx.ClearWarnings()
		}
		n, err := bound(lits)
		if err != nil {
			return nil, err
		}
		if t == nil {
			t = p.learn(ctx, e, n, lits)
		}
		if t != nil {
			if len(p.tmpls) >= maxWriteTemplates {
				p.tmpls = p.tmpls[1:]
			}
			p.tmpls, p.tries = append(p.tmpls, t), 0
		} else {
			p.tries++
		}
		return n, nil
	})
}

// sentinels returns literals of the types of lits holding values other
// literals are unlikely to equal, and unequal to lits' own: false when an
// argument's type leaves no such value (NULL, an empty binary string).
func sentinels(ctx *sql.Context, lits []*expression.Literal) ([]*expression.Literal, bool) {
	out := make([]*expression.Literal, len(lits))
	for i, l := range lits {
		var v any
		switch x := l.Value().(type) {
		case int8:
			v = int8(117 - i)
		case uint8:
			v = uint8(217 - i)
		case int16:
			v = int16(31117 - i)
		case uint16:
			v = uint16(61117 - i)
		case int32:
			v = int32(2017171717 - i)
		case uint32:
			v = uint32(4017171717 - uint32(i))
		case int64:
			v = int64(9017171717171717171 - int64(i))
		case uint64:
			v = uint64(18017171717171717171 - uint64(i))
		case string:
			b := []byte(x)
			if len(b) > 0 && types.IsBinaryType(l.Type()) {
				for j := range b {
					b[j] = 0xa5 ^ byte(i)
				}
				v = string(b)
			} else if !types.IsBinaryType(l.Type()) {
				v = "\x01strata sentinel " + string(rune('a'+i))
			}
		}
		if v == nil {
			return nil, false
		}
		out[i] = expression.NewLiteral(v, l.Type())
		if literalsEqual(out[i], l) {
			return nil, false
		}
	}
	return out, true
}

// literals builds in p.lits the literals GMS's binder would make of args,
// false when an argument is of a type this file does not build.
func (p *PreparedWrite) literals(ctx *sql.Context, args []Arg) bool {
	if len(args) != len(p.names) {
		return false
	}
	clear(p.lits)
	for _, a := range args {
		i := -1
		name := a.name()
		for j, n := range p.names {
			if n == name {
				i = j
				break
			}
		}
		if i < 0 || p.lits[i] != nil {
			return false
		}
		lit, ok := argLiteral(ctx, a.Value)
		if !ok {
			return false
		}
		p.lits[i] = lit
	}
	return true
}

// argLiteral returns v as the literal the binder makes of literal(v)'s
// expression (connargs.go), false for the types it leaves to GMS.
func argLiteral(ctx *sql.Context, v any) (*expression.Literal, bool) {
	switch x := v.(type) {
	case nil:
		return expression.NewLiteral(nil, types.Null), true
	case int64:
		return builtIntLiteral(x), true
	case uint64:
		if x > math.MaxInt64 {
			return expression.NewLiteral(x, types.Uint64), true
		}
		return builtIntLiteral(int64(x)), true
	case bool:
		if x {
			return builtIntLiteral(1), true
		}
		return builtIntLiteral(0), true
	case []byte:
		e := binaryArg(x)
		ie, ok := e.(sqlparser.InjectedExpr)
		if !ok {
			return nil, false
		}
		in, ok := ie.Expression.(injected)
		return in.lit, ok
	case string:
		return expression.NewLiteral(x, longText(ctx.GetCollation())), true
	}
	return nil, false
}

// longTexts holds LONGTEXT of each collation, the type of a string
// argument's literal, made once: making it allocated at every execution.
var longTexts [1 << 10]atomic.Pointer[sql.StringType]

// longText returns types.CreateLongText(c).
func longText(c sql.CollationID) sql.Type {
	if int(c) >= len(longTexts) {
		return types.CreateLongText(c)
	}
	if t := longTexts[c].Load(); t != nil {
		return *t
	}
	t := types.CreateLongText(c)
	longTexts[c].Store(&t)
	return t
}

// find returns the template for the kinds of p.lits, nil when none.
func (p *PreparedWrite) find() *writeTemplate {
next:
	for _, t := range p.tmpls {
		for i, l := range p.lits {
			if !sameLiteralType(t.sig[i], l.Type()) {
				continue next
			}
		}
		return t
	}
	return nil
}

// drop forgets template t.
func (p *PreparedWrite) drop(t *writeTemplate) {
	for i, x := range p.tmpls {
		if x == t {
			p.tmpls = append(p.tmpls[:i], p.tmpls[i+1:]...)
			return
		}
	}
}

// sameLiteralType reports whether two literal types are one, collation
// included.
func sameLiteralType(a, b sql.Type) bool {
	if a == b {
		return true
	}
	if !a.Equals(b) {
		return false
	}
	ca, okA := a.(sql.StringType)
	cb, okB := b.(sql.StringType)
	return okA == okB && (!okA || ca.Collation() == cb.Collation())
}

// learn returns n as a template, or nil when it is not one (see the top of
// this file); lits are the literals n was bound with, by p.names.
func (p *PreparedWrite) learn(ctx *sql.Context, e *sqle.Engine, n sql.Node, lits []*expression.Literal) *writeTemplate {
	// The plan as the exec builder corrects it, corrected once.
	n, exec, err := mysqlcompat.ApplyValueRules(ctx, e.Analyzer.ExecBuilder, n)
	if err != nil {
		return nil
	}
	switch n.(type) {
	case *plan.Update:
		if p.kind != writeUpdate {
			return nil
		}
	case *plan.DeleteFrom:
		if p.kind != writeDelete {
			return nil
		}
	case *plan.InsertInto:
		if p.kind != writeInsert {
			return nil
		}
	default:
		return nil
	}
	// Where the arguments went: their own literals, and no copies. Every
	// argument but WHERE's, which the lookup took, is somewhere.
	ok := true
	found := make([]int, len(lits))
	inspectWriteExprs(n, func(x sql.Expression) bool {
		if l, isLit := x.(*expression.Literal); isLit {
			own := false
			for i, a := range lits {
				if l == a {
					own = true
					found[i]++
				}
			}
			if !own {
				for _, a := range lits {
					ok = ok && !literalsEqual(l, a)
				}
			}
		}
		return ok
	})
	for i, c := range found {
		if c == 0 && (p.where == "" || i != len(lits)-1) {
			ok = false
		}
	}
	if !ok {
		return nil
	}
	t := &writeTemplate{root: n, exec: exec, flags: triggerFlags(n), slots: lits, db: ctx.GetCurrentDatabase()}
	t.sig = make([]sql.Type, len(lits))
	for i, l := range lits {
		t.sig[i] = l.Type()
	}
	t.sqlMode, t.fkChecks = sessionModes(ctx)
	tx := txnOf(ctx)
	if tx == nil {
		return nil
	}
	version, current := tx.catalogVersion()
	if !current {
		return nil
	}
	t.version = version
	if p.kind == writeInsert {
		ita := false
		transform.Inspect(n, func(c sql.Node) bool {
			_, isITA := c.(*plan.IndexedTableAccess)
			ita = ita || isITA
			return !ita
		})
		if ita {
			return nil
		}
		var dest *plan.ResolvedTable
		transform.Inspect(n.(*plan.InsertInto).Destination, func(c sql.Node) bool {
			if rt, isRT := c.(*plan.ResolvedTable); isRT && dest == nil {
				dest = rt
			}
			return dest == nil
		})
		if dest == nil {
			return nil
		}
		t.privOf(dest, sql.PrivilegeType_Insert)
		t.markHot(n)
		t.autoArg = autoIncArg(n.(*plan.InsertInto), lits)
		if ai, _, _, ok := mysqlcompat.AutoIncValue(n.(*plan.InsertInto)); ok {
			t.autoType = ai.Type()
		} else {
			t.autoArg = -1
		}
		t.noAutoOnZero = sql.LoadSqlMode(ctx).ModeEnabled(sql.NoAutoValueOnZero)
		t.insert = p.newInsertDirect(ctx, t, n, lits)
		return t
	}
	// UPDATE and DELETE: one static point lookup of WHERE c = ?, as built
	// here. A string key is taken only on a character column.
	_, isStr := lits[len(lits)-1].Value().(string)
	if isStr && !textColumnOf(n, p.col) {
		p.notText = true
		return nil
	}
	var ita *plan.IndexedTableAccess
	transform.Inspect(n, func(c sql.Node) bool {
		if x, isITA := c.(*plan.IndexedTableAccess); isITA {
			ok = ok && ita == nil
			ita = x
			return false
		}
		return ok
	})
	if !ok || ita == nil || ita.Typ != plan.ItaTypeStatic {
		return nil
	}
	lookup, err := ita.GetLookup(ctx, nil)
	if err != nil || lookup.IsEmptyRange || lookup.IsSpatialLookup || lookup.IsReverse {
		return nil
	}
	ranges, isRanges := lookup.Ranges.(sql.MySQLRangeCollection)
	index, isOurs := lookup.Index.(*Index)
	rt, isRT := ita.TableNode.(*plan.ResolvedTable)
	if !isRanges || len(ranges) != 1 || !isOurs || !isRT {
		return nil
	}
	tbl, isTable := rt.UnderlyingTable().(*Table)
	if _, direct := rt.WrappedTable().(*indexedTable); !direct || !isTable || tbl.planPinned || tbl.store != tx.store {
		return nil
	}
	if len(index.ix.cols) != 1 || !(index.ix.unique || index.ix.primary) {
		return nil
	}
	col := index.t.schema[index.ix.cols[0]]
	typ := ranges[0][0].Typ
	// GMS's ranges of a character column are of its promoted type.
	if !strings.EqualFold(col.Name, p.col) || typ == nil ||
		!(!isStr && types.IsInteger(typ) && typ.Type() == col.Type.Type() ||
			isStr && textKey(col.Type) && sameLiteralType(typ, col.Type.Promote())) {
		return nil
	}
	t.ita, t.index, t.typ, t.point, t.str = ita, lookup.Index, typ, lookup.IsPointLookup, isStr
	if p.kind == writeUpdate {
		t.privOf(rt, sql.PrivilegeType_Update)
	} else {
		t.privOf(rt, sql.PrivilegeType_Delete)
	}
	mine, built := t.lookup(ctx, lits[len(lits)-1])
	if !built {
		return nil
	}
	var myRanges sql.MySQLRangeCollection
	if isStr {
		myRanges = mine.Ranges.(sql.MySQLRangeCollection)
	} else {
		myRanges, built = mine.Ranges.(*intervalRanges).mysql()
	}
	if !built || !sameRanges(ctx, typ, myRanges, ranges) {
		return nil
	}
	t.markHot(n)
	if !isStr {
		// writedirect.go encodes integer keys only.
		t.direct = p.newDirect(ctx, t, n, lits)
	}
	return t
}

// privOf records the table a template writes and the privilege that
// takes, as binding checks it.
func (t *writeTemplate) privOf(rt *plan.ResolvedTable, priv sql.PrivilegeType) {
	t.privTable, t.priv = rt.Name(), priv
	if d := rt.Database(); d != nil {
		t.privDB = d.Name()
	}
}

// allowed reports whether the session's account holds the privilege the
// template's write takes, checked as binding checks it (the account's
// privileges as they are now).
func (t *writeTemplate) allowed(ctx *sql.Context, e *sqle.Engine) bool {
	db := e.Analyzer.Catalog.MySQLDb
	if !db.Enabled() {
		return true
	}
	return db.UserHasPrivileges(ctx, sql.NewPrivilegedOperation(
		sql.PrivilegeCheckSubject{Database: t.privDB, Table: t.privTable}, t.priv))
}

// literalsEqual reports whether two literals hold equal values (numbers by
// value, other values as they are).
func literalsEqual(a, b *expression.Literal) bool {
	x, y := a.Value(), b.Value()
	if fx, ok := toFloat(x); ok {
		fy, ok := toFloat(y)
		return ok && fx == fy
	}
	return valuesEqual(x, y)
}

// lookup builds the point lookup of WHERE c = arg; false when arg is not
// an integer the column's type holds or, for a string key, a string the
// column takes as it is (stringRanges).
func (t *writeTemplate) lookup(ctx *sql.Context, arg *expression.Literal) (sql.IndexLookup, bool) {
	if t.str {
		s, ok := arg.Value().(string)
		if !ok {
			return sql.IndexLookup{}, false
		}
		ranges, ok := stringRanges(ctx, t.typ, s)
		return sql.IndexLookup{Index: t.index, Ranges: ranges, IsPointLookup: t.point}, ok
	}
	v, ok := literalInt(arg.Value())
	if !ok || !intFits(ctx, t.typ, v) {
		return sql.IndexLookup{}, false
	}
	ranges := &intervalRanges{ctx: ctx, typ: t.typ, set: intervalSet{{v, v}}}
	return sql.IndexLookup{Index: t.index, Ranges: ranges, IsPointLookup: t.point}, true
}

// takes reports whether t's lookup takes the WHERE argument of lits: a
// string key the column converts as it is (stringKey); any integer,
// which the lookup checks.
func (t *writeTemplate) takes(ctx *sql.Context, lits []*expression.Literal) bool {
	if !t.str {
		return true
	}
	s, ok := lits[len(lits)-1].Value().(string)
	if ok {
		_, ok = stringKey(ctx, t.typ, s)
	}
	return ok
}

// literalInt returns an integer literal's value.
func literalInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case uint8:
		return int64(x), true
	case int16:
		return int64(x), true
	case uint16:
		return int64(x), true
	case int32:
		return int64(x), true
	case uint32:
		return int64(x), true
	case int64:
		return x, true
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	}
	return 0, false
}

// fits reports whether the session is as it was when t was made.
func (t *writeTemplate) fits(ctx *sql.Context) bool {
	if ctx.GetCurrentDatabase() != t.db {
		return false
	}
	mode, fk := sessionModes(ctx)
	return mode == t.sqlMode && fk == t.fkChecks
}

// sessionModes returns the session's sql_mode and foreign_key_checks.
func sessionModes(ctx *sql.Context) (sqlMode, fkChecks any) {
	if sess, ok := ctx.Session.(*Session); ok {
		v := sess.vars(ctx)
		return v.sqlMode, v.fkChecks
	}
	sqlMode, _ = ctx.GetSessionVariable(ctx, "sql_mode")
	fkChecks, _ = ctx.GetSessionVariable(ctx, "foreign_key_checks")
	return sqlMode, fkChecks
}

// with returns template t's plan with p.lits in place of the literals it
// was learned with, and their lookup; errStalePlan when the statement's
// transaction reads another catalog version than t was made at.
func (p *PreparedWrite) with(ctx *sql.Context, t *writeTemplate) (sql.Node, error) {
	tx := txnOf(ctx)
	if tx == nil {
		return nil, errStalePlan
	}
	if v, current := tx.catalogVersion(); !current || v != t.version {
		return nil, errStalePlan
	}
	var ita sql.Node
	if t.ita != nil {
		lookup, ok := t.lookup(ctx, p.lits[len(p.lits)-1])
		if !ok {
			return nil, errStalePlan
		}
		var err error
		if ita, err = plan.NewStaticIndexedAccessForTableNode(ctx, t.ita.TableNode, lookup); err != nil {
			return nil, err
		}
	}
	n, err := p.rebuild(t, t.root, ita)
	if err == nil && t.autoArg >= 0 {
		if ii, ok := n.(*plan.InsertInto); ok {
			first := -1
			if t.generates(ctx, p.lits) {
				first = 0
			}
			if ii.FirstGeneratedAutoIncRowIdx != first {
				n = ii.WithAutoIncrementIdx(first)
			}
		}
	}
	return n, err
}

// generates reports whether an execution of INSERT template t with
// literals lits generates its AUTO_INCREMENT value (and so sets
// LAST_INSERT_ID): always when no argument gives the value, else as the
// analysis decides it from the argument's literal (NULL, or zero, a string
// '0' too, without NO_AUTO_VALUE_ON_ZERO; mysqlcompat.GeneratesAutoInc).
// The kept plan (with) and insertDirect both ask it.
func (t *writeTemplate) generates(ctx *sql.Context, lits []*expression.Literal) bool {
	return t.autoArg < 0 || mysqlcompat.GeneratesAutoInc(ctx, t.autoType, lits[t.autoArg].Value(), t.noAutoOnZero)
}

// rebuild returns plan n with ita in place of the template's lookup node
// and the execution's literals in place of the template's, making new
// nodes only on the way to them (the hot nodes learn marked): a transform
// of the whole plan would copy every node's children and expressions.
func (p *PreparedWrite) rebuild(t *writeTemplate, n sql.Node, ita sql.Node) (sql.Node, error) {
	if ita != nil && n == sql.Node(t.ita) {
		return ita, nil
	}
	if !t.isHot(n) {
		return n, nil
	}
	var err error
	if kids := n.Children(); len(kids) > 0 {
		var fresh []sql.Node
		for i, c := range kids {
			nc, err := p.rebuild(t, c, ita)
			if err != nil {
				return nil, err
			}
			if nc != c {
				if fresh == nil {
					fresh = append([]sql.Node(nil), kids...)
				}
				fresh[i] = nc
			}
		}
		if fresh != nil {
			if n, err = n.WithChildren(fresh...); err != nil {
				return nil, err
			}
		}
	}
	if ex, ok := n.(sql.Expressioner); ok {
		exprs := ex.Expressions()
		var fresh []sql.Expression
		for i, x := range exprs {
			nx, same, err := transform.Expr(x, func(x sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
				if l, ok := x.(*expression.Literal); ok {
					for i, s := range t.slots {
						if l == s {
							return p.lits[i], transform.NewTree, nil
						}
					}
				}
				return x, transform.SameTree, nil
			})
			if err != nil {
				return nil, err
			}
			if same == transform.NewTree {
				if fresh == nil {
					fresh = append([]sql.Expression(nil), exprs...)
				}
				fresh[i] = nx
			}
		}
		if fresh != nil {
			if n, err = ex.WithExpressions(fresh...); err != nil {
				return nil, err
			}
		}
	}
	if ii, ok := n.(*plan.InsertInto); ok && ii.Source != nil {
		src, err := p.rebuild(t, ii.Source, ita)
		if err != nil {
			return nil, err
		}
		if src != ii.Source {
			n = ii.WithSource(src)
		}
	}
	return n, nil
}

// markHot records the nodes of n that rebuild must make anew: the lookup's
// node, nodes whose expressions hold an argument's literal, and the nodes
// above them (an INSERT's source counting as its child). It reports
// whether n is one.
func (t *writeTemplate) markHot(n sql.Node) bool {
	hot := t.ita != nil && n == sql.Node(t.ita)
	if ex, ok := n.(sql.Expressioner); ok {
		for _, x := range ex.Expressions() {
			transform.InspectExpr(x, func(x sql.Expression) bool {
				if l, ok := x.(*expression.Literal); ok {
					for _, s := range t.slots {
						hot = hot || l == s
					}
				}
				return false
			})
		}
	}
	for _, c := range n.Children() {
		if t.markHot(c) {
			hot = true
		}
	}
	if ii, ok := n.(*plan.InsertInto); ok && ii.Source != nil && t.markHot(ii.Source) {
		hot = true
	}
	if hot {
		t.hot = append(t.hot, n)
	}
	return hot
}

// isHot reports whether markHot recorded n.
func (t *writeTemplate) isHot(n sql.Node) bool {
	for _, h := range t.hot {
		if sameNode(h, n) {
			return true
		}
	}
	return false
}

// sameNode is a == b, false for nodes of an uncomparable type.
func sameNode(a, b sql.Node) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return a == b
}

// inspectWriteExprs calls f on the expressions of plan n, as
// transform.InspectExpressions does, and of an INSERT's source, which is
// not among its children.
func inspectWriteExprs(n sql.Node, f func(sql.Expression) bool) {
	transform.InspectExpressions(n, f)
	if ii, ok := n.(*plan.InsertInto); ok && ii.Source != nil {
		transform.InspectExpressions(ii.Source, f)
	}
}

// run executes the plan build returns as GMS's QueryWithBindings would
// (the caller counts the statement in Questions): the session validated,
// the transaction begun, then the plan built, the read-only check, its
// iterators made and wrapped (commit of autocommit statements, process
// list). The plan is template t's with the execution's arguments, or with
// t nil one planned for this execution.
func (p *PreparedWrite) run(ctx *sql.Context, e *sqle.Engine, t *writeTemplate, query string, build func() (sql.Node, error)) (schema sql.Schema, iter sql.RowIter, err error) {
	defer recoverInto(&err, query)
	if err := startStatement(ctx); err != nil {
		return nil, nil, err
	}
	n, err := build()
	if err == nil && (e.IsReadOnly() || e.IsServerLocked) && !plan.IsReadOnly(n) {
		err = sql.ErrReadOnly.New()
	}
	exec, flags := e.Analyzer.ExecBuilder, (*sql.QueryFlags)(nil)
	if t != nil {
		exec, flags = t.exec, t.flags
	} else if err == nil {
		flags = triggerFlags(n)
	}
	if err == nil {
		iter, err = exec.Build(ctx, n, nil)
	}
	if err == nil {
		iter, schema, err = rowexec.FinalizeIters(ctx, n, flags, iter)
	}
	if err != nil {
		clearAutocommit(ctx)
		if errors.Is(err, errStalePlan) {
			return nil, nil, err
		}
		return nil, nil, StatementError(query, err)
	}
	if schema == nil {
		schema = n.Schema()
	}
	return schema, &recoveringIter{RowIter: iter, query: query}, nil
}
