package server

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/strata-db/strata/sqlstore"
)

// The engine checks the privileges a statement's syntax names (SELECT on
// a table, CREATE USER, ...) while building its plan, and nothing else:
// any account could SET GLOBAL, read and write the server's files, and
// none could see its own grants. The policy checks the rest as MySQL
// does, on the plan of every statement (policy.rule, policyExec), and
// keeps the state the effective globals set (globals.go).

// policy is the server's own checks and the state behind them.
type policy struct {
	s     *Server
	db    *mysql_db.MySQLDb
	files string // the files folder, absolute and with symlinks resolved

	mu                      sync.Mutex // serializes effects of SET GLOBAL
	readOnly, superReadOnly atomic.Bool
}

// policyRuleID names the rule among the analyzer's rules.
const policyRuleID analyzer.RuleId = 10_100

// setupPolicy installs the policy on the server's engine: a rule that
// runs first on every statement's plan, an executor that checks what the
// rule does not see (policyExec), and an authorization handler that
// leaves SHOW GRANTS, FILE and KILL to them.
func (s *Server) setupPolicy(files string) {
	a := s.engine.Analyzer
	p := &policy{s: s, db: a.Catalog.MySQLDb, files: files}
	for _, b := range a.Batches {
		if b.Desc == "once-before" {
			b.Rules = append([]analyzer.Rule{{Id: policyRuleID, Apply: p.rule}}, b.Rules...)
		}
	}
	a.Catalog.AuthHandler = grantsAuth{AuthorizationHandler: a.Catalog.AuthHandler, db: p.db}
	a.ExecBuilder = policyExec{NodeExecBuilder: a.ExecBuilder, p: p}
	s.tablesSeen(p)
}

// grantsAuth is the engine's authorization handler except for three
// requirements the policy checks on the plan instead, as MySQL does:
//   - SHOW GRANTS asks for SELECT on the mysql database, while every
//     account may see its own grants (policy.checkShowGrants). SHOW
//     GRANTS is the only statement the parser gives exactly that
//     requirement.
//   - LOAD DATA asks for FILE, also when LOCAL, which needs none, and
//     fails with 1142 where MySQL says 1045 (policy.checkLoadData).
//   - KILL asks for SUPER, while every account may kill its own
//     connections (policy.checkKill).
//
// It also refuses, as MySQL does, what the engine refuses only while it
// resolves a table, in other words (showDenied), and words the refusals
// of checks on tables as MySQL does (tableDenied).
type grantsAuth struct {
	gsql.AuthorizationHandler
	db *mysql_db.MySQLDb // the accounts
}

// HandleAuth implements sql.AuthorizationHandler.
func (g grantsAuth) HandleAuth(ctx *gsql.Context, aqs gsql.AuthorizationQueryState, auth ast.AuthInformation) error {
	if auth.AuthType == ast.AuthType_SELECT && auth.TargetType == ast.AuthTargetType_DatabaseIdentifiers &&
		len(auth.TargetNames) == 1 && auth.TargetNames[0] == "mysql" {
		return nil
	}
	if auth.AuthType == ast.AuthType_FILE {
		return nil
	}
	if auth.AuthType == ast.AuthType_SUPER && isKill(ctx.Query()) {
		return nil
	}
	if auth.AuthType == ast.AuthType_SHOW {
		if err := g.showDenied(ctx); err != nil {
			return err
		}
	}
	err := g.AuthorizationHandler.HandleAuth(ctx, aqs, auth)
	if err == nil {
		return nil
	}
	return g.tableDenied(ctx, aqs, auth, err)
}

// tableCommands are the names MySQL's 1142 gives the privileges a
// statement needs on a table, by the parser's names for them (REPLACE
// needs INSERT and DELETE; MySQL names the first it lacks, INSERT).
var tableCommands = map[string]string{
	ast.AuthType_SELECT:      "SELECT",
	ast.AuthType_INSERT:      "INSERT",
	ast.AuthType_UPDATE:      "UPDATE",
	ast.AuthType_DELETE:      "DELETE",
	ast.AuthType_REPLACE:     "INSERT",
	ast.AuthType_CREATE:      "CREATE",
	ast.AuthType_DROP:        "DROP",
	ast.AuthType_ALTER:       "ALTER",
	ast.AuthType_INDEX:       "INDEX",
	ast.AuthType_CREATE_VIEW: "CREATE VIEW",
	ast.AuthType_TRIGGER:     "TRIGGER",
	ast.AuthType_FOREIGN_KEY: "REFERENCES",
}

