package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"
)

// rawClient speaks just enough of the MySQL protocol to send prepared
// executions and text queries and to read their results into buffers it
// reuses: it allocates nothing per statement, so a benchmark's allocations
// per statement are the server's alone. The login is the protocol layer's
// client's (vitess mysql.Connect); the socket is then used directly.
type rawClient struct {
	mc         *mysql.Conn
	conn       net.Conn
	r          *bufio.Reader
	deprecated bool // CLIENT_DEPRECATE_EOF: no EOF packet after the column definitions
	out        []byte
	in         []byte
	hdr        [4]byte
}

func newRawClient(tb testing.TB, addr string) *rawClient {
	tb.Helper()
	host, port, err := net.SplitHostPort(addr)
	require.NoError(tb, err)
	p, err := strconv.Atoi(port)
	require.NoError(tb, err)
	mc, err := mysql.Connect(context.Background(), &mysql.ConnParams{Host: host, Port: p, Uname: "root", Pass: "pw", DbName: defaultDB})
	require.NoError(tb, err)
	return &rawClient{
		mc:         mc,
		conn:       mc.Conn,
		r:          bufio.NewReaderSize(mc.Conn, 64<<10),
		deprecated: mc.Capabilities&mysql.CapabilityClientDeprecateEOF != 0,
	}
}

func (c *rawClient) close() { c.mc.Close() }

// send writes one command packet (sequence 0) of payload c.out[4:].
func (c *rawClient) send() error {
	n := len(c.out) - 4
	c.out[0], c.out[1], c.out[2], c.out[3] = byte(n), byte(n>>8), byte(n>>16), 0
	_, err := c.conn.Write(c.out)
	return err
}

// packet reads the next packet's payload into c.in.
func (c *rawClient) packet() ([]byte, error) {
	if _, err := io.ReadFull(c.r, c.hdr[:]); err != nil {
		return nil, err
	}
	n := int(c.hdr[0]) | int(c.hdr[1])<<8 | int(c.hdr[2])<<16
	if cap(c.in) < n {
		c.in = make([]byte, n)
	}
	c.in = c.in[:n]
	_, err := io.ReadFull(c.r, c.in)
	return c.in, err
}

// result reads one command's response, returning the rows it had.
func (c *rawClient) result() (rows int, err error) {
	p, err := c.packet()
	if err != nil {
		return 0, err
	}
	switch p[0] {
	case 0x00:
		return 0, nil // OK
	case 0xff:
		return 0, fmt.Errorf("error packet: %q", p[9:])
	}
	cols := int(p[0]) // fewer than 251 columns: a one-byte count
	for i := 0; i < cols; i++ {
		if _, err := c.packet(); err != nil {
			return 0, err
		}
	}
	if !c.deprecated {
		if _, err := c.packet(); err != nil {
			return 0, err
		}
	}
	for {
		p, err := c.packet()
		if err != nil {
			return rows, err
		}
		if p[0] == 0xfe && len(p) < 0xffffff {
			return rows, nil // EOF, or OK in its place
		}
		if p[0] == 0xff {
			return rows, fmt.Errorf("error packet: %q", p[9:])
		}
		rows++
	}
}

// query sends q as COM_QUERY and reads its result.
func (c *rawClient) query(q []byte) (int, error) {
	c.out = append(append(c.out[:0], 0, 0, 0, 0, 0x03), q...)
	if err := c.send(); err != nil {
		return 0, err
	}
	return c.result()
}

// prepare sends COM_STMT_PREPARE and returns the statement's ID.
func (c *rawClient) prepare(q string) (uint32, error) {
	c.out = append(append(c.out[:0], 0, 0, 0, 0, 0x16), q...)
	if err := c.send(); err != nil {
		return 0, err
	}
	p, err := c.packet()
	if err != nil {
		return 0, err
	}
	if p[0] != 0 {
		return 0, fmt.Errorf("prepare %q: %q", q, p)
	}
	id := binary.LittleEndian.Uint32(p[1:])
	cols := int(binary.LittleEndian.Uint16(p[5:]))
	params := int(binary.LittleEndian.Uint16(p[7:]))
	for _, n := range []int{params, cols} {
		if n == 0 {
			continue
		}
		if !c.deprecated {
			n++
		}
		for i := 0; i < n; i++ {
			if _, err := c.packet(); err != nil {
				return 0, err
			}
		}
	}
	return id, nil
}

