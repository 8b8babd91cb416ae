package kv

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

var (
	crashIterations = flag.Int("crash.iterations", 8, "kill-and-recover rounds of TestCrashProcess")
	crashSeed       = flag.Uint64("crash.seed", 0, "seed of the crash tests (0: a fixed seed per test)")
)

// crashChildEnv carries "<first batch> <directory>" to the child process of
// TestCrashProcess.
const crashChildEnv = "STRATA_KV_CRASH_CHILD"

const crashKeysPerBatch = 8

// crashOptions make flushes and compactions frequent, so that crashes land
// in the middle of them.
func crashOptions(fs vfs.FS) *Options {
	return &Options{
		FS:                  fs,
		MemtableSize:        256 << 10,
		L0CompactionTrigger: 2,
		TargetFileSize:      64 << 10,
		LBaseMaxBytes:       256 << 10,
		CacheSize:           256 << 10,
	}
}

func crashKey(n, i int) string { return fmt.Sprintf("b%08d-k%02d", n, i) }

// crashValue is the value of key i of batch n: it names both, and its
// length varies.
func crashValue(n, i int) string {
	return fmt.Sprintf("%08d-%02d|%s", n, i, strings.Repeat("v", 100+(n*31+i*17)%900))
}

// crashParseKey returns the batch and index of a key made by crashKey.
func crashParseKey(k string) (n, i int, ok bool) {
	if len(k) != 13 || k[0] != 'b' || k[9:11] != "-k" {
		return 0, 0, false
	}
	n, err1 := strconv.Atoi(k[1:9])
	i, err2 := strconv.Atoi(k[11:])
	return n, i, err1 == nil && err2 == nil
}

// crashSeedFor returns the seed a crash test runs with.
func crashSeedFor(t *testing.T, fixed uint64) uint64 {
	seed := fixed
	if *crashSeed != 0 {
		seed = *crashSeed
	}
	t.Logf("seed %d (rerun with -crash.seed=%d)", seed, seed)
	return seed
}

// TestCrashChild is the child process of TestCrashProcess: it opens the
// database named in its environment and commits synced batches in a loop,
// printing "ack <n>" after batch n's commit returns, until it is killed.
func TestCrashChild(t *testing.T) {
	env := os.Getenv(crashChildEnv)
	if env == "" {
		t.Skip("runs only as the child process of TestCrashProcess")
	}
	first, dir, ok := strings.Cut(env, " ")
	start, err := strconv.Atoi(first)
	if !ok || err != nil {
		fmt.Printf("error: bad %s=%q\n", crashChildEnv, env)
		os.Exit(2)
	}
	d, err := Open(dir, crashOptions(vfs.Default))
	if err != nil {
		fmt.Printf("error: open: %v\n", err)
		os.Exit(2)
	}
	fmt.Println("open")
	for n := start; n < start+1_000_000; n++ {
		b := d.NewBatch()
		for i := range crashKeysPerBatch {
			b.Set([]byte(crashKey(n, i)), []byte(crashValue(n, i)))
		}
		if err := b.Commit(Sync); err != nil {
			fmt.Printf("error: commit %d: %v\n", n, err)
			os.Exit(2)
		}
		fmt.Printf("ack %d\n", n)
	}
	fmt.Println("error: never killed")
	os.Exit(2)
}

// crashCheckBatches reads every key of d and checks that it holds exactly
// the batches [0, n) for some n, each whole with its values, and returns n.
func crashCheckBatches(t *testing.T, d *DB) int {
	t.Helper()
	it, err := d.NewIter(nil)
	require.NoError(t, err)
	counts := map[int]int{}
	for ok := it.First(); ok; ok = it.Next() {
		k := string(it.Key())
		n, i, ok := crashParseKey(k)
		require.True(t, ok, "unexpected key %q", k)
		require.Equal(t, crashValue(n, i), string(it.Value()), "value of key %q", k)
		counts[n]++
	}
	require.NoError(t, it.Error())
	require.NoError(t, it.Close())
	for n := range len(counts) {
		require.Equal(t, crashKeysPerBatch, counts[n], "batch %d is partly present (or a gap precedes batch %d)", n, len(counts)-1)
	}
	return len(counts)
}

