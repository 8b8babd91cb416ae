// Package servertest holds what tests of the MySQL-protocol server need
// wherever the server runs: in the test process (package server's tests)
// or as a child process (sqlshell serve's). It starts no server itself, so
// that package server's own tests may use it: a child server, real MySQL
// client programs, and go-sql-driver/mysql pools.
package servertest

import (
	"bufio"
	"bytes"
	"database/sql"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	_ "github.com/go-sql-driver/mysql" // the driver Client opens
	"github.com/stretchr/testify/require"
)

// Child is a server running in a child process.
type Child struct {
	Cmd  *exec.Cmd
	Addr string        // where it listens
	Done chan struct{} // closed when its log has been read to the end
	Log  *bytes.Buffer // its standard error, complete once Done is closed
}

// servingRE matches the line a server logs once it listens
// ("serving DIR on ADDR (user NAME)").
var servingRE = regexp.MustCompile(` on (\S+) \(user `)

// StartChild starts cmd, a server that logs to its standard error, and
// waits for the line that says where it listens; the test fails with the
// log when the server ends first. The process is killed at the end of the
// test if it still runs.
func StartChild(t testing.TB, cmd *exec.Cmd) *Child {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	c := &Child{Cmd: cmd, Done: make(chan struct{}), Log: &bytes.Buffer{}}
	addrc := make(chan string, 1)
	go func() {
		defer close(c.Done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			c.Log.WriteString(sc.Text() + "\n")
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				addrc <- m[1]
			}
		}
		close(addrc)
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	addr, ok := <-addrc
	if !ok {
		<-c.Done
		_ = cmd.Wait()
		t.Fatalf("the server did not start:\n%s", c.Log)
	}
	c.Addr = addr
	return c
}

// Kill ends the server with SIGKILL, as a crash would, and waits for it.
func (c *Child) Kill(t testing.TB) {
	require.NoError(t, c.Cmd.Process.Signal(syscall.SIGKILL))
	<-c.Done
	_ = c.Cmd.Wait()
}

// Client opens a go-sql-driver/mysql pool to the server at addr, in
// database main, closed at the end of the test; params are the DSN's
// query parameters, if any.
func Client(t testing.TB, addr, user, password, params string) *sql.DB {
	t.Helper()
	dsn := fmt.Sprintf("%s:%s@tcp(%s)/main", user, password, addr)
	if params != "" {
		dsn += "?" + params
	}
	db, err := sql.Open("mysql", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// NeedTool returns the path of a client program (Debian's mariadb-client
// and sysbench packages), skipping the test when it is not installed.
func NeedTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed (apt-get install -y mariadb-client sysbench)", name)
	}
	return p
}

// HostPort splits addr for the clients' -h and -P flags.
func HostPort(t testing.TB, addr string) (host, port string) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	return h, p
}

// Tool runs a client program and returns its output, standard output and
// error together; stdin may be empty.
func Tool(t testing.TB, stdin string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