// execute sends COM_STMT_EXECUTE of statement id with signed 64-bit
// integer arguments and reads its result.
func (c *rawClient) execute(id uint32, args ...int64) (int, error) {
	c.out = append(c.out[:0], 0, 0, 0, 0, 0x17)
	c.out = binary.LittleEndian.AppendUint32(c.out, id)
	c.out = append(c.out, 0)                           // no cursor
	c.out = binary.LittleEndian.AppendUint32(c.out, 1) // iteration count
	if len(args) > 0 {
		for i := 0; i < (len(args)+7)/8; i++ {
			c.out = append(c.out, 0) // no NULLs
		}
		c.out = append(c.out, 1) // types follow
		for range args {
			c.out = append(c.out, byte(mysql.TypeLongLong), 0)
		}
		for _, a := range args {
			c.out = binary.LittleEndian.AppendUint64(c.out, uint64(a))
		}
	}
	if err := c.send(); err != nil {
		return 0, err
	}
	return c.result()
}

// BenchmarkWireServer measures the server's share of a statement over the
// MySQL protocol: the client is rawClient, which allocates nothing per
// statement, so allocs/op are the server's; cpu-us/op is the process's
// CPU, of which the client's part is a write and a read system call and
// the parsing of the packets' headers. The statements are sysbench's:
//
//	go test ./server -run '^$' -bench WireServer -benchmem
func BenchmarkWireServer(b *testing.B) {
	ctx := context.Background()
	s, err := Start(Config{Data: b.TempDir(), Listen: "127.0.0.1:0", User: "root", Password: "pw", NoSync: true})
	require.NoError(b, err)
	defer func() { require.NoError(b, s.Shutdown(ctx)) }()
	c := newRawClient(b, s.Addr())
	defer c.close()
	for _, q := range []string{
		"CREATE TABLE sbtest1 (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k))",
	} {
		_, err := c.query([]byte(q))
		require.NoError(b, err)
	}
	const rows = 10000
	cval := strings.Repeat("1234567890-", 10)
	for i := 1; i <= rows; i += 500 {
		var q strings.Builder
		q.WriteString("INSERT INTO sbtest1 VALUES ")
		for j := i; j < i+500; j++ {
			if j > i {
				q.WriteByte(',')
			}
			// c differs per row, as sysbench's: DISTINCT keeps 100.
			fmt.Fprintf(&q, "(%d, %d, '%010d%s', 'pad-%d')", j, j*7919%rows, j*7919%rows, cval[10:], j)
		}
		_, err := c.query([]byte(q.String()))
		require.NoError(b, err)
	}
	point, err := c.prepare("SELECT c FROM sbtest1 WHERE id=?")
	require.NoError(b, err)
	rng, err := c.prepare("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?")
	require.NoError(b, err)
	// sysbench's read_only transaction, prepared as sysbench prepares it
	// (BEGIN and COMMIT too).
	ro := map[string]uint32{}
	for _, q := range []string{
		"BEGIN", "COMMIT",
		"SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?",
		"SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
		"SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
	} {
		ro[q], err = c.prepare(q)
		require.NoError(b, err)
	}

	run := func(name string, op func(i int) (int, error), want int) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			i := 0
			for b.Loop() {
				i++
				n, err := op(i)
				if err != nil {
					b.Fatal(err)
				}
				if want >= 0 && n != want {
					b.Fatalf("%d rows, want %d", n, want)
				}
			}
		})
	}
	run("point-prepared", func(i int) (int, error) { return c.execute(point, int64(i%rows+1)) }, 1)
	var q []byte
	run("point-text", func(i int) (int, error) {
		q = strconv.AppendInt(append(q[:0], "SELECT c FROM sbtest1 WHERE id="...), int64(i%rows+1), 10)
		return c.query(q)
	}, 1)
	run("range100-prepared", func(i int) (int, error) {
		lo := int64(i%(rows-100) + 1)
		return c.execute(rng, lo, lo+99)
	}, 100)
	run("begin-commit-text", func(i int) (int, error) {
		if _, err := c.query([]byte("BEGIN")); err != nil {
			return 0, err
		}
		return c.query([]byte("COMMIT"))
	}, 0)
	// sysbench's oltp_read_only transaction: 16 statements.
	run("readonly-prepared", func(i int) (int, error) {
		if _, err := c.execute(ro["BEGIN"]); err != nil {
			return 0, err
		}
		for j := 0; j < 10; j++ {
			if _, err := c.execute(point, int64((i*10+j)*7919%rows+1)); err != nil {
				return 0, err
			}
		}
		lo := int64(i*7919%(rows-100) + 1)
		total := 0
		for _, id := range []uint32{rng, ro["SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?"],
			ro["SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"],
			ro["SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"]} {
			n, err := c.execute(id, lo, lo+99)
			if err != nil {
				return 0, err
			}
			total += n
		}
		if _, err := c.execute(ro["COMMIT"]); err != nil {
			return 0, err
		}
		return total, nil
	}, 100+1+100+100) // the sum is one row
	run("insert-text", func(i int) (int, error) {
		q = append(q[:0], "INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, "...)
		q = strconv.AppendInt(q, int64(i*7919%rows), 10)
		q = append(append(append(q, ", '"...), cval...), "', 'pad')"...)
		return c.query(q)
	}, 0)
	// Writes by key on kept plans (sysbench's update_index,
	// update_non_index and delete_insert; c's arguments are integers,
	// which rawClient sends, stored as their text).
	updIndex, err := c.prepare("UPDATE sbtest1 SET k=k+1 WHERE id=?")
	require.NoError(b, err)
	updNonIndex, err := c.prepare("UPDATE sbtest1 SET c=? WHERE id=?")
	require.NoError(b, err)
	del, err := c.prepare("DELETE FROM sbtest1 WHERE id=?")
	require.NoError(b, err)
	ins, err := c.prepare("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)")
	require.NoError(b, err)
	run("update-index-prepared", func(i int) (int, error) { return c.execute(updIndex, int64(i%rows+1)) }, 0)
	run("update-non-index-prepared", func(i int) (int, error) { return c.execute(updNonIndex, int64(i), int64(i%rows+1)) }, 0)
	cvals := [2]string{strings.Repeat("0987654321-", 10), cval} // each pass over the rows changes them
	run("update-non-index-text", func(i int) (int, error) {
		q = append(append(append(q[:0], "UPDATE sbtest1 SET c='"...), cvals[i/rows%2]...), "' WHERE id="...)
		q = strconv.AppendInt(q, int64(i%rows+1), 10)
		return c.query(q)
	}, 0)
	run("delete-insert-prepared", func(i int) (int, error) {
		id := int64(i%rows + 1)
		if _, err := c.execute(del, id); err != nil {
			return 0, err
		}
		return c.execute(ins, id, id*7919%rows, id, id)
	}, 0)
}

