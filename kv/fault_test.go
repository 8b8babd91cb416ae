package kv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/strata-db/strata/kv/vfs/errorfs"
	"github.com/strata-db/strata/kv/wal"
	"github.com/stretchr/testify/require"
)

func faultDB(t *testing.T, mem *vfs.MemFS, efs *errorfs.FS) *DB {
	o := testOptions(efs)
	o.ResumeInterval = 10 * time.Millisecond
	d, err := Open("/db", o)
	require.NoError(t, err)
	return d
}

func keyN(i int) []byte { return fmt.Appendf(nil, "key%06d", i) }

// requireKeys checks that keys [0, n) hold their values.
func requireKeys(t *testing.T, d *DB, n int) {
	t.Helper()
	for i := range n {
		v, err := d.Get(keyN(i), nil)
		require.NoError(t, err, "key %d", i)
		require.Equal(t, fmt.Sprintf("v%d", i), string(v))
	}
}

// TestFaultWAL: a failed log write or sync fails the commit, makes the
// database read-only (no retry of the failed log), leaves reads working,
// and a reopen recovers every acknowledged commit.
func TestFaultWAL(t *testing.T) {
	for _, op := range []errorfs.Op{errorfs.OpWrite, errorfs.OpSync} {
		t.Run(op.String(), func(t *testing.T) {
			mem := vfs.NewMem()
			efs := errorfs.Wrap(mem, 1)
			d := faultDB(t, mem, efs)
			for i := range 100 {
				require.NoError(t, d.Set(keyN(i), fmt.Appendf(nil, "v%d", i), Sync))
			}
			efs.SetRules(&errorfs.Rule{Ops: op, Path: "*.log", Prob: 1})
			err := d.Set(keyN(100), []byte("v100"), Sync)
			require.Error(t, err)
			require.True(t, errors.Is(err, syscall.EIO), "%v", err)
			// No retry: the log stays failed even once the disk is fine.
			efs.SetRules()
			err = d.Set(keyN(101), []byte("x"), Sync)
			require.ErrorIs(t, err, ErrReadOnly)
			require.Error(t, d.BackgroundError())
			requireKeys(t, d, 100)
			d.Close()

			d, err = Open("/db", testOptions(mem))
			require.NoError(t, err)
			requireKeys(t, d, 100)
			require.NoError(t, d.Set(keyN(100), []byte("v100"), Sync))
			require.NoError(t, d.Close())
		})
	}
}

// TestFaultDiskFull: with the disk full, writes fail with a clear error and
// the database stays readable; once space is freed it carries on by itself,
// and nothing acknowledged is lost.
func TestFaultDiskFull(t *testing.T) {
	mem := vfs.NewMem()
	efs := errorfs.Wrap(mem, 2)
	d := faultDB(t, mem, efs)
	n := 0
	for ; n < 200; n++ {
		require.NoError(t, d.Set(keyN(n), fmt.Appendf(nil, "v%d", n), NoSync))
	}
	efs.SetRules(&errorfs.Rule{Ops: errorfs.OpWrite | errorfs.OpCreate | errorfs.OpSync, Prob: 1, Err: errorfs.ErrNoSpc, Short: true})
	// Unsynced commits are acknowledged from the memtable; the full disk
	// shows on the first write that reaches it.
	var failed error
	for i := 0; i < 5000 && failed == nil; i++ {
		if err := d.Set(keyN(n), fmt.Appendf(nil, "v%d", n), Sync); err != nil {
			failed = err
			break
		}
		n++
	}
	require.Error(t, failed)
	require.True(t, errors.Is(failed, syscall.ENOSPC), "%v", failed)
	err := d.Set([]byte("more"), []byte("x"), NoSync)
	require.ErrorIs(t, err, ErrReadOnly)
	require.True(t, errors.Is(err, syscall.ENOSPC), "the error says why: %v", err)
	requireKeys(t, d, n)

	// Space is freed: the database resumes on its own.
	efs.SetRules()
	require.Eventually(t, func() bool { return d.BackgroundError() == nil }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, d.Set(keyN(n), fmt.Appendf(nil, "v%d", n), Sync))
	n++
	requireKeys(t, d, n)

	// Everything acknowledged survives a power loss after the resume.
	crashed := mem.CrashClone(vfs.CrashOptions{})
	require.NoError(t, d.Close())
	d, err = Open("/db", testOptions(crashed))
	require.NoError(t, err)
	requireKeys(t, d, n)
	require.NoError(t, d.Close())
}

