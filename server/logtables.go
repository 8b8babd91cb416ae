package server

import (
	"context"
	"strings"
	"unicode"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// mysql.general_log and mysql.slow_log
//
// MySQL's mysql database always has the two log tables (CSV tables, empty
// unless log_output=TABLE). Dump tools rely on them: mariadb-dump
// --all-databases writes their definitions with SHOW CREATE TABLE, as
// CREATE TABLE IF NOT EXISTS, and stopped at "table not found:
// general_log", since GMS's mysql database has no such tables (and takes
// no new ones). The server's parser answers SHOW CREATE TABLE of either, in
// the mysql database, with MySQL 8's definition, and takes CREATE TABLE IF
// NOT EXISTS of either there as the no-op it is in MySQL, so a dump of
// every database is made and loads again. The tables themselves stay
// absent: the server keeps no general or slow query log in tables.
//
// The mysql database's other tables are GMS's: the accounts and grants
// the server keeps in the store (user, db, tables_priv, procs_priv,
// role_edges), the help tables and the replica's. mariadb-dump
// --all-databases writes each as DROP TABLE IF EXISTS and CREATE TABLE
// with no rows (it reads no table status there), and the reload stopped at
// the first DROP, which GMS refuses, before the databases that sort after
// mysql. SQL cannot recreate those tables, and the dump holds none of
// their rows, so the server takes DROP TABLE IF EXISTS and CREATE TABLE of
// one of them in the mysql database as no-ops: a dump of every database
// reloads, and the server it is loaded into keeps its own accounts.
// Accounts move with CREATE USER and GRANT (SHOW GRANTS on the source
// lists an account's privileges). DROP TABLE without IF EXISTS, and every other
// statement on them, are GMS's.

// ownTables are the tables of GMS's mysql database
// (mysql_db.MySQLDb.GetTableNames; TestServerOwnTables keeps the two
// the same).
var ownTables = map[string]bool{
	"user": true, "db": true, "tables_priv": true, "procs_priv": true, "role_edges": true,
	"slave_master_info": true, "help_topic": true, "help_keyword": true, "help_category": true,
	"help_relation": true,
}

// logTableDefs are MySQL 8.0's definitions of the log tables.
var logTableDefs = map[string]string{
	"general_log": "CREATE TABLE `general_log` (\n" +
		"  `event_time` timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),\n" +
		"  `user_host` mediumtext NOT NULL,\n" +
		"  `thread_id` bigint unsigned NOT NULL,\n" +
		"  `server_id` int unsigned NOT NULL,\n" +
		"  `command_type` varchar(64) NOT NULL,\n" +
		"  `argument` mediumblob NOT NULL\n" +
		") ENGINE=CSV DEFAULT CHARSET=utf8mb3 COMMENT='General log'",
	"slow_log": "CREATE TABLE `slow_log` (\n" +
		"  `start_time` timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),\n" +
		"  `user_host` mediumtext NOT NULL,\n" +
		"  `query_time` time(6) NOT NULL,\n" +
		"  `lock_time` time(6) NOT NULL,\n" +
		"  `rows_sent` int NOT NULL,\n" +
		"  `rows_examined` int NOT NULL,\n" +
		"  `db` varchar(512) NOT NULL,\n" +
		"  `last_insert_id` int NOT NULL,\n" +
		"  `insert_id` int NOT NULL,\n" +
		"  `server_id` int unsigned NOT NULL,\n" +
		"  `sql_text` mediumblob NOT NULL,\n" +
		"  `thread_id` bigint unsigned NOT NULL\n" +
		") ENGINE=CSV DEFAULT CHARSET=utf8mb3 COMMENT='Slow log'",
}

// logTablesParser rewrites the statements on the log tables (see above)
// and passes everything else on. db holds the accounts whose privileges
// the no-ops check, as the statements they stand for would.
type logTablesParser struct {
	gsql.Parser
	db *mysql_db.MySQLDb
}

// ParseSimple implements gsql.Parser.
func (p logTablesParser) ParseSimple(query string) (ast.Statement, error) {
	return p.Parser.ParseSimple(query)
}

// Parse implements gsql.Parser.
func (p logTablesParser) Parse(ctx *gsql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	q, first, rest := p.logTableStatement(ctx, query, ';', multi)
	if q != "" {
		stmt, _, _, err := p.Parser.Parse(ctx, q, false)
		return stmt, first, rest, err
	}
	return p.Parser.Parse(ctx, query, multi)
}

// ParseWithOptions implements gsql.Parser.
func (p logTablesParser) ParseWithOptions(ctx context.Context, query string, delimiter rune, multi bool, options ast.ParserOptions) (ast.Statement, string, string, error) {
	q, first, rest := p.logTableStatement(ctx, query, delimiter, multi)
	if q != "" {
		stmt, _, _, err := p.Parser.ParseWithOptions(ctx, q, delimiter, false, options)
		return stmt, first, rest, err
	}
	return p.Parser.ParseWithOptions(ctx, query, delimiter, multi, options)
}

// ParseOneWithOptions implements gsql.Parser.
func (p logTablesParser) ParseOneWithOptions(ctx context.Context, query string, options ast.ParserOptions) (ast.Statement, int, error) {
	q, _, rest := p.logTableStatement(ctx, query, ';', true)
	if q != "" {
		stmt, _, err := p.Parser.ParseOneWithOptions(ctx, q, options)
		return stmt, len(query) - len(rest), err
	}
	return p.Parser.ParseOneWithOptions(ctx, query, options)
}

// logTableStatement returns, in q, the statement that stands for the first
// statement of query when that is SHOW CREATE TABLE or CREATE TABLE IF NOT
// EXISTS of a log table of the mysql database (named so, or the current
// database), or DROP TABLE IF EXISTS or CREATE TABLE of one of its own
// tables (ownTables); q is empty for any other statement. first is that
// statement's text and rest, when multi, the statements after it, which
// the caller runs next. A no-op is refused (error 1142) to an account
// without the privilege the statement it stands for needs, as MySQL
// refuses the statement.
func (p logTablesParser) logTableStatement(ctx context.Context, query string, delim rune, multi bool) (q, first, rest string) {
	// Most statements are none of these: answer them without a scan of
	// the whole text for the end of the first statement.
	lead := strings.TrimLeftFunc(query, unicode.IsSpace)
	if !hasPrefixFold(lead, "show create table ") && !hasPrefixFold(lead, "create table ") &&
		!hasPrefixFold(lead, "drop table if exists ") {
		return "", "", ""
	}
	first, rest = firstStatement(query, delim)
	if !multi && rest != "" {
		return "", "", "" // more than one statement: GMS's to refuse
	}
	first = gsql.RemoveSpaceAndDelimiter(first, delim)
	q = first
	var show, drop, create bool
	switch {
	case hasPrefixFold(q, "show create table "):
		q, show = strings.TrimSpace(q[len("show create table "):]), true
	case hasPrefixFold(q, "create table if not exists "):
		q = strings.TrimSpace(q[len("create table if not exists "):])
	case hasPrefixFold(q, "create table "):
		q, create = strings.TrimSpace(q[len("create table "):]), true
	case hasPrefixFold(q, "drop table if exists "):
		q, drop = strings.TrimSpace(q[len("drop table if exists "):]), true
	default:
		return "", "", ""
	}
	name := q
	if !show && !drop {
		// The name ends where the column list begins.
		i := strings.IndexAny(q, "( \n\t")
		if i < 0 {
			return "", "", ""
		}
		name = q[:i]
	}
	db, table := "", name
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		db, table = unquoteIdent(name[:i]), name[i+1:]
	}
	table = strings.ToLower(unquoteIdent(table))
	def, ok := logTableDefs[table]
	switch {
	case show && !ok:
		return "", "", ""
	case drop || create:
		// One of the mysql database's own tables, named alone (a list
		// of tables is GMS's to refuse).
		if !ownTables[table] {
			return "", "", ""
		}
	case !ok && !ownTables[table]:
		return "", "", ""
	}
	sctx, _ := ctx.(*gsql.Context)
	if sctx != nil && sctx.Session == nil {
		sctx = nil
	}
	if db == "" {
		if sctx == nil {
			return "", "", ""
		}
		db = sctx.GetCurrentDatabase()
	}
	if !strings.EqualFold(db, "mysql") {
		return "", "", ""
	}
	if show {
		return "SELECT '" + table + "' AS `Table`, '" + strings.ReplaceAll(def, "'", "''") + "' AS `Create Table`", first, rest
	}
	if sctx == nil {
		return "", "", "" // no account to check: GMS's to refuse
	}
	priv, what := gsql.PrivilegeType_Create, "CREATE"
	if drop {
		priv, what = gsql.PrivilegeType_Drop, "DROP"
	}
	if denied := p.denied(sctx, priv, what, table); denied != "" {
		return denied, first, rest
	}
	return "SELECT 1 FROM dual WHERE FALSE", first, rest // a no-op
}