// BenchmarkWireServerInsertClients runs sysbench's oltp_insert statement
// (text, autocommit, 0 for the auto-increment key, a secondary index) from
// -wire.clients raw clients at once (8 when the flag is left at 1), as
// sysbench's --threads: where concurrent inserts wait shows in its block
// and mutex profiles:
//
//	go test ./server -run '^$' -bench WireServerInsertClients -blockprofile block.prof -mutexprofile mu.prof
func BenchmarkWireServerInsertClients(b *testing.B) {
	ctx := context.Background()
	s, err := Start(Config{Data: b.TempDir(), Listen: "127.0.0.1:0", User: "root", Password: "pw", NoSync: true})
	require.NoError(b, err)
	defer func() { require.NoError(b, s.Shutdown(ctx)) }()
	n := *wireClients
	if n <= 1 {
		n = 8
	}
	// RunParallel runs parallelism*GOMAXPROCS goroutines, each with its
	// own client.
	par := (n + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)
	n = par * runtime.GOMAXPROCS(0)
	clients := make([]*rawClient, n)
	for i := range clients {
		clients[i] = newRawClient(b, s.Addr())
		defer clients[i].close()
	}
	_, err = clients[0].query([]byte("CREATE TABLE sbtest1 (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k))"))
	require.NoError(b, err)
	cval := strings.Repeat("1234567890-", 10)
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(par)
	var taken atomic.Int64
	defer reportCPU(b)()
	b.RunParallel(func(pb *testing.PB) {
		c := clients[taken.Add(1)-1]
		var q []byte
		for pb.Next() {
			i := next.Add(1)
			q = append(q[:0], "INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, "...)
			q = strconv.AppendInt(q, i*7919%100000, 10)
			q = append(append(append(q, ", '"...), cval...), "', 'pad')"...)
			if _, err := c.query(q); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
