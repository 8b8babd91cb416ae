package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// The plan cache of statements run without arguments. GMS parses, binds
// and analyzes every statement, which for the shortest ones (SELECT 1, SET
// @x = 1, BEGIN, COMMIT) is nearly all of their cost, and for a point
// select run as text about two thirds. A connection keeps, per statement
// text, what that work found:
//
//   - Texts whose integer literals are all in a predicate of the shape
//     PreparedSelect reuses ("SELECT c FROM t WHERE id = 5") run as that
//     statement with the literals as its arguments: the literals are
//     replaced by placeholders (normalize), the parameterized text is kept
//     parsed among the one-shot statements (Conn.parseOne), and the
//     execution reuses the template the prepared path keeps, with all its
//     checks (catalog version, sql_mode, current database, arguments that
//     fit the column).
//   - So do texts of the shapes PreparedWrite reuses, an INSERT's plain
//     single-quoted strings made arguments as well (valueString), and an
//     UPDATE's or DELETE's where SET assigns them or WHERE compares them
//     with a character key (setStrings).
//   - A SELECT's plain string compared by one equality with a character
//     key is an argument too (stringtemplate.go). Text UPDATEs by key of a
//     changing string and SELECTs by a string key so cost 6-9x and 10-17x
//     less CPU than planned (docs/benchmarks.md, 2026-12-07).
//   - Texts whose analyzed plan reads no table and keeps nothing between
//     executions (cacheablePlan: constants and system variables selected
//     from no table, SET of session and user variables to constants,
//     BEGIN, COMMIT, ROLLBACK) keep that plan, and later executions only
//     build its iterators (a SELECT not even those: constselect.go;
//     BEGIN, COMMIT and ROLLBACK neither: txnstmt.go). The
//     plan holds the literals as bound under the session's variables
//     (sql_mode, the connection's collation), so it is used only while
//     they are unchanged (Session.varsGen) and in the same current
//     database.
//   - Other texts are remembered as such, so that they are not looked at
//     again, and go to GMS.
//
// The cache is bounded (planCacheSize texts, least recently used
// dropped; none longer than maxCachedText). It is off under SET
// strata_plan_reuse = OFF. With the privilege system on (the MySQL
// server), templates check the account's SELECT privilege at every
// execution (prepared.go, allowed), and a SET of a system variable is not
// kept, since planning checks what it needs.

// planCacheSize is how many statement texts a connection's plan cache
// keeps, and maxCachedText the longest text it looks at: a long statement
// is not worth a copy kept for as long as the connection lives.
const (
	planCacheSize = 256
	maxCachedText = 8 << 10
)

// cacheKind is what the cache knows of a text.
type cacheKind uint8

const (
	cacheNone     cacheKind = iota // GMS runs it
	cacheTemplate                  // run as its parameterized statement
	cacheFixed                     // run on its kept plan
)

// cachedPlan is one text's entry in a connection's plan cache.
type cachedPlan struct {
	key  string
	kind cacheKind
	// Of a cacheFixed entry: the plan, and what it was made under.
	node     sql.Node
	flags    *sql.QueryFlags // node's, for rowexec.FinalizeIters (triggerFlags)
	isSelect bool
	consts   *constSelect // a SELECT of constants from no table, or nil
	txn      *txnStmt     // BEGIN, COMMIT or ROLLBACK, or nil
	db       string
	varsGen  uint64
	// Of a cacheTemplate entry: the parameterized text.
	param string
	// Of a cacheNone entry of a parameterized text: whether the texts it
	// stands for may have plans of their own (cacheFixed).
	fixedShape bool

	prev, next *cachedPlan // the LRU list, most recent first
}

// planCache is a connection's bounded map of statement texts to what it
// knows of them. Not safe for concurrent use.
type planCache struct {
	entries    map[string]*cachedPlan
	head, tail *cachedPlan

	norm []byte  // normalize's output, reused
	ints []int64 // normalize's literals, reused
	vals []any   // normalizeValues' literals of an INSERT, reused
	args []Arg   // the literals as arguments, reused

	found resolved // what resolve found, for runResolved
}

// resolved is what the plan cache runs for a statement: a kept plan, or a
// parameterized statement with its arguments.
type resolved struct {
	fixed   *cachedPlan
	planned bool // the kept plan was made for this execution
	stmt    *Stmt
	args    []Arg
}

