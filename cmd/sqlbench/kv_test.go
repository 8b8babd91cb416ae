package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// kvReportLine matches a report line and captures the name, operations,
// MB/s (optional) and message.
var kvReportLine = regexp.MustCompile(`(?m)^(\S+)\s* :\s+[\d.]+ micros/op \d+ ops/sec [\d.]+ seconds (\d+) operations;(?: +([\d.]+) MB/s)?(?: (.*))?$`)

// runKVForTest runs the subcommand and returns stdout, stderr and, per
// workload, its report line's captures.
func runKVForTest(t *testing.T, args ...string) (string, string, map[string][]string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	require.NoError(t, kvMain(args, &stdout, &stderr, nil), "stderr:\n%s", stderr.String())
	lines := map[string][]string{}
	for _, m := range kvReportLine.FindAllStringSubmatch(stdout.String(), -1) {
		lines[m[1]] = m
	}
	return stdout.String(), stderr.String(), lines
}

func TestKVRun(t *testing.T) {
	dir := t.TempDir()
	out, errOut, lines := runKVForTest(t, "-db="+dir, "-num=3000", "-reads=1000", "-seed=7", "-seek_nexts=5",
		"-benchmarks=fillseq,readrandom,seekrandom,readseq,flush,compact,stats,overwrite,fillrandom",
		"-statistics", "-histogram", "-value_size=200", "-batch_size=7")

	require.Contains(t, out, "Keys:       16 bytes each (+ 0 bytes user-defined timestamp)\n")
	require.Contains(t, out, "Values:     200 bytes each (100 bytes after compression)\n")
	require.Contains(t, out, "Entries:    3000\n")
	require.Contains(t, out, "Compression: Snappy\n")
	require.Contains(t, out, "DB path: ["+dir+"]\n")
	require.Contains(t, errOut, "Engine:     strata kv\n")

	for _, name := range []string{"fillseq", "readrandom", "seekrandom", "readseq", "compact", "overwrite", "fillrandom"} {
		require.Contains(t, lines, name, "report line of %s in\n%s", name, out)
	}
	ops := func(name string) int {
		n, err := strconv.Atoi(lines[name][2])
		require.NoError(t, err)
		return n
	}
	require.Equal(t, 3000, ops("fillseq"), "every key, with a short last batch")
	require.Equal(t, 1000, ops("readrandom"))
	require.Equal(t, "(1000 of 1000 found)", lines["readrandom"][4], "after fillseq every key exists")
	require.Equal(t, "(1000 of 1000 found)", lines["seekrandom"][4])
	require.Equal(t, 1000, ops("readseq"), "-reads bounds readseq")
	// The CPU line follows the report lines of the reads that pass entries:
	// one per readseq key, -seek_nexts per seekrandom seek.
	require.Regexp(t, `(?m)^readseq .*\ncpu/entry    : +[\d.]+ ns \([\d.]+ s of process CPU for 1000 entries\)$`, out)
	require.Regexp(t, `(?m)^cpu/entry    : +[\d.]+ ns \([\d.]+ s of process CPU for 5000 entries\)$`, out)
	require.NotRegexp(t, `(?m)^fillseq .*\ncpu/entry`, out, "a fill counts no entries")
	require.Equal(t, 1, ops("compact"))
	require.Empty(t, lines["compact"][3], "compact counts no bytes")
	// MB/s agrees with the bytes counted: fillseq moves key + value.
	require.NotEmpty(t, lines["fillseq"][3])

	// db_bench's found messages end with a newline: an empty line follows.
	require.Regexp(t, `(?m)^readrandom .*found\)\n\nMicroseconds per read:\n`, out)
	require.Regexp(t, `(?m)^Microseconds per seek:\nCount: 1000 `, out)
	require.Regexp(t, `(?m)^Microseconds per write:\nCount: 429 `, out, "fillseq: one sample per batch of 7")
	require.Contains(t, out, "level  files")
	require.Contains(t, out, "STATISTICS:\n")
	require.Regexp(t, `(?m)^get.calls COUNT : 1000$`, out)
	require.Regexp(t, `(?m)^iter.seeks COUNT : \d+$`, out)
	require.Regexp(t, `(?m)^compaction.count COUNT : [1-9]\d*$`, out)
	require.Regexp(t, `(?m)^commits COUNT : `+strconv.Itoa(3000/7+1+2*(3000/7+1))+`$`, out,
		"counters of the databases replaced by fills are kept")

	// The database survives for -use_existing_db; a fill is skipped there.
	out, errOut, lines = runKVForTest(t, "-db="+dir, "-use_existing_db", "-num=3000", "-reads=500",
		"-benchmarks=fillseq,readrandom,readseq", "-cold", "-seed=1")
	require.Contains(t, out, "fillseq      : skipped (-use_existing_db is true)\n")
	require.Equal(t, "500", lines["readrandom"][2])
	require.Regexp(t, `dropped the OS cache of [1-9]\d* table files`, errOut)
	require.NotContains(t, out, "Set seed")
}

