package kv

import (
	"fmt"
	"path"
	"strings"
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
// time since the previous unsynced group and the bytes buffered.
func TestLogUnsyncedChoice(t *testing.T) {
	mem := vfs.NewMem()
	d, err := Open("/db", testOptions(mem))
	require.NoError(t, err)
	defer d.Close()
	log := d.logW.Load()

	d.commit.lastUnsynced = commitClock() - time.Second
	require.True(t, d.logUnsynced(log), "after a pause the leader writes")
	require.False(t, d.logUnsynced(log), "right after another group the flusher writes")

	// A flusher that falls behind: the leader writes past maxUnflushedLog.
	for log.Buffered() <= maxUnflushedLog {
		_, err := log.WriteRecord(make([]byte, 64<<10))
		require.NoError(t, err)
	}
	d.commit.lastUnsynced = commitClock() + time.Hour
	require.True(t, d.logUnsynced(log), "past maxUnflushedLog the leader writes")
	require.NoError(t, log.Flush())
}
