package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chzyer/readline"
)

const (
	defaultPrompt = `strata [\d]> `
	contPrompt    = "     -> "
)

// lineSource is where the interactive shell reads lines: a
// readline.Instance at a terminal, a transcript in tests.
type lineSource interface {
	Readline() (string, error)
	SetPrompt(string)
}

// runInteractive is the shell at a terminal: line editing, history and
// tab completion, multi-line statements, Ctrl-C to cancel the running
// statement.
func runInteractive(sh *shell, historyPath string, stdin io.Reader, stdout, stderr io.Writer) int {
	sh.completer = newCompleter(sh.engine, func() string { return sh.db })
	defer sh.completer.close()
	cfg := &readline.Config{
		Prompt:                 sh.expandPrompt(),
		DisableAutoSaveHistory: true,
		HistorySearchFold:      true,
		InterruptPrompt:        "^C",
		EOFPrompt:              "",
		AutoComplete:           sh.completer,
	}
	if in, ok := stdin.(*os.File); ok {
		cfg.Stdin = in
	}
	if out, ok := stdout.(*os.File); ok {
		cfg.Stdout = out
	}
	if errw, ok := stderr.(*os.File); ok {
		cfg.Stderr = errw
	}
	rl, err := readline.NewEx(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "sqlshell: %v\n", err)
		return exitUsage
	}
	defer rl.Close()
	h, err := openHistory(historyPath, func(s string) { _ = rl.SaveHistory(s) })
	if err != nil {
		fmt.Fprintf(stderr, "sqlshell: history: %v\n", err)
		h, _ = openHistory("", func(s string) { _ = rl.SaveHistory(s) })
	}
	sh.history = h
	defer h.close()

	// SIGINT arrives while a statement runs (the terminal is not in raw
	// mode then): it cancels that statement, never the shell.
	var mu sync.Mutex
	var cancel context.CancelFunc
	interrupted := false // a SIGINT cancelled the running statement
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range sigc {
			mu.Lock()
			if cancel != nil {
				cancel()
				interrupted = true
			}
			mu.Unlock()
		}
	}()
	defer func() {
		signal.Stop(sigc)
		close(sigc)
		wg.Wait()
	}()
	sh.newCtx = func() (context.Context, context.CancelFunc) {
		ctx, c := context.WithCancel(context.Background())
		mu.Lock()
		cancel = c
		mu.Unlock()
		return ctx, func() {
			mu.Lock()
			cancel = nil
			if interrupted {
				// The terminal echoed ^C where the cursor was: what
				// follows starts on a line of its own.
				fmt.Fprintln(stdout)
				interrupted = false
			}
			mu.Unlock()
			c()
		}
	}
	return sh.interact(rl)
}

// interact reads lines from src until the input ends or a command leaves.
func (sh *shell) interact(src lineSource) int {
	fmt.Fprintf(sh.out(), "Strata SQL shell. Data folder %s, database %s.\nType help or \\? for help; statements end with ;\n\n", sh.data, sh.db)
	var lines []string // the statement being typed, for history
	for {
		if sh.sp.pending() {
			src.SetPrompt(continuation(sh.sp))
		} else {
			src.SetPrompt(sh.expandPrompt())
		}
		line, err := src.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			// Ctrl-C at the prompt drops what was typed.
			sh.sp.reset()
			lines = nil
			continue
		}
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(sh.out(), "Bye")
			return exitOK
		}
		if err != nil {
			fmt.Fprintf(sh.stderr, "sqlshell: %v\n", err)
			return exitUsage
		}
		if sh.tee != nil {
			// The tee file holds the session as seen: prompts and input too.
			fmt.Fprintf(sh.tee, "%s%s\n", sh.expandPrompt(), line)
		}
		if strings.TrimSpace(line) == "" && !sh.sp.pending() {
			continue
		}
		lines = append(lines, line)
		items := sh.sp.add(line)
		if len(items) > 0 || !sh.sp.pending() {
			if sh.history != nil {
				sh.history.add(strings.Join(lines, " "))
			}
			lines = nil
			if sh.sp.pending() {
				lines = append(lines, line) // the rest of the line starts the next statement
			}
		}
		sh.runAll(items)
		if sh.quit {
			fmt.Fprintln(sh.out(), "Bye")
			return exitOK
		}
	}
}

// continuation returns the prompt of a statement's next line, which says
// what is open, as the mysql client's does: a quote ('> "> `>), a
// comment (/*>) or only the statement (->).
func continuation(sp *splitter) string {
	switch {
	case sp.quote != 0:
		return "     " + string(sp.quote) + "> "
	case sp.comment:
		return "    /*> "
	}
	return contPrompt
}

// promptFixed holds the prompt escapes that stand for a fixed text.
var promptFixed = map[byte]string{
	'u': "root", 'h': "localhost", 'p': "embedded", 'S': ";", '_': " ", 'n': "\n",
}

// promptTimeLayouts holds the prompt escapes that stand for a part of the
// current time, with its time.Format layout.
var promptTimeLayouts = map[byte]string{
	'D': "Mon Jan _2 15:04:05 2006", 'R': "15", 'm': "04", 's': "05",
	'Y': "2006", 'y': "06", 'o': "1", 'O': "Jan", 'w': "Mon",
}

// expandPrompt returns the prompt with the mysql client's escapes
// replaced: \d database, \u user, \h host, \p connection, \D date, \R \m
// \s time, \Y \y \o \O \w date parts, \c statement counter, \l delimiter,
// \S ;, \_ space, \n newline, \\ backslash.
func (sh *shell) expandPrompt() string {
	p := sh.prompt
	if !strings.Contains(p, `\`) {
		return p
	}
	now := time.Now()
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] != '\\' || i+1 == len(p) {
			b.WriteByte(p[i])
			continue
		}
		i++
		switch p[i] {
		case 'd':
			if sh.db == "" {
				b.WriteString("(none)")
			} else {
				b.WriteString(sh.db)
			}
		case 'c':
			b.WriteString(strconv.Itoa(sh.counter))
		case 'l':
			b.WriteString(sh.sp.delim)
		default:
			if v, ok := promptFixed[p[i]]; ok {
				b.WriteString(v)
			} else if layout, ok := promptTimeLayouts[p[i]]; ok {
				b.WriteString(now.Format(layout))
			} else {
				b.WriteByte(p[i])
			}
		}
	}
	return b.String()
}
