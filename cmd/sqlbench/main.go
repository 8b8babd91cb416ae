// Command sqlbench runs Strata's benchmarks: db_bench-style engine
// workloads, filter workloads and sysbench-style SQL workloads, each a
// subcommand with its own flags:
//
//	sqlbench <subcommand> [flags]
//	sqlbench                 list the subcommands
//	sqlbench <subcommand> -h list a subcommand's flags
//
// Each subcommand lives in its own file and registers itself from an init
// function with register; this file only dispatches.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
)

// subcommand is one benchmark program.
type subcommand struct {
	name string
	// desc is a one-line description for the subcommand list.
	desc string
	// run parses args (everything after the subcommand's name) with its
	// own flag.FlagSet, runs the benchmark and reports to standard output.
	// A flag.ErrHelp return (from -h) is not a failure.
	run func(args []string) error
}

var subcommands = map[string]subcommand{}

// register adds a subcommand. It is called from init functions; a
// duplicate name is a programming error and panics at start-up.
func register(name, desc string, run func(args []string) error) {
	if _, dup := subcommands[name]; dup {
		panic("sqlbench: subcommand registered twice: " + name)
	}
	subcommands[name] = subcommand{name: name, desc: desc, run: run}
}

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

// dispatch runs the subcommand named by args[0] and returns the exit code:
// 0 on success or help, 1 when the benchmark fails, 2 on a usage error.
func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	}
	sc, ok := subcommands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "sqlbench: unknown subcommand %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	if err := sc.run(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "sqlbench %s: %v\n", sc.name, err)
		var ue usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
}

// usage lists the subcommands, sorted by name.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: sqlbench <subcommand> [flags]")
	fmt.Fprintln(w, "\nsubcommands:")
	names := make([]string, 0, len(subcommands))
	for name := range subcommands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-10s %s\n", name, subcommands[name].desc)
	}
	fmt.Fprintln(w, "\nRun 'sqlbench <subcommand> -h' for a subcommand's flags.")
}

// usageError marks a bad command line: dispatch exits with status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// parseFlags parses a subcommand's arguments with fs, which should use
// flag.ContinueOnError. A bad flag or a stray argument becomes a
// usageError; -h returns flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	return nil
}
