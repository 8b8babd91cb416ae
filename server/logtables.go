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
// mysql database (named so, or the current database).
func logTableStatement(ctx context.Context, query string) (string, bool) {
	q := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(query), ";"))
	lower := strings.ToLower(q)
	var rest string
	var show bool
	switch {
	case strings.HasPrefix(lower, "show create table "):
		rest, show = strings.TrimSpace(q[len("show create table "):]), true
	case strings.HasPrefix(lower, "create table if not exists "):
		rest = strings.TrimSpace(q[len("create table if not exists "):])
	default:
		return "", false
	}
	name := rest
	if !show {
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
	if !ok {
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
		return "SELECT 1 FROM dual WHERE FALSE", true
	}
	return "SELECT '" + table + "' AS `Table`, '" + strings.ReplaceAll(def, "'", "''") + "' AS `Create Table`", true
}

// unquoteIdent removes an identifier's backticks.
func unquoteIdent(s string) string {
	if len(s) >= 2 && s[0] == '`' && s[len(s)-1] == '`' {
		return strings.ReplaceAll(s[1:len(s)-1], "``", "`")
	}
	return s
}
