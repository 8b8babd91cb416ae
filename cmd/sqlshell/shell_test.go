package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/require"
)

// screen is what a terminal has shown so far.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// terminal is the shell running as a child process on a pseudo-terminal.
type terminal struct {
	t      *testing.T
	pty    *os.File
	cmd    *exec.Cmd
	screen *screen
	copied chan struct{} // closed when the screen copy ends
	seen   int           // screen offset already matched by expect
}

func startTerminal(t *testing.T, args ...string) *terminal {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "TERM=xterm")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 200})
	require.NoError(t, err)
	term := &terminal{t: t, pty: f, cmd: cmd, screen: &screen{}, copied: make(chan struct{})}
	go func() {
		defer close(term.copied)
		_, _ = io.Copy(term.screen, f) // ends when the child exits and the pty closes
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		_ = f.Close()
		<-term.copied
	})
	return term
}

func (term *terminal) typeKeys(s string) {
	term.t.Helper()
	_, err := term.pty.Write([]byte(s))
	require.NoError(term.t, err)
}

// expect waits until want appears on the screen after what earlier calls
// matched, and returns the screen up to and including it. A person would
// give up after a while: so does the test, after 30 seconds.
func (term *terminal) expect(want string) string {
	term.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := term.screen.String()
		if i := strings.Index(s[term.seen:], want); i >= 0 {
			out := s[term.seen : term.seen+i+len(want)]
			term.seen += i + len(want)
			return out
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("never saw %q; the screen shows:\n%s", want, s[term.seen:])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestInteractiveShell(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "history")
	term := startTerminal(t, "--data", filepath.Join(dir, "data"), "--history", hist)
	term.expect("Type help or")
	term.expect(mainPrompt)

	// A statement over two lines.
	term.typeKeys("CREATE TABLE t (id INT PRIMARY KEY,\r")
	term.expect(contPrompt)
	term.typeKeys("name VARCHAR(10));\r")
	term.expect("Query OK, 0 rows affected")
	term.typeKeys("INSERT INTO t VALUES (1, 'a'), (2, 'b');\r")
	term.expect("Query OK, 2 rows affected")

	// An aligned table with the row count and time.
	term.typeKeys("SELECT * FROM t ORDER BY id;\r")
	out := term.expect("2 rows in set (")
	require.Contains(t, out, "+----+------+\r\n| id | name |\r\n+----+------+\r\n|  1 | a    |\r\n|  2 | b    |\r\n+----+------+")
	// The up arrow brings the statement back.
	term.typeKeys("\x1b[A\r")
	term.expect("2 rows in set (")

	// \G prints vertically.
	term.typeKeys("SELECT * FROM t WHERE id = 1\\G\r")
	out = term.expect("1 row in set")
	require.Contains(t, out, "*************************** 1. row ***************************\r\n  id: 1\r\nname: a")

	// Errors carry MySQL's number and SQLSTATE.
	term.typeKeys("SELECT * FROM nope;\r")
	term.expect("ERROR 1146 (42S02): ")
	term.typeKeys("help\r")
	term.expect("Ctrl-C cancels the running statement")

	// Ctrl-C while typing drops the statement being typed.
	term.typeKeys("SELECT 1,\r")
	term.expect(contPrompt)
	term.typeKeys("\x03")
	term.expect(mainPrompt)
	term.typeKeys("SELECT 5 AS five;\r")
	out = term.expect("1 row in set")
	require.Contains(t, out, "| five |")

	// Ctrl-C while a statement runs cancels it, not the shell. The
	// statement starts once the line is read, so keep pressing.
	term.typeKeys("SELECT SLEEP(1000);\r")
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(term.screen.String()[term.seen:], "ERROR 1317 (70100)") {
		require.True(t, time.Now().Before(deadline), "the statement was never cancelled:\n%s", term.screen.String()[term.seen:])
		term.typeKeys("\x03")
		time.Sleep(100 * time.Millisecond)
	}
	out = term.expect("Query execution was interrupted")
	require.Contains(t, out, "\r\nERROR 1317 (70100)", "the error starts a line of its own after the echoed ^C")
	term.typeKeys("SELECT COUNT(*) AS n FROM t;\r")
	term.expect("1 row in set")

	// Ctrl-D leaves.
	term.typeKeys("\x04")
	term.expect("Bye")
	require.NoError(t, term.cmd.Wait())

	h, err := os.ReadFile(hist)
	require.NoError(t, err)
	require.Contains(t, string(h), "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(10));")
	require.Contains(t, string(h), "SELECT SLEEP(1000);")
}

func TestInteractiveExit(t *testing.T) {
	for _, word := range []string{"exit", "quit", "\\q"} {
		t.Run(word, func(t *testing.T) {
			dir := t.TempDir()
			term := startTerminal(t, "--data", dir, "--history", "")
			term.expect(mainPrompt)
			term.typeKeys(word + "\r")
			term.expect("Bye")
			require.NoError(t, term.cmd.Wait())
		})
	}
}

// mainPrompt is the default prompt in database main.
const mainPrompt = "strata [main]> "

// TestInteractiveCommands: at a terminal, tab completes keywords and the
// names of tables and columns, the prompt follows the database, a syntax
// error shows a caret, an unknown command answers at once, and history
// stays out of reach of other users and keeps no passwords.
func TestInteractiveCommands(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "history")
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", "sed -i s/1/42/")
	term := startTerminal(t, "--data", filepath.Join(dir, "data"), "--history", hist)
	term.expect(mainPrompt)
	term.typeKeys("CREATE TABLE customers (id INT PRIMARY KEY, city VARCHAR(10));\r")
	term.expect("Query OK")
	term.typeKeys("INSERT INTO customers VALUES (1, 'Oslo');\r")
	term.expect("Query OK")

	// Tab completes a keyword (in the case typed), a table and a column.
	term.typeKeys("sel\t ci\t FROM custo\t;\r")
	out := term.expect("1 row in set")
	require.Contains(t, out, "| Oslo |")
	require.Contains(t, out, "select city FROM customers;")

	// An unknown command answers at once; the next statement runs.
	term.typeKeys(".tables\r")
	term.expect("Unknown command '.tables'. Try SHOW TABLES;")
	term.typeKeys("SELECT 7 AS seven;\r")
	term.expect("| seven |")

	// A syntax error points at its place.
	term.typeKeys("SELECT city\r")
	term.expect(contPrompt)
	term.typeKeys("FROM customers WHERE city = = 'x';\r")
	out = term.expect("^")
	require.Contains(t, out, "near '= 'x'' at line 2, column 29\r\nFROM customers WHERE city = = 'x'\r\n                            ^")

	// The prompt names the database.
	term.typeKeys("CREATE DATABASE shop;\r")
	term.expect("Query OK")
	term.typeKeys("use shop\r")
	term.expect("Database changed")
	term.expect("strata [shop]> ")

	// The continuation prompt says what is open.
	term.typeKeys("SELECT 'a\r")
	term.expect("     '> ")
	term.typeKeys("b' AS s /* c\r")
	term.expect("    /*> ")
	term.typeKeys("*/;\r")
	term.expect("1 row in set")

	// \e edits the statement being typed in $EDITOR (a sed here).
	term.typeKeys("SELECT 1 AS e\r")
	term.expect(contPrompt)
	term.typeKeys("\\e\r")
	term.expect("SELECT 42 AS e")
	term.typeKeys(";\r")
	out = term.expect("1 row in set")
	require.Contains(t, out, "| 42 |")

	term.typeKeys("CREATE USER bob IDENTIFIED BY 'hunter2';\r")
	term.expect("ERROR")
	term.typeKeys("\\q\r")
	term.expect("Bye")
	require.NoError(t, term.cmd.Wait())

	fi, err := os.Stat(hist)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	h, err := os.ReadFile(hist)
	require.NoError(t, err)
	require.Contains(t, string(h), "select city FROM customers;")
	require.NotContains(t, string(h), "hunter2")
}
