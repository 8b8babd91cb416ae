package server

import (
	"bytes"
	"log"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStoreLog: the store's errors and recovery notices reach the
// server's log, its routine flushes and compactions do not.
func TestStoreLog(t *testing.T) {
	var buf bytes.Buffer
	l := storeLog{log.New(&buf, "", 0)}
	l.Infof("kv: flushed memtable to %06d.sst (%d bytes, %d entries)", 7, 100, 3)
	l.Infof("kv: compacted %s into %d files", "L0", 1)
	l.Infof("kv: recovery: %s: dropped the torn tail at offset %d (%s): a commit the crash interrupted, never acknowledged", "000005.log", 100, "bad checksum")
	l.Infof("kv: resumed after the fault; every memtable flushed, writes accepted again")
	l.Errorf("kv: background error, database is now read-only: %v", "disk full")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 3, buf.String())
	require.Contains(t, lines[0], "torn tail")
	require.Contains(t, lines[2], "read-only")
}