func TestKVRunSameSeedSameKeys(t *testing.T) {
	run := func(seed string) string {
		_, _, lines := runKVForTest(t, "-num=2000", "-seed="+seed, "-benchmarks=fillrandom,readrandom")
		return lines["readrandom"][4]
	}
	a, b, c := run("42"), run("42"), run("43")
	require.Equal(t, a, b)
	require.Regexp(t, `^\(\d+ of 2000 found\)$`, a)
	// fillrandom writes about 1-1/e of the keys; another seed finds another number.
	require.NotEqual(t, a, c)
}

func TestKVRunTempDirRemoved(t *testing.T) {
	out, _, _ := runKVForTest(t, "-num=100", "-benchmarks=fillseq")
	m := regexp.MustCompile(`DB path: \[(.*)\]`).FindStringSubmatch(out)
	require.NotNil(t, m)
	require.Contains(t, out, "Set seed to ")
	_, err := os.Stat(m[1])
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestKVRunKeepsOtherFiles(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(mine, []byte("keep"), 0o644))
	runKVForTest(t, "-db="+dir, "-num=100", "-benchmarks=fillseq,fillseq")
	_, err := os.Stat(mine)
	require.NoError(t, err, "a fresh database removes only the engine's files")
}

func TestKVRunErrors(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := kvMain([]string{"-db=" + t.TempDir(), "-use_existing_db", "-benchmarks=readrandom"}, &stdout, &stderr, nil)
	require.ErrorContains(t, err, "opening the database")

	require.Equal(t, 2, dispatch([]string{"kv", "-num=0"}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "sqlbench kv: -num=0: want at least 1")
}

// kvCounterLine returns the value of a counter in a statistics block of
// out that starts with title.
func kvCounterLine(t *testing.T, out, title, name string) int {
	t.Helper()
	i := strings.Index(out, title+"\n")
	require.GreaterOrEqual(t, i, 0, "no %q in\n%s", title, out)
	block, _, _ := strings.Cut(out[i:], "\n\n")
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` COUNT : (\d+)$`).FindStringSubmatch(block)
	require.NotNil(t, m, "no %s in\n%s", name, block)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

func TestKVRunReadPath(t *testing.T) {
	dir := t.TempDir()
	runKVForTest(t, "-db="+dir, "-num=5000", "-seed=3", "-benchmarks=fillseq,compact")
	for _, tc := range []struct {
		name string
		args []string
		// want: the report line's operations and message; counters in
		// the STATISTICS block.
		ops      int
		msg      string
		counters map[string]int
	}{
		{
			name: "MultiGet", args: []string{"-benchmarks=multireadrandom", "-reads=1000", "-batch_size=8"},
			ops: 1000, msg: "(1000 of 1000 found)",
			counters: map[string]int{"multiget.keys": 1000, "multiget.keys.found": 1000, "get.calls": 0},
		},
		{
			name: "MultiGet, strided, short last batch", args: []string{"-benchmarks=multireadrandom", "-reads=100", "-batch_size=32", "-multiread_stride=4"},
			ops: 100, msg: "(100 of 100 found)",
			counters: map[string]int{"multiget.keys": 100, "multiget.batches": 4},
		},
		{
			name: "Gets", args: []string{"-benchmarks=multireadrandom", "-reads=1000", "-batch_size=8", "-multiread_batched=false"},
			ops: 1000, msg: "(1000 of 1000 found)",
			counters: map[string]int{"multiget.keys": 0, "get.calls": 1000},
		},
		{
			name: "prepared multiscan", args: []string{"-benchmarks=multiscan", "-reads=300", "-multiscan_size=3", "-seek_nexts=10", "-multiscan_stride=5"},
			ops: 10, msg: "(multiscans:10)",
			counters: map[string]int{"multiscan.prepares": 10, "multiscan.ranges": 30, "iter.seeks": 30},
		},
		{
			name: "multiscan with an iterator per range", args: []string{"-benchmarks=multiscan", "-reads=300", "-multiscan_size=3",
				"-seek_nexts=10", "-multiscan_prepare=false", "-readahead_size=65536", "-async_io=1"},
			ops: 10, msg: "(multiscans:10)",
			counters: map[string]int{"multiscan.prepares": 0, "iter.seeks": 30},
		},
		{
			name: "seekrandom with explicit readahead", args: []string{"-benchmarks=seekrandom", "-reads=50", "-seek_nexts=200", "-readahead_size=262144"},
			ops: 50, msg: "(50 of 50 found)",
			counters: map[string]int{"iter.seeks": 50},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-db=" + dir, "-use_existing_db", "-num=5000", "-seed=5", "-statistics"}, tc.args...)
			out, errOut, lines := runKVForTest(t, args...)
			name := strings.TrimPrefix(tc.args[0], "-benchmarks=")
			require.Contains(t, lines, name, out)
			require.Equal(t, strconv.Itoa(tc.ops), lines[name][2])
			require.Equal(t, tc.msg, lines[name][4])
			for c, want := range tc.counters {
				require.Equal(t, want, kvCounterLine(t, out, "STATISTICS:", c), c)
			}
			if name == "multireadrandom" {
				require.Contains(t, errOut, "entries_per_batch = ")
				require.NotEmpty(t, lines[name][3], "MB/s of the keys found")
			} else if name == "multiscan" {
				require.Empty(t, lines[name][3], "multiscan counts no bytes")
			}
		})
	}
}

