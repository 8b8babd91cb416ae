package mysqlcompat

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Values given for generated columns
//
// MySQL 8 refuses a value other than DEFAULT for a generated column, in
// INSERT, REPLACE, UPDATE and ON DUPLICATE KEY UPDATE alike, with error
// 3105, whatever the sql_mode. MariaDB does so only in strict mode; without
// STRICT_TRANS_TABLES or STRICT_ALL_TABLES it ignores the value, computes
// the column, and records warning 1906 for each row and column whose value
// it ignored. Dumps rely on that: mariadb-dump's INSERTs give a value for
// every column of every row, generated ones included, and its dumps reload
// under sql_mode='NO_AUTO_VALUE_ON_ZERO'. Strata follows MariaDB out of strict
// mode and MySQL 8 in it (docs/decisions/2026-12-07-generated-column-values.md).
//
// GMS refuses such values while it binds the statement, before any rule of
// an analyzer sees it, so the correction is a rewrite of the parsed
// statement (generatedValuesParser), which looks the table up to learn its
// generated columns. Outside strict mode it drops the generated columns
// given values from the statement and wraps, in each row, the value of a
// column that stays in a call of ignoredValuesName, which evaluates to that
// value and records the warnings for that row when the row is written
// (ignoredGeneratedValues). Each warning thus comes with its row, as in
// MariaDB: VALUES rows, rows of INSERT ... SELECT, rows an UPDATE matches,
// and rows ON DUPLICATE KEY UPDATE updates. The call checks the sql_mode
// again when it runs, so a statement parsed out of strict mode and run in
// it (a prepared statement) fails with 3105 then.
//
// DEFAULT, which MySQL 8 takes for a generated column, is taken in every
// mode: in a VALUES list without column names (which GMS refuses for any
// table with generated columns) the rewrite names the table's columns, and
// `SET g = DEFAULT` of UPDATE and ON DUPLICATE KEY UPDATE (which GMS
// refuses, or for ON DUPLICATE KEY UPDATE, carries out) is dropped. In
// strict mode, two values GMS lets through go to the call, which refuses
// them with 3105: those of ON DUPLICATE KEY UPDATE (which GMS wrote into
// the column), checked when a row is a duplicate, as MySQL 8 checks them;
// and those of VALUES rows after a first row with DEFAULT (GMS looks at
// the first row only, and ignored the others).
//
// And in every mode, ON DUPLICATE KEY UPDATE sets each STORED generated
// column again after its own assignments (recomputeStored), which GMS did
// not: the updated row kept the old value.
//
// A row that keeps no other value but DEFAULT carries the call in a
// column's default written out (defaultValue); an UPDATE over a join gets
// the same rewrite for each table it sets (rewriteJoinUpdate); a row alias
// of VALUES loses the names of the columns dropped (dropAliasColumns).
// The bodies of triggers and procedures get it too (genbodies.go).
//
// What is left as GMS has it: statements whose table has no generated
// column or cannot be found (GMS reports what is wrong), and rows whose
// columns have no default to carry the call (GMS refuses them for that
// column).

// ignoredValuesName is the function the rewrite calls:
// strata_generated_values_ignored(value, 'table', 'column', ignored value,
// ...) is value, and records warning 1906 for each column named (error
// 3105 in strict mode).
const ignoredValuesName = "strata_generated_values_ignored"

// erGeneratedValueIgnored is MariaDB's ER_WARNING_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN.
const erGeneratedValueIgnored = 1906

// generatedValuesParser is a parser with the rewrite (above) applied to
// the INSERT, REPLACE and UPDATE statements it parses with a session, also
// those of a CREATE TRIGGER's body (genbodies.go).
//
// Without a Parser it is the rewrite alone, of the stored bodies of
// triggers and procedures (BindableTriggers, BindableProcedure), which
// then sets db, where it looks the tables up, and body: the rewrite is
// that of a body created out of strict mode, whatever the session's mode.
type generatedValuesParser struct {
	sql.Parser
	cat   sql.Catalog
	db    sql.Database
	body  bool
	likes *likeSources // CREATE TABLE ... LIKE noted (virtuallike.go)
	// found, when set, is set when a table with a generated column is
	// looked up: the statements that name none the rewrite leaves alone
	// (rewriteBody).
	found *bool
}

// Parse implements sql.Parser.
func (p generatedValuesParser) Parse(ctx *sql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	st, q, rest, err := p.Parser.Parse(ctx, query, multi)
	if err == nil {
		st = p.rewrite(ctx, st)
	}
	return st, q, rest, err
}

