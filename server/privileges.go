package server

import (
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
	a.Catalog.AuthHandler = grantsAuth{AuthorizationHandler: a.Catalog.AuthHandler}
	a.ExecBuilder = policyExec{NodeExecBuilder: a.ExecBuilder, p: p}
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
type grantsAuth struct {
	gsql.AuthorizationHandler
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
// it: 1142 "UPDATE command denied to user 'u'@'host' for table 't'",
// naming the privilege and the first table it is missing on, and the
// account's user with the host the client connected from (MySQL's
// priv_user and host_or_ip). GMS says "command denied to user 'u'@'%'",
// or, for an account with no privilege at all in the database or on the
// table, 1044 or "Access denied ... to table". Refusals of other targets
// keep GMS's words: CREATE TABLE in a database the account holds nothing
// on, and SHOW COLUMNS or SHOW CREATE TABLE of such a table, still give
// 1044 where MySQL gives 1142.
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
	default:
		return err
	}
	return mysql.NewSQLError(1142 /* ER_TABLEACCESS_DENIED_ERROR */, "42000", "%s command denied to user '%s'@'%s' for table '%s'",
		cmd, ctx.Session.Client().User, clientHost(ctx), table)
}

// clientHost is the host the session's client connected from, as the
// process list has it (processhost.go): the session's own client address
// is its account's host, by which the account is found.
func clientHost(ctx *gsql.Context) string {
	if ctx.ProcessList != nil {
		id := ctx.Session.ID()
		for _, p := range ctx.ProcessList.Processes() {
			if p.Connection == id {
				if host, _, err := net.SplitHostPort(p.Host); err == nil {
					return host
				}
				return p.Host
			}
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
// a kept plan that is run without being built (sqlstore's writes by key).
// A plan check would change, or whose rows Build wraps, is not offered.
func (e policyExec) Precheck(n gsql.Node) (func(*gsql.Context) error, bool) {
	checks := false
	switch n.(type) {
	case *plan.InsertInto, *plan.Update, *plan.DeleteFrom:
		var changes bool
		if changes, checks = e.p.inspect(n); changes {
			return nil, false
		}
	case *plan.ShowProcessList:
		return nil, false
	}
	writes, start := !n.IsReadOnly(), sqlstore.StartsReadWrite(nil, n) // start: its text tells at each execution
	if !checks && !writes && !start {
		return nil, true
	}
	p := e.p
	return func(ctx *gsql.Context) error {
		if checks {
			if _, _, err := p.check(ctx, n); err != nil {
				return err
			}
		}
		if (writes || start && sqlstore.StartsReadWrite(ctx, n)) && p.readOnly.Load() {
			return p.checkWritable(ctx)
		}
		return nil
	}, true
}

// Build implements sql.NodeExecBuilder. It also builds subqueries, for
// every row of the outer query: what is not a statement costs a type
// switch.
func (e policyExec) Build(ctx *gsql.Context, n gsql.Node, r gsql.Row) (gsql.RowIter, error) {
	switch n.(type) {
	case *plan.InsertInto, *plan.Update, *plan.DeleteFrom:
		if e.unchecked {
			break
		}
		checked, _, err := e.p.check(ctx, n)
		if err != nil {
			return nil, err
		}
		n = checked
	case *plan.ShowProcessList:
		iter, err := e.NodeExecBuilder.Build(ctx, n, r)
		if err != nil {
			return nil, err
		}
		return showProcessList(ctx, e.p.s.store, iter) // processstate.go
	}
	if e.p.readOnly.Load() && (!n.IsReadOnly() || sqlstore.StartsReadWrite(ctx, n)) {
		if err := e.p.checkWritable(ctx); err != nil {
			return nil, err
		}
	}
	return e.NodeExecBuilder.Build(ctx, n, r)
}

// check refuses what the session's account may not do in n and confines
// its file access to the files folder. inspect tells what it does with a
// plan without doing it: the two change together.
func (p *policy) check(ctx *gsql.Context, n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	return transformDeep(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		switch n := n.(type) {
		case *plan.Set:
			return p.checkSet(ctx, n)
		case *plan.Into:
			return p.checkInto(ctx, n)
		case *plan.LoadData:
			return p.checkLoadData(ctx, n)
		case *plan.InsertInto:
			return n, transform.SameTree, p.checkLoadDataInsert(ctx, n)
		case *plan.Kill:
			return n, transform.SameTree, p.checkKill(ctx, n)
		case *plan.ShowGrants:
			return n, transform.SameTree, p.checkShowGrants(ctx, n)
		}
		return n, transform.SameTree, nil
	}, func(n gsql.Node, e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		switch e := e.(type) {
		case *function.LoadFile:
			return &loadFile{arg: e.Children()[0], p: p}, transform.NewTree, nil
		case *expression.SystemVar:
			if _, set := n.(*plan.Set); !set {
				return globalRead(e)
			}
		}
		return e, transform.SameTree, nil
	})
}

// inspect reports what check would do with plan n, in any session:
// change it (a SET, a file path confined, LOAD_FILE, a read of a global
// variable), or check something of the session in it (its account's
// privileges for LOAD DATA, the connections it may kill, the grants it
// may see). Neither: check returns n as it is, for every session.
func (p *policy) inspect(n gsql.Node) (changes, checks bool) {
	_, _, _ = transformDeep(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		switch n := n.(type) {
		case *plan.Set:
			changes = true
		case *plan.Into:
			changes = changes || n.Outfile != "" || n.Dumpfile != ""
		case *plan.LoadData:
			changes = changes || !n.Local
		case *plan.InsertInto:
			_, load := n.Source.(*plan.LoadData)
			checks = checks || load
		case *plan.Kill, *plan.ShowGrants:
			checks = true
		}
		return n, transform.SameTree, nil
	}, func(n gsql.Node, e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		switch e := e.(type) {
		case *function.LoadFile:
			changes = true
		case *expression.SystemVar:
			if _, set := n.(*plan.Set); !set {
				if _, same, _ := globalRead(e); same == transform.NewTree {
					changes = true
				}
			}
		}
		return e, transform.SameTree, nil
	})
	return changes, checks
}

// globalRead makes @@name read the global value when the variable has no
// session value in MySQL (max_connections, read_only, ...): a session
// holds a copy of every variable, taken when it started, and showed that
// copy after SET GLOBAL.
func globalRead(sv *expression.SystemVar) (gsql.Expression, transform.TreeIdentity, error) {
	scope, ok := sv.Scope.(*gsql.MysqlScope)
	if !ok || scope.Type != gsql.SystemVariableScope_Session {
		return sv, transform.SameTree, nil
	}
	def, _, ok := gsql.SystemVariables.GetGlobal(sv.Name)
	if !ok || !def.IsGlobalOnly() {
		return sv, transform.SameTree, nil
	}
	c := *sv
	c.Scope = gsql.GetMysqlScope(gsql.SystemVariableScope_Global)
	return &c, transform.NewTree, nil
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
// another account need SELECT on the mysql database (1044 otherwise), as
// in MySQL.
func (p *policy) checkShowGrants(ctx *gsql.Context, n *plan.ShowGrants) error {
	if p.db == nil || !p.db.Enabled() || n.CurrentUser || n.For == nil {
		return nil
	}
	if u := p.account(ctx); u != nil && n.For.Name == u.User && (n.For.Host == u.Host || n.For.AnyHost && u.Host == "%") {
		return nil
	}
	if p.db.UserHasPrivileges(ctx, gsql.NewPrivilegedOperation(gsql.PrivilegeCheckSubject{Database: "mysql"}, gsql.PrivilegeType_Select)) {
		return nil
	}
	return mysql.NewSQLError(mysql.ERDBAccessDenied, mysql.SSClientError,
		"Access denied for user %s to database 'mysql'", p.accountName(ctx))
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