// get returns the entry of key, made the most recent, or nil.
func (pc *planCache) get(key []byte) *cachedPlan {
	e := pc.entries[string(key)]
	if e != nil && pc.head != e {
		pc.unlink(e)
		pc.pushFront(e)
	}
	return e
}

// put adds e, dropping the least recently used entry when full, and
// returns the dropped entry or nil.
func (pc *planCache) put(e *cachedPlan) (dropped *cachedPlan) {
	if pc.entries == nil {
		pc.entries = make(map[string]*cachedPlan)
	}
	if old := pc.entries[e.key]; old != nil {
		pc.unlink(old)
		delete(pc.entries, old.key)
	}
	if len(pc.entries) >= planCacheSize {
		dropped = pc.tail
		pc.unlink(dropped)
		delete(pc.entries, dropped.key)
	}
	pc.entries[e.key] = e
	pc.pushFront(e)
	return dropped
}

func (pc *planCache) unlink(e *cachedPlan) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		pc.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		pc.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

func (pc *planCache) pushFront(e *cachedPlan) {
	e.next = pc.head
	if pc.head != nil {
		pc.head.prev = e
	}
	pc.head = e
	if pc.tail == nil {
		pc.tail = e
	}
}

// normalize appends to dst the text query with every integer literal
// replaced by a ? placeholder, and to ints the literals' values, in order.
// Everything else is copied as written: strings, quoted identifiers,
// comments, and numbers that are not plain integers (1.5, 1e3, 0x1f,
// integers beyond int64, a sign stays outside the placeholder). ok is false
// for texts the cache leaves alone: with placeholders or semicolons of
// their own, a NUL byte, or an unterminated string or comment.
func normalize(dst []byte, ints []int64, query string) (_ []byte, _ []int64, ok bool) {
	dst, ints, _, ok = normalizeValues(dst, ints, nil, query, false)
	return dst, ints, ok
}

// normalizeValues is normalize, and with strs also replaces plain
// single-quoted strings (valueString) by placeholders; vals then gets
// every replaced literal in order, integers as int64 and strings as the
// string's value.
func normalizeValues(dst []byte, ints []int64, vals []any, query string, strs bool) (_ []byte, _ []int64, _ []any, ok bool) {
	q := query
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' && strs:
			v, end, plain := valueString(q, i)
			if end < 0 {
				return dst, ints, vals, false
			}
			if plain {
				dst = append(dst, '?')
				vals = append(vals, v)
			} else {
				dst = append(dst, q[i:end]...)
			}
			i = end
		case c == '\'' || c == '"' || c == '`':
			j := quoteEnd(q, i)
			if j >= len(q) {
				return dst, ints, vals, false
			}
			dst = append(dst, q[i:j+1]...)
			i = j + 1
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			end := indexFrom(q, i+2, "*/")
			if end < 0 {
				return dst, ints, vals, false
			}
			dst = append(dst, q[i:end+2]...)
			i = end + 2
		case c == '#' || ((c == '-' || c == '/') && i+1 < len(q) && q[i+1] == c):
			// The engine's tokenizer starts a line comment at any "--"
			// and "//".
			end := indexFrom(q, i, "\n")
			if end < 0 {
				end = len(q) - 1
			}
			dst = append(dst, q[i:end+1]...)
			i = end + 1
		case c == '?' || c == ';' || c == ':' || c == 0: // the tokenizer ends at a NUL
			return dst, ints, vals, false
		case wordByte(c):
			j := i + 1
			for j < len(q) && wordByte(q[j]) {
				j++
			}
			// An exponent's sign belongs to the number: 1e-5.
			if isDigit(c) && (q[j-1] == 'e' || q[j-1] == 'E') && j < len(q) && (q[j] == '-' || q[j] == '+') {
				j++
				for j < len(q) && wordByte(q[j]) {
					j++
				}
			}
			word := q[i:j]
			after := i > 0 && (q[i-1] == '@' || q[i-1] == '.')
			if v, err := parseDigits(word); err == nil && !after {
				dst = append(dst, '?')
				ints = append(ints, v)
				if strs {
					vals = append(vals, v)
				}
			} else {
				dst = append(dst, word...)
			}
			i = j
		default:
			dst = append(dst, c)
			i++
		}
	}
	return dst, ints, vals, true
}

