package mysqlcompat

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Values given for generated columns in stored bodies
//
// A trigger or procedure created out of strict mode runs its statements
// out of strict mode in MariaDB (each routine keeps the sql_mode it was
// created in), so a value its INSERT or UPDATE gives a generated column
// is ignored there as at top level (genvalues.go), and mariadb-dump's
// triggers, created under the dumped sql_mode, reload.
//
// GMS parses stored bodies again from their text with its package's
// parser, not the engine's, so the rewrite of genvalues.go has to reach
// them another way:
//
//   - A procedure's text is parsed at each CALL, from the one the database
//     hands GMS for it (GetStoredProcedure, which only CALL reads): the
//     database hands it with the body rewritten (BindableProcedure), for a
//     procedure created out of strict mode.
//   - A trigger's body is parsed and bound from its CREATE TRIGGER text
//     whenever a statement of its database is planned (every trigger of the
//     database, before GMS picks those that apply), for SHOW TRIGGERS and
//     for information_schema.TRIGGERS. The database hands those readers
//     the text with the body rewritten (BindableTriggers, called by the
//     store's TriggerDatabase), for a trigger created out of strict mode.
//     In any mode, a body's \_ and \% are handed written \\_ and \\%,
//     which GMS's parser reads as MySQL reads the first (likeescapes.go).
//     The text the user wrote stays the one stored; SHOW CREATE TRIGGER,
//     SHOW TRIGGERS and information_schema.TRIGGERS show it
//     (originalTriggers, showOriginalTriggers, triggersOriginalText).
//   - CREATE TRIGGER itself binds the body it parses with the engine's
//     parser, which rewrites it (generatedValuesParser.rewrite).
//
// In a body the rewrite calls bodyIgnoredValuesName, which warns whatever
// the session's sql_mode: the routine's, out of strict mode, is the one
// that counts. A routine created in strict mode keeps GMS's 3105 (at
// CREATE TRIGGER, which binds the body; at CALL for a procedure).

// bodyIgnoredValuesName is the function of ignoredValuesName for stored
// bodies: it warns, and never fails with 3105.
const bodyIgnoredValuesName = "strata_generated_values_ignored_in_body"

// rewriteBody rewrites the INSERT, REPLACE and UPDATE statements of a
// stored body in place (BEGIN ... END blocks and their IF, CASE and loop
// statements included), and reports whether it may have changed one: the
// rewrite touches only statements that name a table with a generated
// column, so a body without one is known unchanged without printing it
// (printing each statement before and after to compare doubled the cost
// of the bodies that do).
func (p generatedValuesParser) rewriteBody(ctx *sql.Context, body ast.Statement) bool {
	found := false
	p.found = &found
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch s := n.(type) {
		case *ast.Insert, *ast.Update:
			p.rewrite(ctx, s.(ast.Statement)) // in place: never a SIGNAL out of strict mode
			return false, nil
		}
		return true, nil
	}, body)
	return found
}

// BindableProcedure returns the procedure of db, details, as GMS should
// bind it at CALL: the text of one created out of strict mode with the
// values its statements give generated columns rewritten as at top level.
// Its \_ and \% are written as GMS's parser reads them as MySQL does
// (bindableWildcardEscapes), in any mode. It is details itself when
// nothing changes, as for every procedure created in strict mode (the
// default) without them, which costs no parse. Only CALL
// reads a single procedure (GetStoredProcedure); the readers that show
// procedures read them all, and get the text as written.
func BindableProcedure(ctx *sql.Context, db sql.Database, details sql.StoredProcedureDetails) sql.StoredProcedureDetails {
	// \_ and \% as MySQL reads them, in any sql_mode (likeescapes.go).
	details.CreateStatement = bindableWildcardEscapes(details.CreateStatement)
	if strictModeText(details.SqlMode) {
		return details
	}
	text := details.CreateStatement
	opts := sql.NewSqlModeFromString(details.SqlMode).ParserOptions()
	st, err := ast.ParseWithOptions(ctx, text, opts)
	ddl, ok := st.(*ast.DDL)
	if err != nil || !ok || ddl.ProcedureSpec == nil || ddl.ProcedureSpec.Body == nil {
		return details
	}
	start, end := ddl.SubStatementPositionStart, ddl.SubStatementPositionEnd
	if start < 0 || end > len(text) || start > end {
		return details
	}
	p := generatedValuesParser{db: db, body: true}
	if !p.rewriteBody(ctx, ddl.ProcedureSpec.Body) {
		return details
	}
	rewritten := text[:start] + ast.String(ddl.ProcedureSpec.Body) + text[end:]
	if _, err := ast.ParseWithOptions(ctx, rewritten, opts); err != nil {
		return details
	}
	details.CreateStatement = rewritten
	return details
}

