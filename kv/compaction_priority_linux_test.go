package kv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// threadSched is what /proc and ioprio_get say about one thread.
type threadSched struct {
	tid    int
	nice   int
	policy int
	ioprio int
}

// readThreadSched reads the scheduling of the calling thread. It may run
// on any goroutine, so it returns its error instead of failing the test.
func readThreadSched() (threadSched, error) {
	tid := unix.Gettid()
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/stat")
	if err != nil {
		return threadSched{}, err
	}
	// The fields after the command name, which ends at the last ')', are
	// numbered from 3 (proc_pid_stat(5)): nice is 19, policy 41.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 41-3+1 {
		return threadSched{}, fmt.Errorf("%d fields in %q", len(fields), s)
	}
	nice, err := strconv.Atoi(fields[19-3])
	if err != nil {
		return threadSched{}, err
	}
	policy, err := strconv.Atoi(fields[41-3])
	if err != nil {
		return threadSched{}, err
	}
	ioprio, _, errno := unix.Syscall(unix.SYS_IOPRIO_GET, ioprioWhoProcess, 0, 0)
	if errno != 0 {
		return threadSched{}, fmt.Errorf("ioprio_get: %w", errno)
	}
	return threadSched{tid: tid, nice: nice, policy: policy, ioprio: int(ioprio)}, nil
}

// TestCompactionPriority reads the priority of the thread each compaction
// runs on, checks that a lowered thread ends with its compaction (so that
// no other goroutine runs at its priority), and reads the data back.
func TestCompactionPriority(t *testing.T) {
	var mu sync.Mutex
	var seen []threadSched
	var seenErr error
	testHookCompactionThread = func() {
		s, err := readThreadSched()
		mu.Lock()
		seen = append(seen, s)
		seenErr = errors.Join(seenErr, err)
		mu.Unlock()
	}
	defer func() { testHookCompactionThread = nil }()
	runtime.LockOSThread()
	process, err := readThreadSched()
	runtime.UnlockOSThread()
	require.NoError(t, err)

	for _, tc := range []struct {
		prio   CompactionPriority
		nice   int
		policy int
		ioprio int
	}{
		{CompactionPriorityLow, 19, unix.SCHED_NORMAL, ioprioLowestBE},
		{CompactionPriorityNormal, process.nice, process.policy, process.ioprio},
		{CompactionPriorityIdle, process.nice, unix.SCHED_IDLE, ioprioLowestBE},
	} {
		t.Run(tc.prio.String(), func(t *testing.T) {
			mu.Lock()
			seen = nil
			mu.Unlock()
			o := testOptions(vfs.NewMem())
			o.CompactionPriority = tc.prio
			d, err := Open("/db", o)
			require.NoError(t, err)
			defer d.Close()
			for i := range 5000 {
				require.NoError(t, d.Set(benchKey(nil, uint64(i)), make([]byte, 100), NoSync))
			}
			require.NoError(t, d.Compact(nil, nil))

			mu.Lock()
			threads := append([]threadSched(nil), seen...)
			require.NoError(t, seenErr)
			mu.Unlock()
			require.NotEmpty(t, threads, "no compaction ran")
			for _, s := range threads {
				require.Equal(t, tc.nice, s.nice, "nice of thread %d", s.tid)
				require.Equal(t, tc.policy, s.policy, "scheduling policy of thread %d", s.tid)
				require.Equal(t, tc.ioprio, s.ioprio, "I/O priority of thread %d", s.tid)
			}
			if tc.prio != CompactionPriorityNormal {
				// The thread exits after its goroutine; wait for it (a
				// bound on a liveness check, not on speed). The runtime
				// cannot end the main thread: it parks it for good instead.
				for _, s := range threads {
					if s.tid == os.Getpid() {
						continue
					}
					dir := "/proc/self/task/" + strconv.Itoa(s.tid)
					deadline := time.Now().Add(time.Minute)
					for {
						_, err := os.Stat(dir)
						if errors.Is(err, fs.ErrNotExist) {
							break
						}
						require.True(t, time.Now().Before(deadline), "compaction thread %d still runs", s.tid)
						time.Sleep(time.Millisecond)
					}
				}
			}

			it, err := d.NewIter(nil)
			require.NoError(t, err)
			n := 0
			for ok := it.First(); ok; ok = it.Next() {
				n++
			}
			require.NoError(t, it.Close())
			require.Equal(t, 5000, n)
		})
	}

	o := testOptions(vfs.NewMem())
	o.CompactionPriority = CompactionPriorityIdle + 1
	_, err = Open("/db", o)
	require.ErrorContains(t, err, "CompactionPriority 3 is unknown")
}