// tableDenied returns a refusal err of a check on tables as MySQL words
// it (deniedOnTable): 1142 naming the privilege and the first table it is
// missing on. GMS says "command denied to user 'u'@'%'", or, for an
// account with no privilege at all in the database or on the table, 1044
// or "Access denied ... to table"; and it checks CREATE TABLE and CREATE
// VIEW on the database, where MySQL names the table the statement would
// create (createdTable). CREATE TEMPORARY TABLE, whose privilege is the
// database's, keeps 1044.
func (g grantsAuth) tableDenied(ctx *gsql.Context, aqs gsql.AuthorizationQueryState, auth ast.AuthInformation, err error) error {
	cmd, ok := tableCommands[auth.AuthType]
	if !ok || !(gsql.ErrPrivilegeCheckFailed.Is(err) || gsql.ErrTableAccessDeniedForUser.Is(err) || gsql.ErrDatabaseAccessDeniedForUser.Is(err)) {
		return err
	}
	var table string
	switch auth.TargetType {
	case ast.AuthTargetType_SingleTableIdentifier, ast.AuthTargetType_TableColumn:
		if len(auth.TargetNames) < 2 {
			return err
		}
		table = auth.TargetNames[1]
	case ast.AuthTargetType_MultipleTableIdentifiers:
		// The check covers the tables at once: each alone finds the first
		// the account lacks the privilege on.
		for i := 0; i+1 < len(auth.TargetNames) && table == ""; i += 2 {
			one := auth
			one.TargetType = ast.AuthTargetType_SingleTableIdentifier
			one.TargetNames = auth.TargetNames[i : i+2]
			if g.AuthorizationHandler.HandleAuth(ctx, aqs, one) != nil {
				table = auth.TargetNames[i+1]
			}
		}
		if table == "" {
			return err
		}
	case ast.AuthTargetType_DatabaseIdentifiers:
		if auth.AuthType != ast.AuthType_CREATE && auth.AuthType != ast.AuthType_CREATE_VIEW {
			return err
		}
		if table = createdTable(ctx); table == "" {
			return err
		}
	default:
		return err
	}
	return deniedOnTable(ctx, cmd, table)
}

// createdTable returns the table or view the session's statement creates
// (CREATE TABLE, CREATE VIEW), "" for any other statement, a temporary
// table among them. The statement is parsed again: the check that refuses
// it is told only the database.
func createdTable(ctx *gsql.Context) string {
	stmt, _, err := ast.ParseOneWithOptions(ctx, ctx.Query(), gsql.LoadSqlMode(ctx).ParserOptions())
	ddl, ok := stmt.(*ast.DDL)
	if err != nil || !ok || ddl.Action != ast.CreateStr || ddl.Temporary {
		return ""
	}
	if ddl.ViewSpec != nil {
		return ddl.ViewSpec.ViewName.Name.String()
	}
	return ddl.Table.Name.String()
}

// showCommands are the privileges MySQL's 1142 names for a SHOW of a
// table, by the parser's type of SHOW: SHOW COLUMNS (DESCRIBE) and SHOW
// INDEX need some privilege on the table and name SELECT, SHOW CREATE
// TABLE names SHOW, and SHOW CREATE VIEW needs SELECT.
var showCommands = map[string]string{
	"columns":      "SELECT",
	"fields":       "SELECT",
	"index":        "SELECT",
	"indexes":      "SELECT",
	"keys":         "SELECT",
	"create table": "SHOW",
	"create view":  "SELECT",
}