// CatalogVersion names the catalog a database's triggers were read from,
// for BindableTriggers' cache: Owner tells the catalog's owner (a store:
// two stores' versions are unrelated) by a comparable value that does not
// keep it alive, such as a weak pointer, as the cache outlives stores;
// Version is the catalog's version, which every change to the catalog
// (CREATE and DROP TRIGGER, ALTER TABLE) moves. Pass the zero value, not
// cached, for a reader that does not see the latest catalog (an older
// snapshot, or a transaction that changed the catalog itself).
type CatalogVersion struct {
	Owner   any
	Version uint64
}

// BindableTriggers returns the triggers of db, defs, read from the catalog
// at, as GMS should bind them: the text of those created out of strict
// mode with the values their bodies give generated columns rewritten as at
// top level, and the \_ and \% of every trigger's strings written as GMS's
// parser reads them as MySQL does (bindableWildcardEscapes). It is defs
// itself when no trigger changes, as for every trigger created in strict
// mode (the default) without them, which costs no parse.
//
// GMS binds every trigger of a database for every statement planned in
// it, so the answer for each trigger created out of strict mode is kept
// (bindables) by its catalog, database, text and sql_mode: a statement
// pays a map lookup for it where it paid two parses and a print.
func BindableTriggers(ctx *sql.Context, db sql.Database, defs []sql.TriggerDefinition, at CatalogVersion) []sql.TriggerDefinition {
	var out []sql.TriggerDefinition
	for i := range defs {
		if strictModeText(defs[i].SqlMode) && !hasWildcardEscapes(defs[i].CreateStatement) {
			continue
		}
		text, ok := bindables.get(ctx, db, defs[i], at)
		if !ok {
			continue
		}
		if out == nil {
			out = append([]sql.TriggerDefinition(nil), defs...)
		}
		out[i].CreateStatement = text
	}
	if out == nil {
		return defs
	}
	return out
}

// bindableKey is a trigger's text as read from one catalog version.
type bindableKey struct {
	owner      any
	version    uint64
	db         string
	text, mode string
}

// bindable is bindableTrigger's answer for a trigger: the rewritten text,
// if any, and the originals generation it was put in.
type bindable struct {
	rewritten
	ok  bool
	gen uint64
}

// bindableCache holds the answers of bindableTrigger.
type bindableCache struct {
	mu sync.RWMutex
	m  map[bindableKey]bindable
}

// bindables is the process's cache of rewritten trigger texts. Keys carry
// their catalog version, so an entry of an older catalog is never read
// again; the map starts again when full.
var bindables bindableCache

// maxBindables bounds bindables.
const maxBindables = 4096