// ParseWithOptions implements sql.Parser.
func (p generatedValuesParser) ParseWithOptions(ctx context.Context, query string, delimiter rune, multi bool, options ast.ParserOptions) (ast.Statement, string, string, error) {
	st, q, rest, err := p.Parser.ParseWithOptions(ctx, query, delimiter, multi, options)
	if sctx, ok := ctx.(*sql.Context); ok && err == nil {
		st = p.rewrite(sctx, st)
	}
	return st, q, rest, err
}

// ParseOneWithOptions implements sql.Parser.
func (p generatedValuesParser) ParseOneWithOptions(ctx context.Context, query string, options ast.ParserOptions) (ast.Statement, int, error) {
	st, n, err := p.Parser.ParseOneWithOptions(ctx, query, options)
	if sctx, ok := ctx.(*sql.Context); ok && err == nil {
		st = p.rewrite(sctx, st)
	}
	return st, n, err
}

// rewrite applies the rewrite to st, in place, and returns st, or the
// statement to run instead.
func (p generatedValuesParser) rewrite(ctx *sql.Context, st ast.Statement) ast.Statement {
	switch s := st.(type) {
	case *ast.Insert:
		p.rewriteInsert(ctx, s)
	case *ast.Update:
		if len(s.TableExprs) != 1 || !isTableName(s.TableExprs[0]) {
			return p.rewriteJoinUpdate(ctx, s)
		}
		p.rewriteUpdate(ctx, s)
	case *ast.DDL:
		if s.Action == ast.CreateStr && (s.OptLike != nil || s.TableSpec != nil || s.OptSelect != nil) {
			p.likes.note(ctx, p.cat, s) // every CREATE TABLE: one that copies no such table clears the note
		}
		if s.TriggerSpec == nil {
			break
		}
		if !p.strict(ctx) {
			p.rewriteBody(ctx, s.TriggerSpec.Body)
			break
		}
		// In strict mode, GMS refuses the body's values, but for those of
		// UPDATEs over joins, which it fails on (rewriteJoinUpdate).
		var refused ast.Statement
		_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
			if u, ok := n.(*ast.Update); ok && refused == nil && (len(u.TableExprs) != 1 || !isTableName(u.TableExprs[0])) {
				if r := p.rewriteJoinUpdate(ctx, u); r != ast.Statement(u) {
					refused = r
				}
			}
			return refused == nil, nil
		}, s.TriggerSpec.Body)
		if refused != nil {
			return refused
		}
	}
	return st
}

// isTableName reports whether te names one table.
func isTableName(te ast.TableExpr) bool {
	at, ok := te.(*ast.AliasedTableExpr)
	if !ok {
		return false
	}
	_, ok = at.Expr.(ast.TableName)
	return ok
}

// strict reports whether the statements rewritten run in strict mode: the
// session's, or none for a stored body created out of it.
func (p generatedValuesParser) strict(ctx *sql.Context) bool {
	return !p.body && strictMode(ctx)
}

// strictMode reports whether the session's sql_mode has STRICT_TRANS_TABLES
// or STRICT_ALL_TABLES (every Strata table is transactional). It runs for
// every INSERT and UPDATE parsed: the default mode is answered without an
// allocation (the variable's name in lower case, which the session's
// lookup would otherwise copy into it).
func strictMode(ctx *sql.Context) bool {
	if ctx == nil || ctx.Session == nil {
		return true
	}
	v, err := ctx.GetSessionVariable(ctx, "sql_mode")
	mode, ok := v.(string)
	if err != nil || !ok {
		return true // GMS's default, strict
	}
	if mode == sql.DefaultSqlMode {
		return true
	}
	return strictModeText(mode)
}

// genTable is the schema of a statement's table, if it has generated
// columns, and the function the rewrite calls for the values it ignores.
type genTable struct {
	name string
	sch  sql.Schema
	call string
}

// lookup returns the table tn names, if it has a generated column.
func (p generatedValuesParser) lookup(ctx *sql.Context, tn ast.TableName) (genTable, bool) {
	if tn.Name.IsEmpty() {
		return genTable{}, false
	}
	db := tn.DbQualifier.String()
	var t sql.Table
	switch {
	case p.db != nil:
		// A stored body: its tables are those of its database.
		if db != "" && !strings.EqualFold(db, p.db.Name()) {
			return genTable{}, false
		}
		var err error
		if t, _, err = p.db.GetTableInsensitive(ctx, tn.Name.String()); err != nil {
			return genTable{}, false
		}
	case p.cat != nil:
		if db == "" {
			db = ctx.GetCurrentDatabase()
		}
		if db == "" {
			return genTable{}, false
		}
		var err error
		if t, _, err = p.cat.Table(ctx, db, tn.Name.String()); err != nil {
			return genTable{}, false
		}
	}
	if t == nil {
		return genTable{}, false
	}
	sch := t.Schema()
	for _, c := range sch {
		if c.Generated != nil {
			call := ignoredValuesName
			if p.body {
				call = bodyIgnoredValuesName
			}
			if p.found != nil {
				*p.found = true
			}
			return genTable{name: t.Name(), sch: sch, call: call}, true
		}
	}
	return genTable{}, false
}