// showDenied refuses a SHOW of a table the session's account holds no
// privilege on (showCommands) as MySQL does: 1142 naming the table. GMS
// has no check for them but the one it makes while it resolves the table,
// refusing with 1044 when the account holds nothing in the database (as
// MySQL does for SHOW TABLES and SHOW TABLE STATUS, which are not among
// these) and "Access denied ... to table" otherwise, and it lets any
// global privilege through, PROCESS as much as SELECT. Here only a
// privilege that reaches the table does (reachesTables); only an account
// without one globally pays for parsing the statement again.
func (g grantsAuth) showDenied(ctx *gsql.Context) error {
	if g.db == nil || !g.db.Enabled() {
		return nil
	}
	ps := g.db.UserActivePrivilegeSet(ctx)
	if reachesTables(ps.Has) || !showsTable(ctx.Query()) {
		return nil
	}
	stmt, _, err := ast.ParseOneWithOptions(ctx, ctx.Query(), gsql.LoadSqlMode(ctx).ParserOptions())
	show, ok := stmt.(*ast.Show)
	if err != nil || !ok || !show.HasTable() {
		return nil
	}
	cmd, ok := showCommands[strings.ToLower(show.Type)]
	if !ok {
		return nil
	}
	db, table := show.Table.DbQualifier.String(), show.Table.Name.String()
	if db == "" && show.ShowTablesOpt != nil {
		db = show.ShowTablesOpt.DbName // SHOW COLUMNS FROM t FROM db
	}
	if db == "" {
		db = ctx.GetCurrentDatabase()
	}
	if db == "" || strings.EqualFold(db, "information_schema") {
		return nil
	}
	if g.seesTable(ps, db, table) {
		return nil
	}
	return deniedOnTable(ctx, cmd, table)
}

// tablePrivileges are the privileges MySQL grants on tables: held
// globally or on a database, they reach its tables. The others (PROCESS,
// RELOAD, EXECUTE, CREATE TEMPORARY TABLES, ...) reach no table, though
// GMS counts any privilege as one that does.
var tablePrivileges = [...]gsql.PrivilegeType{
	gsql.PrivilegeType_Select, gsql.PrivilegeType_Insert, gsql.PrivilegeType_Update,
	gsql.PrivilegeType_Delete, gsql.PrivilegeType_Create, gsql.PrivilegeType_Drop,
	gsql.PrivilegeType_References, gsql.PrivilegeType_Index, gsql.PrivilegeType_Alter,
	gsql.PrivilegeType_CreateView, gsql.PrivilegeType_ShowView, gsql.PrivilegeType_Trigger,
}

// reachesTables reports whether a privilege set's has (global or a
// database's) holds one of tablePrivileges.
func reachesTables(has func(...gsql.PrivilegeType) bool) bool {
	for _, p := range tablePrivileges {
		if has(p) {
			return true
		}
	}
	return false
}

// seesTable reports whether the account of privilege set ps may see table
// db.table (resolve it, list it, show its columns): a privilege that
// reaches it, globally, on the database or on the table.
func (g grantsAuth) seesTable(ps gsql.PrivilegeSet, db, table string) bool {
	if reachesTables(ps.Has) {
		return true
	}
	dbSet := ps.Database(db)
	return reachesTables(dbSet.Has) || dbSet.Table(table).HasPrivileges()
}

// CheckTable implements sql.AuthorizationHandler, which GMS asks whether
// a table may be resolved or listed (SHOW TABLES, SHOW TABLE STATUS):
// GMS's answer, narrowed to tables a privilege reaches (seesTable), as
// MySQL lists and resolves them. GMS let an account with any global
// privilege (PROCESS, say) or any on the database see every table.
func (g grantsAuth) CheckTable(ctx *gsql.Context, aqs gsql.AuthorizationQueryState, dbName, schemaName, tableName string) error {
	err := g.AuthorizationHandler.CheckTable(ctx, aqs, dbName, schemaName, tableName)
	if err != nil || tableName == "" || g.db == nil || !g.db.Enabled() {
		return err
	}
	if dbName == "" {
		dbName = ctx.GetCurrentDatabase()
	}
	if strings.EqualFold(dbName, "information_schema") {
		return nil
	}
	if g.seesTable(g.db.UserActivePrivilegeSet(ctx), dbName, tableName) {
		return nil
	}
	return gsql.ErrTableAccessDeniedForUser.New(fmt.Sprintf("'%s'@'%s'", ctx.Client().User, clientHost(ctx)), tableName)
}

