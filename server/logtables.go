package server

import (
	"context"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
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
// and passes everything else on.
type logTablesParser struct{ gsql.Parser }

// ParseSimple implements gsql.Parser.
func (p logTablesParser) ParseSimple(query string) (ast.Statement, error) {
	return p.Parser.ParseSimple(query)
}

// Parse implements gsql.Parser.
func (p logTablesParser) Parse(ctx *gsql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	if q, ok := logTableStatement(ctx, query); ok {
		stmt, _, _, err := p.Parser.Parse(ctx, q, false)
		return stmt, query, "", err
	}
	return p.Parser.Parse(ctx, query, multi)
}

// ParseWithOptions implements gsql.Parser.
func (p logTablesParser) ParseWithOptions(ctx context.Context, query string, delimiter rune, multi bool, options ast.ParserOptions) (ast.Statement, string, string, error) {
	if q, ok := logTableStatement(ctx, query); ok {
		stmt, _, _, err := p.Parser.ParseWithOptions(ctx, q, delimiter, false, options)
		return stmt, query, "", err
	}
	return p.Parser.ParseWithOptions(ctx, query, delimiter, multi, options)
}

// ParseOneWithOptions implements gsql.Parser.
func (p logTablesParser) ParseOneWithOptions(ctx context.Context, query string, options ast.ParserOptions) (ast.Statement, int, error) {
	if q, ok := logTableStatement(ctx, query); ok {
		stmt, _, err := p.Parser.ParseOneWithOptions(ctx, q, options)
		return stmt, len(query), err
	}
	return p.Parser.ParseOneWithOptions(ctx, query, options)
}

// logTableStatement returns the statement that stands for query when query
// is SHOW CREATE TABLE or CREATE TABLE IF NOT EXISTS of a log table of the
// mysql database (named so, or the current database), or DROP TABLE IF
// EXISTS or CREATE TABLE of one of its own tables (ownTables).
func logTableStatement(ctx context.Context, query string) (string, bool) {
	q := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(query), ";"))
	var rest string
	var show, drop, create bool
	switch {
	case hasPrefixFold(q, "show create table "):
		rest, show = strings.TrimSpace(q[len("show create table "):]), true
	case hasPrefixFold(q, "create table if not exists "):
		rest = strings.TrimSpace(q[len("create table if not exists "):])
	case hasPrefixFold(q, "create table "):
		rest, create = strings.TrimSpace(q[len("create table "):]), true
	case hasPrefixFold(q, "drop table if exists "):
		rest, drop = strings.TrimSpace(q[len("drop table if exists "):]), true
	default:
		return "", false
	}
	name := rest
	if !show && !drop {
		// The name ends where the column list begins.
		i := strings.IndexAny(rest, "( \n\t")
		if i < 0 {
			return "", false
		}
		name = rest[:i]
	}
	db, table := "", name
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		db, table = unquoteIdent(name[:i]), name[i+1:]
	}
	table = strings.ToLower(unquoteIdent(table))
	def, ok := logTableDefs[table]
	switch {
	case show && !ok:
		return "", false
	case drop || create:
		// One of the mysql database's own tables, named alone (a list
		// of tables is GMS's to refuse).
		if !ownTables[table] {
			return "", false
		}
	case !ok && !ownTables[table]:
		return "", false
	}
	if db == "" {
		sctx, isSQL := ctx.(*gsql.Context)
		if !isSQL || sctx.Session == nil {
			return "", false
		}
		db = sctx.GetCurrentDatabase()
	}
	if !strings.EqualFold(db, "mysql") {
		return "", false
	}
	if !show {
		return "SELECT 1 FROM dual WHERE FALSE", true // a no-op
	}
	return "SELECT '" + table + "' AS `Table`, '" + strings.ReplaceAll(def, "'", "''") + "' AS `Create Table`", true
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
