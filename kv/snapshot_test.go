package kv

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/strata-db/strata/kv/vfs"
)

// ddEngine runs the engine commands of the datadriven specs in
// testdata/snapshot and testdata/txn:
//
//	batch                  commit the writes of the input, one per line:
//	                       set <k> <v> | del <k> | delrange <start> <end>
//	flush                  flush the memtable
//	compact [lower upper]  compact the range (all of it by default)
//	reopen                 close and open the database (no open snapshots)
//	snapshot name=<s>      take a snapshot
//	close-snapshot name=<s>
//	get [snapshot=<s>] [txn=<t>]
//	                       look up the keys of the input, one per line
//	scan [snapshot=<s>] [txn=<t>] [lower=<k>] [upper=<k>] [reverse]
//	                       every key and value, in the given direction
//	iter [snapshot=<s>] [txn=<t>] [lower=<k>] [upper=<k>]
//	                       run the input's moves, one per line: first,
//	                       last, next, prev, seek-ge <k>, seek-lt <k>
//	txn name=<t>           start a transaction: an indexed batch
//	txn-write name=<t>     add the input's writes (as for batch) to it
//	txn-mark name=<t> mark=<m>
//	txn-rollback name=<t> mark=<m>
//	txn-commit name=<t> snapshot=<s>
//	                       CommitIfNoConflict at the snapshot: ok or conflict
type ddEngine struct {
	fs    *vfs.MemFS
	d     *DB
	snaps map[string]*Snapshot
	txns  map[string]*Batch
	marks map[string]BatchMark
}

func newDDEngine(t *testing.T) *ddEngine {
	e := &ddEngine{fs: vfs.NewMem(), snaps: map[string]*Snapshot{}, txns: map[string]*Batch{}, marks: map[string]BatchMark{}}
	d, err := Open("/db", testOptions(e.fs))
	if err != nil {
		t.Fatal(err)
	}
	e.d = d
	return e
}

func (e *ddEngine) close(t *testing.T) {
	for _, s := range e.snaps {
		s.Close()
	}
	if err := e.d.Close(); err != nil {
		t.Fatal(err)
	}
}

// argOrEmpty returns the value of an optional key=value argument.
func argOrEmpty(td *datadriven.TestData, key string) string {
	for _, a := range td.CmdArgs {
		if a.Key == key && len(a.Vals) > 0 {
			return a.Vals[0]
		}
	}
	return ""
}

func (e *ddEngine) snapshot(t *testing.T, td *datadriven.TestData) *Snapshot {
	name := argOrEmpty(td, "snapshot")
	if name == "" {
		return nil
	}
	s, ok := e.snaps[name]
	if !ok {
		td.Fatalf(t, "no snapshot %q", name)
	}
	return s
}

func (e *ddEngine) txn(t *testing.T, td *datadriven.TestData, key string) *Batch {
	name := argOrEmpty(td, key)
	if name == "" {
		return nil
	}
	b, ok := e.txns[name]
	if !ok {
		td.Fatalf(t, "no transaction %q", name)
	}
	return b
}

// reader returns what a read command reads: a transaction's batch or the
// database, and the read options (a snapshot).
func (e *ddEngine) reader(t *testing.T, td *datadriven.TestData) (Reader, ReadOptions) {
	var ro ReadOptions
	ro.Snapshot = e.snapshot(t, td)
	if b := e.txn(t, td, "txn"); b != nil {
		return b, ro
	}
	return e.d, ro
}

func (e *ddEngine) iterOptions(t *testing.T, td *datadriven.TestData) (Reader, *IterOptions) {
	r, ro := e.reader(t, td)
	o := &IterOptions{ReadOptions: ro}
	if v := argOrEmpty(td, "lower"); v != "" {
		o.LowerBound = []byte(v)
	}
	if v := argOrEmpty(td, "upper"); v != "" {
		o.UpperBound = []byte(v)
	}
	return r, o
}

func ddWrites(t *testing.T, td *datadriven.TestData, b *Batch) {
	for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
		f := strings.Fields(line)
		var err error
		switch {
		case len(f) == 3 && f[0] == "set":
			err = b.Set([]byte(f[1]), []byte(f[2]))
		case len(f) == 2 && f[0] == "del":
			err = b.Delete([]byte(f[1]))
		case len(f) == 3 && f[0] == "delrange":
			err = b.DeleteRange([]byte(f[1]), []byte(f[2]))
		default:
			td.Fatalf(t, "bad write %q", line)
		}
		if err != nil {
			td.Fatalf(t, "%s: %v", line, err)
		}
	}
}

func ddPosition(it *Iterator, ok bool) string {
	if err := it.Error(); err != nil {
		return "err: " + err.Error()
	}
	if !ok {
		return "."
	}
	return fmt.Sprintf("%s=%s", it.Key(), it.Value())
}