func TestKVRunAB(t *testing.T) {
	dir := t.TempDir()
	// 40 seeks of 1000 keys; one multiscan of 10 ranges of 1000 keys.
	out, errOut, _ := runKVForTest(t, "-db="+dir, "-num=40000", "-seed=3", "-value_size=400", "-cache_size=65536",
		"-benchmarks=fillseq,compact,seekrandom,multiscan", "-reads=40", "-seek_nexts=1000", "-readahead_size=1048576",
		"-ab=readahead_size", "-cold", "-statistics", "-histogram")

	require.Len(t, kvReportLine.FindAllString(out, -1), 2+2*2, "fillseq and compact once, each read workload twice:\n%s", out)
	// seekrandom counts bytes and entries (MB/s and CPU per entry), multiscan neither.
	for _, tc := range []struct{ w, mb, cpu string }{
		{"seekrandom", ` MB/s x[\d.]+,`, `, cpu/entry x[\d.]+ \([\d.]+ vs [\d.]+ ns\)`},
		{"multiscan", "", ""},
	} {
		re := `(?m)^` + tc.w + ` .*\n(?:.*\n)*?` + tc.w + ` .*\n(?:.*\n)*?` +
			`A/B readahead_size=1048576 vs 0: ops/sec x[\d.]+,` + tc.mb + ` file.read.count x[\d.-]+ \(\d+ vs \d+\), per op x[\d.-]+ \([\d.]+ vs [\d.]+\)` + tc.cpu + `\n`
		require.Regexp(t, re, out)
	}
	// Each side's counters cover its run alone.
	titleA, titleB := "STATISTICS (A: readahead_size=1048576):", "STATISTICS (B: readahead_size=0):"
	require.Equal(t, 40, kvCounterLine(t, out, titleA, "iter.seeks"))
	require.Equal(t, 40, kvCounterLine(t, out, titleB, "iter.seeks"))
	a := kvCounterLine(t, out, titleA, "file.read.count")
	b := kvCounterLine(t, out, titleB, "file.read.count")
	require.Less(t, a, b, "1 MiB of readahead reads a seek's 200 KiB in fewer calls than automatic readahead")
	m := regexp.MustCompile(`file.read.count x[\d.]+ \((\d+) vs (\d+)\)`).FindStringSubmatch(out)
	require.Equal(t, []string{strconv.Itoa(a), strconv.Itoa(b)}, m[1:], "the ratio line and the blocks agree")
	// Cold before every run, and the totals at the end cover every run.
	require.Len(t, regexp.MustCompile(`dropped the OS cache of [1-9]\d* table files`).FindAllString(errOut, -1), 2*2,
		"once before each side; the fill and the compaction found no tables")
	require.Equal(t, 2*40+2*10, kvCounterLine(t, out, "STATISTICS:", "iter.seeks"))
	require.Equal(t, 2, kvCounterLine(t, out, "STATISTICS:", "multiscan.prepares"))
}

