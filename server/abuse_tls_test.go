package server

import (
	"bytes"
	"crypto/sha1"
	"crypto/tls"
	"encoding/binary"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tlsRaw opens a connection to the server, switches it to TLS as a client
// does (SSLRequest, then the TLS handshake) and returns it with the
// greeting's 20-byte scramble.
func tlsRaw(t *testing.T, addr string) (*tls.Conn, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	g, err := readPacket(c)
	require.NoError(t, err, "the greeting")
	// protocol version, server version, connection id, 8 bytes of
	// scramble, filler, capabilities, charset, status, capabilities,
	// scramble length, 10 reserved, the rest of the scramble.
	i := bytes.IndexByte(g, 0) + 1 + 4
	scramble := append([]byte{}, g[i:i+8]...)
	i += 8 + 1 + 2 + 1 + 2 + 2 + 1 + 10
	scramble = append(scramble, g[i:i+12]...)

	writePacket(t, c, 1, handshakeHead())
	tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true})
	require.NoError(t, tc.Handshake())
	return tc, scramble
}

// handshakeHead is the 32 bytes a handshake response starts with (all of
// an SSLRequest): capabilities with TLS, maximum packet, charset, zeros.
func handshakeHead() []byte {
	const caps = 0x00000200 | 0x00008000 | 0x00080000 | 0x00200000 | 0x00000800 | 0x00000008 // 4.1, secure conn, plugin auth, lenenc data, SSL, with DB
	p := make([]byte, 32)
	binary.LittleEndian.PutUint32(p, caps)
	binary.LittleEndian.PutUint32(p[4:], 1<<24)
	p[8] = 45 // utf8mb4
	return p
}

// nativeScramble is the mysql_native_password answer to scramble.
func nativeScramble(password string, scramble []byte) []byte {
	h1 := sha1.Sum([]byte(password))
	h2 := sha1.Sum(h1[:])
	h3 := sha1.Sum(append(append([]byte{}, scramble...), h2[:]...))
	out := make([]byte, len(h1))
	for i := range h1 {
		out[i] = h1[i] ^ h3[i]
	}
	return out
}

// TestAbuseTLSPacketSize checks packet sizes over TLS, where the accepted
// connection sees only encrypted bytes: a logged-in client's packet over
// max_allowed_packet is refused from its header (1153) as on a plain
// connection, not read in full first; before login, a client cannot send
// more than a handshake's worth.
func TestAbuseTLSPacketSize(t *testing.T) {
	cert, key := selfSigned(t)
	s, logs := testServerLogged(t, Config{Password: "pw", TLSCert: cert, TLSKey: key, MaxAllowedPacket: 1 << 20})
	t.Run("logged in", func(t *testing.T) {
		tc, scramble := tlsRaw(t, s.Addr())
		resp := append(handshakeHead(), "root\x00"...)
		auth := nativeScramble("pw", scramble)
		resp = append(append(resp, byte(len(auth))), auth...)
		resp = append(resp, "main\x00mysql_native_password\x00"...)
		writePacket(t, tc, 2, resp)
		p, err := readPacket(tc)
		require.NoError(t, err)
		require.Equal(t, byte(0), p[0], "logged in: %q", p)

		writePacket(t, tc, 0, comQuery("SELECT 1"))
		for {
			p, err := readPacket(tc)
			require.NoError(t, err)
			if p[0] == 0xfe || p[0] == 0 && len(p) < 9 {
				break // the end of the result
			}
		}
		// The header of a 16 MiB packet, and no payload: the answer
		// comes without it.
		_, err = tc.Write([]byte{0xff, 0xff, 0xff, 0, 0x03, 'S', 'E', 'L'})
		require.NoError(t, err)
		require.Equal(t, []uint16{1153}, readUntilClosed(t, tc))
		require.Contains(t, logs.String(), "exceeds max_allowed_packet")
	})
	t.Run("before login", func(t *testing.T) {
		tc, _ := tlsRaw(t, s.Addr())
		resp := append(handshakeHead(), strings.Repeat("u", 1<<20)+"\x00"...)
		resp = append(resp, 0)
		require.NoError(t, tc.SetWriteDeadline(time.Now().Add(time.Minute)))
		hdr := []byte{byte(len(resp)), byte(len(resp) >> 8), byte(len(resp) >> 16), 2}
		_, _ = tc.Write(append(hdr, resp...)) // the server may close before the end
		require.Empty(t, readUntilClosed(t, tc), "closed without reading the packet, so without an answer to it")
		require.Contains(t, logs.String(), "over TLS before login")
	})
	requireServesTLS(t, s)
}

// requireServesTLS checks that a client can log in over TLS and query.
func requireServesTLS(t *testing.T, s *Server) {
	t.Helper()
	db := client(t, s.Addr(), "root", "pw", "tls=skip-verify")
	var n int
	require.NoError(t, db.QueryRow("SELECT 1").Scan(&n))
	var v string
	require.NoError(t, db.QueryRow("SELECT REPEAT('x', 100000)").Scan(&v))
	require.Len(t, v, 100000)
	_, err := db.Exec("SELECT '" + strings.Repeat("y", 900<<10) + "'")
	require.NoError(t, err, "a statement within max_allowed_packet")
	require.NoError(t, db.Close())
}