// showsTable reports whether the statement text q may be one of the SHOWs
// of a table showDenied words (DESCRIBE, SHOW COLUMNS, SHOW CREATE TABLE,
// ...), so that SHOW VARIABLES, SHOW WARNINGS and the like are not parsed
// again. A text it misses keeps GMS's refusal, in GMS's words.
func showsTable(q string) bool {
	first, second := sqlstore.LeadingWords(q)
	if strings.EqualFold(first, "desc") || strings.EqualFold(first, "describe") || strings.EqualFold(first, "explain") {
		return true
	}
	if !strings.EqualFold(first, "show") {
		return false
	}
	for _, w := range [...]string{"columns", "fields", "index", "indexes", "keys", "create", "full", "extended"} {
		if strings.EqualFold(second, w) {
			return true
		}
	}
	return false
}

// deniedOnTable is MySQL's 1142 "UPDATE command denied to user
// 'u'@'host' for table 't'": the privilege cmd the session's account
// lacks on table, the user it logged in as and the host its client
// connected from (MySQL's priv_user and host_or_ip). Every 1142 of the
// server is worded here (tableDenied, showDenied, the log tables'
// no-ops, LOAD DATA).
func deniedOnTable(ctx *gsql.Context, cmd, table string) error {
	return mysql.NewSQLError(erTableAccessDenied, mysql.SSClientError, "%s", deniedOnTableMessage(ctx, cmd, table))
}

// deniedOnTableMessage is deniedOnTable's message.
func deniedOnTableMessage(ctx *gsql.Context, cmd, table string) string {
	return cmd + " command denied to user '" + ctx.Session.Client().User + "'@'" + clientHost(ctx) + "' for table '" + table + "'"
}

// clientHost is the host the session's client connected from, as the
// server's process list has it (processhost.go: the session's own client
// address is its account's host, by which the account is found).
func clientHost(ctx *gsql.Context) string {
	if pl, ok := ctx.ProcessList.(*processList); ok {
		if e := pl.entry(ctx.Session.ID()); e != nil {
			e.mu.Lock()
			host := e.p.Host
			e.mu.Unlock()
			if h, _, err := net.SplitHostPort(host); err == nil {
				return h
			}
			return host
		}
	}
	return ctx.Session.Client().Address
}

// rule is the analyzer rule: it refuses what the session's account may
// not do and confines file access to the files folder.
func (p *policy) rule(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return p.check(ctx, n)
}

// policyExec is the engine's plan executor behind the policy's last
// checks. The analyzer plans simple INSERT, UPDATE and DELETE statements
// with fixed rule batches of its own, which the policy's rule is not
// part of: those are checked here. And read_only is checked here, for
// every statement the engine runs.
type policyExec struct {
	gsql.NodeExecBuilder
	p *policy
	// unchecked: the builder builds only plans made from one kept plan
	// (RewrapFor) in which check has nothing to refuse or change in any
	// session, so Build skips its walk of every write plan.
	unchecked bool
}

// Unwrap, Rewrap and RewrapFor implement mysqlcompat.Rewrapper and
// Prechecker: a kept write plan, whose value rules are applied once, is
// still checked at every build.
func (e policyExec) Unwrap() gsql.NodeExecBuilder { return e.NodeExecBuilder }

func (e policyExec) Rewrap(inner gsql.NodeExecBuilder) gsql.NodeExecBuilder {
	e.NodeExecBuilder, e.unchecked = inner, false
	return e
}

func (e policyExec) RewrapFor(inner gsql.NodeExecBuilder, n gsql.Node) gsql.NodeExecBuilder {
	// A plan made from n has n's nodes and expressions but for literals
	// and an index lookup, which check does not look at.
	changes, checks := e.p.inspect(n)
	e.NodeExecBuilder, e.unchecked = inner, !changes && !checks
	return e
}

