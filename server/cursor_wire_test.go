// Not under the race detector: with a cursor, GMS's handler (v0.20.0)
// sets the connection's status flags on the cursor's goroutine while the
// protocol layer's reads them on the connection's, a race in GMS that
// this test would report on every run.

//go:build !race

package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// executeCursor sends COM_STMT_EXECUTE of statement id with a read-only
// cursor and reads the reply: the result's columns, no rows.
func (c *rawClient) executeCursor(id uint32, args ...int64) error {
	c.out = append(c.out[:0], 0, 0, 0, 0, 0x17)
	c.out = binary.LittleEndian.AppendUint32(c.out, id)
	c.out = append(c.out, 1) // CURSOR_TYPE_READ_ONLY
	c.out = binary.LittleEndian.AppendUint32(c.out, 1)
	for i := 0; i < (len(args)+7)/8; i++ {
		c.out = append(c.out, 0)
	}
	c.out = append(c.out, 1)
	for range args {
		c.out = append(c.out, 8, 0) // MYSQL_TYPE_LONGLONG
	}
	for _, a := range args {
		c.out = binary.LittleEndian.AppendUint64(c.out, uint64(a))
	}
	if err := c.send(); err != nil {
		return err
	}
	p, err := c.packet()
	if err != nil {
		return err
	}
	if p[0] == 0xff {
		return fmt.Errorf("error packet: %q", p[9:])
	}
	for i, n := 0, int(p[0]); i < n; i++ { // the column definitions
		if _, err := c.packet(); err != nil {
			return err
		}
	}
	_, err = c.packet() // the end of the columns: the cursor is open
	return err
}

// fetchStrings sends COM_STMT_FETCH for up to n rows of a one-column
// string result and returns the rows' values.
func (c *rawClient) fetchStrings(id uint32, n uint32) ([]string, error) {
	c.out = append(c.out[:0], 0, 0, 0, 0, 0x1c)
	c.out = binary.LittleEndian.AppendUint32(c.out, id)
	c.out = binary.LittleEndian.AppendUint32(c.out, n)
	if err := c.send(); err != nil {
		return nil, err
	}
	var out []string
	for {
		p, err := c.packet()
		if err != nil {
			return out, err
		}
		switch {
		case p[0] == 0xff:
			return out, fmt.Errorf("error packet: %q", p[9:])
		case p[0] == 0xfe && len(p) < 9:
			return out, nil
		}
		// A binary row: 0x00, a one-byte NULL bitmap, a string of
		// fewer than 251 bytes behind its one-byte length.
		out = append(out, string(p[3:3+int(p[2])]))
	}
}

// TestCursorRowsOutliveTheirStatement opens a server-side cursor over a
// statement on a cached plan and fetches its rows after other statements
// have run on another connection: the protocol layer keeps the rows of a
// cursor's result after the statement returned, so what they hold must
// not be reused by the statements that follow.
func TestCursorRowsOutliveTheirStatement(t *testing.T) {
	ctx := context.Background()
	s, err := Start(Config{Data: t.TempDir(), Listen: "127.0.0.1:0", User: "root", Password: "pw", NoSync: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Shutdown(ctx)) }()
	a, b := newRawClient(t, s.Addr()), newRawClient(t, s.Addr())
	defer a.close()
	defer b.close()
	_, err = a.query([]byte("CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(40))"))
	require.NoError(t, err)
	var q strings.Builder
	q.WriteString("INSERT INTO t VALUES ")
	for i := 1; i <= 300; i++ {
		if i > 1 {
			q.WriteByte(',')
		}
		fmt.Fprintf(&q, "(%d, 'row-%d-%s')", i, i, strings.Repeat("x", i%20))
	}
	_, err = a.query([]byte(q.String()))
	require.NoError(t, err)
	want := func(lo, hi int) []string {
		var out []string
		for i := lo; i <= hi; i++ {
			out = append(out, fmt.Sprintf("row-%d-%s", i, strings.Repeat("x", i%20)))
		}
		return out
	}

	const text = "SELECT c FROM t WHERE id BETWEEN ? AND ?"
	ida, err := a.prepare(text)
	require.NoError(t, err)
	idb, err := b.prepare(text)
	require.NoError(t, err)
	for _, r := range []struct{ lo, hi int }{{1, 50}, {1, 300}} { // one batch, and several
		for range 2 { // planned, then on the cached plan
			require.NoError(t, a.executeCursor(ida, int64(r.lo), int64(r.hi)))
			for i := range 20 {
				n, err := b.execute(idb, int64(i+100), int64(i+200))
				require.NoError(t, err)
				require.Equal(t, 101, n)
			}
			var got []string
			for len(got) < r.hi-r.lo+1 {
				rows, err := a.fetchStrings(ida, 40)
				require.NoError(t, err)
				require.NotEmpty(t, rows)
				got = append(got, rows...)
			}
			require.Equal(t, want(r.lo, r.hi), got)
		}
	}
	// The connection goes on with statements without a cursor.
	n, err := a.execute(ida, 5, 9)
	require.NoError(t, err)
	require.Equal(t, 5, n)
}

// TestFramerSeesCursors feeds the framer COM_STMT_EXECUTE packets whole
// and a byte at a time: only one that asks for a cursor sets cursor, and
// a packet that does not begin a command (a continuation, or sequence
// number other than 0) is not read as one.
func TestFramerSeesCursors(t *testing.T) {
	exec := func(seq, cursor byte) []byte {
		payload := []byte{0x17, 1, 0, 0, 0, cursor, 1, 0, 0, 0}
		return append([]byte{byte(len(payload)), 0, 0, seq}, payload...)
	}
	none := func(size, logical int, seq byte) (bool, error) { return false, nil }
	for _, tc := range []struct {
		name    string
		packets [][]byte
		want    bool
	}{
		{"no cursor", [][]byte{exec(0, 0), exec(0, 0)}, false},
		{"cursor", [][]byte{exec(0, 0), exec(0, 1)}, true},
		{"not a command", [][]byte{exec(1, 1), exec(0, 0)}, false},
		{"query", [][]byte{append([]byte{6, 0, 0, 0, 0x03}, "SEL\x01X"...)}, false},
	} {
		var in []byte
		for _, p := range tc.packets {
			in = append(in, p...)
		}
		var whole, bytewise framer
		_, err := whole.scan(in, none)
		require.NoError(t, err)
		for i := range in {
			_, err := bytewise.scan(in[i:i+1], none)
			require.NoError(t, err)
		}
		require.Equal(t, tc.want, whole.cursor, tc.name)
		require.Equal(t, tc.want, bytewise.cursor, tc.name+", a byte at a time")
	}
}
