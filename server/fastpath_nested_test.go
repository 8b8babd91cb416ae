package server

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFastPathNotInsideCommand: while LOAD DATA LOCAL reads the client's
// file, the packets the client sends belong to that command. A command
// packet sent instead (sequence 0, a text INSERT the plan cache runs, or
// an EXECUTE) must not be answered by the connection's reader as a
// command of its own, on the same session and while the LOAD runs: the
// protocol layer refuses it as out of sequence, and nothing of it is
// written.
func TestFastPathNotInsideCommand(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	execAll(t, root,
		"SET GLOBAL local_infile = 1",
		"CREATE TABLE w (id INT AUTO_INCREMENT PRIMARY KEY, k INT)",
	)
	for _, nested := range []string{"text", "execute"} {
		t.Run(nested, func(t *testing.T) {
			c := newRawClient(t, s.Addr())
			defer c.close()
			id, err := c.prepare("INSERT INTO w (k) VALUES (?)")
			require.NoError(t, err)
			for range 3 { // until the reader answers both
				_, err := c.query([]byte("INSERT INTO w (k) VALUES (1)"))
				require.NoError(t, err)
				_, err = c.execute(id, 1)
				require.NoError(t, err)
			}
			c.out = append(c.out[:0], 0, 0, 0, 0, 0x03)
			c.out = append(c.out, "LOAD DATA LOCAL INFILE 'rows.txt' INTO TABLE w (k)"...)
			require.NoError(t, c.send())
			p, err := c.packet()
			require.NoError(t, err)
			require.Equal(t, byte(0xfb), p[0], "the server asks for the file: %q", p)
			// A command instead of the file's first packet.
			if nested == "text" {
				c.out = append(c.out[:0], 0, 0, 0, 0, 0x03)
				c.out = append(c.out, "INSERT INTO w (k) VALUES (98)"...)
			} else {
				c.out = append(c.out[:0], 0, 0, 0, 0, 0x17, byte(id), byte(id>>8), byte(id>>16), byte(id>>24), 0, 1, 0, 0, 0, 0, 1, 8, 0)
				c.out = append(c.out, 98, 0, 0, 0, 0, 0, 0, 0)
			}
			require.NoError(t, c.send())
			// Whatever the server answers (an error, or the connection
			// closed), the guard deadline only keeps a broken server from
			// hanging the test.
			require.NoError(t, c.conn.SetReadDeadline(time.Now().Add(10*time.Second)))
			for {
				p, err := c.packet()
				if err != nil || p[0] == 0xff {
					break
				}
			}
		})
	}
	var n int
	require.NoError(t, root.QueryRow("SELECT COUNT(*) FROM w WHERE k = 98").Scan(&n))
	require.Zero(t, n, "a command sent inside LOAD DATA's file ran")
}
