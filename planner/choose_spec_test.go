package planner

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestChooseSpec runs testdata/choose, the table of Choose's inputs and
// the plans it makes (Plan.String, as EXPLAIN shows them). One command:
//
//	choose [index=pk|secondary|covering|unique|unique-covering]
//	       [points=N] [ranges=N] [full] [estimate=SIZE]
//	       [reverse] [probe] [limit=N] [written] [unordered]
//	       [mode=naive] [options=NAME=VALUE,...]
//
// index is the index read (default pk: primary, unique, covering;
// secondary: neither unique nor covering). The lookup's ranges are N
// bounded ranges of estimate bytes each (ranges), then N exact points on a
// unique key (points), or one range over the whole index (full) of
// estimate bytes; none of them: no range. An estimate of 0 or none is
// unknown. written: the reader can change under the statement
// (Hints.Mutable: a transaction that has written reads its own writes).
// unordered: the ranges come in descending order without reverse, as
// go-mysql-server leaves some collections of ranges. options are parsed as SET strata_planner parses them
// (ParseOptions), sizes with an optional KiB, MiB or GiB suffix. The
// output is the plan; the runner also checks that the plan keeps every
// range.
func TestChooseSpec(t *testing.T) {
	datadriven.RunTest(t, "testdata/choose", func(t *testing.T, td *datadriven.TestData) string {
		if td.Cmd != "choose" {
			td.Fatalf(t, "unknown command %q", td.Cmd)
		}
		rs, idx, h, o := chooseArgs(t, td)
		p := Choose(rs, idx, h, o)
		if len(p.Ranges) != len(rs) {
			td.Fatalf(t, "plan has %d ranges, the lookup %d", len(p.Ranges), len(rs))
		}
		return p.String() + "\n"
	})
}

// chooseArgs reads the input of a choose command from its arguments.
func chooseArgs(t *testing.T, td *datadriven.TestData) ([]KeyRange, Index, Hints, Options) {
	var (
		rs               []KeyRange
		idx              = Index{Primary: true, Unique: true, Covering: true}
		h                Hints
		o                Options
		nranges, npoints int
		full, unordered  bool
		estimate         int64
		err              error
	)
	for _, arg := range td.CmdArgs {
		switch arg.Key {
		case "index":
			switch s := scanString(t, td, arg); s {
			case "pk":
			case "secondary":
				idx = Index{}
			case "covering":
				idx = Index{Covering: true}
			case "unique":
				idx = Index{Unique: true}
			case "unique-covering":
				idx = Index{Unique: true, Covering: true}
			default:
				td.Fatalf(t, "unknown index %q", s)
			}
		case "ranges":
			nranges = int(scanInt(t, td, arg))
		case "points":
			npoints = int(scanInt(t, td, arg))
		case "full":
			full = true
		case "estimate":
			estimate = scanSize(t, td, arg)
		case "reverse":
			h.Reverse = true
		case "probe":
			h.Probe = true
		case "limit":
			h.Limit = scanInt(t, td, arg)
		case "written":
			h.Mutable = true
		case "unordered":
			unordered = true
		case "mode":
			if o.Mode, err = ParseMode(scanString(t, td, arg)); err != nil {
				td.Fatalf(t, "%v", err)
			}
		case "options":
			if o, err = ParseOptions(strings.Join(arg.Vals, ","), o); err != nil {
				td.Fatalf(t, "%v", err)
			}
		default:
			td.Fatalf(t, "unknown argument %q", arg.Key)
		}
	}
	if full {
		if nranges > 0 || npoints > 0 {
			td.Fatalf(t, "full takes no ranges or points")
		}
		rs = []KeyRange{{EstBytes: estimate}}
	}
	for i := 0; i < nranges; i++ {
		// [a0000, a0000~), [a0001, a0001~), ...: ascending, disjoint.
		rs = append(rs, KeyRange{Start: []byte(fmt.Sprintf("a%04d", i)), End: []byte(fmt.Sprintf("a%04d~", i)), EstBytes: estimate})
	}
	for i := 0; i < npoints; i++ {
		k := []byte(fmt.Sprintf("k%04d", i))
		rs = append(rs, KeyRange{Start: k, End: append(k[:len(k):len(k)], 0), Point: true})
	}
	if unordered {
		slices.Reverse(rs)
	}
	return rs, idx, h, o
}

func scanString(t *testing.T, td *datadriven.TestData, arg datadriven.CmdArg) string {
	if len(arg.Vals) != 1 {
		td.Fatalf(t, "%s: want one value", arg.Key)
	}
	return arg.Vals[0]
}

func scanInt(t *testing.T, td *datadriven.TestData, arg datadriven.CmdArg) int64 {
	n, err := parseCount(scanString(t, td, arg), false)
	if err != nil {
		td.Fatalf(t, "%s: %v", arg.Key, err)
	}
	return n
}

func scanSize(t *testing.T, td *datadriven.TestData, arg datadriven.CmdArg) int64 {
	n, err := parseCount(scanString(t, td, arg), true)
	if err != nil {
		td.Fatalf(t, "%s: %v", arg.Key, err)
	}
	return n
}
