package kv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

// txnState returns the whole database as "k=v" strings in key order.
func txnState(t *testing.T, r Reader, ro *ReadOptions) []string {
	t.Helper()
	o := &IterOptions{}
	if ro != nil {
		o.ReadOptions = *ro
	}
	it, err := r.NewIter(o)
	require.NoError(t, err)
	defer it.Close()
	return scanAll(t, it)
}

// txnOps applies "set k v", "del k", "delrange a b", "guard a b" and
// "guardkey k" steps to a batch.
func txnOps(t *testing.T, b *Batch, ops ...string) {
	t.Helper()
	for _, op := range ops {
		f := strings.Fields(op)
		var err error
		switch f[0] {
		case "set":
			err = b.Set([]byte(f[1]), []byte(f[2]))
		case "del":
			err = b.Delete([]byte(f[1]))
		case "delrange":
			err = b.DeleteRange([]byte(f[1]), []byte(f[2]))
		case "guard":
			b.Guard([]byte(f[1]), []byte(f[2]))
		case "guardkey":
			k := []byte(f[1])
			b.Guard(k, append(k[:len(k):len(k)], 0)) // the key alone
		default:
			t.Fatalf("unknown op %q", op)
		}
		require.NoError(t, err, op)
	}
}

func txnCommit(t *testing.T, d *DB, ops ...string) {
	t.Helper()
	b := d.NewBatch()
	txnOps(t, b, ops...)
	require.NoError(t, b.Commit(NoSync))
}

// txnConflictCases are the conflict checks TestTxnConflict and
// TestCommitGroupConflict run: the transaction commits after the other
// writes, in a later group or later in the same group.
var txnConflictCases = []struct {
	name   string
	before []string // committed before the snapshot
	other  []string // committed by someone else after the snapshot
	txn    []string // the transaction's writes
	// conflict says whether the commit must fail.
	conflict bool
	want     []string // the final state
}{
	{
		name:  "no other writes",
		txn:   []string{"set a 1", "set b 1"},
		want:  []string{"a=1", "b=1"},
		other: nil,
	},
	{
		name:     "same key",
		other:    []string{"set a other"},
		txn:      []string{"set a txn", "set b txn"},
		conflict: true,
		want:     []string{"a=other"},
	},
	{
		name:  "different keys",
		other: []string{"set a other"},
		txn:   []string{"set b txn"},
		want:  []string{"a=other", "b=txn"},
	},
	{
		name:   "write before the snapshot",
		before: []string{"set a old"},
		txn:    []string{"set a txn"},
		want:   []string{"a=txn"},
	},
	{
		name:     "other deleted the key",
		before:   []string{"set a old", "set c old"},
		other:    []string{"del a"},
		txn:      []string{"set c txn", "set a txn"},
		conflict: true,
		want:     []string{"c=old"},
	},
	{
		name:     "transaction deletes a key the other set",
		before:   []string{"set a old"},
		other:    []string{"set a other"},
		txn:      []string{"del a"},
		conflict: true,
		want:     []string{"a=other"},
	},
	{
		name:     "other range-deleted over the key",
		before:   []string{"set a old", "set b old", "set z old"},
		other:    []string{"delrange a c"},
		txn:      []string{"set b txn"},
		conflict: true,
		want:     []string{"z=old"},
	},
	{
		name:   "other range-deleted next to the key",
		before: []string{"set a old", "set c old"},
		other:  []string{"delrange a b"},
		txn:    []string{"set c txn"},
		want:   []string{"c=txn"},
	},
	{
		name:   "range deletions of the transaction are not checked",
		before: []string{"set a old"},
		other:  []string{"set b other"},
		txn:    []string{"delrange a c", "set a txn"},
		want:   []string{"a=txn"},
	},
	{
		name:     "guarded range deleted, other set a key in it",
		before:   []string{"set a old", "set b old", "set z old"},
		other:    []string{"set bb other"},
		txn:      []string{"delrange a c", "guard a c"},
		conflict: true,
		want:     []string{"a=old", "b=old", "bb=other", "z=old"},
	},
	{
		name:   "guarded range, other wrote at its end",
		before: []string{"set a old"},
		other:  []string{"set c other"},
		txn:    []string{"guard a c", "set z txn"},
		want:   []string{"a=old", "c=other", "z=txn"},
	},
	{
		name:     "guarded range, other deleted a key in it",
		before:   []string{"set a old", "set b old"},
		other:    []string{"del b"},
		txn:      []string{"guard b c", "set z txn"},
		conflict: true,
		want:     []string{"a=old"},
	},
	{
		name:     "guarded range, other range-deleted across its start",
		before:   []string{"set a old", "set m old"},
		other:    []string{"delrange a f"},
		txn:      []string{"guard e g", "set z txn"},
		conflict: true,
		want:     []string{"m=old"},
	},
	{
		name:   "guarded range written only before the snapshot",
		before: []string{"set b old"},
		txn:    []string{"guard a c", "set z txn"},
		want:   []string{"b=old", "z=txn"},
	},
	{
		name:     "guarded key, other set it",
		before:   []string{"set p old"},
		other:    []string{"set p other"},
		txn:      []string{"guardkey p", "set c txn"},
		conflict: true,
		want:     []string{"p=other"},
	},
	{
		name:   "guarded key, other set the next key",
		before: []string{"set p old"},
		other:  []string{"set p0 other"},
		txn:    []string{"guardkey p", "set c txn"},
		want:   []string{"c=txn", "p=old", "p0=other"},
	},
	{
		name:     "guard alone, nothing written",
		other:    []string{"set b other"},
		txn:      []string{"guard a c"},
		conflict: true,
		want:     []string{"b=other"},
	},
	{
		name:     "one conflicting key among many",
		before:   []string{"set k5 old"},
		other:    []string{"set k5 other"},
		txn:      []string{"set k1 txn", "set k2 txn", "set k3 txn", "set k4 txn", "set k5 txn", "set k6 txn"},
		conflict: true,
		want:     []string{"k5=other"},
	},
}