// column returns the index in the schema of the column named name, or -1.
func (t genTable) column(name string) int {
	for i, c := range t.sch {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// stored returns the first column that is not generated, or -1.
func (t genTable) stored() int {
	for i, c := range t.sch {
		if c.Generated == nil {
			return i
		}
	}
	return -1
}

// ignoredValue is a value given for a generated column, which the
// rewrite drops from where it was.
type ignoredValue struct {
	col string
	e   ast.Expr
}

// ignoredCall returns the call of ignoredValuesName that evaluates to e
// and records warnings for the values vs of t's generated columns. The
// values go into the call, unevaluated, so that the statement keeps its
// placeholders (a prepared statement's count of arguments is theirs).
func (t genTable) ignoredCall(e ast.Expr, vs []ignoredValue) ast.Expr {
	args := make(ast.SelectExprs, 0, 2+2*len(vs))
	args = append(args, &ast.AliasedExpr{Expr: e}, &ast.AliasedExpr{Expr: ast.NewStrVal([]byte(t.name))})
	for _, v := range vs {
		args = append(args, &ast.AliasedExpr{Expr: ast.NewStrVal([]byte(v.col))}, &ast.AliasedExpr{Expr: v.e})
	}
	return &ast.FuncExpr{Name: ast.NewColIdent(t.call), Exprs: args}
}

func isDefault(e ast.Expr) bool {
	_, ok := e.(*ast.Default)
	return ok
}

// rewriteInsert rewrites ins in place (see above).
func (p generatedValuesParser) rewriteInsert(ctx *sql.Context, ins *ast.Insert) {
	values, _ := ins.Rows.(*ast.AliasedValues)
	sel, _ := ins.Rows.(ast.SelectStatement)
	if values == nil && sel == nil {
		return
	}
	if values != nil && len(ins.Columns) == 0 && emptyRows(values.Values) {
		p.nameEmptyRows(ctx, ins, values)
	}
	strict := p.strict(ctx)
	if strict && len(ins.OnDup) == 0 && (values == nil || !hasDefault(values.Values)) {
		// Nothing in strict mode that GMS gets wrong: no DEFAULT in a
		// VALUES list (without column names, or in the first row where
		// a later row gives a value).
		return
	}
	t, ok := p.lookup(ctx, ins.Table)
	if !ok {
		return
	}
	ins.OnDup = ast.OnDup(t.dropAssignments(ast.AssignmentExprs(ins.OnDup)))
	t.recomputeStored(ins)
	// The columns the rows give, in order.
	cols := make([]int, 0, len(t.sch))
	if len(ins.Columns) == 0 {
		for i := range t.sch {
			cols = append(cols, i)
		}
	} else {
		for _, c := range ins.Columns {
			i := t.column(c.String())
			if i < 0 {
				return // GMS reports the unknown column
			}
			cols = append(cols, i)
		}
	}
	if values != nil {
		t.rewriteValues(ins, values, cols, strict)
		return
	}
	if !strict {
		t.rewriteSelect(ins, sel, cols)
	}
}

// emptyRows reports whether every row of vs is empty: VALUES (), each row
// the columns' defaults.
func emptyRows(vs ast.Values) bool {
	for _, row := range vs {
		if len(row) > 0 {
			return false
		}
	}
	return len(vs) > 0
}

// nameEmptyRows rewrites INSERT INTO t () VALUES (), (), which GMS
// refuses with 3105 for a table with generated columns (it fills in the
// table's columns, generated ones included), as INSERT INTO t (c)
// VALUES (DEFAULT), (DEFAULT), c the table's first column that is not
// generated: the same rows, which MySQL takes in every mode.
func (p generatedValuesParser) nameEmptyRows(ctx *sql.Context, ins *ast.Insert, values *ast.AliasedValues) {
	t, ok := p.lookup(ctx, ins.Table)
	if !ok || len(values.Columns) > 0 {
		return
	}
	c := t.stored()
	if c < 0 {
		return
	}
	ins.Columns = ast.Columns{ast.NewColIdent(t.sch[c].Name)}
	for i := range values.Values {
		values.Values[i] = ast.ValTuple{&ast.Default{}}
	}
}

// hasDefault reports whether a row of vs holds DEFAULT.
func hasDefault(vs ast.Values) bool {
	for _, row := range vs {
		for _, e := range row {
			if isDefault(e) {
				return true
			}
		}
	}
	return false
}

// rewriteValues rewrites an INSERT ... VALUES whose rows give the columns
// cols of t.
func (t genTable) rewriteValues(ins *ast.Insert, values *ast.AliasedValues, cols []int, strict bool) {
	if len(values.Columns) > 0 && len(values.Columns) != len(cols) {
		return // GMS reports the count
	}
	for _, row := range values.Values {
		if len(row) != len(cols) {
			return // GMS reports the count
		}
	}
	// drop[j]: the rows give the generated column cols[j] a value.
	drop := make([]bool, len(cols))
	dropped := 0
	for j, c := range cols {
		if t.sch[c].Generated == nil {
			continue
		}
		for _, row := range values.Values {
			if !isDefault(row[j]) {
				drop[j] = true
			}
		}
		if drop[j] {
			dropped++
		}
	}
	if dropped > 0 && strict {
		for j := range drop {
			if drop[j] && !isDefault(values.Values[0][j]) {
				return // GMS refuses the value with 3105, as MySQL 8 does
			}
		}
		// GMS looks at the first row only, and would ignore the values
		// of the others: the call refuses them.
	}
	if dropped == 0 {
		if len(ins.Columns) == 0 {
			// Only DEFAULT for the generated columns: name the columns,
			// as GMS wants for a table with generated columns.
			ins.Columns = t.columnIdents(cols, nil)
		}
		return
	}
	// Each row with a value to ignore needs a value that stays, and is
	// not DEFAULT, to carry the call. A row without one (its other values
	// DEFAULT, or none) carries it in a column's default written out: one
	// of its columns that stays, or another the statement then gives
	// (DEFAULT in the other rows). Without such a column the statement is
	// left as GMS has it.
	anchors := make([]int, len(values.Values))
	carrier, extra := -1, -1 // the column whose default carries the call; extra: not in cols
	for i, row := range values.Values {
		anchors[i] = -1
		ignores := false
		for j, e := range row {
			switch {
			case drop[j]:
				ignores = ignores || !isDefault(e)
			case anchors[i] < 0 && !isDefault(e):
				anchors[i] = j
			}
		}
		if !ignores || anchors[i] >= 0 || carrier >= 0 {
			continue
		}
		for j, c := range cols {
			if _, ok := t.defaultValue(c); ok && !drop[j] && t.sch[c].Generated == nil {
				carrier = j
				break
			}
		}
		if carrier < 0 {
			if extra = t.extraCarrier(cols); extra < 0 {
				return
			}
			carrier = len(cols)
		}
	}
	if extra >= 0 && len(values.Columns) > 0 {
		return // the row alias would need a name for the column added
	}
	ins.Columns = t.columnIdents(cols, drop)
	if extra >= 0 {
		ins.Columns = append(ins.Columns, ast.NewColIdent(t.sch[extra].Name))
	}
	if len(values.Columns) > 0 {
		t.dropAliasColumns(ins, values, drop)
	}
	var ignored []ignoredValue
	for i, row := range values.Values {
		ignored = ignored[:0]
		out := make(ast.ValTuple, 0, len(row)-dropped+1)
		anchor := -1
		for j, e := range row {
			if drop[j] {
				if !isDefault(e) {
					ignored = append(ignored, ignoredValue{t.sch[cols[j]].Name, e})
				}
				continue
			}
			if j == anchors[i] || (anchors[i] < 0 && j == carrier) {
				anchor = len(out)
			}
			out = append(out, e)
		}
		if extra >= 0 {
			if anchors[i] < 0 {
				anchor = len(out)
			}
			out = append(out, &ast.Default{})
		}
		if len(ignored) > 0 {
			if isDefault(out[anchor]) {
				c := extra
				if c < 0 {
					c = cols[carrier]
				}
				out[anchor], _ = t.defaultValue(c)
			}
			out[anchor] = t.ignoredCall(out[anchor], ignored)
		}
		values.Values[i] = out
	}
}

// dropAliasColumns drops from the row alias of values the names of the
// columns drop marks, which the rows no longer give. The ignored values
// of ON DUPLICATE KEY UPDATE that read those names (SET g = y, with y the
// alias of the value given for g) read NULL instead: they are never
// evaluated, and the names no longer resolve.
func (t genTable) dropAliasColumns(ins *ast.Insert, values *ast.AliasedValues, drop []bool) {
	kept := make(ast.Columns, 0, len(values.Columns))
	var gone []string
	for j, c := range values.Columns {
		if drop[j] {
			gone = append(gone, c.Lowered())
		} else {
			kept = append(kept, c)
		}
	}
	values.Columns = kept
	alias := values.As.String()
	reads := func(cn *ast.ColName) bool {
		if !cn.Qualifier.IsEmpty() && !strings.EqualFold(cn.Qualifier.Name.String(), alias) {
			return false
		}
		return slices.Contains(gone, cn.Name.Lowered())
	}
	for _, a := range ins.OnDup {
		f, ok := a.Expr.(*ast.FuncExpr)
		if !ok || f.Name.String() != t.call {
			continue
		}
		for i := 3; i < len(f.Exprs); i += 2 {
			ae, ok := f.Exprs[i].(*ast.AliasedExpr)
			if !ok {
				continue
			}
			var names []*ast.ColName
			_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
				if cn, ok := n.(*ast.ColName); ok && reads(cn) {
					names = append(names, cn)
				}
				return true, nil
			}, ae.Expr)
			for _, cn := range names {
				ae.Expr = ast.ReplaceExpr(ae.Expr, cn, &ast.NullVal{})
			}
		}
	}
}

