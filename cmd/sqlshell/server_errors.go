package main

import (
	"regexp"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	errors "gopkg.in/src-d/go-errors.v1"

	"github.com/strata-db/strata/sqlstore"
)

// The protocol handler turns engine errors into MySQL errors itself,
// before the server sees them, and gives every error kind it does not know
// number 1105. These are the kinds sqlstore.ServerError numbers, found
// again by their message.
var wireKinds = []struct {
	re    *regexp.Regexp
	num   int
	state string
}{
	{kindRE(gsql.ErrPrivilegeCheckFailed), 1142, "42000"},
	{kindRE(gsql.ErrTableAccessDeniedForUser), 1142, "42000"},
	{kindRE(gsql.ErrDatabaseAccessDeniedForUser), 1044, "42000"},
	{kindRE(gsql.ErrSecureFilePriv), 1290, "HY000"},
	{kindRE(types.ErrLengthBeyondLimit), mysql.ERDataTooLong, "22001"},
	{kindRE(gsql.ErrValueOutOfRange), mysql.ERWarnDataOutOfRange, "22003"},
	{kindRE(gsql.ErrColumnNotFound), mysql.ERBadFieldError, "42S22"},
	{kindRE(gsql.ErrTableColumnNotFound), mysql.ERBadFieldError, "42S22"},
	{kindRE(gsql.ErrCheckConstraintViolated), 3819, "HY000"},
}

// kindRE matches the messages of an error kind.
func kindRE(k *errors.Kind) *regexp.Regexp {
	parts := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`).Split(k.Message, -1)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// wireErr returns the error a client gets: sqlstore.ServerError's number
// and SQLSTATE, also for the errors the protocol handler already numbered
// 1105.
func wireErr(err error) error {
	if err == nil {
		return nil
	}
	se := sqlstore.ServerError(err)
	if se.Num == mysql.ERUnknownError {
		for _, k := range wireKinds {
			if k.re.MatchString(se.Message) {
				return mysql.NewSQLError(k.num, k.state, "%s", se.Message)
			}
		}
	}
	return se
}
