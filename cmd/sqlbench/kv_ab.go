package main

// The A/B mode. -ab=flag runs each read workload of -benchmarks twice
// against the same database in one process: side A with the flags as
// given, then side B with that one flag changed, and prints both report
// lines and their ratios, A over B:
//
//	seekrandom   :   31520.413 micros/op 31 ops/sec 20.017 seconds 635 operations;  189.3 MB/s (635 of 635 found)
//	seekrandom   :   41203.760 micros/op 24 ops/sec 20.023 seconds 486 operations;  144.7 MB/s (486 of 486 found)
//	A/B readahead_size=1048576 vs 0: ops/sec x1.31, MB/s x1.31, file.read.count x0.027 (4120 vs 152611), per op x0.020 (6.49 vs 314)
//
// B's value is -ab_value when it is given; otherwise a boolean flag is
// flipped and -readahead_size becomes 0. Before each side the database is
// closed and reopened with an empty block cache (and with the side's
// -use_direct_reads), and with -cold the OS cache of its tables is dropped,
// so that both sides start equally cold. file.read.count is the engine's
// read calls to table files during the side's run alone, in all and per
// operation (under -duration the faster side does more operations, so the
// totals alone understate what each operation saves); MB/s is left out
// when the workload counts no bytes. With -statistics, each side's counters
// follow the ratio line. Workloads that write run once, as without -ab.

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// kvABFlag is a flag the A/B mode can change between its sides.
type kvABFlag struct {
	name string
	// field returns the setting in a run: a *bool or an *int64.
	field func(r *kvRun) any
	// min is the least value of an integer setting.
	min int64
}

// kvABFlags are the flags -ab accepts.
var kvABFlags = []*kvABFlag{
	{name: "readahead_size", field: func(r *kvRun) any { return &r.iter.readaheadSize }, min: -1},
	{name: "async_io", field: func(r *kvRun) any { return &r.iter.asyncIO }},
	{name: "fill_cache", field: func(r *kvRun) any { return &r.iter.fillCache }},
	{name: "use_direct_reads", field: func(r *kvRun) any { return &r.open.directReads }},
	{name: "mmap_read", field: func(r *kvRun) any { return &r.open.mmapRead }},
	{name: "io_uring", field: func(r *kvRun) any { return &r.open.ioUring }},
	{name: "multiread_batched", field: func(r *kvRun) any { return &r.multiReadBatched }},
	{name: "multiscan_prepare", field: func(r *kvRun) any { return &r.multiScanPrepare }},
	{name: "multiscan_coalesce", field: func(r *kvRun) any { return &r.iter.coalesceThreshold }, min: -1},
	{name: "compact_during_reads", field: func(r *kvRun) any { return &r.compactDuring }},
}

// kvABFlagNames returns the names -ab accepts, comma-separated.
func kvABFlagNames() string {
	names := make([]string, len(kvABFlags))
	for i, f := range kvABFlags {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}

// get returns the setting in r as the flag would be written.
func (f *kvABFlag) get(r *kvRun) string {
	switch p := f.field(r).(type) {
	case *bool:
		return strconv.FormatBool(*p)
	case *int64:
		return strconv.FormatInt(*p, 10)
	}
	panic("sqlbench: kvABFlag " + f.name + " has a setting of an unknown type")
}

// set sets the setting in r from a flag value.
func (f *kvABFlag) set(r *kvRun, v string) error {
	switch p := f.field(r).(type) {
	case *bool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("-ab_value=%q: want a boolean (0, 1, false or true) for -%s", v, f.name)
		}
		*p = b
	case *int64:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < f.min {
			return fmt.Errorf("-ab_value=%q: want an integer of at least %d for -%s", v, f.min, f.name)
		}
		*p = n
	}
	return nil
}

// toggle sets the setting in r to B's default: the other boolean, or 0.
func (f *kvABFlag) toggle(r *kvRun) {
	switch p := f.field(r).(type) {
	case *bool:
		*p = !*p
	case *int64:
		*p = 0
	}
}

// kvAB is a checked -ab and -ab_value.
type kvAB struct {
	flag *kvABFlag
	// value is B's value; "" (with hasValue false) for the toggle.
	value    string
	hasValue bool
}

// sides returns the runs of the two sides of r: A is r, B is r with the
// flag changed.
func (ab *kvAB) sides(r kvRun) (a, b kvRun, err error) {
	a, b = r, r
	if ab.hasValue {
		if err := ab.flag.set(&b, ab.value); err != nil {
			return a, b, err
		}
	} else {
		ab.flag.toggle(&b)
	}
	if va := ab.flag.get(&a); va == ab.flag.get(&b) {
		return a, b, fmt.Errorf("-ab=%s: A and B are both %s (set -%s for A, or -ab_value for B)",
			ab.flag.name, va, ab.flag.name)
	}
	return a, b, nil
}