// defaultValue returns the value column c of t takes when a row gives it
// none, as an expression: its default's text, NULL for AUTO_INCREMENT
// (which numbers the row) or for a nullable column without a default; or
// false for a NOT NULL column without one.
func (t genTable) defaultValue(c int) (ast.Expr, bool) {
	col := t.sch[c]
	switch {
	case col.Generated != nil:
		return nil, false
	case col.AutoIncrement:
		return &ast.NullVal{}, true
	case col.Default != nil:
		return parseExpr(col.Default.String())
	case col.Nullable:
		return &ast.NullVal{}, true
	}
	return nil, false
}

// extraCarrier returns a column of t that is not in cols and whose
// default can carry the call, or -1.
func (t genTable) extraCarrier(cols []int) int {
	for c := range t.sch {
		if slices.Contains(cols, c) {
			continue
		}
		if _, ok := t.defaultValue(c); ok {
			return c
		}
	}
	return -1
}

// parseExpr parses an expression from its text.
func parseExpr(text string) (ast.Expr, bool) {
	st, err := ast.Parse("SELECT " + text)
	sel, _ := st.(*ast.Select)
	if err != nil || sel == nil || len(sel.SelectExprs) != 1 {
		return nil, false
	}
	ae, ok := sel.SelectExprs[0].(*ast.AliasedExpr)
	if !ok {
		return nil, false
	}
	return ae.Expr, true
}