// TestFaultFlush: a failed flush stops background work, shows in the
// statistics and on every later write; reads keep working; Resume after
// the fault is fixed carries on.
func TestFaultFlush(t *testing.T) {
	mem := vfs.NewMem()
	efs := errorfs.Wrap(mem, 3)
	d := faultDB(t, mem, efs)
	for i := range 100 {
		require.NoError(t, d.Set(keyN(i), fmt.Appendf(nil, "v%d", i), NoSync))
	}
	efs.SetRules(&errorfs.Rule{Ops: errorfs.OpCreate | errorfs.OpWrite, Path: "*.sst", Prob: 1})
	require.Error(t, d.Flush())
	require.Error(t, d.BackgroundError())
	require.Positive(t, d.Stats().Get(stats.BackgroundErrs))
	require.ErrorIs(t, d.Set([]byte("x"), []byte("y"), nil), ErrReadOnly)
	requireKeys(t, d, 100)
	// An I/O error does not resume by itself.
	time.Sleep(50 * time.Millisecond)
	require.Error(t, d.BackgroundError())

	efs.SetRules()
	require.NoError(t, d.Resume())
	require.NoError(t, d.Set(keyN(100), []byte("v100"), Sync))
	require.NoError(t, d.Flush())
	requireKeys(t, d, 101)
	require.NoError(t, d.Close())
	d, err := Open("/db", testOptions(mem))
	require.NoError(t, err)
	requireKeys(t, d, 101)
	require.NoError(t, d.Close())
}

// TestFaultResumeLogCreate: a Resume after a failed flush (the log itself
// never failed) flushes the memtables and then cannot create its new log.
// The database must stay read-only: a commit acknowledged without a log
// would be lost by the next power loss. Once the disk is fine, Resume
// carries on, and a power loss keeps every acknowledged commit.
func TestFaultResumeLogCreate(t *testing.T) {
	mem := vfs.NewMem()
	efs := errorfs.Wrap(mem, 5)
	o := testOptions(efs)
	o.ResumeInterval = time.Hour
	d, err := Open("/db", o)
	require.NoError(t, err)
	n := 0
	for ; n < 100; n++ {
		require.NoError(t, d.Set(keyN(n), fmt.Appendf(nil, "v%d", n), Sync))
	}
	efs.SetRules(&errorfs.Rule{Ops: errorfs.OpCreate, Path: "*.sst", Prob: 1})
	require.Error(t, d.Flush())
	require.Error(t, d.BackgroundError(), "the failed flush")

	efs.SetRules(&errorfs.Rule{Ops: errorfs.OpCreate, Path: "*.log", Prob: 1})
	require.Error(t, d.Resume(), "the new log cannot be created")
	require.Error(t, d.BackgroundError(), "no log: still read-only")
	err = d.Set([]byte("unlogged"), []byte("x"), Sync)
	require.ErrorIs(t, err, ErrReadOnly, "a commit with no log to go to")
	requireKeys(t, d, n)

	efs.SetRules()
	require.NoError(t, d.Resume())
	require.NoError(t, d.BackgroundError())
	for ; n < 110; n++ {
		require.NoError(t, d.Set(keyN(n), fmt.Appendf(nil, "v%d", n), Sync))
	}
	crashed := mem.CrashClone(vfs.CrashOptions{})
	require.NoError(t, d.Close())
	d, err = Open("/db", testOptions(crashed))
	require.NoError(t, err)
	requireKeys(t, d, n)
	require.NoError(t, d.Close())
}

