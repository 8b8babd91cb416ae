package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/tikvstore"
)

// command is one of the mysql client's commands the shell knows: name is
// its backslash form, long the word that runs it at the start of a line.
type command struct {
	name, long string
	arg        bool // takes the rest of the line as its argument
	help       string
}

// commands are the client commands, in the order help lists them. \G and
// \g end a statement (split.go); \c and \d with an argument are carried
// out by the splitter, which holds the statement being typed.
var commands = []command{
	{`\?`, "help", false, "this text (also \\h, ?)"},
	{`\c`, "clear", false, "clear the statement being typed"},
	{`\d`, "delimiter", true, "set the statement delimiter (DELIMITER // too)"},
	{`\e`, "edit", false, "edit the statement being typed, or the last one, in $EDITOR"},
	{`\G`, "ego", false, "run the statement, printing the result vertically"},
	{`\g`, "go", false, "run the statement"},
	{`\n`, "nopager", false, "print results directly again"},
	{`\P`, "pager", true, "pipe each result through a command (default $PAGER, else less)"},
	{`\p`, "print", false, "print the statement being typed"},
	{`\q`, "quit", false, "leave the shell (also exit, Ctrl-D)"},
	{`\R`, "prompt", true, "change the prompt: \\d database, \\u user, \\h host, \\D date, ..."},
	{`\#`, "rehash", false, "reload the names tab completes"},
	{`\.`, "source", true, "run the statements of a file"},
	{`\s`, "status", false, "show the connection's status"},
	{`\T`, "tee", true, "also append everything printed to a file"},
	{`\t`, "notee", false, "stop appending to the tee file"},
	{`\u`, "use", true, "use another database"},
	{`\W`, "warnings", false, "show warnings after every statement"},
	{`\w`, "nowarning", false, "do not show warnings after every statement"},
}

// unsupported are mysql client commands that have no meaning for an
// embedded shell.
var unsupported = map[string]string{
	`\C`: "charset", `\r`: "connect", `\!`: "system", `\x`: "resetconnection", `\S`: "ssl_session_data_print", `\Q`: "query_attributes",
}

// hints answer the commands of other shells a user may type.
var hints = map[string]string{
	".tables": "SHOW TABLES;", ".schema": "SHOW CREATE TABLE t;", ".databases": "SHOW DATABASES;",
	".quit": `exit or \q`, ".exit": `exit or \q`, ".help": `help or \?`, ".read": `source FILE or \. FILE`,
	".mode": `\G (vertical) or sqlshell -t`, ".headers": "sqlshell -N",
	`\dt`: "SHOW TABLES;", `\d+`: "DESCRIBE t;", `\l`: "SHOW DATABASES;", `\dn`: "SHOW DATABASES;", `\di`: "SHOW INDEX FROM t;",
}

