package kv

import (
	"fmt"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/kv/vfs"
)

// logFileSize is the size of the database's one log file in fs: the bytes
// handed to the operating system, which a crash of the process keeps.
func logFileSize(t *testing.T, fs *vfs.MemFS, dir string) int64 {
	t.Helper()
	names, err := fs.List(dir)
	require.NoError(t, err)
	var logs []string
	for _, n := range names {
		if strings.HasSuffix(n, ".log") {
			logs = append(logs, n)
		}
	}
	require.Len(t, logs, 1, "files: %v", names)
	fi, err := fs.Stat(path.Join(dir, logs[0]))
	require.NoError(t, err)
	return fi.Size()
}

// TestUnsyncedCommitAfterPauseWrittenByLeader: a commit that does not sync
// and comes after a pause has its record in the log file when it returns,
// written by its leader rather than left to the log flusher; one that
// comes in a stream of commits is left to the flusher, which writes it.
func TestUnsyncedCommitAfterPauseWrittenByLeader(t *testing.T) {
	mem := vfs.NewMem()
	d, err := Open("/db", testOptions(mem))
	require.NoError(t, err)
	defer d.Close()
	log := d.logW.Load()

	// No other committer runs, so the leader's fields may be set here.
	for i := range 20 {
		d.commit.lastUnsynced = commitClock() - time.Hour
		require.NoError(t, d.Set(fmt.Appendf(nil, "k%02d", i), []byte("v"), NoSync))
		require.Zero(t, log.Buffered(), "commit %d: its record is still buffered", i)
		require.Equal(t, log.Size(), logFileSize(t, mem, "/db"), "commit %d: its record is not in the file", i)
	}

	// A stream: each commit within flushHandoffGap of the previous one
	// (a clock that stands still), left to the flusher.
	for i := range 20 {
		d.commit.lastUnsynced = commitClock() + time.Hour
		require.NoError(t, d.Set(fmt.Appendf(nil, "s%02d", i), []byte("v"), NoSync))
	}
	require.Eventually(t, func() bool { return logFileSize(t, mem, "/db") == log.Size() },
		10*time.Second, time.Millisecond, "the flusher writes the stream's records")

	// What a crash of the process keeps (every byte handed over) is
	// every commit.
	require.NoError(t, d.Close())
	d, err = Open("/db", testOptions(mem))
	require.NoError(t, err)
	for _, k := range []string{"k00", "k19", "s00", "s19"} {
		v, err := d.Get([]byte(k), nil)
		require.NoError(t, err, k)
		require.Equal(t, "v", string(v))
	}
}

// TestLogUnsyncedChoice: who writes an unsynced group's log bytes, by the
// committers waiting behind it, the time since the last unsynced group and
// the bytes buffered.
func TestLogUnsyncedChoice(t *testing.T) {
	mem := vfs.NewMem()
	d, err := Open("/db", testOptions(mem))
	require.NoError(t, err)
	defer d.Close()
	log := d.logW.Load()
	c := &d.commit
	// No other committer runs, so the leader's fields may be set here.
	pause := func() { c.lastUnsynced = commitClock() - time.Second }
	stream := func() { c.lastUnsynced = commitClock() + time.Hour }

	pause()
	require.True(t, d.logUnsynced(log, 1), "alone after a pause the leader writes")
	stream()
	require.False(t, d.logUnsynced(log, 1), "alone right after another group the flusher writes")

	// A committer waiting behind the group of one: left to it, even
	// after a pause, until the first bytes left have waited maxLeftDelay.
	c.queued.Store(2)
	pause()
	require.False(t, d.logUnsynced(log, 1), "another committer waits: it writes")
	require.NotZero(t, c.leftAt)
	pause()
	require.False(t, d.logUnsynced(log, 1), "left again within maxLeftDelay")
	c.leftAt = commitClock() - maxLeftDelay - time.Millisecond
	pause()
	require.True(t, d.logUnsynced(log, 1), "left for maxLeftDelay: the leader writes")
	require.Zero(t, c.leftAt)
	pause()
	require.True(t, d.logUnsynced(log, 2), "the waiting committer is in the group: the leader writes")
	c.queued.Store(0)

	// A flusher that falls behind: the leader writes past maxUnflushedLog.
	for log.Buffered() <= maxUnflushedLog {
		_, err := log.WriteRecord(make([]byte, 64<<10))
		require.NoError(t, err)
	}
	stream()
	require.True(t, d.logUnsynced(log, 1), "past maxUnflushedLog the leader writes")
	c.queued.Store(2)
	require.True(t, d.logUnsynced(log, 1), "past maxUnflushedLog the leader writes, whoever waits")
	c.queued.Store(0)
	require.NoError(t, log.Flush())
}

// TestLogLeftToNextLeader: a leader that finds another committer waiting
// leaves its record in the buffer, and the next leader, which logs nothing
// of its own, writes it before it returns.
func TestLogLeftToNextLeader(t *testing.T) {
	mem := vfs.NewMem()
	d, err := Open("/db", testOptions(mem))
	require.NoError(t, err)
	defer d.Close()
	log := d.logW.Load()

	h := holdPipeline(t, d)
	set := h.start(func() error { return d.Set([]byte("k"), []byte("v"), NoSync) })
	var buffered int
	next := h.start(func() error {
		// A batch with a precondition leads a group of its own.
		return d.asLeader(func() error {
			buffered = log.Buffered()
			d.commit.lastUnsynced = commitClock() - time.Hour
			return nil
		})
	})
	h.releaseAndWait(t)
	require.NoError(t, <-set)
	require.NoError(t, <-next)
	require.NotZero(t, buffered, "the first leader left its record to the next")
	require.Zero(t, log.Buffered())
	require.Equal(t, log.Size(), logFileSize(t, mem, "/db"), "the next leader wrote the record")
}

// TestLogWrittenAfterConcurrentCommits: however commits from several
// goroutines leave their records to one another and to the flusher, every
// record reaches the file once they stop, with no commit after them.
func TestLogWrittenAfterConcurrentCommits(t *testing.T) {
	mem := vfs.NewMem()
	d, err := Open("/db", testOptions(mem))
	require.NoError(t, err)
	defer d.Close()
	log := d.logW.Load()
	for round := range 10 {
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 10 {
					if err := d.Set(fmt.Appendf(nil, "r%02dw%di%02d", round, w, i), []byte("v"), NoSync); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		require.Same(t, log, d.logW.Load(), "the log rotated: fewer keys")
		require.Eventually(t, func() bool { return logFileSize(t, mem, "/db") == log.Size() },
			10*time.Second, time.Millisecond, "round %d: records left in the buffer", round)
	}
}