// TestTxnConflict checks CommitIfNoConflict: a transaction reads at a
// snapshot and writes through an indexed batch; its commit fails with
// ErrConflict, applying nothing, exactly when a key it writes (set or
// delete) was written after the snapshot, wherever that newer write now
// lives (memtable, level-0 table, or a lower level after a compaction).
func TestTxnConflict(t *testing.T) {
	type where int
	const (
		inMemtable where = iota
		flushed
		compacted
	)
	for _, tc := range txnConflictCases {
		for _, w := range []where{inMemtable, flushed, compacted} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, w), func(t *testing.T) {
				fs := vfs.NewMem()
				d, err := Open("/db", testOptions(fs))
				require.NoError(t, err)
				defer d.Close()
				if len(tc.before) > 0 {
					txnCommit(t, d, tc.before...)
				}
				snap := d.NewSnapshot()
				defer snap.Close()
				txn := d.NewIndexedBatch()
				txnOps(t, txn, tc.txn...)
				if len(tc.other) > 0 {
					txnCommit(t, d, tc.other...)
				}
				switch w {
				case flushed:
					require.NoError(t, d.Flush())
				case compacted:
					require.NoError(t, d.Compact(nil, nil))
				}
				before := d.Stats()
				err = txn.CommitIfNoConflict(snap, Sync)
				if tc.conflict {
					require.ErrorIs(t, err, ErrConflict)
					require.EqualValues(t, 0, d.Stats().Sub(before).Get(stats.Commits))
				} else {
					require.NoError(t, err)
				}
				require.Equal(t, tc.want, txnState(t, d, nil))
			})
		}
	}
}

// TestTxnTwoTransactions: two transactions over snapshots taken before
// either commits. Writing the same key, the first to commit wins and the
// second fails with ErrConflict and applies nothing, whatever else it
// wrote; writing different keys, both commit.
func TestTxnTwoTransactions(t *testing.T) {
	for _, sameKey := range []bool{true, false} {
		t.Run(fmt.Sprintf("same key %v", sameKey), func(t *testing.T) {
			d, err := Open("/db", testOptions(vfs.NewMem()))
			require.NoError(t, err)
			defer d.Close()
			txnCommit(t, d, "set x 0", "set y 0")
			s1, s2 := d.NewSnapshot(), d.NewSnapshot()
			defer s1.Close()
			defer s2.Close()
			t1, t2 := d.NewIndexedBatch(), d.NewIndexedBatch()
			for _, tx := range []struct {
				b    *Batch
				s    *Snapshot
				key  string
				name string
			}{{t1, s1, "x", "t1"}, {t2, s2, "y", "t2"}} {
				key := tx.key
				if sameKey {
					key = "x"
				}
				v, err := tx.b.Get([]byte(key), &ReadOptions{Snapshot: tx.s})
				require.NoError(t, err)
				require.Equal(t, "0", string(v))
				txnOps(t, tx.b, "set "+key+" "+tx.name, "set only-"+tx.name+" 1")
			}
			require.NoError(t, t1.CommitIfNoConflict(s1, Sync))
			err = t2.CommitIfNoConflict(s2, Sync)
			if sameKey {
				require.ErrorIs(t, err, ErrConflict)
				require.Equal(t, []string{"only-t1=1", "x=t1", "y=0"}, txnState(t, d, nil))
			} else {
				require.NoError(t, err)
				require.Equal(t, []string{"only-t1=1", "only-t2=1", "x=t1", "y=t2"}, txnState(t, d, nil))
			}
			// A batch that failed its check was not committed.
			require.Equal(t, !sameKey, errors.Is(t2.Commit(nil), ErrBatchCommitted))
		})
	}
}

