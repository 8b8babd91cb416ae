package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// runMainEnv makes the test binary run the program itself: tests start it
// as a child process (through a terminal, or to kill it).
const runMainEnv = "SQLSHELL_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// golden compares got with testdata/name.golden, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	require.Equal(t, string(want), got)
}

// runShell runs the program in-process with stdin and returns what it
// printed and its exit code, in one text for golden files.
func runShell(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	return fmt.Sprintf("%s-- stderr --\n%s-- exit %d --\n", out.String(), errOut.String(), code)
}

// TestScripts runs testdata/*.sql as stdin scripts and as -e arguments and
// compares the output with golden files.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.sql")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		t.Run(name, func(t *testing.T) {
			data := t.TempDir()
			golden(t, name+".stdin", runShell(t, string(src), "--data", data))
		})
		t.Run(name+"/table", func(t *testing.T) {
			golden(t, name+".table", runShell(t, string(src), "--data", t.TempDir(), "--table"))
		})
	}
}

func TestExecFlag(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"e", []string{"-e", "CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10)); INSERT INTO t VALUES (1, 'a'), (2, NULL); SELECT * FROM t ORDER BY id"}},
		{"e-vertical", []string{"-e", "SELECT 1 AS one, 'two' AS two\\G SELECT 3 AS three"}},
		{"e-error", []string{"-e", "SELECT 1;\nSELECT * FROM nope; SELECT 2"}},
		{"e-skip-names", []string{"-N", "-e", "SELECT 1, 2"}},
		{"e-other-db", []string{"--db", "shop", "-e", "SELECT DATABASE()"}},
		{"bad-flag", []string{"--nope"}},
		{"empty-db", []string{"--db", "", "-e", "SELECT 1"}},
		{"comments-separate", []string{"-e", "SELECT 1/* c */AS x, 'a'/**/'b' AS y"}},
		{"store-tikv-mock", []string{"--store", "tikv://mock?regions=2", "-e", "CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10)); INSERT INTO t VALUES (1, 'a'), (2, ''); SELECT * FROM t ORDER BY id"}},
		{"store-not-tikv", []string{"--store", "/some/folder", "-e", "SELECT 1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			golden(t, tc.name, runShell(t, "", append([]string{"--data", t.TempDir()}, tc.args...)...))
		})
	}
}

// TestDataPersists runs two shells one after the other on one folder.
func TestDataPersists(t *testing.T) {
	data := t.TempDir()
	out := runShell(t, "", "--data", data, "-e", "CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (7)")
	require.Contains(t, out, "-- exit 0 --")
	out = runShell(t, "", "--data", data, "-e", "SELECT id FROM t")
	require.Equal(t, "id\n7\n-- stderr --\n-- exit 0 --\n", out)
	t.Setenv("STRATA_DATA", data)
	out = runShell(t, "", "-e", "SELECT id FROM t")
	require.Equal(t, "id\n7\n-- stderr --\n-- exit 0 --\n", out)
}

// TestNoSetupWarnings: the shell's own CREATE DATABASE IF NOT EXISTS, run
// on the existing default database, leaves no "database exists" note for
// the user's first SHOW WARNINGS.
func TestNoSetupWarnings(t *testing.T) {
	data := t.TempDir()
	runShell(t, "", "--data", data, "-e", "SELECT 1")
	out := runShell(t, "", "--data", data, "-e", "SHOW WARNINGS")
	require.Equal(t, "Level\tCode\tMessage\n-- stderr --\n-- exit 0 --\n", out)
}
