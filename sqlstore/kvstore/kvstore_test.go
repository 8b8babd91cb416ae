package kvstore

import (
	"bytes"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoticeLog: the engine's errors and recovery notices reach the log,
// its routine flushes and compactions do not.
func TestNoticeLog(t *testing.T) {
	var buf bytes.Buffer
	l := NoticeLog(log.New(&buf, "", 0))
	l.Infof("kv: flushed memtable to %06d.sst (%d bytes, %d entries)", 7, 100, 3)
	l.Infof("kv: compacted %s into %d files", "L0", 1)
	l.Infof("kv: recovery: %s: dropped the torn tail at offset %d (%s): a commit the crash interrupted, never acknowledged", "000005.log", 100, "bad checksum")
	l.Infof("kv: resumed after the fault; every memtable flushed, writes accepted again")
	l.Errorf("kv: background error, database is now read-only: %v", "disk full")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 3, buf.String())
	require.Contains(t, lines[0], "torn tail")
	require.Contains(t, lines[1], "resumed")
	require.Contains(t, lines[2], "read-only")
}

// TestOpenDir: the data folder is created for its owner alone, and a
// folder that cannot be made is named in the error.
func TestOpenDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "data")
	st, _, err := OpenDir(dir, &Options{NoSync: true})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, _, err = OpenDir(filepath.Join(file, "data"), nil)
	require.ErrorContains(t, err, "creating the data folder")
}
