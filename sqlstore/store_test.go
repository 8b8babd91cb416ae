package sqlstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"
)

func TestSmoke(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20), n INT, KEY kn (n))")
	d.exec("INSERT INTO t VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)")
	require.Equal(t, []sql.Row{{int32(1), "a", int32(10)}, {int32(2), "b", int32(20)}, {int32(3), "c", int32(30)}},
		d.exec("SELECT * FROM t ORDER BY id"))
	require.Equal(t, []sql.Row{{"b"}}, d.exec("SELECT v FROM t WHERE id = 2"))
	require.Equal(t, []sql.Row{{"c"}}, d.exec("SELECT v FROM t WHERE n > 25"))
	d.exec("UPDATE t SET id = id + 10")
	require.Equal(t, []sql.Row{{int32(11)}, {int32(12)}, {int32(13)}}, d.exec("SELECT id FROM t ORDER BY id"))
	d.exec("DELETE FROM t WHERE n = 20")
	require.Equal(t, []sql.Row{{int64(2)}}, d.exec("SELECT COUNT(*) FROM t"))
	err := d.execErr("INSERT INTO t VALUES (11, 'x', 1)")
	require.True(t, sql.ErrPrimaryKeyViolation.Is(sql.UnwrapError(err)), err)
	d.reopen()
	require.Equal(t, []sql.Row{{int32(11), "a", int32(10)}, {int32(13), "c", int32(30)}}, d.exec("SELECT * FROM t ORDER BY id"))
}

// TestCreateDatabaseName: names MySQL refuses (empty, ending in a space,
// longer than 64 characters) are refused with error 1102 and create
// nothing; the longest valid name is accepted.
func TestCreateDatabaseName(t *testing.T) {
	d := newTestDB(t)
	before := fmt.Sprint(d.exec("SHOW DATABASES"))
	for _, name := range []string{"", " ", "db ", strings.Repeat("x", 65)} {
		err := d.execErr("CREATE DATABASE `" + name + "`")
		require.True(t, sql.ErrInvalidDatabaseName.Is(err), "%q: %v", name, err)
		require.Equal(t, mysql.ERWrongDbName, MySQLError(err).Num, "%q: %v", name, err)
	}
	require.Equal(t, before, fmt.Sprint(d.exec("SHOW DATABASES")))
	d.exec("CREATE DATABASE `" + strings.Repeat("x", 64) + "`")
}

// TestAllDatabasesCached: the list of databases, which GMS asks for at
// every statement, comes from the catalog cache, follows CREATE and DROP
// DATABASE at once, and a transaction whose snapshot is older than a change
// reads the list as of its snapshot.
func TestAllDatabasesCached(t *testing.T) {
	d := newTestDB(t)
	names := func(ctx *sql.Context) []string {
		var out []string
		for _, db := range d.s.Provider().AllDatabases(ctx) {
			out = append(out, db.Name())
		}
		return out
	}
	a, b := d.newCtx(), d.newCtx()
	require.Equal(t, names(a), names(a), "a cached list answers as the catalog did")
	_, err := query(d.e, b.WithQuery("BEGIN"), "BEGIN")
	require.NoError(t, err)
	_, err = query(d.e, b.WithQuery("SELECT 1"), "SELECT 1")
	require.NoError(t, err)
	d.exec("CREATE DATABASE zz")
	require.Contains(t, names(a), "zz")
	require.NotContains(t, names(b), "zz", "b's snapshot predates the database")
	_, err = query(d.e, b.WithQuery("COMMIT"), "COMMIT")
	require.NoError(t, err)
	require.Contains(t, names(b), "zz")
	d.exec("DROP DATABASE zz")
	require.NotContains(t, names(a), "zz")
	require.NotContains(t, names(b), "zz")
}

// TestServerIdentity: VERSION(), @@version, @@version_comment and SHOW
// VARIABLES name Strata with one version string, the handshake's.
func TestServerIdentity(t *testing.T) {
	d := newTestDB(t)
	require.Equal(t, []sql.Row{{ServerVersion, ServerVersion, VersionComment}}, d.exec("SELECT VERSION(), @@version, @@version_comment"))
	require.ElementsMatch(t, []sql.Row{{"version", ServerVersion}, {"version_comment", VersionComment}},
		d.exec("SHOW VARIABLES WHERE Variable_name IN ('version', 'version_comment')"))
}
