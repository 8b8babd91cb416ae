package server

import (
	"context"
	"fmt"
	"net"
	"sort"
	"testing"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/stretchr/testify/require"
)

// TestServerEveryGlobal walks every global system variable the engine
// knows. SET GLOBAL by an account without SUPER or SYSTEM_VARIABLES_ADMIN
// is refused with 1227. For an administrator a variable either takes
// effect (effectiveGlobals, whose important effects have tests of their
// own) or is refused, with 1238 as MySQL refuses a read-only variable:
// none is accepted and ignored.
func TestServerEveryGlobal(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	root.SetMaxOpenConns(1)
	execAll(t, root, "CREATE USER 'u'@'%' IDENTIFIED BY 'upw'")
	u := accountClient(t, s.Addr(), "u", "upw")
	u.SetMaxOpenConns(1)

	var names []string
	for name := range gsql.SystemVariables.GetAllGlobalVariables() {
		v, _, ok := gsql.SystemVariables.GetGlobal(name)
		require.True(t, ok, name)
		if mv, ok := v.(*gsql.MysqlSystemVariable); ok && mv.Scope.IsSessionOnly() {
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	require.Greater(t, len(names), 100)

	effective := 0
	for _, name := range names {
		// The variable's own value: whatever is accepted changes nothing.
		q := fmt.Sprintf("SET GLOBAL `%s` = @@global.`%s`", name, name)
		_, err := u.Exec(q)
		require.Equal(t, uint16(1227), mysqlNumber(err), "%s: %v", q, err)

		_, err = root.Exec(q)
		if _, ok := effectiveGlobals[name]; ok {
			v, _, _ := gsql.SystemVariables.GetGlobal(name)
			if !v.IsReadOnly() {
				require.NoError(t, err, q)
				effective++
				continue
			}
		}
		require.Equal(t, uint16(1238), mysqlNumber(err), "%s: accepted but without effect: %v", q, err)
	}
	require.Equal(t, len(effectiveGlobals), effective, "every effective global is the engine's and can be set")
}

// TestServerGlobalsShowServerValues: the globals the server's flags set
// show the flags' values, and those the server fixes at start are refused.
func TestServerGlobalsShowServerValues(t *testing.T) {
	s := testServer(t, Config{Password: "pw", MaxConnections: 9, MaxAllowedPacket: 8192, IdleTimeout: 90 * time.Second})
	root := client(t, s.Addr(), "root", "pw", "")
	var conns, timeout, packet int64
	require.NoError(t, root.QueryRow("SELECT @@max_connections, @@wait_timeout, @@max_allowed_packet").Scan(&conns, &timeout, &packet))
	require.Equal(t, []int64{9, 90, 8192}, []int64{conns, timeout, packet})
	require.NoError(t, root.QueryRow("SELECT @@global.max_connections, @@global.wait_timeout, @@global.max_allowed_packet").Scan(&conns, &timeout, &packet))
	require.Equal(t, []int64{9, 90, 8192}, []int64{conns, timeout, packet})
	for _, q := range []string{
		"SET GLOBAL wait_timeout = 5",
		"SET GLOBAL max_allowed_packet = 1048576",
		"SET GLOBAL interactive_timeout = 5",
		"SET GLOBAL net_read_timeout = 5",
	} {
		_, err := root.Exec(q)
		require.Equal(t, uint16(1238), mysqlNumber(err), "%s: %v", q, err)
	}
	_, err := root.Exec("SET max_connections = 10")
	require.Equal(t, uint16(1229), mysqlNumber(err), "%v", err)
	_, err = root.Exec("SET GLOBAL pseudo_thread_id = 1")
	require.Equal(t, uint16(1228), mysqlNumber(err), "a session variable: %v", err)
}

// TestServerGlobalAutocommitOff: SET GLOBAL autocommit = 0 applies to the
// sessions started afterwards, as in MySQL. Such a session's INSERT is
// reported inside an open transaction (the OK packet has
// SERVER_STATUS_IN_TRANS and not SERVER_STATUS_AUTOCOMMIT), is not seen
// by others until COMMIT, and is rolled back when the client disconnects
// without one.
func TestServerGlobalAutocommitOff(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	execAll(t, root, "CREATE TABLE t (id INT PRIMARY KEY)", "SET GLOBAL autocommit = 0")
	t.Cleanup(func() { _ = gsql.SystemVariables.AssignValues(map[string]any{"autocommit": int8(1)}) })

	tc := newTapClient(t, s.Addr(), "pw")
	var ac int
	require.NoError(t, tc.db.QueryRow("SELECT @@autocommit").Scan(&ac))
	require.Equal(t, 0, ac, "a new session takes the global")
	raw := tc.raw(t)
	flags := okFlags(t, raw, "INSERT INTO t VALUES (1)")
	require.NotZero(t, flags&0x0001, "SERVER_STATUS_IN_TRANS: flags %#x", flags)
	require.Zero(t, flags&0x0002, "SERVER_STATUS_AUTOCOMMIT: flags %#x", flags)

	other := client(t, s.Addr(), "root", "pw", "autocommit=true")
	require.Empty(t, queryInts(t, other, "SELECT id FROM t"), "not committed")
	tc.cut()
	waitFor(t, "the session is gone", func() bool { return s.h.idle() })
	require.Empty(t, queryInts(t, other, "SELECT id FROM t"), "rolled back at disconnect")

	c, err := other.Conn(context.Background())
	require.NoError(t, err)
	defer c.Close()
	_, err = c.ExecContext(context.Background(), "SET autocommit = 0")
	require.NoError(t, err)
	_, err = c.ExecContext(context.Background(), "INSERT INTO t VALUES (2)")
	require.NoError(t, err)
	_, err = c.ExecContext(context.Background(), "COMMIT")
	require.NoError(t, err)
	require.Equal(t, []int{2}, queryInts(t, root, "SELECT id FROM t"))
}

// okFlags sends query on a logged-in connection the client is not using
// and returns the status flags of the OK packet that answers it.
func okFlags(t *testing.T, c net.Conn, query string) uint16 {
	t.Helper()
	writePacket(t, c, 0, comQuery(query))
	p, err := readPacket(c)
	require.NoError(t, err)
	require.Equal(t, byte(0), p[0], "an OK packet: %q", p)
	pos := 1
	for range 2 { // affected rows, last insert id: length-encoded
		switch {
		case p[pos] < 0xfb:
			pos++
		case p[pos] == 0xfc:
			pos += 3
		case p[pos] == 0xfd:
			pos += 4
		default:
			pos += 9
		}
	}
	return uint16(p[pos]) | uint16(p[pos+1])<<8
}