// TestTxnReadYourWrites: reads through a transaction's batch at its
// snapshot see the batch's own writes (sets, deletes, range deletes) over
// the snapshot, and never commits made after the snapshot.
func TestTxnReadYourWrites(t *testing.T) {
	d, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer d.Close()
	txnCommit(t, d, "set a 1", "set b 1", "set c 1", "set d 1", "set e 1")
	require.NoError(t, d.Flush())
	txnCommit(t, d, "set f 1")
	snap := d.NewSnapshot()
	defer snap.Close()
	ro := &ReadOptions{Snapshot: snap}

	txn := d.NewIndexedBatch()
	txnOps(t, txn, "set a txn", "del b", "delrange d f", "set dd txn", "set g txn")
	// Commits after the snapshot, some to keys the batch also writes.
	txnCommit(t, d, "set a later", "set c later", "set e later", "set h later", "del f")
	require.NoError(t, d.Flush())

	want := []string{"a=txn", "c=1", "dd=txn", "f=1", "g=txn"}
	require.Equal(t, want, txnState(t, txn, ro))
	it, err := txn.NewIter(&IterOptions{ReadOptions: *ro})
	require.NoError(t, err)
	var rev []string
	for ok := it.Last(); ok; ok = it.Prev() {
		rev = append(rev, string(it.Key())+"="+string(it.Value()))
	}
	require.NoError(t, it.Close())
	require.Equal(t, []string{"g=txn", "f=1", "dd=txn", "c=1", "a=txn"}, rev)
	for _, k := range []string{"a", "b", "c", "d", "dd", "e", "f", "g", "h"} {
		v, err := txn.Get([]byte(k), ro)
		wantV := ""
		for _, kv := range want {
			if strings.HasPrefix(kv, k+"=") {
				wantV = kv[len(k)+1:]
			}
		}
		if wantV == "" {
			require.ErrorIs(t, err, ErrNotFound, "key %q", k)
		} else {
			require.NoError(t, err, "key %q", k)
			require.Equal(t, wantV, string(v), "key %q", k)
		}
	}
	// Without a snapshot the batch reads over the latest state.
	require.Equal(t, []string{"a=txn", "c=later", "dd=txn", "g=txn", "h=later"}, txnState(t, txn, nil))
	// The commit conflicts (a was written after the snapshot).
	require.ErrorIs(t, txn.CommitIfNoConflict(snap, nil), ErrConflict)
}

