package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// historyKeep is how many entries the history file keeps; older ones are
// dropped when the shell starts.
const historyKeep = 1000

// history is the shell's history file: one statement per line, written
// by the shell itself (not by the line editor, which would create it
// world-readable) so the file is created 0600, as it may hold data.
type history struct {
	f   *os.File     // nil when there is no file
	mem func(string) // adds to the line editor's history
}

// openHistory opens (creating) the history file at path, passes its
// entries, oldest first, to mem, and keeps it open for add. With path ""
// the history is mem's alone.
func openHistory(path string, mem func(string)) (*history, error) {
	if path == "" {
		return &history{mem: mem}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		lines = nil
	}
	if len(lines) > historyKeep {
		lines = lines[len(lines)-historyKeep:]
		if err := rewriteHistory(path, lines); err != nil {
			return nil, err
		}
	}
	for _, l := range lines {
		mem(l)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return &history{f: f, mem: mem}, nil
}

// rewriteHistory replaces the file at path with lines, through a new
// file created 0600 and renamed over it.
func rewriteHistory(path string, lines []string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	w := bufio.NewWriter(tmp)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// add appends a statement, unless histIgnore says it may hold a
// password. Its lines are joined with spaces.
func (h *history) add(s string) {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\n", " "))
	if s == "" || histIgnore(s) {
		return
	}
	h.mem(s)
	if h.f != nil {
		_, _ = fmt.Fprintln(h.f, s)
	}
}

func (h *history) close() {
	if h.f != nil {
		_ = h.f.Close()
	}
}

// histIgnore reports whether s is kept out of the history: like the mysql
// client's default --histignore "*IDENTIFIED*:*PASSWORD*", matched
// without regard to case.
func histIgnore(s string) bool {
	u := strings.ToUpper(s)
	return strings.Contains(u, "IDENTIFIED") || strings.Contains(u, "PASSWORD")
}