// columnIdents returns the names of the columns cols of t but those drop
// marks.
func (t genTable) columnIdents(cols []int, drop []bool) ast.Columns {
	out := make(ast.Columns, 0, len(cols))
	for j, c := range cols {
		if drop == nil || !drop[j] {
			out = append(out, ast.NewColIdent(t.sch[c].Name))
		}
	}
	return out
}

// rewriteSelect rewrites an INSERT ... SELECT whose rows give the columns
// cols of t: the SELECT becomes a derived table whose columns are named as
// the columns they go to, read by a SELECT of those that are not
// generated.
func (t genTable) rewriteSelect(ins *ast.Insert, sel ast.SelectStatement, cols []int) {
	var ignored []ignoredValue
	var keep []int
	for _, c := range cols {
		if t.sch[c].Generated != nil {
			ignored = append(ignored, ignoredValue{t.sch[c].Name, ast.NewColName(t.sch[c].Name)})
		} else {
			keep = append(keep, c)
		}
	}
	if len(ignored) == 0 {
		return
	}
	names := t.columnIdents(cols, nil)
	var carrier ast.Expr // a column's default, when the rows give no column that stays
	if len(keep) == 0 {
		c := t.extraCarrier(cols)
		if c < 0 {
			return
		}
		carrier, _ = t.defaultValue(c)
		keep = append(keep, c)
	}
	exprs := make(ast.SelectExprs, len(keep))
	for i, c := range keep {
		var e ast.Expr = ast.NewColName(t.sch[c].Name)
		if i == 0 {
			if carrier != nil {
				e = carrier
			}
			e = t.ignoredCall(e, ignored)
		}
		exprs[i] = &ast.AliasedExpr{Expr: e, As: ast.NewColIdent(t.sch[c].Name)}
	}
	ins.Rows = &ast.Select{
		SelectExprs: exprs,
		From: ast.TableExprs{&ast.AliasedTableExpr{
			Expr: &ast.Subquery{Select: sel, Columns: names},
			As:   ast.NewTableIdent("strata_source"),
		}},
	}
	ins.Columns = t.columnIdents(keep, nil)
}

