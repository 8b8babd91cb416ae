package kv

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

// heldPipeline holds d's commit pipeline: a leader that does nothing until
// released, so that the commits started meanwhile queue up in the order
// they were started and the next leader takes them as one group.
type heldPipeline struct {
	d       *DB
	release chan struct{}
	done    chan error
}

func holdPipeline(t *testing.T, d *DB) *heldPipeline {
	t.Helper()
	h := &heldPipeline{d: d, release: make(chan struct{}), done: make(chan error, 1)}
	leading := make(chan struct{})
	go func() {
		h.done <- d.asLeader(func() error {
			close(leading)
			<-h.release
			return nil
		})
	}()
	<-leading
	return h
}

// start runs commit in a goroutine and returns once it waits in the queue:
// commits started one after the other queue in that order.
func (h *heldPipeline) start(commit func() error) <-chan error {
	c := &h.d.commit
	c.mu.Lock()
	n := len(c.queue)
	c.mu.Unlock()
	errc := make(chan error, 1)
	go func() { errc <- commit() }()
	for {
		c.mu.Lock()
		queued := len(c.queue) > n
		c.mu.Unlock()
		if queued {
			return errc
		}
		time.Sleep(10 * time.Microsecond)
	}
}

// groups returns the number of commit groups d has committed.
func groups(d *DB) uint64 {
	d.commit.mu.Lock()
	defer d.commit.mu.Unlock()
	return d.commit.groups
}

func (h *heldPipeline) releaseAndWait(t *testing.T) {
	t.Helper()
	close(h.release)
	require.NoError(t, <-h.done)
}

// TestCommitGroupConflict runs the conflict checks of TestTxnConflict with
// the other writes committed in the same group as the transaction, just
// before it (by a transaction of their own, also checked): the checks must
// come out as when the other writes were committed first, and the two
// commits must share one group.
func TestCommitGroupConflict(t *testing.T) {
	for _, tc := range txnConflictCases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Open("/db", testOptions(vfs.NewMem()))
			require.NoError(t, err)
			defer d.Close()
			if len(tc.before) > 0 {
				txnCommit(t, d, tc.before...)
			}
			snap := d.NewSnapshot()
			defer snap.Close()
			txn := d.NewIndexedBatch()
			txnOps(t, txn, tc.txn...)

			h := holdPipeline(t, d)
			var otherErr <-chan error
			if len(tc.other) > 0 {
				other := d.NewBatch()
				txnOps(t, other, tc.other...)
				otherSnap := d.NewSnapshot()
				defer otherSnap.Close()
				otherErr = h.start(func() error { return other.CommitIfNoConflict(otherSnap, NoSync) })
			}
			txnErr := h.start(func() error { return txn.CommitIfNoConflict(snap, Sync) })
			before, beforeGroups := d.Stats(), groups(d)
			h.releaseAndWait(t)
			if otherErr != nil {
				require.NoError(t, <-otherErr)
			}
			err = <-txnErr
			require.Equal(t, beforeGroups+1, groups(d), "one group after the holding one")
			commits := d.Stats().Sub(before).Get(stats.Commits)
			if tc.conflict {
				require.ErrorIs(t, err, ErrConflict)
				require.EqualValues(t, len(tc.other) > 0, commits == 1, "only the other commit")
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tc.want, txnState(t, d, nil))
		})
	}
}

// TestCommitGroupFailsOnlyItsOwn puts three transactions into one group, the
// second writing a key the first writes (both from snapshots older than
// either): the second alone fails, and the first and third commit.
func TestCommitGroupFailsOnlyItsOwn(t *testing.T) {
	d, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer d.Close()
	snap := d.NewSnapshot()
	defer snap.Close()
	batches := make([]*Batch, 3)
	for i, ops := range [][]string{{"set k first", "set a first"}, {"set b second", "set k second"}, {"set c third"}} {
		batches[i] = d.NewIndexedBatch()
		txnOps(t, batches[i], ops...)
	}
	h := holdPipeline(t, d)
	errs := make([]<-chan error, len(batches))
	for i, b := range batches {
		errs[i] = h.start(func() error { return b.CommitIfNoConflict(snap, NoSync) })
	}
	g := groups(d)
	h.releaseAndWait(t)
	require.NoError(t, <-errs[0])
	require.ErrorIs(t, <-errs[1], ErrConflict)
	require.NoError(t, <-errs[2])
	require.Equal(t, g+1, groups(d))
	require.Equal(t, []string{"a=first", "c=third", "k=first"}, txnState(t, d, nil))
}

