package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/chzyer/readline"

	"github.com/strata-db/strata/kv"
	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/kvstore"
	"github.com/strata-db/strata/sqlstore/tikvstore"
)

// Exit codes.
const (
	exitOK    = 0
	exitSQL   = 1 // a statement failed
	exitUsage = 2 // bad flags or arguments
	exitOpen  = 3 // the store could not be opened or closed
)

// defaultData is the data folder when neither --data nor $STRATA_DATA is
// given.
const defaultData = "strata-data"

// defaultDB is the database the shell and the server start in; it is
// created when missing.
const defaultDB = "main"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole program, with its streams as arguments so tests can
// drive it; it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "serve" {
		return runServe(args[1:], stdout, stderr)
	}
	if len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fs := flag.NewFlagSet("sqlshell", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	data := fs.String("data", dataDefault(), "the database folder")
	store := fs.String("store", "", "a tikv:// address: the store is that TiKV cluster")
	db := fs.String("db", defaultDB, "the database to start in (created when missing)")
	exec := fs.String("e", "", "run these statements and exit")
	var table, vertical, noHeader bool
	fs.BoolVar(&table, "table", false, "print boxed tables even when not at a terminal")
	fs.BoolVar(&table, "t", false, "short for --table")
	fs.BoolVar(&vertical, "vertical", false, "print every result vertically, as with \\G")
	fs.BoolVar(&vertical, "E", false, "short for --vertical")
	fs.BoolVar(&noHeader, "skip-column-names", false, "no header line in tab-separated output")
	fs.BoolVar(&noHeader, "N", false, "short for --skip-column-names")
	promptFlag := fs.String("prompt", defaultPrompt, "the interactive prompt, with the mysql client's escapes (\\d database, \\u user, ...)")
	localInfile := fs.Bool("local-infile", false, "let LOAD DATA LOCAL INFILE read this machine's files (sets the global local_infile)")
	history := fs.String("history", historyDefault(), "the history file of the interactive shell; empty for none")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "sqlshell: unexpected argument %q\n%s", fs.Arg(0), usage)
		return exitUsage
	}
	if *db == "" {
		// MySQL has no database without a name (ERROR 1102); the store
		// would create one.
		fmt.Fprintf(stderr, "sqlshell: --db: incorrect database name ''\n")
		return exitUsage
	}

	if *store != "" {
		if !tikvstore.IsAddress(*store) {
			fmt.Fprintf(stderr, "sqlshell: --store %q: want a tikv:// address (a folder is --data)\n", *store)
			return exitUsage
		}
		*data = *store
	}
	st, err := openStore(*data, false, log.New(os.Stderr, "strata: ", 0))
	if err != nil {
		fmt.Fprintf(stderr, "sqlshell: %v\n", err)
		return exitOpen
	}
	engine := st.OpenEngine()
	sess := newSession(engine)
	code := func() int {
		if err := sess.conn.UseDatabase(context.Background(), *db); err != nil {
			fmt.Fprintln(stderr, errorLine(err, 0))
			return exitSQL
		}
		if *localInfile {
			// The shell is both the client and the server of LOAD DATA
			// LOCAL: the server's variable is the one switch there is.
			if _, err := sess.conn.Exec(context.Background(), "SET GLOBAL local_infile = 1"); err != nil {
				fmt.Fprintln(stderr, errorLine(err, 0))
				return exitSQL
			}
		}

		interactive := *exec == "" && isTerminal(stdin)
		p := &printer{w: stdout, noHeader: noHeader}
		f := formatTabs
		if table || (isTerminal(stdout) && (interactive || *exec != "")) {
			f = formatTable
		}
		if vertical {
			f = formatVertical
		}
		sh := &shell{
			sess: sess, engine: engine, p: p, f: f, stdout: stdout, stderr: stderr,
			data: *data, sp: newSplitter(), db: *db, prompt: *promptFlag,
		}
		defer func() {
			if sh.tee != nil {
				_ = sh.tee.Close()
			}
		}()
		if interactive {
			p.interactive = true
			sh.interactive = true
			return runInteractive(sh, *history, stdin, stdout, stderr)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		sh.newCtx = func() (context.Context, context.CancelFunc) { return ctx, func() {} }
		src := stdin
		if *exec != "" {
			src = strings.NewReader(*exec)
		}
		if !sh.runScript(src) {
			return exitSQL
		}
		return exitOK
	}()
	sess.close()
	if err := engine.Close(); err != nil {
		fmt.Fprintf(stderr, "sqlshell: %v\n", err)
		if code == exitOK {
			code = exitOpen
		}
	}
	return code
}

const usage = `Usage:
  sqlshell [flags]             an interactive shell (or run SQL piped on stdin)
  sqlshell -e "SQL; SQL" [flags]
  sqlshell serve [flags]       a MySQL-protocol server (sqlshell serve -h)

Flags:
  --data DIR            the database folder (default $STRATA_DATA, else ./strata-data)
  --store tikv://PD:2379,.../?keyspace=NAME
                        use a TiKV cluster instead of the folder (tikv://mock: an
                        in-process mock cluster that keeps nothing)
  --db NAME             the database to start in, created when missing (default main)
  -e SQL                run the statements and exit
  -t, --table           boxed tables even when output is not a terminal
  -E, --vertical        every result vertically, as with \G
  -N, --skip-column-names
                        no header line in tab-separated output
  --local-infile        LOAD DATA LOCAL INFILE may read this machine's files
  --history FILE        history of the interactive shell (default ~/.strata_history),
                        created 0600; statements with IDENTIFIED or PASSWORD are not kept
  --prompt TEXT         the prompt, with the mysql client's escapes: \d database,
                        \u user, \h host, \D date, \R:\m:\s time, \c counter, \_ space
                        (default "strata [\d]> ")

SQL piped on stdin runs as a script; the first error stops it with exit
code 1 and the failing line. Output that is not a terminal is tab-separated.
The shell takes the mysql client's commands (\? lists them): source FILE,
status, use DB, tee FILE, pager CMD, \e, \W, \G, \q, ...
`

func dataDefault() string {
	if d := os.Getenv("STRATA_DATA"); d != "" {
		return d
	}
	return defaultData
}

func historyDefault() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".strata_history")
}

// openStore opens (creating) the store in dir, with the engine's notices
// going to out.
func openStore(dir string, noSync bool, out *log.Logger) (*sqlstore.Store, error) {
	if tikvstore.IsAddress(dir) {
		st, err := tikvstore.Open(dir, nil)
		if err != nil {
			return nil, fmt.Errorf("opening %s: %w", dir, err)
		}
		return st, nil
	}
	st, _, err := kvstore.OpenDir(dir, &kvstore.Options{NoSync: noSync, KV: &kv.Options{Logger: kvstore.NoticeLog(out)}})
	return st, err
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && readline.IsTerminal(int(f.Fd()))
}