// TestCrashProcess kills a process that commits synced batches with SIGKILL
// at a random moment, reopens its database, and checks that it opens
// cleanly, that every acknowledged batch is there, and that the batches
// present are exactly those committed before some point, each one whole.
// Every round continues on the same directory, so recovery follows
// recovery.
func TestCrashProcess(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" {
		t.Skip("in the child process")
	}
	rng := rand.New(rand.NewPCG(crashSeedFor(t, 1), 0))
	iterations := *crashIterations
	if testing.Short() {
		iterations = min(iterations, 3)
	}
	dir := t.TempDir()
	present := 0 // batches [0, present) are in the database
	for iter := range iterations {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %s", crashChildEnv, present, dir))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())

		// Kill after a random number of acknowledged batches, or after a
		// random delay (which may land during the child's recovery).
		killAfter := -1
		var timer *time.Timer
		var killed atomic.Bool
		kill := func() {
			if killed.CompareAndSwap(false, true) {
				cmd.Process.Kill()
			}
		}
		t.Cleanup(kill) // should the round fail before the kill
		if rng.IntN(2) == 0 {
			killAfter = rng.IntN(250)
			// A backstop, so that a child that stops making progress cannot
			// hang the test; the round then checks what it left.
			timer = time.AfterFunc(time.Minute, func() {
				t.Logf("round %d: the child did not reach %d acknowledgements in a minute; killing it", iter, killAfter)
				kill()
			})
		} else {
			timer = time.AfterFunc(time.Duration(rng.IntN(400))*time.Millisecond, kill)
		}
		acked := 0
		var output []string
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			output = append(output, line)
			switch {
			case line == "open":
				if killAfter == 0 {
					kill()
				}
			case strings.HasPrefix(line, "ack "):
				n, err := strconv.Atoi(line[4:])
				require.NoError(t, err, line)
				require.Equal(t, present+acked, n, "the child acknowledged batches out of order")
				acked++
				if acked == killAfter {
					kill()
				}
			}
		}
		if timer != nil {
			timer.Stop()
		}
		kill() // in case the child stopped printing without being killed
		werr := cmd.Wait()
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL,
			"the child ended on its own (%v):\n%s\n%s", werr, strings.Join(output, "\n"), stderr.String())

		d, err := Open(dir, crashOptions(vfs.Default))
		require.NoError(t, err, "round %d: open after the crash", iter)
		got := crashCheckBatches(t, d)
		lastAcked := present + acked - 1
		// The child commits one batch at a time: at most one batch past the
		// last acknowledged one can be there (committed, not yet printed).
		require.GreaterOrEqual(t, got, lastAcked+1, "round %d: acknowledged batches are missing", iter)
		require.LessOrEqual(t, got, lastAcked+2, "round %d: more batches than were committed", iter)
		m := d.Metrics()
		t.Logf("round %d: %d acknowledged, %d present; files per level %v", iter, acked, got-present, func() (n [NumLevels]int) {
			for i, l := range m.Levels {
				n[i] = l.NumFiles
			}
			return n
		}())
		require.NoError(t, d.Close())
		present = got
	}
}

// crashBatchOps returns the writes of batch n of TestCrashPowerLoss: its
// own keys, and sometimes a deletion or a range deletion of older batches'
// keys, so that recovery must also replay deletions in order.
func crashBatchOps(n int) []modelOp {
	var ops []modelOp
	for i := range crashKeysPerBatch {
		ops = append(ops, modelOp{kind: 's', key: crashKey(n, i), value: crashValue(n, i)})
	}
	if n%7 == 3 && n >= 5 {
		ops = append(ops, modelOp{kind: 'd', key: crashKey(n-5, 1)})
	}
	if n%10 == 9 && n >= 19 {
		ops = append(ops, modelOp{kind: 'r', key: crashKey(n-19, 0), end: crashKey(n-12, 0)})
	}
	return ops
}

// crashModelAfter returns the state after batches [0, n).
func crashModelAfter(n int) kvModel {
	m := kvModel{}
	for i := range n {
		applyOps(m, crashBatchOps(i))
	}
	return m
}

