package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"

	"github.com/chzyer/readline"
)

const (
	prompt     = "strata> "
	contPrompt = "     -> "
)

const shellHelp = `Statements end with ; (or \G to print the result vertically) and may
span several lines. Ctrl-C cancels the running statement, or the statement
being typed; Ctrl-D, exit or quit leaves.

  help, \h, ?     this text
  exit, quit, \q  leave the shell
  \c              clear the statement being typed
  USE db;         switch database        SHOW DATABASES; SHOW TABLES;
  DESCRIBE t;     a table's columns      SHOW CREATE TABLE t\G
  BEGIN; ... COMMIT; or ROLLBACK;        transactions
`

// runInteractive is the shell at a terminal: line editing and history,
// multi-line statements, Ctrl-C to cancel the running statement.
func runInteractive(sess *session, p *printer, f format, data, db, history string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg := &readline.Config{
		Prompt:                 prompt,
		HistoryFile:            history,
		DisableAutoSaveHistory: true,
		HistorySearchFold:      true,
		InterruptPrompt:        "^C",
		EOFPrompt:              "",
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

	// SIGINT arrives while a statement runs (the terminal is not in raw
	// mode then): it cancels that statement, never the shell.
	var mu sync.Mutex
	var cancel context.CancelFunc
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
			}
			mu.Unlock()
		}
	}()
	defer func() {
		signal.Stop(sigc)
		close(sigc)
		wg.Wait()
	}()

	fmt.Fprintf(stdout, "Strata SQL shell. Data folder %s, database %s.\nType help for help; statements end with ;\n\n", data, db)
	sp := newSplitter()
	var lines []string // the statement being typed, for history
	for {
		if sp.pending() {
			rl.SetPrompt(contPrompt)
		} else {
			rl.SetPrompt(prompt)
		}
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			sp.reset()
			lines = nil
			continue
		}
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(stdout, "Bye")
			return exitOK
		}
		if err != nil {
			fmt.Fprintf(stderr, "sqlshell: %v\n", err)
			return exitUsage
		}
		if !sp.pending() {
			switch strings.TrimRight(strings.TrimSpace(line), ";") {
			case "":
				continue
			case "exit", "quit", `\q`:
				fmt.Fprintln(stdout, "Bye")
				return exitOK
			case "help", `\h`, "?":
				fmt.Fprint(stdout, shellHelp)
				continue
			}
		}
		if strings.HasSuffix(strings.TrimSpace(line), `\c`) {
			sp.reset()
			lines = nil
			continue
		}
		lines = append(lines, line)
		stmts := sp.add(line)
		if len(stmts) == 0 {
			continue
		}
		_ = rl.SaveHistory(strings.Join(lines, " "))
		lines = nil
		if sp.pending() {
			lines = append(lines, line) // the rest of the line starts the next statement
		}
		for _, st := range stmts {
			ctx, c := context.WithCancel(context.Background())
			mu.Lock()
			cancel = c
			mu.Unlock()
			res, err := sess.run(ctx, st.text)
			mu.Lock()
			cancel = nil
			mu.Unlock()
			c()
			if err != nil {
				fmt.Fprintln(stderr, errorLine(err, 0))
				continue
			}
			sf := f
			if st.term == termVertical {
				sf = formatVertical
			}
			p.print(res, sf)
		}
	}
}
