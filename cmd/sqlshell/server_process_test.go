package main

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/server/servertest"
)

// startChild starts "sqlshell serve" as a child process on a free port
// and waits for the line that says where it listens.
func startChild(t *testing.T, args ...string) *servertest.Child {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	return servertest.StartChild(t, cmd)
}

// TestServerKilledMidTransaction kills the server (SIGKILL) while a client
// has an open transaction and another one has just committed; after a
// restart the committed rows are there and the uncommitted ones are not.
func TestServerKilledMidTransaction(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	srv := startChild(t, "--data", data, "--password", "pw")
	db := client(t, srv.Addr, "root", "pw", "")
	_, err := db.Exec("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
	require.NoError(t, err)
	for i := range 20 {
		_, err := db.Exec("INSERT INTO t VALUES (?, ?)", i, fmt.Sprint("c", i))
		require.NoError(t, err)
	}
	committed, err := db.Begin()
	require.NoError(t, err)
	_, err = committed.Exec("UPDATE t SET v = 'updated' WHERE id < 10")
	require.NoError(t, err)
	require.NoError(t, committed.Commit())

	open, err := db.Begin()
	require.NoError(t, err)
	_, err = open.Exec("INSERT INTO t VALUES (100, 'open')")
	require.NoError(t, err)
	_, err = open.Exec("DELETE FROM t WHERE id = 15")
	require.NoError(t, err)
	srv.Kill(t)
	_ = open.Rollback()
	_ = db.Close()

	srv = startChild(t, "--data", data)
	db = client(t, srv.Addr, "root", "pw", "")
	var n, updated int
	require.NoError(t, db.QueryRow("SELECT COUNT(*), SUM(v = 'updated') FROM t").Scan(&n, &updated))
	require.Equal(t, 20, n, "the open transaction's insert and delete are gone")
	require.Equal(t, 10, updated, "the committed update is there")
	var missing sql.NullString
	err = db.QueryRow("SELECT v FROM t WHERE id = 100").Scan(&missing)
	require.ErrorIs(t, err, sql.ErrNoRows)

	// A clean stop with SIGTERM.
	require.NoError(t, srv.Cmd.Process.Signal(syscall.SIGTERM))
	<-srv.Done
	require.NoError(t, srv.Cmd.Wait())
	require.Contains(t, srv.Log.String(), "stopped")
}

// TestServeFlags checks the flags the server refuses, named as flags.
func TestServeFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:0"}, "has no password (set --password or STRATA_PASSWORD)"},
		{[]string{"--listen", "nowhere"}, `--listen "nowhere"`},
		{[]string{"--user", ""}, "--user must not be empty"},
		{[]string{"--require-secure-transport"}, "--require-secure-transport needs --tls-cert and --tls-key"},
		{[]string{"--tls-cert", "x.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"--max-connections", "0"}, "--max-connections must be at least 1"},
		{[]string{"--procs", "-1"}, "--procs not negative"},
		{[]string{"extra"}, "unexpected argument"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(append([]string{"serve", "--data", t.TempDir()}, tc.args...), strings.NewReader(""), &out, &errOut)
			require.Equal(t, exitUsage, code, "a refused setting is a usage error")
			require.Contains(t, errOut.String(), tc.want)
		})
	}
}

// TestServeCPUProfile: --cpuprofile writes the run's CPU profile (a
// gzipped pprof protocol buffer) by the time the server has stopped; a
// file that cannot be created fails the start.
func TestServeCPUProfile(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "cpu.prof")
	srv := startChild(t, "--data", filepath.Join(dir, "data"), "--password", "pw", "--cpuprofile", prof)
	db := client(t, srv.Addr, "root", "pw", "")
	for range 100 {
		var n int
		require.NoError(t, db.QueryRow("SELECT 1").Scan(&n))
	}
	_ = db.Close()
	require.NoError(t, srv.Cmd.Process.Signal(syscall.SIGTERM))
	<-srv.Done
	require.NoError(t, srv.Cmd.Wait())
	b, err := os.ReadFile(prof)
	require.NoError(t, err)
	require.Greater(t, len(b), 2)
	require.Equal(t, []byte{0x1f, 0x8b}, b[:2], "a gzipped profile")

	var out, errOut bytes.Buffer
	code := run([]string{"serve", "--data", filepath.Join(dir, "data2"), "--cpuprofile", filepath.Join(dir, "missing", "cpu.prof")}, strings.NewReader(""), &out, &errOut)
	require.Equal(t, exitOpen, code)
	require.Contains(t, errOut.String(), "--cpuprofile")
}
