package sqllogictest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/enginetest"
	memharness "github.com/dolthub/go-mysql-server/enginetest/sqllogictest/harness"
	"github.com/dolthub/sqllogictest/go/logictest"
	"github.com/stretchr/testify/require"
)

// Environment of the child processes: the file to run and the engine.
const (
	envFile    = "SQLSTORE_SLT_FILE"
	envHarness = "SQLSTORE_SLT_HARNESS" // "sqlstore" (default) or "memory"
	// envRebaseline, set to 1, rewrites testdata/memory_failures.txt from
	// runs on GMS's in-memory engine.
	envRebaseline = "SQLSTORE_SLT_REBASELINE"
)

// baselineFile lists the records GMS's in-memory engine fails, one
// "file:line" a line; every other record must pass (or be skipped by the
// runner's own rules) on sqlstore.
const baselineFile = "testdata/memory_failures.txt"

// TestSQLLogicTestFile is the child: it runs one file and prints the
// runner's log. It does nothing unless started by TestSQLLogicTest.
func TestSQLLogicTestFile(t *testing.T) {
	file := os.Getenv(envFile)
	if file == "" {
		t.Skip("child process of TestSQLLogicTest")
	}
	if os.Getenv(envHarness) == "memory" {
		logictest.RunTestFiles(memharness.NewMemoryHarness(enginetest.NewDefaultMemoryHarness()), file)
		return
	}
	h := &harness{}
	defer h.Close()
	logictest.RunTestFiles(h, file)
}

// corpusDir returns ../shared/sqllogictest beside the repository root.
func corpusDir(t *testing.T) string {
	wd, err := os.Getwd()
	require.NoError(t, err)
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(dir), "shared", "sqllogictest")
		}
		if filepath.Dir(dir) == dir {
			t.Fatalf("no go.mod above %s", wd)
		}
	}
}

// result is one record's outcome.
type result struct {
	key    string // file:line, the path relative to the corpus
	status string // ok, not ok, skipped, timeout, did not run
	detail string
}

var logLine = regexp.MustCompile(`^\S+ \d+ (\S+?:\d+): .*? (ok|not ok|skipped|timeout|did not run)(: .*)?$`)

// runFile runs one file in a child process and returns its records.
func runFile(t *testing.T, corpus, file, engine string) []result {
	cmd := exec.Command(os.Args[0], "-test.run=^TestSQLLogicTestFile$", "-test.v=false", "-test.timeout=20m")
	cmd.Env = append(os.Environ(), envFile+"="+file, envHarness+"="+engine)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s: %v", file, err)
	}
	rel, _ := filepath.Rel(corpus, file)
	var res []result
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		// The runner logs the path's last elements; key by the corpus path.
		i := strings.LastIndex(line, ".test:")
		if i < 0 {
			continue
		}
		m := logLine.FindStringSubmatch(line)
		if m == nil {
			// A query text with " ok" inside it: find the status at the end.
			continue
		}
		lineNo := m[1][strings.LastIndex(m[1], ":")+1:]
		res = append(res, result{key: rel + ":" + lineNo, status: m[2], detail: strings.TrimPrefix(m[3], ": ")})
	}
	if len(res) == 0 {
		t.Fatalf("%s (%s): no records ran; output:\n%s", rel, engine, tail(out.String(), 2000))
	}
	return res
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestSQLLogicTest runs every file of the corpus, each in its own process.
func TestSQLLogicTest(t *testing.T) {
	if os.Getenv(envFile) != "" {
		t.Skip("in a child process")
	}
	if testing.Short() {
		t.Skip("sqllogictest corpus: skipped with -short")
	}
	corpus := corpusDir(t)
	if _, err := os.Stat(corpus); err != nil {
		t.Skipf("sqllogictest corpus not found at %s (it lives beside the repository, not in it)", corpus)
	}
	var files []string
	require.NoError(t, filepath.Walk(corpus, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && strings.HasSuffix(p, ".test") {
			files = append(files, p)
		}
		return err
	}))
	sort.Strings(files)
	require.NotEmpty(t, files)

	if os.Getenv(envRebaseline) == "1" {
		rebaseline(t, corpus, files)
		return
	}
	memFails := readBaseline(t)
	total := map[string]int{}
	for _, f := range files {
		rel, _ := filepath.Rel(corpus, f)
		t.Run(rel, func(t *testing.T) {
			counts := map[string]int{}
			for _, r := range runFile(t, corpus, f, "sqlstore") {
				counts[r.status]++
				total[r.status]++
				if r.status == "ok" || r.status == "skipped" || memFails[r.key] {
					continue
				}
				t.Errorf("%s: %s %s", r.key, r.status, r.detail)
			}
			t.Logf("%s: %v", rel, counts)
		})
	}
	t.Logf("all files: %v", total)
}

func readBaseline(t *testing.T) map[string]bool {
	b, err := os.ReadFile(baselineFile)
	require.NoError(t, err)
	out := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			out[line] = true
		}
	}
	return out
}

func rebaseline(t *testing.T, corpus string, files []string) {
	var b strings.Builder
	b.WriteString("# Records of ../shared/sqllogictest that GMS's in-memory engine fails\n")
	b.WriteString("# (file:line). Regenerate: SQLSTORE_SLT_REBASELINE=1 go test -run TestSQLLogicTest$\n")
	for _, f := range files {
		for _, r := range runFile(t, corpus, f, "memory") {
			if r.status != "ok" && r.status != "skipped" {
				fmt.Fprintf(&b, "%s\n", r.key)
			}
		}
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(baselineFile), 0o755))
	require.NoError(t, os.WriteFile(baselineFile, []byte(b.String()), 0o644))
}