// TestCommitGroupBounded checks that a transaction joins a group only while
// the group's entries and its own are few (maxCheckedGroupEntries): past
// that it leads a group of its own, and so does a batch whose precondition
// does not check the group (an ingestion's).
func TestCommitGroupBounded(t *testing.T) {
	d, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer d.Close()
	snap := d.NewSnapshot()
	defer snap.Close()
	big := d.NewBatch()
	for i := range maxCheckedGroupEntries + 1 {
		require.NoError(t, big.Set(fmt.Appendf(nil, "big%03d", i), nil))
	}
	small := d.NewIndexedBatch()
	txnOps(t, small, "set s 1")
	small2 := d.NewIndexedBatch()
	txnOps(t, small2, "set t 1")

	h := holdPipeline(t, d)
	e1 := h.start(func() error { return big.Commit(NoSync) })
	e2 := h.start(func() error { return small.CommitIfNoConflict(snap, NoSync) })
	e3 := h.start(func() error { return small2.CommitIfNoConflict(snap, NoSync) })
	e4 := h.start(func() error { return d.asLeader(func() error { return nil }) })
	g := groups(d)
	h.releaseAndWait(t)
	for _, e := range []<-chan error{e1, e2, e3, e4} {
		require.NoError(t, <-e)
	}
	// big; small and small2 together; the ingestion's stand-in alone.
	require.Equal(t, g+3, groups(d))
}

// TestCommitGroupBoundsGuards checks that a transaction's guarded ranges
// count toward its bound: one that writes one key but guards
// maxCheckedGroupEntries ranges, each of which its check would compare with
// every earlier entry of the group, leads a group of its own, and a small
// one behind it joins that group.
func TestCommitGroupBoundsGuards(t *testing.T) {
	d, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer d.Close()
	snap := d.NewSnapshot()
	defer snap.Close()
	plain := d.NewBatch()
	require.NoError(t, plain.Set([]byte("p"), nil))
	guarded := d.NewIndexedBatch()
	txnOps(t, guarded, "set g 1")
	for i := range maxCheckedGroupEntries {
		guarded.Guard(fmt.Appendf(nil, "r%03d", i), fmt.Appendf(nil, "r%03d~", i))
	}
	small := d.NewIndexedBatch()
	txnOps(t, small, "set s 1")

	h := holdPipeline(t, d)
	e1 := h.start(func() error { return plain.Commit(NoSync) })
	e2 := h.start(func() error { return guarded.CommitIfNoConflict(snap, NoSync) })
	e3 := h.start(func() error { return small.CommitIfNoConflict(snap, NoSync) })
	g := groups(d)
	h.releaseAndWait(t)
	for _, e := range []<-chan error{e1, e2, e3} {
		require.NoError(t, <-e)
	}
	// plain; guarded and small together.
	require.Equal(t, g+2, groups(d))
}

// TestCommitGroupSameKeyConcurrent has writers commit transactions from
// snapshots taken before any of them commits, round after round, each
// writing a key of its own and one key that all write: in every round
// exactly one commits and every other gets a conflict, the shared key
// holds the winner's value and every winner's own key is there. Run with
// -race.
func TestCommitGroupSameKeyConcurrent(t *testing.T) {
	const writers = 6
	rounds := 200
	if underRace {
		rounds = 50
	}
	d, err := Open("/db", concOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer d.Close()
	for r := range rounds {
		var ready, start sync.WaitGroup
		ready.Add(writers)
		start.Add(1)
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				snap := d.NewSnapshot()
				defer snap.Close()
				b := d.NewIndexedBatch()
				defer b.Close()
				val := fmt.Appendf(nil, "r%d-w%d", r, w)
				if err := b.Set([]byte("hot"), val); err != nil {
					errs[w] = err
					return
				}
				if err := b.Set(fmt.Appendf(nil, "own-r%03d-w%d", r, w), val); err != nil {
					errs[w] = err
					return
				}
				ready.Done()
				start.Wait()
				errs[w] = b.CommitIfNoConflict(snap, NoSync)
			})
		}
		ready.Wait()
		start.Done()
		wg.Wait()
		winner := -1
		for w, err := range errs {
			if err == nil {
				require.Equal(t, -1, winner, "round %d: two commits of the same key", r)
				winner = w
				continue
			}
			require.ErrorIs(t, err, ErrConflict, "round %d writer %d", r, w)
		}
		require.NotEqual(t, -1, winner, "round %d: nobody committed", r)
		v, err := d.Get([]byte("hot"), nil)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("r%d-w%d", r, winner), string(v))
		for w := range writers {
			_, err := d.Get(fmt.Appendf(nil, "own-r%03d-w%d", r, w), nil)
			if w == winner {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrNotFound)
			}
		}
	}
}

// TestCommitGroupDisjointConcurrent has writers commit transactions on keys
// of their own, all at once: none may conflict, and every key is there.
func TestCommitGroupDisjointConcurrent(t *testing.T) {
	const writers = 6
	per := 300
	if underRace {
		per = 100
	}
	d, err := Open("/db", concOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer d.Close()
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range per {
				snap := d.NewSnapshot()
				b := d.NewIndexedBatch()
				k := fmt.Appendf(nil, "w%d-%04d", w, i)
				err := b.Set(k, k)
				if err == nil {
					b.Guard(fmt.Appendf(nil, "w%d-", w), fmt.Appendf(nil, "w%d.", w))
					err = b.CommitIfNoConflict(snap, NoSync)
				}
				b.Close()
				snap.Close()
				if err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for w, err := range errs {
		require.NoError(t, err, "writer %d", w)
	}
	for w := range writers {
		for i := range per {
			k := fmt.Appendf(nil, "w%d-%04d", w, i)
			v, err := d.Get(k, nil)
			require.NoError(t, err)
			require.Equal(t, string(k), string(v))
		}
	}
}
