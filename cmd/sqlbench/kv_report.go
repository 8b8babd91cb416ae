package main

// Output of the kv subcommand, line for line in db_bench's format, so that
// tools that read db_bench output read ours:
//
//	Keys:       16 bytes each (+ 0 bytes user-defined timestamp)
//	Values:     100 bytes each (50 bytes after compression)
//	Entries:    1000000
//	RawSize:    110.6 MB (estimated)
//	FileSize:   62.9 MB (estimated)
//	Compression: Snappy
//	------------------------------------------------
//	DB path: [/tmp/sqlbench-kv-123]
//	fillseq      :       2.531 micros/op 395094 ops/sec 2.531 seconds 1000000 operations;   43.7 MB/s
//	DB path: [/tmp/sqlbench-kv-123]
//	readrandom   :       3.113 micros/op 321234 ops/sec 3.113 seconds 1000000 operations;   35.5 MB/s (1000000 of 1000000 found)
//
// micros/op is the threads' summed running time per operation (a
// per-thread latency); ops/sec and MB/s use the wall-clock time from the
// first thread's start to the last one's end; MB/s (MiB, in fact) appears
// only when the workload counted bytes. The environment (engine, date, CPU)
// goes to standard error, as db_bench's does.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// printKVEnvironment writes the engine, the date and the CPU.
func printKVEnvironment(w io.Writer, engine string) {
	fmt.Fprintf(w, "Engine:     %s\n", engine)
	fmt.Fprintf(w, "Date:       %s\n", time.Now().Format(time.ANSIC))
	if cpus, model, cache := kvCPUInfo(); cpus > 0 {
		fmt.Fprintf(w, "CPU:        %d * %s\n", cpus, model)
		fmt.Fprintf(w, "CPUCache:   %s\n", cache)
	}
}

// kvCPUInfo reads the number of CPUs, their model and cache size from
// /proc/cpuinfo; zero values where it is not available.
func kvCPUInfo() (cpus int, model, cache string) {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return 0, "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			cpus++
			model = strings.TrimSpace(v)
		case "cache size":
			cache = strings.TrimSpace(v)
		}
	}
	return cpus, model, cache
}

// printKVHeader writes the header that precedes the runs.
func printKVHeader(w io.Writer, c *kvConfig) {
	fmt.Fprint(w, formatKVHeader(c))
}

// formatKVHeader returns the header: key and value sizes, entries, and the
// estimated raw and compressed sizes of the data.
func formatKVHeader(c *kvConfig) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Keys:       %d bytes each (+ 0 bytes user-defined timestamp)\n", c.keySize)
	fmt.Fprintf(&b, "Values:     %d bytes each (%d bytes after compression)\n",
		c.valueSize, int(float64(c.valueSize)*c.compressionRatio+0.5))
	fmt.Fprintf(&b, "Entries:    %d\n", c.num)
	fmt.Fprintf(&b, "RawSize:    %.1f MB (estimated)\n", float64(int64(c.keySize+c.valueSize)*c.num)/1048576.0)
	fmt.Fprintf(&b, "FileSize:   %.1f MB (estimated)\n",
		(float64(c.keySize)+float64(c.valueSize)*c.compressionRatio)*float64(c.num)/1048576.0)
	fmt.Fprintf(&b, "Compression: %s\n", kvCompressionNames[c.compression])
	b.WriteString("------------------------------------------------\n")
	return b.String()
}

// printKVResult writes a run's report line and, with -histogram, its
// latency block.
func printKVResult(w io.Writer, r *kvResult) {
	fmt.Fprint(w, formatKVResult(r))
	fmt.Fprint(w, formatKVCPU(r))
	if r.hist != nil {
		fmt.Fprintf(w, "Microseconds per %s:\n%s\n", r.op, r.hist)
	}
}

// formatKVResult returns the report line of a run:
//
//	name : X micros/op Y ops/sec Z seconds N operations;[ W MB/s][ message]
func formatKVResult(r *kvResult) string {
	ops := max(r.ops, 1) // as db_bench, a workload that counted nothing did one op
	elapsed := max(r.elapsed.Seconds(), 1e-9)
	var extra string
	if r.bytes > 0 {
		extra = fmt.Sprintf("%6.1f MB/s", float64(r.bytes)/1048576.0/elapsed)
	}
	if r.msg != "" {
		if extra != "" {
			extra += " "
		}
		extra += r.msg
	}
	if extra != "" {
		extra = " " + extra
	}
	return fmt.Sprintf("%-12s : %11.3f micros/op %d ops/sec %.3f seconds %d operations;%s\n",
		r.name, r.busy.Seconds()*1e6/float64(ops), int64(float64(ops)/elapsed), elapsed, ops, extra)
}

// formatKVCPU returns, for a run that counted entries, the process's CPU
// time per entry, which the machine's other load moves far less than
// ops/sec (the only line db_bench lacks):
//
//	cpu/entry    :     123.4 ns (1.234 s of process CPU for 10000000 entries)
//
// It is empty for a run that counted no entries or read no CPU time.
func formatKVCPU(r *kvResult) string {
	if r.entries <= 0 || r.cpu <= 0 {
		return ""
	}
	return fmt.Sprintf("%-12s : %9.1f ns (%.3f s of process CPU for %d entries)\n",
		"cpu/entry", float64(r.cpu.Nanoseconds())/float64(r.entries), r.cpu.Seconds(), r.entries)
}

// printKVStatistics writes the counters, one "name COUNT : value" line
// each, after a "STATISTICS:" line and followed by an empty line.
func printKVStatistics(w io.Writer, counters []kvCounter) {
	printKVStatisticsTitled(w, "STATISTICS:", counters)
}
