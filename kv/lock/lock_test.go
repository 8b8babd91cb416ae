package lock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const forever = time.Hour

// waitQueued returns once n requests wait in t.
func waitQueued(t *testing.T, tb *Table, n int) {
	t.Helper()
	for {
		tb.mu.Lock()
		w := tb.waiting
		tb.mu.Unlock()
		if w == n {
			return
		}
		if w > n {
			t.Fatalf("%d requests wait, want %d", w, n)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

// lockAsync runs o.Lock in a goroutine and returns its result channel.
func lockAsync(o *Owner, key string, mode Mode, wait time.Duration) chan error {
	ch := make(chan error, 1)
	go func() { ch <- o.Lock(context.Background(), []byte(key), mode, wait) }()
	return ch
}

func requireBlocked(t *testing.T, ch chan error) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("request returned %v, want it to wait", err)
	default:
	}
}

func TestSharedAndExclusive(t *testing.T) {
	tb := New()
	ctx := context.Background()
	a, b, c := tb.NewOwner(1), tb.NewOwner(2), tb.NewOwner(3)
	require.NoError(t, a.Lock(ctx, []byte("k"), Shared, 0))
	require.NoError(t, b.Lock(ctx, []byte("k"), Shared, 0))
	err := c.Lock(ctx, []byte("k"), Exclusive, 0)
	require.ErrorIs(t, err, ErrNotAvailable)
	var le *Error
	require.ErrorAs(t, err, &le)
	require.Equal(t, []byte("k"), le.Key)
	require.Contains(t, []uint64{1, 2}, le.Blocker)

	// Re-entrant: asking again, or for S while holding X, returns at once.
	require.NoError(t, a.Lock(ctx, []byte("k"), Shared, 0))
	require.NoError(t, c.Lock(ctx, []byte("x"), Exclusive, 0))
	require.NoError(t, c.Lock(ctx, []byte("x"), Shared, 0))
	require.Equal(t, Exclusive, c.Holds([]byte("x")))
	require.Equal(t, 1, c.NumHeld())

	a.ReleaseAll()
	b.ReleaseAll()
	require.NoError(t, c.Lock(ctx, []byte("k"), Exclusive, 0))
	c.ReleaseAll()
	require.Empty(t, tb.Locks())
	require.Empty(t, tb.keys, "released entries leave the table")
}

func TestWaitThenGrantInOrder(t *testing.T) {
	tb := New()
	ctx := context.Background()
	a, b, c := tb.NewOwner(1), tb.NewOwner(2), tb.NewOwner(3)
	require.NoError(t, a.Lock(ctx, []byte("k"), Exclusive, 0))
	bch := lockAsync(b, "k", Exclusive, forever)
	waitQueued(t, tb, 1)
	cch := lockAsync(c, "k", Shared, forever)
	waitQueued(t, tb, 2)

	waits := tb.Waits()
	require.Len(t, waits, 3, "b waits for a; c for a and for b queued ahead: %+v", waits)

	a.ReleaseAll()
	require.NoError(t, <-bch)
	requireBlocked(t, cch)
	waitQueued(t, tb, 1)
	b.ReleaseAll()
	require.NoError(t, <-cch)
	require.Equal(t, Shared, c.Holds([]byte("k")))
}

func TestQueuedWriterHoldsOffLaterReaders(t *testing.T) {
	tb := New()
	ctx := context.Background()
	a, b, c := tb.NewOwner(1), tb.NewOwner(2), tb.NewOwner(3)
	require.NoError(t, a.Lock(ctx, []byte("k"), Shared, 0))
	bch := lockAsync(b, "k", Exclusive, forever)
	waitQueued(t, tb, 1)
	// A shared request compatible with a's lock still queues behind b.
	err := c.Lock(ctx, []byte("k"), Shared, 0)
	require.ErrorIs(t, err, ErrNotAvailable)
	var le *Error
	require.ErrorAs(t, err, &le)
	require.Equal(t, uint64(2), le.Blocker)
	a.ReleaseAll()
	require.NoError(t, <-bch)
}

func TestTimeoutAndCancel(t *testing.T) {
	tb := New()
	ctx := context.Background()
	a, b, c := tb.NewOwner(1), tb.NewOwner(2), tb.NewOwner(3)
	require.NoError(t, a.Lock(ctx, []byte("k"), Exclusive, 0))
	require.NoError(t, b.Lock(ctx, []byte("held"), Exclusive, 0))

	err := b.Lock(ctx, []byte("k"), Exclusive, time.Millisecond)
	require.ErrorIs(t, err, ErrTimeout)
	require.Equal(t, Exclusive, b.Holds([]byte("held")), "a failed request keeps the owner's other locks")

	cctx, cancel := context.WithCancel(ctx)
	ch := make(chan error, 1)
	go func() { ch <- c.Lock(cctx, []byte("k"), Shared, forever) }()
	waitQueued(t, tb, 1)
	cancel()
	require.ErrorIs(t, <-ch, context.Canceled)
	waitQueued(t, tb, 0)
	require.Equal(t, Mode(0), c.Holds([]byte("k")))
}

// A request that leaves the queue lets the ones behind it through.
func TestLeavingQueueGrantsNext(t *testing.T) {
	tb := New()
	ctx := context.Background()
	a, b, c := tb.NewOwner(1), tb.NewOwner(2), tb.NewOwner(3)
	require.NoError(t, a.Lock(ctx, []byte("k"), Shared, 0))
	bctx, cancel := context.WithCancel(ctx)
	bch := make(chan error, 1)
	go func() { bch <- b.Lock(bctx, []byte("k"), Exclusive, forever) }()
	waitQueued(t, tb, 1)
	cch := lockAsync(c, "k", Shared, forever)
	waitQueued(t, tb, 2)
	cancel()
	require.ErrorIs(t, <-bch, context.Canceled)
	require.NoError(t, <-cch, "c's shared lock is compatible with a's once b is gone")
}

func TestDeadlockTwoOwners(t *testing.T) {
	tb := New()
	ctx := context.Background()
	a, b := tb.NewOwner(1), tb.NewOwner(2)
	require.NoError(t, a.Lock(ctx, []byte("x"), Exclusive, 0))
	require.NoError(t, b.Lock(ctx, []byte("y"), Exclusive, 0))
	ach := lockAsync(a, "y", Exclusive, forever)
	waitQueued(t, tb, 1)
	err := b.Lock(ctx, []byte("x"), Exclusive, forever)
	require.ErrorIs(t, err, ErrDeadlock)
	var le *Error
	require.ErrorAs(t, err, &le)
	require.Equal(t, uint64(1), le.Blocker)
	requireBlocked(t, ach)
	b.ReleaseAll() // the victim rolls back
	require.NoError(t, <-ach)
}

func TestDeadlockThreeOwners(t *testing.T) {
	tb := New()
	ctx := context.Background()
	o := []*Owner{tb.NewOwner(1), tb.NewOwner(2), tb.NewOwner(3)}
	keys := []string{"a", "b", "c"}
	for i := range o {
		require.NoError(t, o[i].Lock(ctx, []byte(keys[i]), Exclusive, 0))
	}
	ch0 := lockAsync(o[0], "b", Exclusive, forever)
	waitQueued(t, tb, 1)
	ch1 := lockAsync(o[1], "c", Shared, forever)
	waitQueued(t, tb, 2)
	require.ErrorIs(t, o[2].Lock(ctx, []byte("a"), Shared, forever), ErrDeadlock)
	o[2].ReleaseAll()
	require.NoError(t, <-ch1)
	o[1].ReleaseAll()
	require.NoError(t, <-ch0)
}

func TestUpgrade(t *testing.T) {
	tb := New()
	ctx := context.Background()
	a, b, c := tb.NewOwner(1), tb.NewOwner(2), tb.NewOwner(3)
	// The only holder upgrades at once, even past a queue.
	require.NoError(t, a.Lock(ctx, []byte("k"), Shared, 0))
	cch := lockAsync(c, "k", Exclusive, forever)
	waitQueued(t, tb, 1)
	require.NoError(t, a.Lock(ctx, []byte("k"), Exclusive, 0))
	require.Equal(t, Exclusive, a.Holds([]byte("k")))
	a.ReleaseAll()
	require.NoError(t, <-cch)
	c.ReleaseAll()

	// Two holders upgrading wait for each other: the second is the victim.
	require.NoError(t, a.Lock(ctx, []byte("k"), Shared, 0))
	require.NoError(t, b.Lock(ctx, []byte("k"), Shared, 0))
	cch = lockAsync(c, "k", Exclusive, forever)
	waitQueued(t, tb, 1)
	ach := lockAsync(a, "k", Exclusive, forever)
	waitQueued(t, tb, 2)
	// a's upgrade went ahead of c: it waits for b alone.
	for _, w := range tb.Waits() {
		if w.Waiter == 1 {
			require.Equal(t, uint64(2), w.Blocker)
		}
	}
	require.ErrorIs(t, b.Lock(ctx, []byte("k"), Exclusive, forever), ErrDeadlock)
	b.ReleaseAll()
	require.NoError(t, <-ach)
	requireBlocked(t, cch)
	a.ReleaseAll()
	require.NoError(t, <-cch)
}

// Owners increment counters under exclusive locks taken in random order,
// retrying after a deadlock as a transaction would: every increment lands
// and no two owners ever hold the same key together.
func TestConcurrentCounters(t *testing.T) {
	tb := New()
	const owners, rounds, nkeys = 8, 200, 5
	var counters [nkeys]int
	var inside [nkeys]int
	var mu sync.Mutex // guards inside: checks, never orders
	var wg sync.WaitGroup
	deadlocks, want := 0, 0
	for id := range owners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := tb.NewOwner(uint64(id + 1))
			r := rand.New(rand.NewPCG(uint64(id), 7))
			for range rounds {
				k1, k2 := r.IntN(nkeys), r.IntN(nkeys)
				mu.Lock()
				want++
				if k2 != k1 {
					want++
				}
				mu.Unlock()
				for {
					err := o.Lock(context.Background(), fmt.Appendf(nil, "k%d", k1), Exclusive, forever)
					if err == nil {
						err = o.Lock(context.Background(), fmt.Appendf(nil, "k%d", k2), Exclusive, forever)
					}
					if errors.Is(err, ErrDeadlock) {
						mu.Lock()
						deadlocks++
						mu.Unlock()
						o.ReleaseAll()
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					break
				}
				mu.Lock()
				for _, k := range []int{k1, k2} {
					if inside[k]++; inside[k] > 1 && k1 != k2 {
						t.Errorf("two owners hold k%d", k)
					}
				}
				mu.Unlock()
				counters[k1]++
				if k2 != k1 {
					counters[k2]++
				}
				mu.Lock()
				inside[k1]--
				if k2 != k1 {
					inside[k2]--
				} else {
					inside[k1]--
				}
				mu.Unlock()
				o.ReleaseAll()
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, c := range counters {
		total += c
	}
	require.Equal(t, want, total, "every increment under a lock lands")
	require.Empty(t, tb.Locks())
	t.Logf("%d deadlocks resolved", deadlocks)
}

func TestUncontendedLockAllocatesNothing(t *testing.T) {
	tb := New()
	o := tb.NewOwner(1)
	key := []byte("some key")
	ctx := context.Background()
	// Warm the free list and the owner's held slice.
	require.NoError(t, o.Lock(ctx, key, Exclusive, 0))
	o.ReleaseAll()
	allocs := testing.AllocsPerRun(100, func() {
		if err := o.Lock(ctx, key, Exclusive, 0); err != nil {
			t.Fatal(err)
		}
		o.ReleaseAll()
	})
	require.Zero(t, allocs)
}

func BenchmarkUncontended(b *testing.B) {
	tb := New()
	o := tb.NewOwner(1)
	keys := make([][]byte, 64)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "table/1/row/%08d", i)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = o.Lock(ctx, keys[i%len(keys)], Exclusive, 0)
		if i%len(keys) == len(keys)-1 {
			o.ReleaseAll()
		}
	}
}
