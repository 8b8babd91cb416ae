package server

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"
)

// stmtMemory is what a statement cost the server's process.
type stmtMemory struct {
	alloc uint64 // bytes allocated while it ran
	peak  uint64 // the most heap in use seen while it ran, over that before
	kept  int64  // heap in use after it (and a GC), over that before
}

// statementMemory runs the statement text q on a raw connection and
// returns what it cost the process (the client's copies made before).
func statementMemory(t *testing.T, s *Server, q string) stmtMemory {
	t.Helper()
	tc := newTapClient(t, s.Addr(), "pw")
	conn, err := tc.db.Conn(context.Background())
	require.NoError(t, err)
	require.NoError(t, conn.PingContext(context.Background()))
	c := tc.raw(t)
	// The packets, built before measuring: the client's copies do not count.
	payload := comQuery(q)
	var pkts [][]byte
	for seq := 0; ; seq++ {
		n := min(len(payload), maxChunk)
		hdr := []byte{byte(n), byte(n >> 8), byte(n >> 16), byte(seq)}
		pkts = append(pkts, hdr, payload[:n])
		payload = payload[n:]
		if n < maxChunk {
			break
		}
	}
	q = ""
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var maxInuse atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > maxInuse.Load() {
				maxInuse.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	sent := uint64(0)
	for _, p := range pkts {
		_, err := c.Write(p)
		require.NoError(t, err)
		sent += uint64(len(p))
	}
	pkts, payload = nil, nil // freed: not kept by the server
	resp, err := readPacket(c)
	close(stop)
	wg.Wait()
	require.NoError(t, err)
	require.Equal(t, byte(0), resp[0], "an OK packet: %q", resp)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	runtime.GC()
	var kept runtime.MemStats
	runtime.ReadMemStats(&kept)
	_ = conn.Close()
	return stmtMemory{
		alloc: after.TotalAlloc - before.TotalAlloc,
		peak:  maxInuse.Load() - min(maxInuse.Load(), before.HeapInuse),
		kept:  int64(kept.HeapInuse) - int64(before.HeapInuse-sent),
	}
}

// TestAbuseBigStatementMemory runs an INSERT statement of 40 MB (in
// three protocol packets) and bounds what the server allocates for it
// (every copy of its text counts) and what it still holds once the
// statement is done. The bounds leave room for the copies the protocol
// layer, the engine's parser and planner and the storage make (14 in all
// today, most not in this package); a copy that keeps the text beyond the
// statement (a log line, a cache) fails the second.
func TestAbuseBigStatementMemory(t *testing.T) {
	const size = 40 << 20
	s := testServer(t, Config{Password: "pw", MaxAllowedPacket: 64 << 20})
	db := client(t, s.Addr(), "root", "pw", "")
	_, err := db.Exec("CREATE TABLE big (id INT PRIMARY KEY, v LONGTEXT)")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	m := statementMemory(t, s, "INSERT INTO big VALUES (1, '"+strings.Repeat("x", size)+"')")
	t.Logf("a %d MB statement: %d MB allocated, heap in use up by at most %d MB while it ran, by %d MB after",
		size>>20, m.alloc>>20, m.peak>>20, m.kept>>20)
	require.Less(t, m.alloc, uint64(20*size), "bytes allocated for the statement")
	require.Less(t, m.peak, uint64(16*size), "heap in use while the statement ran")
	require.Less(t, m.kept, int64(size), "heap still in use after the statement")

	db = client(t, s.Addr(), "root", "pw", "")
	var n int
	require.NoError(t, db.QueryRow("SELECT LENGTH(v) FROM big WHERE id = 1").Scan(&n))
	require.Equal(t, size, n)
}

// TestAbuseLogLineSize sends large statements that fail, by COM_QUERY and
// COM_STMT_PREPARE: the server's log shows at most a bounded part of
// each (the engine logs a statement that fails to prepare in full).
func TestAbuseLogLineSize(t *testing.T) {
	s, logs := testServerLogged(t, Config{Password: "pw"})
	tc := newTapClient(t, s.Addr(), "pw")
	conn, err := tc.db.Conn(context.Background())
	require.NoError(t, err)
	require.NoError(t, conn.PingContext(context.Background()))
	c := tc.raw(t)
	big := strings.Repeat("x", 1<<20)
	for _, p := range [][]byte{
		append([]byte{0x16}, "SELECT '"+big+"\n' FROM nope"...),
		append([]byte{0x16}, "SELEC '"+big+"'"...),
		comQuery("SELECT '" + big + "' FROM nope"),
		comQuery("SELEC '" + big + "'"),
	} {
		writePacket(t, c, 0, p)
		r, err := readPacket(c)
		require.NoError(t, err)
		require.NotZero(t, errCode(r), "an error: %.100q", r)
	}
	_ = conn.Close()
	for _, line := range strings.Split(logs.String(), "\n") {
		require.Less(t, len(line), 8<<10, "a log line: %.200q", line)
	}
}

// TestAbuseErrorMessageSize: an error that quotes a large part of its
// statement (an unknown 1 MB table name, a syntax error in 1 MB of text)
// comes back with at most MySQL's 511 bytes of message, its number kept,
// over the text protocol and from a server-side prepare. The whole text
// came back before.
func TestAbuseErrorMessageSize(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	big := strings.Repeat("é", 1<<19) // 1 MiB, two bytes a character
	for _, q := range []string{
		"SELECT * FROM `" + big + "`",
		"SELEC '" + big + "'",
	} {
		_, err := db.Exec(q)
		require.Error(t, err)
		require.NotZero(t, mysqlNumber(err), "%.200v", err)
		var me *mysql.MySQLError
		require.True(t, errors.As(err, &me))
		require.LessOrEqual(t, len(me.Message), 511, "%.200s", me.Message)
		require.True(t, utf8.ValidString(me.Message), "cut at a character boundary")
		_, err = db.Prepare(q)
		require.Error(t, err)
		require.True(t, errors.As(err, &me))
		require.LessOrEqual(t, len(me.Message), 511, "prepared: %.200s", me.Message)
	}
}