func TestKVRunABReopens(t *testing.T) {
	// Without a log, the memtable is flushed before each reopen: both sides
	// find every key.
	out, _, _ := runKVForTest(t, "-num=3000", "-seed=3", "-disable_wal", "-benchmarks=fillseq,multireadrandom",
		"-batch_size=16", "-reads=500", "-ab=multiread_batched")
	require.Regexp(t, `(?m)^multireadrandom .*\(500 of 500 found\)\n(?:.*\n)*?multireadrandom .*\(500 of 500 found\)\n`+
		`A/B multiread_batched=true vs false: ops/sec x[\d.]+, MB/s x[\d.]+, file.read.count `, out)

	// Direct reads on one side, then the flags' setting again.
	var stdout, stderr bytes.Buffer
	err := kvMain([]string{"-db=" + t.TempDir(), "-num=3000", "-seed=3", "-benchmarks=fillseq,compact,readrandom,readrandom",
		"-reads=200", "-ab=use_direct_reads"}, &stdout, &stderr, nil)
	if err != nil && strings.Contains(err.Error(), "direct I/O is not supported") {
		t.Skipf("no direct I/O on this filesystem: %v", err)
	}
	require.NoError(t, err, stderr.String())
	require.Len(t, regexp.MustCompile(`(?m)^A/B use_direct_reads=false vs true: `).FindAllString(stdout.String(), -1), 2)
	require.Len(t, regexp.MustCompile(`(?m)^readrandom .*\(200 of 200 found\)`).FindAllString(stdout.String(), -1), 4)
}

func TestKVRunCompactDuringReads(t *testing.T) {
	dir := t.TempDir()
	out, errOut, lines := runKVForTest(t, "-db="+dir, "-num=20000", "-reads=200", "-seed=5", "-seek_nexts=100",
		"-benchmarks=fillseq,seekrandom", "-compact_during_reads", "-statistics")
	require.Contains(t, lines, "seekrandom", out)
	require.Equal(t, "(200 of 200 found)", lines["seekrandom"][4], "compactions under the reads change no answer")
	m := regexp.MustCompile(`\.\.\. (\d+) full compactions finished during the run`).FindAllStringSubmatch(errOut, -1)
	require.Len(t, m, 1, "once, for the read workload alone:\n%s", errOut)
	n, err := strconv.Atoi(m[0][1])
	require.NoError(t, err)
	require.GreaterOrEqual(t, kvCounterLine(t, out, "STATISTICS:", "compaction.count"), n+1,
		"every compaction that finished, and the last one, waited for after the run")
}