func indexFrom(s string, from int, sub string) int {
	for i := from; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// wordByte reports a byte of an identifier or a number (MySQL identifiers
// may begin with digits, and hold any byte above ASCII).
func wordByte(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c == '.' || c >= 0x80
}

// parseDigits parses a plain decimal integer; anything else fails
// without the allocation of strconv's syntax error.
func parseDigits(s string) (int64, error) {
	if !allDigits(s) {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseInt(s, 10, 64)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return len(s) > 0
}

// cachedQuery runs query, a text without arguments, through the plan
// cache: handled is false when the cache has nothing for it, and the
// caller runs it through GMS.
func (c *Conn) cachedQuery(ctx context.Context, query string) (sctx *sql.Context, schema sql.Schema, iter sql.RowIter, handled bool, err error) {
	if !c.resolve(ctx, query, nil) {
		return nil, nil, nil, false, nil
	}
	sctx = c.resolvedContext(ctx, query)
	schema, iter, err = c.runResolved(sctx, query)
	return sctx, schema, iter, true, err
}

// CachedPlan reports whether the connection's plan cache runs query with
// args itself (RunCached), learning what it can of a text it sees the
// first time. A query with arguments has them as placeholders (the MySQL
// protocol's prepared statements); only integer arguments are run from the
// cache. The MySQL-protocol server asks it for each statement of a session
// it attached (Engine.AttachConn), to run those on its own goroutine.
func (c *Conn) CachedPlan(ctx context.Context, query string, args []Arg) bool {
	if c.closed {
		return false
	}
	return c.resolve(ctx, query, args)
}

// RunCached runs the statement CachedPlan found for query in sctx, a
// statement context of the connection's session made by the caller. It
// must follow a CachedPlan that returned true for the same query, with
// no other statement of the connection in between.
func (c *Conn) RunCached(sctx *sql.Context, query string) (sql.Schema, sql.RowIter, error) {
	return c.runResolved(sctx, query)
}

// resolve finds what the plan cache runs for query with args, into
// c.plans.found, or reports false.
func (c *Conn) resolve(ctx context.Context, query string, args []Arg) bool {
	pc := &c.plans
	pc.found = resolved{}
	if len(query) > maxCachedText {
		return false
	}
	if len(args) > 0 {
		// A prepared statement's text: a template or nothing. Selects
		// take integer arguments; writes also strings and NULL, which
		// the protocol's quoted values and NULL bind to.
		ints := true
		for _, a := range args {
			switch a.Value.(type) {
			case int64, uint64:
			case string, nil:
				ints = false
			default:
				return false
			}
		}
		e := pc.get(unsafeBytes(query))
		if e == nil {
			e = c.learnTemplate(ctx, query)
		}
		if e == nil || e.kind != cacheTemplate {
			return false
		}
		st, err := c.parseOne(ctx, e.param)
		if err != nil || (st.sel == nil || !ints) && st.wr == nil {
			return false
		}
		pc.found = resolved{stmt: st, args: args}
		return true
	}
	// An INSERT's string values are parameterized too: its VALUES row is
	// a prepared write's (writetemplate.go) only when every value is. So
	// are an UPDATE's or DELETE's, where the template takes them as values
	// assigned to columns or as its character key (setStrings), and a
	// SELECT's compared with a column by one equality
	// (stringtemplate.go); anywhere else in them, the text is looked at
	// again with its integers alone as arguments.
	first, _ := LeadingWords(query)
	strs := strings.EqualFold(first, "insert")
	writing := !strs && (strings.EqualFold(first, "update") || strings.EqualFold(first, "delete"))
	selecting := !strs && !writing && strings.EqualFold(first, "select")
	strs = strs || writing || selecting
	var ok bool
	pc.norm, pc.ints, pc.vals, ok = normalizeValues(pc.norm[:0], pc.ints[:0], pc.vals[:0], query, strs)
	if !ok {
		return false
	}
	hasInts := len(pc.ints) > 0 || len(pc.vals) > 0
	e, st, ok := c.templateOf(ctx, pc, hasInts)
	if !ok {
		return false
	}
	if (writing || selecting) && len(pc.vals) > len(pc.ints) &&
		(st == nil || writing && !setStrings(st.wr, pc.vals) || selecting && (st.sel == nil || !st.sel.stringArgs())) {
		strs, st = false, nil
		if pc.norm, pc.ints, ok = normalize(pc.norm[:0], pc.ints[:0], query); !ok {
			return false
		}
		hasInts = len(pc.ints) > 0
		if e, st, ok = c.templateOf(ctx, pc, hasInts); !ok {
			return false
		}
	}
	if st != nil {
		pc.args = pc.args[:0]
		if strs {
			for i, v := range pc.vals {
				pc.args = append(pc.args, Arg{Ordinal: i + 1, Value: v})
			}
		} else {
			for i, v := range pc.ints {
				pc.args = append(pc.args, Arg{Ordinal: i + 1, Value: v})
			}
		}
		pc.found = resolved{stmt: st, args: pc.args}
		return true
	}
	if hasInts {
		// The plan of a text holds its literals: it is kept under the
		// text itself, for shapes that may have one.
		if !e.fixedShape {
			return false
		}
		e = pc.get(unsafeBytes(query))
	}
	if e == nil || (e.kind == cacheFixed && (e.varsGen != c.sess.varsGen.Load() || e.db != c.sess.GetCurrentDatabase())) {
		sctx := c.sess.NewStatementContext(ctx, c.eng.gms, query)
		if !planReuse(sctx) {
			return false
		}
		e = c.learnFixed(sctx, query)
		if e.kind != cacheFixed {
			return false
		}
		pc.found = resolved{fixed: e, planned: true}
		return true
	}
	if e.kind != cacheFixed {
		return false
	}
	pc.found = resolved{fixed: e}
	return true
}

// setStrings reports whether p, the prepared write of an UPDATE or
// DELETE text with its literals made arguments (vals, in order), takes
// every string among them as a value it assigns to a column or as its
// WHERE key. A value assigned converts to the column's type at
// execution, as INSERT's values do, whatever its text; a string WHERE key
// is the template's lookup of a character key (stringtemplate.go), left
// in the text once a string met a column of another type (notText).
func setStrings(p *PreparedWrite, vals []any) bool {
	if p == nil || p.kind != writeUpdate && p.kind != writeDelete {
		return false
	}
	for i, v := range vals {
		if _, isStr := v.(string); isStr && p.notText {
			a := Arg{Ordinal: i + 1}
			if a.name() == p.where {
				return false
			}
		}
	}
	return true
}

// runResolved runs what resolve found.
func (c *Conn) runResolved(sctx *sql.Context, query string) (sql.Schema, sql.RowIter, error) {
	f := c.plans.found
	c.plans.found = resolved{}
	switch {
	case f.stmt != nil:
		return f.stmt.startIn(sctx, f.args)
	case f.fixed != nil && f.fixed.consts != nil:
		return f.fixed.consts.run(sctx, c, query, !f.planned)
	case f.fixed != nil && f.fixed.txn != nil:
		return f.fixed.txn.run(sctx, c, query, !f.planned)
	case f.fixed != nil:
		return runPlan(sctx, c, query, f.fixed, !f.planned)
	}
	return nil, nil, fmt.Errorf("sqlstore: no cached plan for %q", truncate(query, 200))
}

// unsafeBytes returns s's bytes, for a map lookup that does not keep them.
func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// templateOf returns the cache's entry for the normalized text pc.norm,
// learning a template for it when it has arguments (learn), and the
// template's parsed statement when the entry is one; ok is false when
// the text cannot run as a template it should be.
func (c *Conn) templateOf(ctx context.Context, pc *planCache, learn bool) (e *cachedPlan, st *Stmt, ok bool) {
	e = pc.get(pc.norm)
	if e == nil && learn {
		if e = c.learnTemplate(ctx, string(pc.norm)); e == nil {
			return nil, nil, false
		}
	}
	if e != nil && e.kind == cacheTemplate {
		var err error
		if st, err = c.parseOne(ctx, e.param); err != nil || st.sel == nil && st.wr == nil {
			return nil, nil, false
		}
	}
	return e, st, true
}

// learnTemplate looks at a text with integer literals replaced by
// placeholders (param) and caches whether it runs as a prepared statement
// that reuses its plan, or else whether the texts it stands for are of a
// shape whose plan may be kept (fixedShape). It returns nil when the
// cache is off.
func (c *Conn) learnTemplate(ctx context.Context, param string) *cachedPlan {
	sctx := c.sess.NewStatementContext(ctx, c.eng.gms, param)
	if !planReuse(sctx) {
		return nil
	}
	e := &cachedPlan{key: param, kind: cacheNone}
	parsed, _, err := c.eng.gms.Parser.ParseOneWithOptions(sctx, param, sql.LoadSqlMode(sctx).ParserOptions())
	if err == nil {
		if NewPreparedSelect(parsed) != nil || NewPreparedWrite(parsed) != nil {
			e.kind, e.param = cacheTemplate, param
		} else {
			e.fixedShape = fixedShape(parsed)
		}
	}
	c.plans.put(e)
	return e
}

// learnFixed analyzes query and caches its plan when it may be run again
// (cacheablePlan), else that it may not.
func (c *Conn) learnFixed(sctx *sql.Context, query string) *cachedPlan {
	e := &cachedPlan{key: query, kind: cacheNone}
	defer c.plans.put(e)
	parsed, _, err := c.eng.gms.Parser.ParseOneWithOptions(sctx, query, sql.LoadSqlMode(sctx).ParserOptions())
	if err != nil || !fixedShape(parsed) {
		return e
	}
	gen := c.sess.varsGen.Load()
	n, err := analyzeRecovering(sctx, c, query)
	if err != nil || !cacheablePlan(n, c.eng.gms.Analyzer.Catalog.MySQLDb.Enabled()) {
		return e
	}
	e.kind, e.node, e.varsGen, e.db = cacheFixed, n, gen, sctx.GetCurrentDatabase()
	e.flags = triggerFlags(n)
	e.isSelect = plan.NodeRepresentsSelect(n)
	if e.isSelect {
		e.consts = newConstSelect(n)
	} else {
		e.txn = newTxnStmt(n)
	}
	return e
}

// analyzeRecovering analyzes query, turning a panic into an error.
func analyzeRecovering(sctx *sql.Context, c *Conn, query string) (n sql.Node, err error) {
	defer recoverInto(&err, query)
	return c.eng.gms.AnalyzeQuery(sctx, query)
}

// fixedShape reports whether a parsed statement is of a kind whose plan
// may be kept: a SELECT without FROM, a SET, BEGIN, COMMIT or ROLLBACK.
// The analyzed plan is checked too (cacheablePlan); this spares analyzing
// the others.
func fixedShape(stmt sqlparser.Statement) bool {
	switch s := stmt.(type) {
	case *sqlparser.Select:
		if s.With != nil || s.Into != nil || s.Lock != "" {
			return false
		}
		if len(s.From) == 0 {
			return true
		}
		if len(s.From) != 1 {
			return false
		}
		t, ok := s.From[0].(*sqlparser.AliasedTableExpr)
		if !ok {
			return false
		}
		name, ok := t.Expr.(sqlparser.TableName)
		return ok && strings.EqualFold(name.Name.String(), "dual") && name.DbQualifier.IsEmpty()
	case *sqlparser.Set, *sqlparser.Begin, *sqlparser.Commit, *sqlparser.Rollback:
		return true
	}
	return false
}

// cacheablePlan reports whether an analyzed plan may run again for the
// same text: it reads no table, and holds only constants and system
// variables selected, session and user variables assigned constants, and
// transaction statements, none of
// which keeps state between executions or depends on anything but the
// session's variables and current database.
//
// With the privilege system on, a SET of a system variable is not kept:
// the privileges it needs are checked when it is planned.
func cacheablePlan(n sql.Node, privileges bool) bool {
	ok := true
	transform.Inspect(n, func(c sql.Node) bool {
		switch c := c.(type) {
		case nil:
		case *plan.Project:
			for _, x := range c.Projections {
				ok = ok && keptProjection(x)
			}
		case *plan.ResolvedTable:
			ok = ok && plan.IsDualTable(c.Table)
		case *plan.Set:
			for _, x := range c.Exprs {
				sf, isSet := x.(*expression.SetField)
				if !isSet {
					ok = false
					break
				}
				if _, isLit := sf.Right().(*expression.Literal); !isLit {
					ok = false
				}
				switch v := sf.Left().(type) {
				case *expression.UserVar:
				case *expression.SystemVar:
					scope, isMySQL := v.Scope.(*sql.MysqlScope)
					ok = ok && !privileges && isMySQL && scope.Type == sql.SystemVariableScope_Session
				default:
					ok = false
				}
			}
		case *plan.StartTransaction, *plan.Commit, *plan.Rollback:
		default:
			ok = false
		}
		return ok
	})
	return ok && n != nil
}

// keptProjection reports whether a projection of a plan that reads no
// table may be kept: a literal, or a system variable, which is read when
// the row is made (a SET GLOBAL elsewhere is seen; its type is the
// variable's, fixed), aliased or not.
func keptProjection(x sql.Expression) bool {
	if a, isAlias := x.(*expression.Alias); isAlias {
		x = a.Child
	}
	switch x := x.(type) {
	case *expression.Literal:
		return true
	case *expression.SystemVar:
		_, isMySQL := x.Scope.(*sql.MysqlScope)
		return isMySQL
	}
	return false
}

// runPlan executes the kept plan of entry f as GMS's QueryWithBindings
// would after analysis: the statement counted, the session validated, the
// transaction begun, warnings cleared, then the iterators built and
// wrapped (commit of autocommit statements). reused counts the execution
// in Strata_plans_reused.
func runPlan(ctx *sql.Context, c *Conn, query string, f *cachedPlan, reused bool) (schema sql.Schema, iter sql.RowIter, err error) {
	defer recoverInto(&err, query)
	e := c.eng.gms
	n, isSelect := f.node, f.isSelect
	countStatus(ctx, statusQuestions)
	if err := startStatement(ctx); err != nil {
		return nil, nil, StatementError(query, err)
	}
	if isSelect {
		countStatus(ctx, statusComSelect)
	}
	iter, err = e.Analyzer.ExecBuilder.Build(ctx, n, nil)
	if err == nil {
		iter, schema, err = rowexec.FinalizeIters(ctx, n, f.flags, iter)
	}
	if err != nil {
		clearAutocommit(ctx)
		return nil, nil, StatementError(query, err)
	}
	if schema == nil {
		schema = n.Schema()
	}
	if reused {
		c.sess.plansReused.Add(1)
	}
	return schema, &recoveringIter{RowIter: iter, query: query}, nil
}

// valueString reads the single-quoted string at q[i]: its value, the
// index after it (-1 when unterminated), and whether it is a plain string
// whose value is the same whatever the session's variables: no character
// set introducer or prefix before it (_utf8mb4'x', N'x', X'1f'), no
// backslash in it (an escape or not, by sql_mode), and no string after it
// ('a' 'b' is one string). A doubled quote is one quote.
func valueString(q string, i int) (v string, end int, plain bool) {
	plain = i == 0 || !wordByte(q[i-1])
	doubled := false
	j := i + 1
	for ; j < len(q); j++ {
		if q[j] == '\\' {
			plain = false
			j++
			continue
		}
		if q[j] == '\'' {
			if j+1 < len(q) && q[j+1] == '\'' {
				doubled = true
				j++
				continue
			}
			break
		}
	}
	if j >= len(q) {
		return "", -1, false
	}
	end = j + 1
	for k := end; k < len(q); k++ {
		if c := q[k]; c == '\'' || c == '"' {
			plain = false
		} else if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		break
	}
	v = q[i+1 : j]
	if doubled {
		v = strings.ReplaceAll(v, "''", "'")
	}
	return v, end, plain
}

// quoteEnd returns the index of the quote that closes the string or quoted
// name opening at q[i] (', " or `), or len(q) when the text ends first.
// A doubled quote stands for itself; a backslash escapes the next byte in
// strings, not in names, as vitess's tokenizer reads them.
func quoteEnd(q string, i int) int {
	c := q[i]
	j := i + 1
	for ; j < len(q); j++ {
		if q[j] == '\\' && c != '`' {
			j++
			continue
		}
		if q[j] == c {
			if j+1 < len(q) && q[j+1] == c {
				j++
				continue
			}
			break
		}
	}
	return min(j, len(q))
}