func commandByName(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// longCommand reports whether line is a command in its long form, as the
// mysql client reads one: its first word, at the start of a line while no
// statement is being gathered (exit and quit, alone on a line, even then),
// or a line that starts with a dot. It returns the command's backslash
// name and its argument.
func longCommand(line string, pending bool) (name, arg string, ok bool) {
	t := strings.TrimSpace(line)
	if pending {
		switch strings.ToLower(strings.TrimRight(t, "; ")) {
		case "exit", "quit":
			return `\q`, "", true
		}
		return "", "", false
	}
	if t == "?" {
		return `\?`, "", true
	}
	if strings.HasPrefix(t, ".") && len(t) > 1 && t[1] != '.' && !(t[1] >= '0' && t[1] <= '9') {
		word, _, _ := strings.Cut(t, " ")
		return word, "", true
	}
	word, rest, _ := strings.Cut(strings.TrimLeft(line, " \t"), " ")
	word = strings.ToLower(strings.TrimRight(word, "; \t"))
	if word == "exit" {
		return `\q`, "", true
	}
	for _, c := range commands {
		if c.long != word || c.name == `\d` {
			continue
		}
		if c.name != `\R` {
			rest = strings.TrimSpace(rest)
		}
		if c.arg {
			// The argument ends at the line's end; a delimiter after it is
			// dropped, as the mysql client does. A line with more after a
			// delimiter (use db; SELECT 1) is SQL.
			if i := strings.IndexByte(rest, ';'); i >= 0 && strings.TrimSpace(rest[i+1:]) != "" {
				return "", "", false
			}
			if c.name == `\R` {
				return c.name, strings.TrimLeft(rest, " \t"), true // a prompt may end in spaces
			}
			return c.name, strings.TrimSpace(strings.TrimRight(rest, "; ")), true
		}
		if strings.TrimLeft(rest, "; ") != "" && c.name != `\?` {
			return "", "", false
		}
		return c.name, "", true
	}
	return "", "", false
}

// shell runs statements and client commands, from a script or a
// terminal, and holds the client's state: tee file, pager, prompt,
// current database.
type shell struct {
	sess        *session
	engine      *sqlstore.Engine
	p           *printer
	f           format
	stdout      io.Writer
	stderr      io.Writer
	interactive bool
	data        string
	sp          *splitter

	// newCtx returns the context of one statement and its release.
	newCtx func() (context.Context, context.CancelFunc)

	db           string // current database, "" for none
	prompt       string // with mysql's \d-style escapes
	tee          *os.File
	teeName      string
	pager        string
	showWarnings bool
	last         string // the last statement run, for \e
	depth        int    // nested source commands
	quit         bool   // \q, exit or quit was given
	counter      int    // statements run, for the \c prompt escape
	completer    *completer
	history      *history
}

// maxSourceDepth bounds nested source commands, so a file that sources
// itself stops.
const maxSourceDepth = 16

// out is where results go: the terminal or stdout, and the tee file.
func (sh *shell) out() io.Writer {
	if sh.tee != nil {
		return io.MultiWriter(sh.stdout, sh.tee)
	}
	return sh.stdout
}

func (sh *shell) errOut() io.Writer {
	if sh.tee != nil {
		return io.MultiWriter(sh.stderr, sh.tee)
	}
	return sh.stderr
}

// fail prints a client error: with the input line in a script, as the
// mysql client does.
func (sh *shell) fail(line int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !sh.interactive && line > 0 {
		fmt.Fprintf(sh.errOut(), "ERROR at line %d: %s\n", line, msg)
		return
	}
	fmt.Fprintf(sh.errOut(), "ERROR: %s\n", msg)
}

// runAll runs what one input line completed, in order. It reports false
// when the input must stop: a command left the shell, or in a script a
// statement or command failed.
func (sh *shell) runAll(items []statement) bool {
	for _, st := range items {
		ok := true
		if st.term == termCommand {
			name, arg, _ := strings.Cut(st.text, " ")
			ok = sh.command(name, arg, st.line)
		} else {
			ok = sh.statement(st)
		}
		if sh.quit || (!ok && !sh.interactive) {
			return false
		}
	}
	return true
}

// statement runs one statement and prints its result or error.
func (sh *shell) statement(st statement) bool {
	sh.last = st.text
	sh.counter++
	ctx, release := sh.newCtx()
	res, err := sh.sess.run(ctx, st.text)
	release()
	if err != nil {
		sh.printError(err, st)
		return false
	}
	sh.noteDatabase(st.text)
	f := sh.f
	if st.term == termVertical {
		f = formatVertical
	}
	sh.printResult(res, f)
	if sh.showWarnings && res.warnings > 0 {
		sh.printWarnings()
	}
	if sh.completer != nil && !isQuery(st.text) {
		sh.completer.stale()
	}
	return true
}

// printError prints a statement's error the way the mysql client does,
// with the position of a syntax error inside the statement, and at a
// terminal the statement's line with a caret under that position.
func (sh *shell) printError(err error, st statement) {
	line := st.line
	if sh.interactive {
		line = 0
	}
	se, ok := syntaxError(err, st.text)
	if !ok {
		fmt.Fprintln(sh.errOut(), errorLine(err, line))
		return
	}
	fmt.Fprintln(sh.errOut(), se.message(line))
	if sh.interactive {
		fmt.Fprintln(sh.errOut(), se.caret())
	}
}

// printResult prints res, through the pager when one is set.
func (sh *shell) printResult(res *result, f format) {
	if sh.pager == "" {
		sh.p.w = sh.out()
		sh.p.print(res, f)
		return
	}
	var buf bytes.Buffer
	sh.p.w = &buf
	sh.p.print(res, f)
	if sh.tee != nil {
		_, _ = sh.tee.Write(buf.Bytes())
	}
	cmd := exec.Command("/bin/sh", "-c", sh.pager)
	cmd.Stdin = &buf
	cmd.Stdout = sh.stdout
	cmd.Stderr = sh.stderr
	if err := cmd.Run(); err != nil {
		sh.fail(0, "pager %q: %v", sh.pager, err)
	}
}

// printWarnings prints the warnings of the last statement as mysql's \W
// does.
func (sh *shell) printWarnings() {
	ctx, release := sh.newCtx()
	defer release()
	res, err := sh.sess.run(ctx, "SHOW WARNINGS")
	if err != nil {
		return
	}
	for _, row := range res.rows {
		if len(row) == 3 {
			fmt.Fprintf(sh.out(), "%s (Code %s): %s\n", cell(row[0]), cell(row[1]), cell(row[2]))
		}
	}
}

// noteDatabase follows the current database through the statements that
// change it, for the prompt and status, without asking the session (which
// would clear its warnings).
func (sh *shell) noteDatabase(q string) {
	words := strings.Fields(q)
	if len(words) == 2 && strings.EqualFold(words[0], "use") {
		sh.db = unquoteIdent(words[1])
		return
	}
	if len(words) >= 3 && strings.EqualFold(words[0], "drop") && (strings.EqualFold(words[1], "database") || strings.EqualFold(words[1], "schema")) {
		if name := unquoteIdent(words[len(words)-1]); strings.EqualFold(name, sh.db) {
			sh.db = ""
		}
	}
}

func unquoteIdent(s string) string {
	if len(s) >= 2 && s[0] == '`' && s[len(s)-1] == '`' {
		return strings.ReplaceAll(s[1:len(s)-1], "``", "`")
	}
	return s
}

// isQuery reports whether q reads only, so the names completion offers
// stay as they are.
func isQuery(q string) bool {
	w, _, _ := strings.Cut(strings.TrimSpace(q), " ")
	switch strings.ToLower(w) {
	case "select", "show", "describe", "desc", "explain", "with", "table", "values":
		return true
	}
	return false
}

// command carries out one client command; it reports false when the
// command failed.
func (sh *shell) command(name, arg string, line int) bool {
	switch name {
	case `\?`:
		fmt.Fprint(sh.out(), shellHelp())
	case `\q`:
		sh.quit = true
	case `\c`:
		// clear at the start of a line: nothing is being typed.
	case `\g`, `\G`:
		// go or ego at the start of a line: nothing is being typed.
		sh.fail(line, "No query specified")
		return false
	case `\p`:
		fmt.Fprintln(sh.out(), "--------------")
		fmt.Fprintln(sh.out(), strings.TrimSpace(sh.sp.buf.String()))
		fmt.Fprintln(sh.out(), "--------------")
	case `\s`:
		sh.status()
	case `\u`:
		if arg == "" {
			sh.fail(line, "USE must be followed by a database name")
			return false
		}
		db := unquoteIdent(strings.Fields(arg)[0])
		ctx, release := sh.newCtx()
		_, err := sh.sess.run(ctx, "USE "+sqlstore.QuoteIdent(db))
		release()
		if err != nil {
			sh.printError(err, statement{line: line})
			return false
		}
		sh.db = db
		if sh.completer != nil {
			sh.completer.stale()
		}
		if sh.interactive {
			fmt.Fprintln(sh.out(), "Database changed")
		}
	case `\W`:
		sh.showWarnings = true
		fmt.Fprintln(sh.out(), "Show warnings enabled.")
	case `\w`:
		sh.showWarnings = false
		fmt.Fprintln(sh.out(), "Show warnings disabled.")
	case `\T`:
		return sh.startTee(arg, line)
	case `\t`:
		if sh.tee != nil {
			_ = sh.tee.Close()
			sh.tee = nil
		}
		fmt.Fprintln(sh.out(), "Outfile disabled.")
	case `\P`:
		return sh.setPager(arg, line)
	case `\n`:
		sh.pager = ""
		fmt.Fprintln(sh.out(), "PAGER set to stdout")
	case `\R`:
		if arg == "" {
			arg = defaultPrompt
		}
		sh.prompt = arg
		fmt.Fprintf(sh.out(), "PROMPT set to '%s'\n", arg)
	case `\#`:
		if sh.completer != nil {
			sh.completer.stale()
		}
	case `\.`:
		return sh.source(arg, line)
	case `\e`:
		return sh.edit(line)
	case `\d`:
		sh.fail(line, "DELIMITER must be followed by a 'delimiter' character or string")
		return false
	default:
		if long, ok := unsupported[name]; ok {
			sh.fail(line, "'%s' (%s) is a mysql client command sqlshell does not have. Type help for the commands it has.", name, long)
			return false
		}
		hint := "Type help for the commands."
		if h, ok := hints[strings.ToLower(name)]; ok {
			hint = "Try " + h
		}
		sh.fail(line, "Unknown command '%s'. %s", name, hint)
		return false
	}
	return true
}

func shellHelp() string {
	var b strings.Builder
	b.WriteString(`Statements end with ; (or \G to print the result vertically) and may span
several lines. Ctrl-C cancels the running statement, or the statement being
typed. Commands (a long name works at the start of a line):

`)
	for _, c := range commands {
		long := c.long
		if c.arg {
			long += " ARG"
		}
		fmt.Fprintf(&b, "  %-3s %-15s %s\n", c.name, long, c.help)
	}
	b.WriteString(`
SQL: USE db; SHOW DATABASES; SHOW TABLES; DESCRIBE t; SHOW CREATE TABLE t\G
     BEGIN; ... COMMIT; or ROLLBACK;
     EXPLAIN SELECT ...                 the plan as MySQL's table; Extra names
                                        the access path (Strata: MultiGet(...))
     EXPLAIN FORMAT=TREE SELECT ...\G   the iterator tree (also FORMAT=JSON)
     EXPLAIN ANALYZE SELECT ...\G       runs it: rows, loops and times per step
     EXPLAIN FORMAT=DEBUG SELECT ...\G  go-mysql-server's plan with access paths
`)
	return b.String()
}

// status prints the connection's state, as the mysql client's status.
func (sh *shell) status() {
	user, version := "", ""
	ctx, release := sh.newCtx()
	res, err := sh.sess.run(ctx, "SELECT CURRENT_USER(), VERSION()")
	release()
	if err == nil && len(res.rows) == 1 && len(res.rows[0]) == 2 {
		user, version = cell(res.rows[0][0]), cell(res.rows[0][1])
	}
	db := sh.db
	if db == "" {
		db = "(none)"
	}
	pager := "stdout"
	if sh.pager != "" {
		pager = sh.pager
	}
	w := sh.out()
	fmt.Fprintln(w, "--------------")
	fmt.Fprintln(w, "sqlshell, Strata's SQL shell")
	fmt.Fprintln(w)
	if tikvstore.IsAddress(sh.data) {
		fmt.Fprintf(w, "Connection:\t\tTiKV cluster %s\n", sh.data)
	} else {
		fmt.Fprintf(w, "Connection:\t\tembedded, data folder %s\n", sh.data)
	}
	fmt.Fprintf(w, "Current database:\t%s\n", db)
	fmt.Fprintf(w, "Current user:\t\t%s\n", user)
	fmt.Fprintf(w, "Server version:\t\t%s\n", version)
	fmt.Fprintf(w, "Current pager:\t\t%s\n", pager)
	fmt.Fprintf(w, "Using outfile:\t\t'%s'\n", sh.teeName)
	fmt.Fprintf(w, "Using delimiter:\t%s\n", sh.sp.delim)
	fmt.Fprintf(w, "In a transaction:\t%s\n", yesNo(sh.sess.conn.HoldsTransaction()))
	fmt.Fprintln(w, "--------------")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func (sh *shell) startTee(name string, line int) bool {
	if name == "" {
		sh.fail(line, "No outfile specified!")
		return false
	}
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		sh.fail(line, "Can't open outfile: %v", err)
		return false
	}
	if sh.tee != nil {
		_ = sh.tee.Close()
	}
	sh.tee, sh.teeName = f, name
	fmt.Fprintf(sh.out(), "Logging to file '%s'\n", name)
	return true
}

// setPager sets the command each result is piped through; it must exist.
func (sh *shell) setPager(cmd string, line int) bool {
	if cmd == "" {
		cmd = os.Getenv("PAGER")
	}
	if cmd == "" {
		cmd = "less"
	}
	prog, _, _ := strings.Cut(cmd, " ")
	if _, err := exec.LookPath(prog); err != nil {
		sh.fail(line, "pager %q not found; results are printed directly", prog)
		return false
	}
	sh.pager = cmd
	fmt.Fprintf(sh.out(), "PAGER set to '%s'\n", cmd)
	return true
}

// source runs the statements of a file as a script: its first error
// stops it.
func (sh *shell) source(name string, line int) bool {
	if name == "" {
		sh.fail(line, "Usage: \\. <filename> | source <filename>")
		return false
	}
	if sh.depth >= maxSourceDepth {
		sh.fail(line, "source %s: nested more than %d deep", name, maxSourceDepth)
		return false
	}
	f, err := os.Open(name)
	if err != nil {
		sh.fail(line, "Failed to open file '%s', error: %v", name, errors.Unwrap(err))
		return false
	}
	defer f.Close()
	sp, interactive := sh.sp, sh.interactive
	sh.sp, sh.interactive = newSplitter(), false
	sh.depth++
	ok := sh.runScript(f)
	sh.sp, sh.interactive = sp, interactive
	sh.depth--
	return ok
}

// edit opens the statement being typed, or the last one run, in
// $VISUAL or $EDITOR (else vi), and reads the file back as typed input.
func (sh *shell) edit(line int) bool {
	if !sh.interactive {
		sh.fail(line, "\\e works only at a terminal")
		return false
	}
	text := strings.TrimSpace(sh.sp.buf.String())
	if text == "" {
		text = sh.last
	}
	dir, err := os.MkdirTemp("", "sqlshell")
	if err != nil {
		sh.fail(line, "edit: %v", err)
		return false
	}
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "statement.sql")
	if err := os.WriteFile(name, []byte(text+"\n"), 0o600); err != nil {
		sh.fail(line, "edit: %v", err)
		return false
	}
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	cmd := exec.Command("/bin/sh", "-c", editor+` "$1"`, "sh", name)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		sh.fail(line, "edit: %s: %v", editor, err)
		return false
	}
	b, err := os.ReadFile(name)
	if err != nil {
		sh.fail(line, "edit: %v", err)
		return false
	}
	sh.sp.reset()
	edited := strings.TrimRight(string(b), "\n")
	fmt.Fprintln(sh.out(), edited)
	for _, l := range strings.Split(edited, "\n") {
		if !sh.runAll(sh.sp.add(l)) {
			break
		}
	}
	return true
}

// runScript runs the statements and commands of src in order; the first
// failing one stops it, and it reports false then.
func (sh *shell) runScript(src io.Reader) bool {
	r := newLineReader(src)
	for {
		line, err := r.next()
		if len(line) > 0 || err == nil {
			if !sh.runAll(sh.sp.add(line)) {
				return sh.quit
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintf(sh.errOut(), "sqlshell: reading input: %v\n", err)
			return false
		}
	}
	if !sh.runAll(sh.sp.finish()) {
		return sh.quit
	}
	return true
}
