package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
)

// runScript runs the statements of src in order and prints their results.
// The first failing statement stops the script: its error is printed with
// the line it starts on, and the exit code is exitSQL.
func runScript(ctx context.Context, sess *session, src io.Reader, p *printer, f format, stderr io.Writer) int {
	sp := newSplitter()
	r := bufio.NewReader(src)
	runAll := func(stmts []statement) bool {
		for _, st := range stmts {
			if ctx.Err() != nil {
				fmt.Fprintln(stderr, errorLine(ctx.Err(), st.line))
				return false
			}
			res, err := sess.run(ctx, st.text)
			if err != nil {
				fmt.Fprintln(stderr, errorLine(err, st.line))
				return false
			}
			sf := f
			if st.term == termVertical {
				sf = formatVertical
			}
			p.print(res, sf)
		}
		return true
	}
	for {
		line, err := r.ReadString('\n')
		if len(line) > 0 {
			line = trimNewline(line)
			if !runAll(sp.add(line)) {
				return exitSQL
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintf(stderr, "sqlshell: reading input: %v\n", err)
			return exitSQL
		}
	}
	if !runAll(sp.finish()) {
		return exitSQL
	}
	return exitOK
}

func trimNewline(s string) string {
	if n := len(s); n > 0 && s[n-1] == '\n' {
		s = s[:n-1]
		if n := len(s); n > 0 && s[n-1] == '\r' {
			s = s[:n-1]
		}
	}
	return s
}
