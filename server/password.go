package server

import (
	"regexp"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/strata-db/strata/sqlstore"
)

// SET PASSWORD, which the engine's parser does not know, runs as the
// ALTER USER ... IDENTIFIED BY it stands for, with the same privilege
// check: any account may change its own password, others need CREATE
// USER (or UPDATE on the mysql database). MySQL 8's forms with REPLACE,
// RETAIN CURRENT PASSWORD or TO RANDOM are left to fail as before.

// quoted is a quoted SQL string or identifier.
const quoted = `'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|` + "`(?:[^`]|``)*`"

// setPasswordRe matches SET PASSWORD [FOR account] = 'auth_string'.
var setPasswordRe = regexp.MustCompile(`(?is)^\s*SET\s+PASSWORD\s*` +
	`(?:FOR\s+(CURRENT_USER\s*(?:\(\s*\))?|(?:` + quoted + `|[\w$.-]+)(?:\s*@\s*(?:` + quoted + `|[\w$.%:-]+))?)\s*)?` +
	`=\s*('(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")\s*;?\s*$`)

// setPassword returns the ALTER USER statement a SET PASSWORD query
// stands for, and whether query is one.
func (h *handler) setPassword(c *mysql.Conn, query string) (string, bool) {
	// The regular expression decides; the leading words spare it the
	// statements that are not SET PASSWORD.
	if first, second := sqlstore.LeadingWords(query); !strings.EqualFold(first, "set") || !strings.EqualFold(second, "password") {
		return "", false
	}
	m := setPasswordRe.FindStringSubmatch(query)
	if m == nil {
		return "", false
	}
	account := m[1]
	if account == "" || strings.HasPrefix(strings.ToUpper(account), "CURRENT_USER") {
		account = h.ownAccount(c)
		if account == "" {
			return "", false
		}
	}
	return "ALTER USER " + account + " IDENTIFIED BY " + m[2], true
}

// ownAccount is the quoted account connection c logged in as, "" when
// unknown.
func (h *handler) ownAccount(c *mysql.Conn) string {
	if h.users == nil {
		return ""
	}
	u, ok := c.UserData.(gsql.MysqlConnectionUser)
	if !ok {
		return ""
	}
	rd := h.users.Reader()
	defer rd.Close()
	acct := h.users.GetUser(rd, u.User, u.Host, false)
	if acct == nil {
		return ""
	}
	return quoteAccount(acct)
}

// quoteAccount is 'user'@'host' for SQL.
func quoteAccount(u *mysql_db.User) string {
	q := func(s string) string {
		s = strings.ReplaceAll(s, `\`, `\\`)
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return q(u.User) + "@" + q(u.Host)
}