// dropAssignments returns exprs without its assignments to generated
// columns of t, or exprs itself when it has none. The values of those
// that are not DEFAULT go to a call of ignoredValuesName, which warns or,
// in strict mode, fails when a row is updated (as MySQL 8 checks the
// values of ON DUPLICATE KEY UPDATE when it finds a duplicate).
func (t genTable) dropAssignments(exprs ast.AssignmentExprs) ast.AssignmentExprs {
	var ignored []ignoredValue
	var out ast.AssignmentExprs
	for i, a := range exprs {
		c := t.column(a.Name.Name.String())
		if c < 0 || t.sch[c].Generated == nil {
			if out != nil {
				out = append(out, a)
			}
			continue
		}
		if out == nil {
			out = append(make(ast.AssignmentExprs, 0, len(exprs)), exprs[:i]...)
		}
		if isDefault(a.Expr) {
			continue
		}
		ignored = append(ignored, ignoredValue{t.sch[c].Name, a.Expr})
	}
	if out == nil {
		return exprs
	}
	anchor := -1
	for i, a := range out {
		if !isDefault(a.Expr) {
			anchor = i
			break
		}
	}
	if anchor < 0 {
		// Nothing left to set, or only DEFAULTs: set a column to
		// itself, which changes nothing, to carry the warnings.
		s := t.stored()
		if s < 0 {
			return exprs
		}
		name := t.sch[s].Name
		out = append(out, &ast.AssignmentExpr{Name: ast.NewColName(name), Expr: ast.NewColName(name)})
		anchor = len(out) - 1
	}
	if len(ignored) > 0 {
		a := *out[anchor]
		a.Expr = t.ignoredCall(a.Expr, ignored)
		out[anchor] = &a
	}
	return out
}

// recomputeStored appends to ins's ON DUPLICATE KEY UPDATE an assignment
// of each STORED generated column of t to its expression, after the
// statement's own: GMS adds them to UPDATE's assignments but not to these,
// and left the column as it was when a row was updated. The expression is
// the text the column's definition keeps, its columns qualified by the
// table's name so that they read the row being updated (with the
// assignments before applied), not a column of an INSERT ... SELECT's
// source. A VIRTUAL column is computed when it is read.
func (t genTable) recomputeStored(ins *ast.Insert) {
	if len(ins.OnDup) == 0 {
		return
	}
	for _, c := range t.sch {
		if c.Generated == nil || c.Virtual {
			continue
		}
		e, ok := parseExpr(c.Generated.String())
		if !ok {
			continue
		}
		_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
			if cn, ok := n.(*ast.ColName); ok && cn.Qualifier.IsEmpty() {
				cn.Qualifier = ast.TableName{Name: ins.Table.Name, DbQualifier: ins.Table.DbQualifier}
			}
			return true, nil
		}, e)
		ins.OnDup = append(ins.OnDup, &ast.AssignmentExpr{Name: ast.NewColName(c.Name), Expr: e})
	}
}

// rewriteUpdate rewrites a single-table UPDATE in place: SET of a
// generated column to DEFAULT is dropped in every mode, to a value out of
// strict mode, with warnings (in strict mode GMS refuses it with 3105).
func (p generatedValuesParser) rewriteUpdate(ctx *sql.Context, upd *ast.Update) {
	tn := upd.TableExprs[0].(*ast.AliasedTableExpr).Expr.(ast.TableName) // isTableName
	strict := p.strict(ctx)
	if strict {
		has := false
		for _, a := range upd.Exprs {
			has = has || isDefault(a.Expr)
		}
		if !has {
			return
		}
	}
	t, ok := p.lookup(ctx, tn)
	if !ok {
		return
	}
	if strict {
		for _, a := range upd.Exprs {
			if c := t.column(a.Name.Name.String()); c >= 0 && t.sch[c].Generated != nil && !isDefault(a.Expr) {
				return // GMS refuses the value with 3105, as MySQL 8 does
			}
		}
	}
	upd.Exprs = t.dropAssignments(upd.Exprs)
}