// TestFaultStaleLogFlush: the log flusher loads the current log without
// the database's lock and writes it afterwards, so the log it writes may
// have been retired meanwhile, by a rotation or by a Resume after that
// log's sync failed. The retired log's failure (its sticky error, or
// wal.ErrClosed) must not put the database back into the error state: a
// Resume that succeeded must stay resumed. The test takes the flusher's
// place at the moment that matters, between the load and the write.
func TestFaultStaleLogFlush(t *testing.T) {
	for _, retire := range []string{"resume", "rotation"} {
		t.Run(retire, func(t *testing.T) {
			mem := vfs.NewMem()
			efs := errorfs.Wrap(mem, 4)
			d := faultDB(t, mem, efs)
			n := 0
			for ; n < 100; n++ {
				require.NoError(t, d.Set(keyN(n), fmt.Appendf(nil, "v%d", n), Sync))
			}
			// Acknowledged from the memtable, the records wait in the log's buffer.
			for ; n < 110; n++ {
				require.NoError(t, d.Set(keyN(n), fmt.Appendf(nil, "v%d", n), NoSync))
			}
			stale := d.logW.Load()
			require.NotNil(t, stale)
			switch retire {
			case "resume":
				efs.SetRules(&errorfs.Rule{Ops: errorfs.OpSync, Path: "*.log", Prob: 1})
				require.Error(t, d.Set([]byte("failed"), []byte("x"), Sync))
				require.Error(t, d.BackgroundError())
				efs.SetRules()
				require.NoError(t, d.Resume())
				err := stale.Flush()
				require.Error(t, err, "the failed log keeps its error")
				require.NotErrorIs(t, err, wal.ErrClosed, "the failed log keeps its error, not ErrClosed")
			case "rotation":
				require.NoError(t, d.Flush())
				require.ErrorIs(t, stale.Flush(), wal.ErrClosed)
			}
			require.NotSame(t, stale, d.logW.Load(), "the log was retired")

			d.flushLog(stale) // what the flusher does when it loaded stale first
			require.NoError(t, d.BackgroundError(), "the retired log's failure made the database read-only")
			require.NoError(t, d.Set(keyN(n), fmt.Appendf(nil, "v%d", n), Sync))
			n++
			requireKeys(t, d, n)
			_, err := d.Get([]byte("failed"), nil)
			require.ErrorIs(t, err, ErrNotFound, "the failed commit")
			crashed := mem.CrashClone(vfs.CrashOptions{})
			require.NoError(t, d.Close())

			for _, fs := range []vfs.FS{mem, crashed} {
				d, err := Open("/db", testOptions(fs))
				require.NoError(t, err)
				requireKeys(t, d, n)
				require.NoError(t, d.Close())
			}
		})
	}
}

// TestFaultRandom injects random faults into every kind of write while a
// writer commits synced batches and flushes and compactions run, then
// clears them and simulates a power loss: every acknowledged commit must be
// there, and every batch whole.
func TestFaultRandom(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6}
	if testing.Short() {
		seeds = seeds[:2]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 9))
			mem := vfs.NewMem()
			efs := errorfs.Wrap(mem, seed)
			o := testOptions(efs)
			o.ResumeInterval = time.Hour // resumed by hand below
			d, err := Open("/db", o)
			require.NoError(t, err)
			acked := map[int]bool{}
			batches := 0
			for round := range 6 {
				efs.SetRules(&errorfs.Rule{Ops: errorfs.OpWriteAny, Prob: 0.02 + 0.04*rng.Float64(), Short: true,
					Err: []error{errorfs.ErrIO, errorfs.ErrNoSpc}[round%2]})
				for range 300 {
					b := d.NewBatch()
					for k := range 4 {
						b.Set(fmt.Appendf(nil, "b%06d-%d", batches, k), make([]byte, 200))
					}
					if rng.IntN(3) == 0 {
						b.Set(fmt.Appendf(nil, "pad%06d", batches), make([]byte, 4000))
					}
					if err := b.Commit(Sync); err == nil {
						acked[batches] = true
					}
					batches++
				}
				efs.SetRules()
				d.Resume() // may fail if the manifest failed: then reopen
				if d.BackgroundError() != nil {
					d.Close()
					d, err = Open("/db", o)
					require.NoError(t, err, "reopen after faults")
				}
			}
			// Power loss while the database is open.
			crashed := mem.CrashClone(vfs.CrashOptions{})
			d.Close()
			d, err = Open("/db", testOptions(crashed))
			require.NoError(t, err)
			defer d.Close()
			for i := range batches {
				var present int
				for k := range 4 {
					if _, err := d.Get(fmt.Appendf(nil, "b%06d-%d", i, k), nil); err == nil {
						present++
					} else {
						require.ErrorIs(t, err, ErrNotFound)
					}
				}
				require.True(t, present == 0 || present == 4, "batch %d is partly present (%d of 4)", i, present)
				if acked[i] {
					require.Equal(t, 4, present, "acknowledged batch %d lost", i)
				}
			}
			require.Positive(t, efs.Injected.Load())
		})
	}
}