// TestCrashPowerLoss runs a workload of synced and unsynced commits, with
// flushes and compactions, on an in-memory filesystem and takes crash
// images of it at random moments (losing every unsynced byte, or keeping a
// random part of the unsynced tails). Each image must open, and hold the
// state after some prefix of the commits that includes every commit
// acknowledged with Sync (and so every commit before it): no partial batch,
// no gap, nothing reordered.
func TestCrashPowerLoss(t *testing.T) {
	batches, images := 1200, 16
	if underRace {
		batches, images = 500, 8
	}
	for _, keep := range []float64{0, 0.5, 1} {
		t.Run(fmt.Sprintf("keep unsynced %v", keep), func(t *testing.T) {
			seed := crashSeedFor(t, 2+uint64(keep*10))
			rng := rand.New(rand.NewPCG(seed, 1))
			fs := vfs.NewMem()
			opts := crashOptions(fs)
			d, err := Open("/db", opts)
			require.NoError(t, err)

			// durable counts the batches acknowledged as durable (the last
			// synced one and all before it); committed those whose commit
			// returned.
			var durable, committed atomic.Int64
			var g concGroup
			g.Go("writer", func() error {
				wrng := rand.New(rand.NewPCG(seed, 2))
				for n := 0; n < batches && !g.stop.Load(); n++ {
					b := d.NewBatch()
					for _, op := range crashBatchOps(n) {
						switch op.kind {
						case 's':
							b.Set([]byte(op.key), []byte(op.value))
						case 'd':
							b.Delete([]byte(op.key))
						case 'r':
							b.DeleteRange([]byte(op.key), []byte(op.end))
						}
					}
					synced := wrng.IntN(4) == 0
					if err := b.Commit(&WriteOptions{Sync: synced}); err != nil {
						return fmt.Errorf("commit %d: %w", n, err)
					}
					committed.Store(int64(n + 1))
					if synced {
						durable.Store(int64(n + 1))
					}
				}
				return nil
			})
			g.Go("flusher", func() error {
				frng := rand.New(rand.NewPCG(seed, 3))
				for committed.Load() < int64(batches) && !g.stop.Load() {
					time.Sleep(time.Duration(1+frng.IntN(4)) * time.Millisecond)
					var err error
					if frng.IntN(4) == 0 {
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

			// Take the images while the workload runs, at random moments (once
			// a random number of batches committed), then check them.
			type image struct {
				fs            *vfs.MemFS
				durable, upTo int64
			}
			targets := make([]int, images)
			for i := range targets {
				targets[i] = rng.IntN(batches)
			}
			sort.Ints(targets)
			var imgs []image
			for i, target := range targets {
				for committed.Load() < int64(target) && !g.stop.Load() {
					runtime.Gosched()
				}
				durableBefore := durable.Load()
				crashed := fs.CrashClone(vfs.CrashOptions{KeepUnsynced: keep, Rand: rand.New(rand.NewPCG(seed, uint64(i)))})
				// A commit may be in flight: it may be in the image.
				imgs = append(imgs, image{fs: crashed, durable: durableBefore, upTo: committed.Load() + 1})
			}
			require.NoError(t, g.Wait())
			for i, img := range imgs {
				cd, err := Open("/db", crashOptions(img.fs))
				require.NoError(t, err, "image %d: open", i)
				got := crashPrefixLen(t, cd)
				t.Logf("image %d: %d durable, %d committed, %d recovered", i, img.durable, img.upTo-1, got)
				require.GreaterOrEqual(t, int64(got), img.durable, "image %d: synced commits were lost", i)
				require.LessOrEqual(t, int64(got), img.upTo, "image %d: more batches than committed", i)
				require.Empty(t, crashDiff(crashModelAfter(got), crashState(t, cd)), "image %d: not the state after %d batches", i, got)
				require.NoError(t, cd.Close())
			}
			st := d.Stats()
			t.Logf("flushes %d, compactions %d, wal syncs %d", st.Get(stats.Flushes), st.Get(stats.Compactions), st.Get(stats.WALSyncs))
			require.Positive(t, st.Get(stats.Flushes))
			require.Positive(t, st.Get(stats.Compactions))

			// A last image once the writer is done: only the unsynced tail may
			// be missing.
			crashed := fs.CrashClone(vfs.CrashOptions{KeepUnsynced: keep, Rand: rng})
			require.NoError(t, d.Close())
			cd, err := Open("/db", crashOptions(crashed))
			require.NoError(t, err)
			got := crashPrefixLen(t, cd)
			require.GreaterOrEqual(t, int64(got), durable.Load())
			require.Empty(t, crashDiff(crashModelAfter(got), crashState(t, cd)))
			require.NoError(t, cd.Close())
		})
	}
}

// crashPrefixLen returns how many batches of TestCrashPowerLoss d holds:
// one more than the newest batch with a key present (a batch's keys are
// deleted only by later batches).
func crashPrefixLen(t *testing.T, d *DB) int {
	t.Helper()
	it, err := d.NewIter(nil)
	require.NoError(t, err)
	defer it.Close()
	if !it.Last() {
		require.NoError(t, it.Error())
		return 0
	}
	n, _, ok := crashParseKey(string(it.Key()))
	require.True(t, ok, "unexpected key %q", it.Key())
	return n + 1
}

// crashState returns every key and value of d.
func crashState(t *testing.T, d *DB) kvModel {
	t.Helper()
	it, err := d.NewIter(nil)
	require.NoError(t, err)
	m := kvModel{}
	for ok := it.First(); ok; ok = it.Next() {
		m[string(it.Key())] = string(it.Value())
	}
	require.NoError(t, it.Error())
	require.NoError(t, it.Close())
	return m
}

// crashDiff describes the first differences between two states, or returns
// "" when they are equal.
func crashDiff(want, got kvModel) string {
	var diffs []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("missing %q", k))
		} else if g != v {
			diffs = append(diffs, fmt.Sprintf("%q = %.20q, want %.20q", k, g, v))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("unexpected %q", k))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 10 {
		diffs = append(diffs[:10], fmt.Sprintf("and %d more", len(diffs)-10))
	}
	return strings.Join(diffs, "; ")
}