// TestTxnRollbackTo: RollbackTo undoes the writes made since a mark (reads
// through the batch no longer see them, nested marks work) and the rest of
// the batch still commits.
func TestTxnRollbackTo(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open("/db", testOptions(fs))
	require.NoError(t, err)
	txnCommit(t, d, "set a db", "set b db", "set c db", "set m db")
	snap := d.NewSnapshot()
	defer snap.Close()
	ro := &ReadOptions{Snapshot: snap}
	txn := d.NewIndexedBatch()

	txnOps(t, txn, "set a s1", "set x s1")
	m1 := txn.Mark()
	txnOps(t, txn, "set a s2", "del b", "delrange c n", "set y s2")
	require.Equal(t, []string{"a=s2", "x=s1", "y=s2"}, txnState(t, txn, ro))
	m2 := txn.Mark()
	txnOps(t, txn, "set z s3", "del x")
	require.Equal(t, []string{"a=s2", "y=s2", "z=s3"}, txnState(t, txn, ro))

	require.NoError(t, txn.RollbackTo(m2))
	require.Equal(t, []string{"a=s2", "x=s1", "y=s2"}, txnState(t, txn, ro))
	require.NoError(t, txn.RollbackTo(m1))
	require.Equal(t, []string{"a=s1", "b=db", "c=db", "m=db", "x=s1"}, txnState(t, txn, ro))
	for k, want := range map[string]string{"a": "s1", "b": "db", "c": "db", "x": "s1", "y": "", "z": ""} {
		v, err := txn.Get([]byte(k), ro)
		if want == "" {
			require.ErrorIs(t, err, ErrNotFound, "key %q", k)
			continue
		}
		require.NoError(t, err, "key %q", k)
		require.Equal(t, want, string(v), "key %q", k)
	}
	// A mark rolled back past is no longer valid.
	require.Error(t, txn.RollbackTo(m2))

	// Writes after the rollback, then commit: the undone writes never reach
	// the database.
	txnOps(t, txn, "set w s4")
	require.Equal(t, 3, txn.Count())
	require.NoError(t, txn.CommitIfNoConflict(snap, Sync))
	want := []string{"a=s1", "b=db", "c=db", "m=db", "w=s4", "x=s1"}
	require.Equal(t, want, txnState(t, d, nil))
	require.ErrorIs(t, txn.RollbackTo(m1), ErrBatchCommitted)

	// Also after a reopen (the log holds the batch as committed).
	require.NoError(t, snap.Close())
	require.NoError(t, d.Close())
	d, err = Open("/db", testOptions(fs))
	require.NoError(t, err)
	require.Equal(t, want, txnState(t, d, nil))
	require.NoError(t, d.Close())
}