// Precheck implements mysqlcompat.Prechecker: the checks Build makes, for
// a kept plan that is run without being built (sqlstore's writes by key),
// from the same steps Build follows. A plan the walk would change, or
// whose rows Build makes, is not offered.
func (e policyExec) Precheck(n gsql.Node) (func(*gsql.Context) error, bool) {
	s := e.steps(n, true) // read_only may be on by the time n runs
	if s.rows {
		return nil, false
	}
	checks := false
	if s.walk {
		var changes bool
		if changes, checks = e.p.inspect(n); changes {
			return nil, false
		}
	}
	if !checks && !s.writes && !s.start {
		return nil, true
	}
	p := e.p
	return func(ctx *gsql.Context) error {
		if checks {
			if _, _, err := p.check(ctx, n); err != nil {
				return err
			}
		}
		if s.refuses(ctx, n) && p.readOnly.Load() {
			return p.checkWritable(ctx)
		}
		return nil
	}, true
}

// Build implements sql.NodeExecBuilder. It also builds subqueries, for
// every row of the outer query: what is not a statement costs a type
// switch.
func (e policyExec) Build(ctx *gsql.Context, n gsql.Node, r gsql.Row) (gsql.RowIter, error) {
	s := e.steps(n, e.p.readOnly.Load())
	if s.walk {
		checked, _, err := e.p.check(ctx, n)
		if err != nil {
			return nil, err
		}
		n = checked
	}
	if s.refuses(ctx, n) {
		if err := e.p.checkWritable(ctx); err != nil {
			return nil, err
		}
	}
	iter, err := e.NodeExecBuilder.Build(ctx, n, r)
	if err != nil || !s.rows {
		return iter, err
	}
	return showProcessList(ctx, e.p.s.store, iter) // processstate.go
}

// buildSteps is what Build does with a plan besides having the inner
// builder build it, decided by the plan alone (steps): Build follows it,
// and Precheck hands the same steps to a caller that runs a kept plan
// itself, so the two cannot differ.
type buildSteps struct {
	walk   bool // the policy's walk (check) of a write the analyzer planned without the policy's rule
	writes bool // the plan writes, which read_only may refuse
	// start: a START TRANSACTION its node calls READ WRITE, which
	// read_only refuses when its text says so (sqlstore.StartsReadWrite:
	// GMS builds BEGIN alike), told at each execution.
	start bool
	rows  bool // the server makes the rows (SHOW PROCESSLIST: processstate.go)
}

// steps returns what Build does with plan n. The analyzer plans simple
// INSERT, UPDATE and DELETE statements with fixed rule batches of its own
// (so without the policy's rule): those are walked here, unless the
// builder was made for kept plans the walk finds nothing in (unchecked).
// writes is asked only when readOnly (read_only is on, or may be by the
// time a kept plan runs): whether a plan writes costs a walk of it.
func (e policyExec) steps(n gsql.Node, readOnly bool) buildSteps {
	var s buildSteps
	switch n.(type) {
	case *plan.InsertInto, *plan.Update, *plan.DeleteFrom:
		s.walk = !e.unchecked
	case *plan.ShowProcessList:
		s.rows = true
	}
	s.writes = readOnly && !n.IsReadOnly()
	s.start = readOnly && sqlstore.StartsReadWrite(nil, n)
	return s
}

// refuses reports whether read_only, when on, refuses the statement of
// plan n that s was made for.
func (s buildSteps) refuses(ctx *gsql.Context, n gsql.Node) bool {
	return s.writes || s.start && sqlstore.StartsReadWrite(ctx, n)
}

// The policy's list and its walk. What the policy does with a plan is
// listed once, by the kind of node (guard) and of expression
// (rewriteExpr), and one walk follows the list in two modes: with a
// session it checks and rewrites the session's plan (check: the
// analyzer's rule, Build), and without one it is a dry run that tells what
// the first mode would do with the plan in any session (inspect:
// RewrapFor, Precheck, which let a kept plan skip the walk or run without
// being built). A case added to the list is seen by both modes. A guard
// is chosen from the node alone, so the dry run's answer holds for every
// session; only a rewrite changes the plan, and a check, which sees the
// session, cannot; so a plan the dry run finds nothing in is returned as
// it is by every session's walk, and one it finds only checks in is
// changed by none.