func (e *ddEngine) run(t *testing.T, td *datadriven.TestData) string {
	d := e.d
	check := func(err error) {
		if err != nil {
			td.Fatalf(t, "%s: %v", td.Cmd, err)
		}
	}
	switch td.Cmd {
	case "batch":
		b := d.NewBatch()
		ddWrites(t, td, b)
		check(b.Commit(NoSync))
		return ""
	case "flush":
		check(d.Flush())
		return ""
	case "compact":
		var lower, upper []byte
		if len(td.CmdArgs) == 2 {
			lower, upper = []byte(td.CmdArgs[0].Key), []byte(td.CmdArgs[1].Key)
		}
		check(d.Compact(lower, upper))
		return ""
	case "reopen":
		if len(e.snaps) > 0 {
			td.Fatalf(t, "reopen with open snapshots")
		}
		check(d.Close())
		nd, err := Open("/db", testOptions(e.fs))
		check(err)
		e.d = nd
		return ""
	case "snapshot":
		e.snaps[argOrEmpty(td, "name")] = d.NewSnapshot()
		return ""
	case "close-snapshot":
		name := argOrEmpty(td, "name")
		check(e.snaps[name].Close())
		delete(e.snaps, name)
		return ""
	case "get":
		r, ro := e.reader(t, td)
		var out strings.Builder
		for _, k := range strings.Fields(td.Input) {
			v, err := r.Get([]byte(k), &ro)
			switch {
			case errors.Is(err, ErrNotFound):
				fmt.Fprintf(&out, "%s: not found\n", k)
			case err != nil:
				fmt.Fprintf(&out, "%s: err: %v\n", k, err)
			default:
				fmt.Fprintf(&out, "%s=%s\n", k, v)
			}
		}
		return out.String()
	case "scan":
		r, o := e.iterOptions(t, td)
		it, err := r.NewIter(o)
		check(err)
		var lines []string
		if td.HasArg("reverse") {
			for ok := it.Last(); ok; ok = it.Prev() {
				lines = append(lines, ddPosition(it, true))
			}
		} else {
			for ok := it.First(); ok; ok = it.Next() {
				lines = append(lines, ddPosition(it, true))
			}
		}
		if err := it.Close(); err != nil {
			lines = append(lines, "err: "+err.Error())
		}
		if len(lines) == 0 {
			return "(empty)\n"
		}
		return strings.Join(lines, "\n") + "\n"
	case "iter":
		r, o := e.iterOptions(t, td)
		it, err := r.NewIter(o)
		check(err)
		defer it.Close()
		var out strings.Builder
		for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
			f := strings.Fields(line)
			var ok bool
			switch {
			case len(f) == 1 && f[0] == "first":
				ok = it.First()
			case len(f) == 1 && f[0] == "last":
				ok = it.Last()
			case len(f) == 1 && f[0] == "next":
				ok = it.Next()
			case len(f) == 1 && f[0] == "prev":
				ok = it.Prev()
			case len(f) == 2 && f[0] == "seek-ge":
				ok = it.SeekGE([]byte(f[1]))
			case len(f) == 2 && f[0] == "seek-lt":
				ok = it.SeekLT([]byte(f[1]))
			default:
				td.Fatalf(t, "bad move %q", line)
			}
			fmt.Fprintf(&out, "%s: %s\n", line, ddPosition(it, ok))
		}
		return out.String()
	case "txn":
		e.txns[argOrEmpty(td, "name")] = d.NewIndexedBatch()
		return ""
	case "txn-write":
		ddWrites(t, td, e.txn(t, td, "name"))
		return ""
	case "txn-mark":
		e.marks[argOrEmpty(td, "mark")] = e.txn(t, td, "name").Mark()
		return ""
	case "txn-rollback":
		check(e.txn(t, td, "name").RollbackTo(e.marks[argOrEmpty(td, "mark")]))
		return ""
	case "txn-commit":
		err := e.txn(t, td, "name").CommitIfNoConflict(e.snapshot(t, td), NoSync)
		switch {
		case errors.Is(err, ErrConflict):
			return "conflict\n"
		case err != nil:
			return "err: " + err.Error() + "\n"
		}
		return "ok\n"
	}
	td.Fatalf(t, "unknown command %q", td.Cmd)
	return ""
}

// TestSnapshotDataDriven specifies what snapshots see (testdata/snapshot)
// and how transactions commit (testdata/txn); see ddEngine for the
// commands. Regenerate the expected output with -rewrite and review the
// diff as a change to the specification.
func TestSnapshotDataDriven(t *testing.T) {
	for _, path := range []string{"testdata/snapshot", "testdata/txn"} {
		t.Run(path, func(t *testing.T) {
			e := newDDEngine(t)
			defer e.close(t)
			datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
				return e.run(t, td)
			})
		})
	}
}
