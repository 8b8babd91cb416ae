package reliability

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/kv"
	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/kvstore"
)

var (
	crashIterations = flag.Int("crash.iterations", 5, "kill-and-reopen rounds of TestCrashSQL")
	crashSeed       = flag.Uint64("crash.seed", 1, "seed of TestCrashSQL's kill moments")
)

// crashChildEnv carries "<round> <directory>" to the child process of
// TestCrashSQL.
const crashChildEnv = "STRATA_RELIABILITY_CRASH_CHILD"

// crashWorkers is the number of sessions of the child, so that commits
// group and conflict.
const crashWorkers = 3

// crashKV makes flushes and compactions frequent, so that kills land in
// the middle of them.
func crashKV() *kv.Options {
	return &kv.Options{
		MemtableSize:        256 << 10,
		L0CompactionTrigger: 2,
		TargetFileSize:      64 << 10,
		LBaseMaxBytes:       256 << 10,
		CacheSize:           256 << 10,
	}
}

// TestCrashChild is the process TestCrashSQL kills. It opens the store
// named in its environment with durable commits, sets up the bank if it is
// not there, and runs transfers from crashWorkers sessions until it is
// killed, printing "try <transfer>" before each attempt and "ack <id>"
// after its COMMIT returned ("deny <id>" after a write conflict).
func TestCrashChild(t *testing.T) {
	env := os.Getenv(crashChildEnv)
	if env == "" {
		t.Skip("runs only as the child process of TestCrashSQL")
	}
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		fmt.Printf(format+"\n", args...)
		mu.Unlock()
	}
	fail := func(format string, args ...any) {
		say("error: "+format, args...)
		os.Exit(2)
	}
	first, dir, ok := strings.Cut(env, " ")
	round, err := strconv.Atoi(first)
	if !ok || err != nil {
		fail("bad %s=%q", crashChildEnv, env)
	}
	st, err := openStore(dir, &kvstore.Options{KV: crashKV()})
	if err != nil {
		fail("open: %v", err)
	}
	say("open")
	if err := bankSetup(st); err != nil {
		fail("setup: %v", err)
	}
	say("ready")
	for w := range crashWorkers {
		go func() {
			rng := rand.New(rand.NewPCG(uint64(round), uint64(w)))
			ctx := st.session("bank")
			for seq := int64(0); seq < 1_000_000; seq++ {
				tr := randomTransfer(rng, int64(round)*10_000_000+int64(w)*1_000_000+seq, 400)
				say("try %s", tr)
				err := runTransfer(st.e, ctx, tr)
				switch {
				case err == nil:
					say("ack %d", tr.id)
				case sqlstore.IsConflict(err):
					say("deny %d", tr.id)
				default:
					fail("transfer %d: %v", tr.id, err)
				}
			}
			fail("never killed")
		}()
	}
	select {}
}

// TestCrashSQL kills (SIGKILL) a process that runs bank transfers with
// durable commits, at a random moment: after a random number of
// acknowledged transfers, or after a random delay that may land while it
// opens and recovers the store. Every round continues on the same
// directory, so recovery follows recovery. After each kill the store must
// open, and the bank invariants hold (checkBank): every acknowledged
// transfer is there, each whole, nothing that was not attempted, the
// total unchanged, the index in agreement with the rows.
func TestCrashSQL(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" {
		t.Skip("in the child process")
	}
	iterations := *crashIterations
	if testing.Short() {
		iterations = min(iterations, 2)
	}
	t.Logf("seed %d (rerun with -crash.seed=%d)", *crashSeed, *crashSeed)
	rng := rand.New(rand.NewPCG(*crashSeed, 0))
	dir := t.TempDir()
	l := newLedger()
	passed, killedEarly, totalAcked := 0, 0, 0
	for round := range iterations {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %s", crashChildEnv, round, dir))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		var killed atomic.Bool
		kill := func() {
			if killed.CompareAndSwap(false, true) {
				_ = cmd.Process.Kill()
			}
		}
		killAfter := -1 // acknowledgements
		var timer *time.Timer
		if rng.IntN(2) == 0 {
			killAfter = rng.IntN(200)
			// A backstop, so that a child that stops making progress
			// cannot hang the test; the round then checks what it left.
			timer = time.AfterFunc(time.Minute, kill)
		} else {
			timer = time.AfterFunc(time.Duration(rng.IntN(1500))*time.Millisecond, kill)
		}
		acked, ready := 0, false
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			word, rest, _ := strings.Cut(line, " ")
			switch word {
			case "open":
			case "ready":
				ready = true
				if killAfter == 0 {
					kill()
				}
			case "try":
				tr, err := parseTransfer(rest)
				require.NoError(t, err, line)
				l.tried[tr.id] = tr
			case "ack", "deny":
				id, err := strconv.ParseInt(rest, 10, 64)
				require.NoError(t, err, line)
				_, ok := l.tried[id]
				require.True(t, ok, "round %d: %q before its try", round, line)
				if word == "deny" {
					l.denied[id] = true
					break
				}
				l.acked[id] = true
				acked++
				if acked == killAfter {
					kill()
				}
			default:
				kill()
				_ = cmd.Wait()
				t.Fatalf("round %d: the child said %q\n%s", round, line, stderr.String())
			}
		}
		timer.Stop()
		kill()
		werr := cmd.Wait()
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL,
			"round %d: the child ended on its own (%v):\n%s", round, werr, stderr.String())
		if !ready {
			killedEarly++
		}

		st, err := openStore(dir, &kvstore.Options{KV: crashKV(), NoSync: true})
		require.NoError(t, err, "round %d: open after the kill", round)
		n := checkBank(t, st, l)
		require.NoError(t, st.s.Close())
		totalAcked += acked
		t.Logf("round %d: killed after %d acknowledgements (ready: %v); %d transfers logged, %d acknowledged in all",
			round, acked, ready, n, len(l.acked))
		passed++
	}
	t.Logf("%d of %d kill-and-reopen rounds passed (%d killed before the child was ready); %d transfers acknowledged, all present",
		passed, iterations, killedEarly, totalAcked)
}