// guard is the policy's part in one node of a plan: a check of what the
// session's account may do with it, or a rewrite, which returns the node
// the session runs in its place (and may check the session too).
type guard struct {
	check   func(ctx *gsql.Context) error
	rewrite func(ctx *gsql.Context) (gsql.Node, transform.TreeIdentity, error)
}

// guard returns the policy's part in node n, the zero guard when it has
// none.
func (p *policy) guard(n gsql.Node) guard {
	switch n := n.(type) {
	case *plan.Set:
		return guard{rewrite: func(ctx *gsql.Context) (gsql.Node, transform.TreeIdentity, error) {
			return p.checkSet(ctx, n)
		}}
	case *plan.Into:
		if n.Outfile != "" || n.Dumpfile != "" {
			return guard{rewrite: func(ctx *gsql.Context) (gsql.Node, transform.TreeIdentity, error) {
				return p.checkInto(ctx, n) // serverfiles.go
			}}
		}
	case *plan.LoadData:
		if !n.Local {
			return guard{rewrite: func(ctx *gsql.Context) (gsql.Node, transform.TreeIdentity, error) {
				return p.checkLoadData(ctx, n) // serverfiles.go
			}}
		}
	case *plan.InsertInto:
		if _, load := n.Source.(*plan.LoadData); load {
			return guard{check: func(ctx *gsql.Context) error { return p.checkLoadDataInsert(ctx, n) }}
		}
	case *plan.Kill:
		return guard{check: func(ctx *gsql.Context) error { return p.checkKill(ctx, n) }}
	case *plan.ShowGrants:
		return guard{check: func(ctx *gsql.Context) error { return p.checkShowGrants(ctx, n) }}
	case *plan.ShowTables:
		return guard{rewrite: func(ctx *gsql.Context) (gsql.Node, transform.TreeIdentity, error) {
			return p.seenViewsOf(ctx, n) // viewlists.go
		}}
	}
	return guard{}
}

// rewriteExpr returns the expression that stands for e, in node n, in
// every session: the server's LOAD_FILE, which checks the session's
// account when it is evaluated, and a read of a global-only variable's
// global value. Neither needs the session to be made.
func (p *policy) rewriteExpr(n gsql.Node, e gsql.Expression) (gsql.Expression, transform.TreeIdentity) {
	switch e := e.(type) {
	case *function.LoadFile:
		return &loadFile{arg: e.Children()[0], p: p}, transform.NewTree
	case *expression.SystemVar:
		if _, set := n.(*plan.Set); !set {
			return globalRead(e)
		}
	}
	return e, transform.SameTree
}

// walkFinds is what a walk of a plan met: a rewrite (changes: the plan
// is, or may be, another one), or a check of the session (checks).
type walkFinds struct {
	changes, checks bool
}

// walk follows the policy's list through plan n, subqueries included.
// With ctx it runs every guard in that session and returns the plan to
// run; with ctx nil it runs none, returns n and reports what it found.
func (p *policy) walk(ctx *gsql.Context, n gsql.Node) (gsql.Node, transform.TreeIdentity, walkFinds, error) {
	var found walkFinds
	out, same, err := transformDeep(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		g := p.guard(n)
		switch {
		case g.rewrite != nil:
			found.changes = true
			if ctx != nil {
				return g.rewrite(ctx)
			}
		case g.check != nil:
			found.checks = true
			if ctx != nil {
				return n, transform.SameTree, g.check(ctx)
			}
		}
		return n, transform.SameTree, nil
	}, func(n gsql.Node, e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		r, same := p.rewriteExpr(n, e)
		if same == transform.SameTree {
			return e, transform.SameTree, nil
		}
		found.changes = true
		if ctx == nil {
			return e, transform.SameTree, nil
		}
		return r, transform.NewTree, nil
	})
	return out, same, found, err
}