// generatedValuesFunction returns the function named name if it is one
// the rewrite calls (the database provider offers it).
func generatedValuesFunction(name string) (sql.Function, bool) {
	if name != ignoredValuesName && name != bodyIgnoredValuesName {
		return nil, false
	}
	return sql.FunctionN{Name: name, Fn: func(args ...sql.Expression) (sql.Expression, error) {
		return newIgnoredGeneratedValues(name, args...)
	}}, true
}

// rewriteJoinUpdate rewrites an UPDATE over several tables (a join) in
// place, or returns the statement to run instead. GMS's binder fails on
// any assignment to a generated column there (it panics naming the
// table: the join has no name), so every such assignment is handled
// here, in every mode: DEFAULT is dropped; in strict mode a value is
// refused with 3105, as MySQL 8 refuses it, by a SIGNAL (the engine turns
// the errors of its parser into syntax errors); out of strict mode it is
// dropped, and warns for each joined row updated, as a single-table
// UPDATE's for each row it matches. An assignment's table is the one its
// qualifier names (by alias or name), or the only one of the tables with
// generated columns that has the column.
func (p generatedValuesParser) rewriteJoinUpdate(ctx *sql.Context, upd *ast.Update) ast.Statement {
	type named struct {
		name string // as the statement names it: its alias, or its name
		t    genTable
	}
	var tables []named
	var walk func(te ast.TableExpr)
	walk = func(te ast.TableExpr) {
		switch x := te.(type) {
		case *ast.AliasedTableExpr:
			tn, ok := x.Expr.(ast.TableName)
			if !ok {
				return
			}
			name := tn.Name.String()
			if !x.As.IsEmpty() {
				name = x.As.String()
			}
			if t, ok := p.lookup(ctx, tn); ok {
				tables = append(tables, named{name, t})
			}
		case *ast.JoinTableExpr:
			walk(x.LeftExpr)
			walk(x.RightExpr)
		case *ast.ParenTableExpr:
			for _, e := range x.Exprs {
				walk(e)
			}
		}
	}
	for _, te := range upd.TableExprs {
		walk(te)
	}
	if len(tables) == 0 {
		return upd
	}
	// owner returns the table of tables a assigns a generated column of,
	// and the column, or -1.
	owner := func(a *ast.AssignmentExpr) (int, int) {
		found, col := -1, -1
		for i, nt := range tables {
			if q := a.Name.Qualifier.Name.String(); q != "" && !strings.EqualFold(q, nt.name) {
				continue
			}
			if c := nt.t.column(a.Name.Name.String()); c >= 0 {
				if found >= 0 {
					return -1, -1 // ambiguous: GMS reports it
				}
				found, col = i, c
			}
		}
		if found < 0 || tables[found].t.sch[col].Generated == nil {
			return -1, -1
		}
		return found, col
	}
	strict := p.strict(ctx)
	ignored := make([][]ignoredValue, len(tables))
	var out ast.AssignmentExprs
	changed := false
	for _, a := range upd.Exprs {
		i, c := owner(a)
		if i < 0 {
			out = append(out, a)
			continue
		}
		changed = true
		if isDefault(a.Expr) {
			continue
		}
		t := tables[i].t
		if strict {
			return generatedValueSignal(t.sch[c].Name, t.name)
		}
		ignored[i] = append(ignored[i], ignoredValue{t.sch[c].Name, a.Expr})
	}
	if !changed {
		return upd
	}
	// self returns an assignment of a stored column of a table to itself,
	// which changes nothing: one of the tables whose values are ignored,
	// or any.
	self := func() *ast.AssignmentExpr {
		for _, any := range []bool{false, true} {
			for i, nt := range tables {
				s := nt.t.stored()
				if s < 0 || (!any && len(ignored[i]) == 0) {
					continue
				}
				col := &ast.ColName{Name: ast.NewColIdent(nt.t.sch[s].Name), Qualifier: ast.TableName{Name: ast.NewTableIdent(nt.name)}}
				return &ast.AssignmentExpr{Name: col, Expr: col}
			}
		}
		return nil
	}
	anchor := -1
	for i, a := range out {
		if !isDefault(a.Expr) {
			anchor = i
			break
		}
	}
	hasIgnored := slices.ContainsFunc(ignored, func(vs []ignoredValue) bool { return len(vs) > 0 })
	if len(out) == 0 || (anchor < 0 && hasIgnored) {
		// Nothing else to set (only DEFAULTs of generated columns), or
		// nothing to carry the warnings.
		a := self()
		if a == nil {
			return upd // left as it was
		}
		out = append(out, a)
		anchor = len(out) - 1
	}
	if hasIgnored {
		a := *out[anchor]
		for i, vs := range ignored {
			if len(vs) > 0 {
				a.Expr = tables[i].t.ignoredCall(a.Expr, vs)
			}
		}
		out[anchor] = &a
	}
	upd.Exprs = out
	return upd
}