// TestTxnBank runs concurrent transfers between accounts, each a
// transaction that reads two balances at its snapshot through its batch,
// writes both and a transfer record, and commits with CommitIfNoConflict,
// retrying on ErrConflict. Meanwhile readers check that every snapshot
// sees the same total, and flushes and compactions move the data. At the
// end the total is unchanged, every balance is what the recorded transfers
// add up to, and there is one record per successful commit.
func TestTxnBank(t *testing.T) {
	const accounts, workers, initial = 8, 8, 1000
	transfers := 400
	if underRace {
		transfers = 100
	}
	fs := vfs.NewMem()
	d, err := Open("/db", concOptions(fs))
	require.NoError(t, err)
	acct := func(i int) []byte { return fmt.Appendf(nil, "acct%02d", i) }
	b := d.NewBatch()
	for i := range accounts {
		require.NoError(t, b.Set(acct(i), []byte(strconv.Itoa(initial))))
	}
	require.NoError(t, b.Commit(Sync))
	const total = accounts * initial

	readInt := func(r *Batch, key []byte, ro *ReadOptions) (int, error) {
		v, err := r.Get(key, ro)
		if err != nil {
			return 0, fmt.Errorf("get %s: %w", key, err)
		}
		return strconv.Atoi(string(v))
	}
	var committed, conflicts atomic.Int64
	var working atomic.Int32
	working.Store(workers)
	var g concGroup
	for w := range workers {
		g.Go(fmt.Sprintf("worker %d", w), func() error {
			defer working.Add(-1)
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for n := 0; n < transfers && !g.stop.Load(); {
				from, to := rng.IntN(accounts), rng.IntN(accounts-1)
				if to >= from {
					to++
				}
				amount := 1 + rng.IntN(50)
				snap := d.NewSnapshot()
				ro := &ReadOptions{Snapshot: snap}
				txn := d.NewIndexedBatch()
				fb, err := readInt(txn, acct(from), ro)
				if err != nil {
					return err
				}
				tb, err := readInt(txn, acct(to), ro)
				if err != nil {
					return err
				}
				// Let others commit between the reads and the commit.
				runtime.Gosched()
				txn.Set(acct(from), []byte(strconv.Itoa(fb-amount)))
				txn.Set(acct(to), []byte(strconv.Itoa(tb+amount)))
				txn.Set(fmt.Appendf(nil, "xfer/%d/%04d", w, n), fmt.Appendf(nil, "%d %d %d", from, to, amount))
				// The batch reads its own writes.
				if got, err := readInt(txn, acct(from), ro); err != nil || got != fb-amount {
					return fmt.Errorf("batch reads %d (%v) for its own write of %d", got, err, fb-amount)
				}
				err = txn.CommitIfNoConflict(snap, &WriteOptions{Sync: rng.IntN(4) == 0})
				snap.Close()
				switch {
				case errors.Is(err, ErrConflict):
					conflicts.Add(1)
				case err != nil:
					return err
				default:
					committed.Add(1)
					n++
				}
			}
			return nil
		})
	}
	var audits atomic.Int64
	for r := range 2 {
		g.Go(fmt.Sprintf("auditor %d", r), func() error {
			for working.Load() > 0 && !g.stop.Load() {
				time.Sleep(200 * time.Microsecond) // pacing
				snap := d.NewSnapshot()
				it, err := snap.NewIter(&IterOptions{LowerBound: []byte("acct"), UpperBound: []byte("acct~")})
				if err != nil {
					return err
				}
				sum, n := 0, 0
				for ok := it.First(); ok; ok = it.Next() {
					v, err := strconv.Atoi(string(it.Value()))
					if err != nil {
						it.Close()
						return err
					}
					sum += v
					n++
				}
				err = it.Close()
				snap.Close()
				if err != nil {
					return err
				}
				if sum != total || n != accounts {
					return fmt.Errorf("a snapshot sees %d accounts holding %d in total, want %d holding %d", n, sum, accounts, total)
				}
				audits.Add(1)
			}
			return nil
		})
	}
	g.Go("flusher", func() error {
		for i := 0; working.Load() > 0 && !g.stop.Load(); i++ {
			time.Sleep(2 * time.Millisecond) // pacing
			var err error
			if i%4 == 3 {
				err = d.Compact(nil, nil)
			} else {
				err = d.Flush()
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, g.Wait())
	t.Logf("%d transfers committed, %d conflicts retried, %d audits", committed.Load(), conflicts.Load(), audits.Load())
	require.EqualValues(t, workers*transfers, committed.Load())

	// Replay the transfer records: they must account for every balance.
	balances := make([]int, accounts)
	for i := range balances {
		balances[i] = initial
	}
	it, err := d.NewIter(&IterOptions{LowerBound: []byte("xfer/"), UpperBound: []byte("xfer0")})
	require.NoError(t, err)
	records := 0
	for ok := it.First(); ok; ok = it.Next() {
		var from, to, amount int
		_, err := fmt.Sscanf(string(it.Value()), "%d %d %d", &from, &to, &amount)
		require.NoError(t, err)
		balances[from] -= amount
		balances[to] += amount
		records++
	}
	require.NoError(t, it.Close())
	require.EqualValues(t, committed.Load(), records, "transfer records in the database")
	sum := 0
	for i := range accounts {
		v, err := d.Get(acct(i), nil)
		require.NoError(t, err)
		got, err := strconv.Atoi(string(v))
		require.NoError(t, err)
		require.Equal(t, balances[i], got, "account %d", i)
		sum += got
	}
	require.Equal(t, total, sum)
	require.NoError(t, d.Close())
}

// TestTxnCommitAfterClose: a conflict-checked commit after Close fails with
// ErrClosed (its check used to read the released state).
func TestTxnCommitAfterClose(t *testing.T) {
	d, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	txnCommit(t, d, "set a 1")
	snap := d.NewSnapshot()
	b := d.NewIndexedBatch()
	txnOps(t, b, "set a 2", "guard a z")
	snap.Close()
	require.NoError(t, d.Close())
	require.ErrorIs(t, b.CommitIfNoConflict(snap, NoSync), ErrClosed)
}

// TestTxnGuardManyVersions: a guarded range over keys with many versions in
// the memtable conflicts exactly when one key has a version after the
// snapshot, whether that key comes first, between or last, and whatever
// number of older versions the keys around it hold.
func TestTxnGuardManyVersions(t *testing.T) {
	d, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer d.Close()
	for i := range 300 {
		txnCommit(t, d, fmt.Sprintf("set a %d", i), fmt.Sprintf("set c %d", i), "set d 0")
	}
	snap := d.NewSnapshot()
	defer snap.Close()
	n := 0
	guarded := func(start, end string) error {
		n++
		b := d.NewIndexedBatch()
		txnOps(t, b, fmt.Sprintf("set z%d 1", n), "guard "+start+" "+end)
		return b.CommitIfNoConflict(snap, NoSync)
	}
	require.NoError(t, guarded("a", "e"), "only versions older than the snapshot")
	txnCommit(t, d, "set b 1")
	require.ErrorIs(t, guarded("a", "e"), ErrConflict, "b, after many versions of a")
	require.NoError(t, guarded("c", "e"))
	txnCommit(t, d, "set d 1")
	require.ErrorIs(t, guarded("c", "e"), ErrConflict, "d, after many versions of c")
	require.NoError(t, guarded("c", "d"))
	txnCommit(t, d, "set c new")
	require.ErrorIs(t, guarded("c", "d"), ErrConflict, "the newest of c's versions")
}