// check refuses what the session's account may not do in n and confines
// its file access to the files folder: the walk in the session.
func (p *policy) check(ctx *gsql.Context, n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	out, same, _, err := p.walk(ctx, n)
	return out, same, err
}

// inspect reports what check would do with plan n, in any session:
// change it (a SET, a file path confined, LOAD_FILE, a read of a global
// variable), or check something of the session in it (its account's
// privileges for LOAD DATA, the connections it may kill, the grants it
// may see). Neither: check returns n as it is, for every session.
func (p *policy) inspect(n gsql.Node) (changes, checks bool) {
	_, _, found, _ := p.walk(nil, n)
	return found.changes, found.checks
}

// globalRead makes @@name read the global value when the variable has no
// session value in MySQL (max_connections, read_only, ...): a session
// holds a copy of every variable, taken when it started, and showed that
// copy after SET GLOBAL.
func globalRead(sv *expression.SystemVar) (gsql.Expression, transform.TreeIdentity) {
	scope, ok := sv.Scope.(*gsql.MysqlScope)
	if !ok || scope.Type != gsql.SystemVariableScope_Session {
		return sv, transform.SameTree
	}
	def, _, ok := gsql.SystemVariables.GetGlobal(sv.Name)
	if !ok || !def.IsGlobalOnly() {
		return sv, transform.SameTree
	}
	c := *sv
	c.Scope = gsql.GetMysqlScope(gsql.SystemVariableScope_Global)
	return &c, transform.NewTree
}

// transformDeep applies fn to every node of n and ex to every expression
// with its node, also inside subqueries, which the analyzer otherwise
// plans separately.
func transformDeep(n gsql.Node, fn transform.NodeFunc, ex func(gsql.Node, gsql.Expression) (gsql.Expression, transform.TreeIdentity, error)) (gsql.Node, transform.TreeIdentity, error) {
	return transform.NodeWithOpaque(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		exprs := func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			if sq, ok := e.(*plan.Subquery); ok {
				q, same, err := transformDeep(sq.Query, fn, ex)
				if err != nil || same {
					return e, transform.SameTree, err
				}
				return sq.WithQuery(q), transform.NewTree, nil
			}
			return ex(n, e)
		}
		n, same1, err := transform.OneNodeExpressions(n, exprs) // every expression, bottom up
		if err != nil {
			return n, transform.SameTree, err
		}
		n, same2, err := fn(n)
		return n, same1 && same2, err
	})
}

// account is the account the session logged in as, nil without one
// (accounts off).
func (p *policy) account(ctx *gsql.Context) *mysql_db.User {
	if p.db == nil || !p.db.Enabled() {
		return nil
	}
	rd := p.db.Reader()
	defer rd.Close()
	c := ctx.Session.Client()
	return p.db.GetUser(rd, c.User, c.Address, false)
}

// accountName is the session's account as MySQL's messages quote it.
func (p *policy) accountName(ctx *gsql.Context) string {
	if u := p.account(ctx); u != nil {
		return u.UserHostToString("'")
	}
	c := ctx.Session.Client()
	return "'" + c.User + "'@'" + c.Address + "'"
}

// hasGlobal reports whether the session's account holds the global
// privilege priv, or SUPER. Privileges granted on a database do not
// count: FILE and the like are global only in MySQL.
func (p *policy) hasGlobal(ctx *gsql.Context, priv gsql.PrivilegeType) bool {
	if p.db == nil || !p.db.Enabled() {
		return true
	}
	ps := p.db.UserActivePrivilegeSet(ctx)
	return ps.Has(gsql.PrivilegeType_Super) || ps.Has(priv)
}

// hasDynamic reports whether the session's account holds the dynamic
// privilege priv, or SUPER.
func (p *policy) hasDynamic(ctx *gsql.Context, priv string) bool {
	if p.db == nil || !p.db.Enabled() {
		return true
	}
	ps := p.db.UserActivePrivilegeSet(ctx)
	return ps.Has(gsql.PrivilegeType_Super) || ps.HasDynamic(priv)
}

