package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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