// denied returns, unless the session's account holds priv on table of the
// mysql database (or on the database, or globally), the statement that
// fails as MySQL does without it: error 1142 worded as the server words
// every refusal on a table (deniedOnTable), what naming priv. The
// statement is a SIGNAL, since the engine turns every error of its parser
// into a syntax error; SIGNAL's message holds at most 128 characters,
// which only an account with a very long host name could exceed.
func (p logTablesParser) denied(ctx *gsql.Context, priv gsql.PrivilegeType, what, table string) string {
	if p.db == nil || !p.db.Enabled() {
		return ""
	}
	op := gsql.NewPrivilegedOperation(gsql.PrivilegeCheckSubject{Database: "mysql", Table: table}, priv)
	if p.db.UserHasPrivileges(ctx, op) {
		return ""
	}
	msg := deniedOnTableMessage(ctx, what, table)
	if len(msg) > 128 {
		msg = strings.ToValidUTF8(msg[:128], "")
	}
	// The engine formats SIGNAL's message with Printf: a % is %%.
	msg = strings.NewReplacer(`\`, `\\`, "'", "''", "%", "%%").Replace(msg)
	return "SIGNAL SQLSTATE '42000' SET MYSQL_ERRNO = 1142, MESSAGE_TEXT = '" + msg + "'"
}

// firstStatement splits query after its first statement, at the first
// delimiter outside a quoted string or identifier and outside a comment.
// rest is empty when only white space follows.
func firstStatement(query string, delim rune) (first, rest string) {
	d := string(delim)
	for i := 0; i < len(query); i++ {
		switch c := query[i]; {
		case c == '\'' || c == '"' || c == '`':
			// A doubled quote ends the string and starts it again.
			for i++; i < len(query) && query[i] != c; i++ {
				if query[i] == '\\' && c != '`' {
					i++
				}
			}
		case c == '#' || (c == '-' && strings.HasPrefix(query[i:], "--") &&
			(i+2 == len(query) || query[i+2] <= ' ')):
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				return query, ""
			}
			i += j
		case c == '/' && strings.HasPrefix(query[i:], "/*"):
			j := strings.Index(query[i+2:], "*/")
			if j < 0 {
				return query, ""
			}
			i += j + 3
		case strings.HasPrefix(query[i:], d):
			first, rest = query[:i], query[i+len(d):]
			if strings.TrimSpace(rest) == "" {
				rest = ""
			}
			return first, rest
		}
	}
	return query, ""
}

// hasPrefixFold reports whether s begins with prefix, in any letter case
// (without a lower-case copy of every statement).
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// unquoteIdent removes an identifier's backticks.
func unquoteIdent(s string) string {
	if len(s) >= 2 && s[0] == '`' && s[len(s)-1] == '`' {
		return strings.ReplaceAll(s[1:len(s)-1], "``", "`")
	}
	return s
}