// checkSet checks every system variable a SET assigns (globals.go).
func (p *policy) checkSet(ctx *gsql.Context, n *plan.Set) (gsql.Node, transform.TreeIdentity, error) {
	var exprs []gsql.Expression
	for i, e := range n.Exprs {
		sf, ok := e.(*expression.SetField)
		if !ok {
			continue
		}
		sv, ok := sf.LeftChild.(*expression.SystemVar)
		if !ok {
			continue
		}
		wrapped, err := p.checkSetVar(ctx, sv)
		if err != nil {
			return n, transform.SameTree, err
		}
		if wrapped == nil {
			continue
		}
		if exprs == nil {
			exprs = append([]gsql.Expression(nil), n.Exprs...)
		}
		c := *sf
		c.LeftChild = wrapped
		exprs[i] = &c
	}
	if exprs == nil {
		return n, transform.SameTree, nil
	}
	return plan.NewSet(exprs), transform.NewTree, nil
}

// checkWritable refuses a statement that writes while read_only is on,
// unless the account may (SUPER or CONNECTION_ADMIN, and super_read_only
// off), as MySQL does.
func (p *policy) checkWritable(ctx *gsql.Context) error {
	if p.superReadOnly.Load() {
		return mysql.NewSQLError(mysql.EROptionPreventsStatement, mysql.SSUnknownSQLState,
			"The MySQL server is running with the --super-read-only option so it cannot execute this statement")
	}
	if p.hasDynamic(ctx, "connection_admin") {
		return nil
	}
	return mysql.NewSQLError(mysql.EROptionPreventsStatement, mysql.SSUnknownSQLState,
		"The MySQL server is running with the --read-only option so it cannot execute this statement")
}

// checkKill applies MySQL's rules to KILL: a connection that does not
// exist is 1094 (the engine answered OK); an account may kill its own
// connections, and another's only with CONNECTION_ADMIN or SUPER (1095).
// The engine asks SUPER for every KILL while building the plan, which
// grantsAuth leaves to this check.
func (p *policy) checkKill(ctx *gsql.Context, n *plan.Kill) error {
	if ctx.ProcessList == nil {
		return nil
	}
	for _, pr := range ctx.ProcessList.Processes() {
		if pr.Connection != n.ConnID {
			continue
		}
		if pr.User == ctx.Session.Client().User || p.hasDynamic(ctx, "connection_admin") {
			return nil
		}
		return mysql.NewSQLError(mysql.ERKillDenied, mysql.SSUnknownSQLState, "You are not owner of thread %d", n.ConnID)
	}
	return mysql.NewSQLError(mysql.ERNoSuchThread, mysql.SSUnknownSQLState, "Unknown thread id: %d", n.ConnID)
}

// checkShowGrants lets every account see its own grants; the grants of
// another account need SELECT on mysql.user (on the table, its database or
// globally), as in MySQL 8, which refuses them with 1142 naming that table.
func (p *policy) checkShowGrants(ctx *gsql.Context, n *plan.ShowGrants) error {
	if p.db == nil || !p.db.Enabled() || n.CurrentUser || n.For == nil {
		return nil
	}
	if u := p.account(ctx); u != nil && n.For.Name == u.User && (n.For.Host == u.Host || n.For.AnyHost && u.Host == "%") {
		return nil
	}
	if p.db.UserHasPrivileges(ctx, gsql.NewPrivilegedOperation(gsql.PrivilegeCheckSubject{Database: "mysql", Table: "user"}, gsql.PrivilegeType_Select)) {
		return nil
	}
	return deniedOnTable(ctx, "SELECT", "user")
}

// fileDenied is MySQL's error for file access without the FILE
// privilege.
func (p *policy) fileDenied(ctx *gsql.Context) error {
	using := "NO"
	if u := p.account(ctx); u != nil && u.AuthString != "" {
		using = "YES"
	}
	return mysql.NewSQLError(mysql.ERAccessDeniedError, mysql.SSAccessDeniedError,
		"Access denied for user %s (using password: %s)", p.accountName(ctx), using)
}

// isKill reports whether the statement text q is a KILL.
func isKill(q string) bool {
	first, _ := sqlstore.LeadingWords(q)
	return strings.EqualFold(first, "kill")
}