// get returns bindableTrigger's answer for def, from the cache when at
// names a catalog.
func (c *bindableCache) get(ctx *sql.Context, db sql.Database, def sql.TriggerDefinition, at CatalogVersion) (string, bool) {
	if at.Owner == nil {
		r, ok := bindableTrigger(ctx, db, def)
		if ok {
			originals.put(r)
		}
		return r.text, ok
	}
	k := bindableKey{owner: at.Owner, version: at.Version, db: db.Name(), text: def.CreateStatement, mode: def.SqlMode}
	c.mu.RLock()
	e, hit := c.m[k]
	c.mu.RUnlock()
	if hit && (!e.ok || e.gen == originals.generation()) {
		return e.text, e.ok
	}
	if !hit {
		e.rewritten, e.ok = bindableTrigger(ctx, db, def)
	}
	if e.ok {
		// The readers that show triggers map the text back (originals),
		// which may have started again since the entry was put.
		e.gen = originals.put(e.rewritten)
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxBindables {
		c.m = make(map[bindableKey]bindable)
	}
	c.m[k] = e
	c.mu.Unlock()
	return e.text, e.ok
}

// strictModeText reports whether a stored sql_mode, as GMS writes it
// (upper case, comma-separated), is strict. It costs every statement
// planned in a database with triggers a look at each trigger's mode.
func strictModeText(mode string) bool {
	for mode != "" {
		var name string
		name, mode, _ = strings.Cut(mode, ",")
		name = strings.TrimSpace(name)
		if strings.EqualFold(name, "STRICT_TRANS_TABLES") || strings.EqualFold(name, "STRICT_ALL_TABLES") {
			return true
		}
	}
	return false
}

// rewritten is a trigger's text with its body rewritten, and the texts
// users wrote.
type rewritten struct {
	text, orig     string
	body, origBody string
}

// bindableTrigger returns the text of def with its body rewritten, if the
// rewrite changes it: the values given generated columns, for a trigger
// created out of strict mode, and in any mode the \_ and \% of its
// strings as MySQL reads them (bindableWildcardEscapes).
func bindableTrigger(ctx *sql.Context, db sql.Database, def sql.TriggerDefinition) (rewritten, bool) {
	text := def.CreateStatement
	opts := sql.NewSqlModeFromString(def.SqlMode).ParserOptions()
	_, ostart, oend, ok := parseTrigger(ctx, text, opts)
	if !ok {
		return rewritten{}, false
	}
	origBody := strings.TrimSpace(text[ostart:oend])
	src := bindableWildcardEscapes(text)
	ddl, start, end, ok := parseTrigger(ctx, src, opts)
	if !ok {
		return rewritten{}, false
	}
	body := strings.TrimSpace(src[start:end])
	r := src
	if !strictModeText(def.SqlMode) {
		p := generatedValuesParser{db: db, body: true}
		if p.rewriteBody(ctx, ddl.TriggerSpec.Body) {
			body = ast.String(ddl.TriggerSpec.Body)
			r = src[:start] + " " + body + src[end:]
		}
	}
	if body == origBody {
		return rewritten{}, false
	}
	// The rewritten text must parse, and GMS must find the new body where
	// the old one was, for SHOW TRIGGERS to show the old one in its place.
	if _, start2, end2, ok := parseTrigger(ctx, r, opts); !ok || start2 != start || strings.TrimSpace(r[start2:end2]) != body {
		return rewritten{}, false
	}
	return rewritten{text: r, orig: text, body: body, origBody: origBody}, true
}

// parseTrigger parses a CREATE TRIGGER statement and returns where its
// body is: from a space before it to its end. Without a PRECEDES or
// FOLLOWS clause vitess counts the body from after its first word, as GMS
// corrects when it builds the trigger; start is where GMS's body begins.
func parseTrigger(ctx *sql.Context, text string, opts ast.ParserOptions) (*ast.DDL, int, int, bool) {
	st, err := ast.ParseWithOptions(ctx, text, opts)
	if err != nil {
		return nil, 0, 0, false
	}
	ddl, ok := st.(*ast.DDL)
	if !ok || ddl.TriggerSpec == nil || ddl.TriggerSpec.Body == nil {
		return nil, 0, 0, false
	}
	start, end := ddl.SubStatementPositionStart, ddl.SubStatementPositionEnd
	if start < 0 || end > len(text) || start > end {
		return nil, 0, 0, false
	}
	if ddl.TriggerSpec.Order == nil {
		if i := strings.LastIndexFunc(strings.TrimRightFunc(text[:start], unicode.IsSpace), unicode.IsSpace); i >= 0 {
			start = i
		}
	} else if start > 0 {
		start-- // the space before the body
	}
	return ddl, start, end, true
}

// originalTexts maps the rewritten texts of triggers, and their bodies, to
// the texts users wrote: the readers that show a trigger (SHOW CREATE
// TRIGGER, SHOW TRIGGERS, information_schema.TRIGGERS) get the rewritten
// text from the database, as the readers that bind it do.
type originalTexts struct {
	mu  sync.Mutex
	m   map[string]string
	gen atomic.Uint64 // counts the maps: moves when the map starts again
	any atomic.Bool   // a text was put: the readers' corrections apply
}

// originals holds the texts of every trigger rewritten in the process: a
// rewritten text comes from one original, whatever the engine.
var originals originalTexts

// maxOriginals bounds originals; past it the map starts again (a trigger
// rewritten since is put again when next handed out: bindables checks the
// generation its entry was put in).
const maxOriginals = 4096

// put notes the texts r was rewritten from and returns the generation of
// the map that holds them.
func (o *originalTexts) put(r rewritten) uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil || len(o.m) >= maxOriginals {
		o.m = make(map[string]string)
		o.gen.Add(1)
	}
	o.m[r.text] = r.orig
	o.m[r.body] = r.origBody
	o.any.Store(true)
	return o.gen.Load()
}