// generatedValueSignal returns a statement that fails with MySQL 8's
// error for a value given for generated column col of table.
func generatedValueSignal(col, table string) ast.Statement {
	msg := fmt.Sprintf("The value specified for generated column '%s' in table '%s' is not allowed.", col, table)
	msg = strings.ReplaceAll(msg, "%", "%%") // the engine formats the message with Printf
	return &ast.Signal{SqlStateValue: "HY000", Info: []ast.SignalInfo{
		{ConditionItemName: ast.SignalConditionItemName_MysqlErrno, Value: ast.NewIntVal([]byte("3105"))},
		{ConditionItemName: ast.SignalConditionItemName_MessageText, Value: ast.NewStrVal([]byte(msg))},
	}}
}

// newIgnoredGeneratedValues builds a call of fn, ignoredValuesName or
// bodyIgnoredValuesName: (value, 'table', 'column', ignored value, ...).
func newIgnoredGeneratedValues(fn string, args ...sql.Expression) (sql.Expression, error) {
	if len(args) < 4 || len(args)%2 != 0 {
		return nil, sql.ErrInvalidArgumentNumber.New(fn, "4, 6, ...", len(args))
	}
	name := func(i int) (string, error) {
		v, err := args[i].Eval(nil, nil)
		s, ok := v.(string)
		if err != nil || !ok {
			return "", fmt.Errorf("%s: argument %d is not a name", fn, i+1)
		}
		return s, nil
	}
	table, err := name(1)
	if err != nil {
		return nil, err
	}
	g := &ignoredGeneratedValues{child: args[0], args: args, table: table, name: fn}
	for i := 2; i < len(args); i += 2 {
		c, err := name(i)
		if err != nil {
			return nil, err
		}
		g.cols = append(g.cols, c)
	}
	return g, nil
}

// ignoredGeneratedValues is a call of ignoredValuesName: its first
// argument's value, with warning 1906 for each generated column named, or
// error 3105 for the first in strict mode. The values given for those
// columns are its arguments, and never evaluated.
type ignoredGeneratedValues struct {
	child sql.Expression
	args  []sql.Expression // all the arguments, for Children
	table string
	cols  []string
	name  string // ignoredValuesName, or bodyIgnoredValuesName: never strict
}

var _ sql.FunctionExpression = (*ignoredGeneratedValues)(nil)
var _ sql.CollationCoercible = (*ignoredGeneratedValues)(nil)

// Eval implements sql.Expression.
func (g *ignoredGeneratedValues) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	if g.name == ignoredValuesName && strictMode(ctx) {
		return nil, sql.ErrGeneratedColumnValue.New(g.cols[0], g.table)
	}
	for _, c := range g.cols {
		ctx.Warn(erGeneratedValueIgnored, "The value specified for generated column '%s' in table '%s' has been ignored", c, g.table)
	}
	return g.child.Eval(ctx, row)
}

// Type implements sql.Expression.
func (g *ignoredGeneratedValues) Type() sql.Type { return g.child.Type() }

// IsNullable implements sql.Expression.
func (g *ignoredGeneratedValues) IsNullable() bool { return g.child.IsNullable() }

// Resolved implements sql.Expression.
func (g *ignoredGeneratedValues) Resolved() bool {
	for _, a := range g.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}

// Children implements sql.Expression.
func (g *ignoredGeneratedValues) Children() []sql.Expression { return g.args }

// WithChildren implements sql.Expression.
func (g *ignoredGeneratedValues) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != len(g.args) {
		return nil, sql.ErrInvalidChildrenNumber.New(g, len(children), len(g.args))
	}
	return &ignoredGeneratedValues{child: children[0], args: children, table: g.table, cols: g.cols, name: g.name}, nil
}

// String implements sql.Expression.
func (g *ignoredGeneratedValues) String() string {
	parts := make([]string, len(g.args))
	for i, a := range g.args {
		parts[i] = a.String()
	}
	return g.name + "(" + strings.Join(parts, ", ") + ")"
}

// FunctionName implements sql.FunctionExpression.
func (g *ignoredGeneratedValues) FunctionName() string { return g.name }

// Description implements sql.FunctionExpression.
func (g *ignoredGeneratedValues) Description() string {
	return "returns its first argument, noting that the values given for the generated columns named were ignored"
}

// CollationCoercibility implements sql.CollationCoercible: the first
// argument's.
func (g *ignoredGeneratedValues) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, g.child)
}
