package main

import (
	"bytes"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFilterOutput(t *testing.T) {
	var out bytes.Buffer
	err := filterBench([]string{"-keys_total=60000", "-keys_per_filter=10000", "-queries=40000", "-seed=3"}, &out)
	require.NoError(t, err)
	text := out.String()
	for _, impl := range []string{"Bloom", "Ribbon"} {
		require.Regexp(t, "(?m)^"+impl+` filter, bits_per_key=10.*: \d+ filters, 60000 keys`, text)
	}
	// Every figure line appears once per implementation, in order, with a
	// number.
	labels := []string{
		"Build avg ns/key", "Bits/key stored", "FP rate %", "Single filter net ns/op",
		"Batched, prepared net ns/op", "Batched, unprepared net ns/op", "Random filter net ns/op",
	}
	for _, l := range labels {
		re := regexp.MustCompile("(?m)^" + regexp.QuoteMeta(l) + `: (-?[0-9.]+)$`)
		m := re.FindAllStringSubmatch(text, -1)
		require.Len(t, m, 2, "%q in\n%s", l, text)
		for _, sub := range m {
			_, err := strconv.ParseFloat(sub[1], 64)
			require.NoError(t, err)
		}
	}
	bits := regexp.MustCompile(`(?m)^Bits/key stored: ([0-9.]+)$`).FindAllStringSubmatch(text, -1)
	bloom, _ := strconv.ParseFloat(bits[0][1], 64)
	ribbon, _ := strconv.ParseFloat(bits[1][1], 64)
	require.InDelta(t, 10.0, bloom, 0.1)
	require.InDelta(t, 7.1, ribbon, 0.3)
	require.Contains(t, text, "Ribbon vs Bloom bits/key stored")
}

func TestFilterFlags(t *testing.T) {
	var out bytes.Buffer
	err := filterBench([]string{"-impl=cuckoo", "-keys_total=0", "-bits_per_key=500", "-fp_rate=2"}, &out)
	var ue usageError
	require.ErrorAs(t, err, &ue)
	for _, want := range []string{"-impl=\"cuckoo\"", "-keys_total=0", "-bits_per_key = 500", "-fp_rate = 2"} {
		require.ErrorContains(t, err, want)
	}
	out.Reset()
	err = filterBench([]string{"-impl=ribbon", "-fp_rate=0.02", "-keys_total=3000", "-keys_per_filter=3000", "-queries=3000"}, &out)
	require.NoError(t, err)
	require.Contains(t, out.String(), "Ribbon filter, fp_rate=0.02:")
	require.NotContains(t, out.String(), "Bloom filter")
}

func TestFilterDispatch(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 2, dispatch(nil, &stdout, &stderr))
	require.Contains(t, stderr.String(), "filter ")
	stderr.Reset()
	require.Equal(t, 0, dispatch([]string{"-h"}, &stdout, &stderr))
	require.Contains(t, stdout.String(), "usage: sqlbench <subcommand> [flags]")
	require.Equal(t, 2, dispatch([]string{"nosuch"}, &stdout, &stderr))
	require.Contains(t, stderr.String(), `unknown subcommand "nosuch"`)
	stderr.Reset()
	require.Equal(t, 2, dispatch([]string{"filter", "-keys_total=0"}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "sqlbench filter: -keys_total=0")
	require.Equal(t, 2, dispatch([]string{"filter", "stray"}, &stdout, &stderr))
}