// generation returns the generation of the map now.
func (o *originalTexts) generation() uint64 {
	return o.gen.Load()
}

// original returns the text s was rewritten from, or s.
func (o *originalTexts) original(s string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if orig, ok := o.m[s]; ok {
		return orig
	}
	return s
}

// empty reports whether no trigger was rewritten in the process: then no
// reader that read the triggers already has a text to correct.
func (o *originalTexts) empty() bool {
	return !o.any.Load()
}

// showOriginalTriggers is a rule of the engine's analyzer: SHOW TRIGGERS
// lists the bodies users wrote, and SHOW CREATE TRIGGER reads the texts
// users wrote (originalTriggers), where the database gave the rewritten
// ones (BindableTriggers).
func showOriginalTriggers(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	// SHOW CREATE TRIGGER reads the triggers when it runs, and may be the
	// first to rewrite one: its database is replaced whatever originals
	// holds now.
	if !showsTriggers(n) {
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		switch n := n.(type) {
		case *plan.ShowTriggers:
			shown := *n
			shown.Triggers = make([]*plan.CreateTrigger, len(n.Triggers))
			for i, ct := range n.Triggers {
				c := *ct
				c.BodyString = originals.original(ct.BodyString)
				c.CreateTriggerString = originals.original(ct.CreateTriggerString)
				shown.Triggers[i] = &c
			}
			return &shown, transform.NewTree, nil
		case *plan.ShowCreateTrigger:
			if db, ok := n.Database().(sql.TriggerDatabase); ok {
				shown, err := n.WithDatabase(originalTriggers{db})
				return shown, transform.NewTree, err
			}
		}
		return n, transform.SameTree, nil
	})
}

// showsTriggers reports whether n is SHOW TRIGGERS or SHOW CREATE TRIGGER,
// under the nodes GMS puts over them (a filter for LIKE and WHERE). Every
// statement passes this rule: the others cost a type switch.
func showsTriggers(n sql.Node) bool {
	for {
		switch x := n.(type) {
		case *plan.ShowTriggers, *plan.ShowCreateTrigger:
			return true
		case *plan.Filter, *plan.Project, *plan.Sort:
			n = x.Children()[0]
		default:
			return false
		}
	}
}

// originalTriggers is a database whose triggers' texts are those users
// wrote.
type originalTriggers struct {
	sql.TriggerDatabase
}

// GetTriggers implements sql.TriggerDatabase.
func (d originalTriggers) GetTriggers(ctx *sql.Context) ([]sql.TriggerDefinition, error) {
	defs, err := d.TriggerDatabase.GetTriggers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]sql.TriggerDefinition, len(defs))
	for i, def := range defs {
		def.CreateStatement = originals.original(def.CreateStatement)
		out[i] = def
	}
	return out, nil
}

// triggersOriginalText corrects the engine's information_schema.TRIGGERS:
// ACTION_STATEMENT is the body the user wrote.
func triggersOriginalText(e *sqle.Engine) {
	WrapInfoSchemaReader(e, information_schema.TriggersTableName, func(sch sql.Schema, read InfoSchemaReader) InfoSchemaReader {
		col := sch.IndexOfColName("ACTION_STATEMENT")
		if col < 0 {
			return nil
		}
		return func(ctx *sql.Context, c sql.Catalog) (sql.RowIter, error) {
			iter, err := read(ctx, c)
			if err != nil || originals.empty() {
				return iter, err
			}
			rows, err := sql.RowIterToRows(ctx, iter)
			if err != nil {
				return nil, err
			}
			for _, row := range rows {
				if s, ok := row[col].(string); ok {
					row[col] = originals.original(s)
				}
			}
			return sql.RowsToRowIter(rows...), nil
		}
	})
}
