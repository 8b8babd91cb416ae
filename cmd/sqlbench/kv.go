package main

// The kv subcommand runs db_bench-style workloads against the kv engine:
//
//	sqlbench kv -benchmarks=fillseq,readrandom,seekrandom -num=1000000 -seek_nexts=10
//
// It takes db_bench's flag names and defaults (see kv_flags.go), generates
// the same keys and values (kv_keys.go, kv_rand.go), runs the workloads of
// -benchmarks in order against one database (kv_workload.go, kv_runner.go)
// and prints db_bench's lines (kv_report.go). Fills start from an empty
// database; the other workloads use what the previous ones left. The
// database lives in -db, or in a temporary directory removed at exit.
//
// On a terminal, a progress bar on standard error follows each workload
// (internal/meter). -cold drops the OS page cache of the tables before each
// workload; -statistics prints the engine's counters at the end; -histogram
// prints latency percentiles after each report line; -cpuprofile writes a
// CPU profile of the runs.
//
// The workloads see the engine only through kvEngine (kv_engine.go), which
// is also where new engine capabilities are added for new workloads.

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/strata-db/strata/cmd/sqlbench/internal/meter"
)

func init() {
	register("kv", "db_bench-style engine workloads: fills, point reads, scans, seeks", runKV)
}

func runKV(args []string) error {
	var progress io.Writer
	if meter.IsTerminal(os.Stderr) {
		progress = os.Stderr
	}
	return kvMain(args, os.Stdout, os.Stderr, progress)
}

// kvMain runs the kv subcommand with the given arguments, writing reports
// to stdout, the environment and notices to stderr, and progress bars to
// progress (nil for none).
func kvMain(args []string, stdout, stderr, progress io.Writer) (err error) {
	cfg, err := parseKVFlags(args, stdout)
	if err != nil {
		return err
	}
	b, err := newKVBench(cfg, stdout, stderr, progress)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := b.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if cfg.cpuProfile != "" {
		stop, err := startKVCPUProfile(cfg.cpuProfile)
		if err != nil {
			return err
		}
		defer func() {
			if perr := stop(); perr != nil && err == nil {
				err = perr
			}
		}()
	}
	return b.runAll()
}

// startKVCPUProfile starts a CPU profile written to path; the returned
// function stops it and closes the file.
func startKVCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		return nil
	}, nil
}
