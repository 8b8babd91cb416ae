package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// transcript is a lineSource for tests: it reads lines and writes each,
// after its prompt, to the output, as a terminal would show them.
type transcript struct {
	lines  []string
	out    io.Writer
	prompt string
}

func (s *transcript) SetPrompt(p string) { s.prompt = p }

func (s *transcript) Readline() (string, error) {
	if len(s.lines) == 0 {
		fmt.Fprintln(s.out, s.prompt)
		return "", io.EOF
	}
	l := s.lines[0]
	s.lines = s.lines[1:]
	fmt.Fprintln(s.out, s.prompt+l)
	return l, nil
}

var (
	elapsed       = regexp.MustCompile(`\(\d+\.\d\d sec\)`)
	serverVersion = regexp.MustCompile(`(?m)^Server version:\t\t.*$`)
)

// runCommands runs script in a new store as the interactive shell does
// (with a transcript for a terminal) or as a piped script, and returns
// its output and exit code in one text, times and paths made constant.
func runCommands(t *testing.T, script string, interactive bool) string {
	t.Helper()
	dir := t.TempDir()
	srcs, err := filepath.Glob("testdata/commands/*.sql")
	require.NoError(t, err)
	for _, f := range srcs {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o600))
	}
	script = strings.ReplaceAll(script, "$TMP", dir)
	data := filepath.Join(dir, "data")
	st, err := openStore(data, true, log.New(io.Discard, "", 0))
	require.NoError(t, err)
	engine := st.OpenEngine()
	sess := newSession(engine)
	require.NoError(t, sess.conn.UseDatabase(context.Background(), defaultDB))
	var out strings.Builder
	sh := &shell{
		sess: sess, engine: engine, p: &printer{w: &out, interactive: interactive}, f: formatTabs,
		stdout: &out, stderr: &out, interactive: interactive, data: data, sp: newSplitter(),
		db: defaultDB, prompt: defaultPrompt,
		newCtx: func() (context.Context, context.CancelFunc) { return context.Background(), func() {} },
	}
	var code int
	if interactive {
		sh.f = formatTable
		lines := strings.Split(strings.TrimSuffix(script, "\n"), "\n")
		code = sh.interact(&transcript{lines: lines, out: &out})
	} else if sh.runScript(strings.NewReader(script)) {
		code = exitOK
	} else {
		code = exitSQL
	}
	if sh.tee != nil {
		require.NoError(t, sh.tee.Close())
	}
	sess.close()
	require.NoError(t, engine.Close())
	got := fmt.Sprintf("%s-- exit %d --\n", out.String(), code)
	if b, err := os.ReadFile(filepath.Join(dir, "tee.txt")); err == nil {
		got += "-- tee.txt --\n" + string(b)
	}
	got = strings.ReplaceAll(got, dir, "$TMP")
	got = elapsed.ReplaceAllString(got, "(0.00 sec)")
	return serverVersion.ReplaceAllString(got, "Server version:\t\tVERSION")
}

// TestCommands runs the client commands of testdata/commands/*.txt at a
// (simulated) terminal and piped, against golden files.
func TestCommands(t *testing.T) {
	t.Setenv("EDITOR", "sed -i s/1/42/")
	t.Setenv("VISUAL", "")
	files, err := filepath.Glob("testdata/commands/*.txt")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		t.Run(name+"/tty", func(t *testing.T) {
			golden(t, filepath.Join("commands", name+".tty"), runCommands(t, string(src), true))
		})
		t.Run(name+"/piped", func(t *testing.T) {
			golden(t, filepath.Join("commands", name+".piped"), runCommands(t, string(src), false))
		})
	}
}