// parseKVAB checks -ab and -ab_value against the rest of the configuration
// and returns the A/B mode (nil without -ab), appending problems to bad.
func parseKVAB(c *kvConfig, name, value string, hasValue bool, bad []string) (*kvAB, []string) {
	name = strings.TrimLeft(strings.ToLower(strings.TrimSpace(name)), "-")
	if name == "" {
		if hasValue {
			bad = append(bad, "-ab_value needs -ab (the flag it is a value of)")
		}
		return nil, bad
	}
	ab := &kvAB{value: strings.TrimSpace(value), hasValue: hasValue}
	for _, f := range kvABFlags {
		if f.name == name {
			ab.flag = f
		}
	}
	if ab.flag == nil {
		return nil, append(bad, fmt.Sprintf("-ab=%q: want one of %s", name, kvABFlagNames()))
	}
	var read *kvWorkload
	for _, b := range c.benchmarks {
		if w := kvWorkloadByName(b); w.readOnly && read == nil {
			read = w
		}
	}
	if read == nil && len(c.benchmarks) > 0 {
		var names []string
		for _, w := range kvWorkloads {
			if w.readOnly {
				names = append(names, w.name)
			}
		}
		bad = append(bad, fmt.Sprintf("-ab=%s compares read workloads, and -benchmarks has none (want one of %s)",
			name, strings.Join(names, ", ")))
	}
	if read == nil {
		read = kvWorkloadByName("readrandom")
	}
	if _, _, err := ab.sides(newKVRun(c, read)); err != nil {
		return nil, append(bad, err.Error())
	}
	return ab, bad
}

// kvABSide is the outcome of one side.
type kvABSide struct {
	value    string // the flag's value
	res      kvResult
	counters []kvCounter // the engine's counters during the run alone
}

// runAB runs workload w on both sides and prints their lines, the ratios
// and, with -statistics, each side's counters.
func (b *kvBench) runAB(w *kvWorkload) error {
	ab := b.cfg.ab
	ra, rb, err := ab.sides(newKVRun(b.cfg, w))
	if err != nil {
		return err
	}
	var sides [2]kvABSide
	for i, r := range []kvRun{ra, rb} {
		if err := b.reopen(r.open); err != nil {
			return err
		}
		before := b.db.counters()
		res, err := b.runWorkload(r)
		if err != nil {
			return fmt.Errorf("side %c (%s=%s): %w", 'A'+i, ab.flag.name, ab.flag.get(&r), err)
		}
		sides[i] = kvABSide{value: ab.flag.get(&r), res: res, counters: subKVCounters(b.db.counters(), before)}
		printKVResult(b.stdout, &res)
	}
	fmt.Fprint(b.stdout, formatKVAB(ab.flag.name, &sides[0], &sides[1]))
	if b.cfg.statistics {
		for i, s := range sides {
			printKVStatisticsTitled(b.stdout, fmt.Sprintf("STATISTICS (%c: %s=%s):", 'A'+i, ab.flag.name, s.value), s.counters)
		}
	}
	// Later workloads run with the database as the flags open it.
	if plain := b.cfg.openOptions(); b.opened != plain {
		return b.reopen(plain)
	}
	return nil
}

// subKVCounters returns a - b, counter by counter.
func subKVCounters(a, b []kvCounter) []kvCounter {
	out := append([]kvCounter(nil), a...)
	for i := range out {
		if i < len(b) && out[i].name == b[i].name {
			out[i].value -= b[i].value
		}
	}
	return out
}

// kvCounterValue returns the value of the named counter, 0 if absent.
func kvCounterValue(counters []kvCounter, name string) int64 {
	for _, c := range counters {
		if c.name == name {
			return c.value
		}
	}
	return 0
}

// kvReadCallsCounter is the counter of read calls the A/B line compares.
const kvReadCallsCounter = "file.read.count"

// formatKVAB returns the ratio line of two sides:
//
//	A/B name=A vs B: ops/sec xR, MB/s xR, file.read.count xR (a vs b), per op xR (a/op vs b/op)[, cpu/entry xR (a vs b ns)]
func formatKVAB(name string, a, b *kvABSide) string {
	parts := []string{"ops/sec " + kvRatio(a.res.opsPerSec(), b.res.opsPerSec())}
	if a.res.bytes > 0 || b.res.bytes > 0 {
		parts = append(parts, "MB/s "+kvRatio(a.res.mbPerSec(), b.res.mbPerSec()))
	}
	ca, cb := kvCounterValue(a.counters, kvReadCallsCounter), kvCounterValue(b.counters, kvReadCallsCounter)
	pa, pb := float64(ca)/float64(max(a.res.ops, 1)), float64(cb)/float64(max(b.res.ops, 1))
	parts = append(parts, fmt.Sprintf("%s %s (%d vs %d), per op %s (%.3g vs %.3g)",
		kvReadCallsCounter, kvRatio(float64(ca), float64(cb)), ca, cb, kvRatio(pa, pb), pa, pb))
	if a.res.entries > 0 && b.res.entries > 0 && a.res.cpu > 0 && b.res.cpu > 0 {
		ea := float64(a.res.cpu.Nanoseconds()) / float64(a.res.entries)
		eb := float64(b.res.cpu.Nanoseconds()) / float64(b.res.entries)
		parts = append(parts, fmt.Sprintf("cpu/entry %s (%.1f vs %.1f ns)", kvRatio(ea, eb), ea, eb))
	}
	return fmt.Sprintf("A/B %s=%s vs %s: %s\n", name, a.value, b.value, strings.Join(parts, ", "))
}

// kvRatio formats a / b as "x1.42" (three decimals below 0.1), or "x-"
// when b is 0.
func kvRatio(a, b float64) string {
	if b == 0 {
		return "x-"
	}
	r := a / b
	if r < 0.1 {
		return fmt.Sprintf("x%.3f", r)
	}
	return fmt.Sprintf("x%.2f", r)
}

// printKVStatisticsTitled writes counters as printKVStatistics does, under
// the given title line.
func printKVStatisticsTitled(w io.Writer, title string, counters []kvCounter) {
	var b strings.Builder
	b.WriteString(title + "\n")
	for _, c := range counters {
		fmt.Fprintf(&b, "%s COUNT : %d\n", c.name, c.value)
	}
	b.WriteString("\n")
	fmt.Fprint(w, b.String())
}
