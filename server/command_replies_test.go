package server

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestServerSetOptionUnknown checks COM_SET_OPTION's answers: EOF for
// multiple statements on (0) and off (1), the ERR packet alone for any
// other option (1047, as MySQL; the protocol layer wrote an EOF packet
// after it, which the client read as the answer to its next command),
// and 1835 for a packet too short for an option.
func TestServerSetOptionUnknown(t *testing.T) {
	s, logBuf := testServerLogged(t, Config{Password: "pw"})
	c := newRawClient(t, s.Addr())
	defer c.close()
	for range 2 {
		for _, op := range []uint16{1, 0} {
			require.NoError(t, c.send2(binary.LittleEndian.AppendUint16([]byte{comSetOption}, op)))
			p, err := c.packet()
			require.NoError(t, err)
			require.Equal(t, byte(0xfe), p[0], "option %d: EOF", op)
			requireSelectOne(t, c)
		}
		for _, op := range []uint16{2, 0xffff} {
			require.NoError(t, c.send2(binary.LittleEndian.AppendUint16([]byte{comSetOption}, op)))
			p, err := c.packet()
			require.NoError(t, err)
			require.Equal(t, uint16(1047), errCode(p), "option %d: %q", op, p)
			require.Equal(t, "#08S01Unknown command", string(p[3:]))
			requireSelectOne(t, c)
		}
		resp, err := c.roundTrip([]byte{comSetOption, 2})
		require.NoError(t, err)
		require.Equal(t, uint16(1835), errCode([]byte(resp)), "%q", resp)
		requireSelectOne(t, c)
	}
	requireNoPanicLogged(t, logBuf.String())
}

// TestServerLongDataBadParameter checks that a COM_STMT_SEND_LONG_DATA
// for a parameter the statement does not have (no answer, as in MySQL)
// fails the statement's executions with 1210 until COM_STMT_RESET, as
// MySQL's do; the chunk was dropped silently and the execution ran
// without it. Other statements of the connection are not affected, and
// a closed statement's mark goes with it.
func TestServerLongDataBadParameter(t *testing.T) {
	s, logBuf := testServerLogged(t, Config{Password: "pw"})
	c := newRawClient(t, s.Addr())
	defer c.close()
	id, err := c.prepare("SELECT ?")
	require.NoError(t, err)
	other, err := c.prepare("SELECT ? + 1")
	require.NoError(t, err)
	longData := func(stmt uint32, param uint16) {
		p := binary.LittleEndian.AppendUint32([]byte{comStmtSendLongData}, stmt)
		p = binary.LittleEndian.AppendUint16(p, param)
		_, err := c.roundTrip(append(p, "chunk"...))
		require.NoError(t, err)
	}
	longData(id, 3)
	for range 2 {
		_, err = c.execute(id, 7)
		require.EqualError(t, err, `error packet: "Incorrect arguments to mysql_stmt_send_long_data"`)
	}
	rows, err := c.execute(other, 7)
	require.NoError(t, err, "another statement runs")
	require.Equal(t, 1, rows)
	requireSelectOne(t, c)

	resp, err := c.roundTrip(binary.LittleEndian.AppendUint32([]byte{comStmtReset}, id))
	require.NoError(t, err)
	require.Equal(t, byte(0), resp[0], "reset: OK")
	rows, err = c.execute(id, 7)
	require.NoError(t, err, "runs again once reset")
	require.Equal(t, 1, rows)

	// A statement without parameters takes no chunk either; closed, its
	// mark is gone with it.
	none, err := c.prepare("SELECT 1")
	require.NoError(t, err)
	longData(none, 0)
	_, err = c.execute(none)
	require.ErrorContains(t, err, "mysql_stmt_send_long_data")
	_, err = c.roundTrip(binary.LittleEndian.AppendUint32([]byte{comStmtClose}, none))
	require.NoError(t, err)
	_, err = c.execute(none)
	require.Error(t, err, "a closed statement")
	require.NotContains(t, err.Error(), "mysql_stmt_send_long_data", "the closed statement's mark is gone")
	requireSelectOne(t, c)
	requireNoPanicLogged(t, logBuf.String())
}

// TestServerCommandsSplitOrTogether sends the commands the connection's
// reader answers itself (a prepared LOAD DATA, a version-only comment,
// COM_STMT_RESET of an unknown statement, COM_FIELD_LIST of a missing
// table, COM_SET_OPTION of an unknown option) cut into pieces written
// apart, and all of them in one write: each is answered as when it
// arrives alone in one read. Cut, they reached the protocol layer, which
// closed the connection on the first two; sent together, only the first
// was seen; after a command larger than the protocol layer's read
// buffer, none.
func TestServerCommandsSplitOrTogether(t *testing.T) {
	s, logBuf := testServerLogged(t, Config{Password: "pw"})
	c := newRawClient(t, s.Addr())
	defer c.close()
	_, err := c.query([]byte("CREATE TABLE t (a INT PRIMARY KEY)"))
	require.NoError(t, err)
	commands := []struct {
		payload []byte
		code    uint16 // the ERR packet's, 0 for a result of one row
	}{
		{append([]byte{comStmtPrepare}, "LOAD DATA LOCAL INFILE '/x' INTO TABLE t"...), 1295},
		{append([]byte{comQueryByte}, "SELECT 1 /*!*/"...), 0},
		{binary.LittleEndian.AppendUint32([]byte{comStmtReset}, 999), 1243},
		{append([]byte{comFieldList}, "nope\x00"...), 1146},
		{binary.LittleEndian.AppendUint16([]byte{comSetOption}, 9), 1047},
		{append([]byte{comQueryByte}, "SELECT 1"...), 0},
	}
	packet := func(p []byte) []byte {
		return append([]byte{byte(len(p)), byte(len(p) >> 8), byte(len(p) >> 16), 0}, p...)
	}
	answered := func(code uint16) {
		t.Helper()
		if code == 0 {
			rows, err := c.result()
			require.NoError(t, err)
			require.Equal(t, 1, rows)
			return
		}
		p, err := c.packet()
		require.NoError(t, err)
		require.Equal(t, code, errCode(p), "%q", p)
	}
	for _, cmd := range commands {
		// Cut after the first byte of the header, after the header, and
		// in the middle of the payload; the pauses let the server read
		// each piece apart.
		w := packet(cmd.payload)
		for _, piece := range [][]byte{w[:1], w[1:4], w[4 : 4+len(cmd.payload)/2], w[4+len(cmd.payload)/2:]} {
			_, err := c.conn.Write(piece)
			require.NoError(t, err)
			time.Sleep(20 * time.Millisecond)
		}
		answered(cmd.code)
		requireSelectOne(t, c)
	}
	var all []byte
	for _, cmd := range commands {
		all = append(all, packet(cmd.payload)...)
	}
	// After a command larger than the protocol layer's read buffer too.
	big := append([]byte{comQueryByte}, "SELECT '"+strings.Repeat("x", 20<<10)+"'"...)
	all = append(packet(big), all...)
	commands = append([]struct {
		payload []byte
		code    uint16
	}{{big, 0}}, commands...)
	for range 3 {
		_, err = c.conn.Write(all)
		require.NoError(t, err)
		for _, cmd := range commands {
			answered(cmd.code)
		}
	}
	requireSelectOne(t, c)
	requireNoPanicLogged(t, logBuf.String())
}

// TestServerCommandsOverTLS sends the commands the connection's reader
// answers itself over TLS, one at a time, all in one write and each cut
// into records written apart: each is
// answered as on a plain connection. Over TLS they reached the protocol
// layer, which closed the connection on a prepared LOAD DATA.
func TestServerCommandsOverTLS(t *testing.T) {
	cert, key := selfSigned(t)
	s, logBuf := testServerLogged(t, Config{Password: "pw", TLSCert: cert, TLSKey: key})
	tc, scramble := tlsRaw(t, s.Addr())
	resp := append(handshakeHead(), "root\x00"...)
	auth := nativeScramble("pw", scramble)
	resp = append(append(resp, byte(len(auth))), auth...)
	resp = append(resp, "main\x00mysql_native_password\x00"...)
	writePacket(t, tc, 2, resp)
	p, err := readPacket(tc)
	require.NoError(t, err)
	require.Equal(t, byte(0), p[0], "logged in: %q", p)
	require.NoError(t, tc.SetDeadline(time.Now().Add(time.Minute)))

	// The client asked for neither CLIENT_DEPRECATE_EOF nor multiple
	// statements: a result is columns, EOF, rows, EOF.
	selectOne := func() {
		t.Helper()
		eofs := 0
		for eofs < 2 {
			p, err := readPacket(tc)
			require.NoError(t, err)
			require.NotEqual(t, byte(0xff), p[0], "%q", p)
			if p[0] == 0xfe {
				eofs++
			}
		}
	}
	commands := []struct {
		payload []byte
		code    uint16 // the ERR packet's, 0 for SELECT 1's result
	}{
		{append([]byte{comStmtPrepare}, "LOAD DATA LOCAL INFILE '/x' INTO TABLE t"...), 1295},
		{append([]byte{comQueryByte}, "SELECT 1 /*!*/"...), 0},
		{binary.LittleEndian.AppendUint32([]byte{comStmtReset}, 999), 1243},
		{append([]byte{comFieldList}, "t"...), 1835},
		{binary.LittleEndian.AppendUint16([]byte{comSetOption}, 9), 1047},
		{append([]byte{comQueryByte}, "SELECT 1"...), 0},
	}
	answered := func(code uint16) {
		t.Helper()
		if code == 0 {
			selectOne()
			return
		}
		p, err := readPacket(tc)
		require.NoError(t, err)
		require.Equal(t, code, errCode(p), "%q", p)
	}
	var all []byte
	for _, cmd := range commands {
		writePacket(t, tc, 0, cmd.payload)
		answered(cmd.code)
		all = append(all, byte(len(cmd.payload)), byte(len(cmd.payload)>>8), 0, 0)
		all = append(all, cmd.payload...)
	}
	_, err = tc.Write(all)
	require.NoError(t, err)
	for _, cmd := range commands {
		answered(cmd.code)
	}
	// Cut into TLS records written apart.
	for _, cmd := range commands {
		w := append([]byte{byte(len(cmd.payload)), byte(len(cmd.payload) >> 8), 0, 0}, cmd.payload...)
		for _, piece := range [][]byte{w[:2], w[2:5], w[5:]} {
			_, err := tc.Write(piece)
			require.NoError(t, err)
			time.Sleep(10 * time.Millisecond)
		}
		answered(cmd.code)
	}
	writePacket(t, tc, 0, comQuery("SELECT 1"))
	selectOne()
	requireNoPanicLogged(t, logBuf.String())
}

// TestServerManyAnsweredCommandsAhead sends, in one write, a COM_PING
// (handed to the protocol layer) and then several read buffers' worth of
// commands the reader answers itself, kept for the reads after the ping:
// all are answered in order, and the connection stays.
func TestServerManyAnsweredCommandsAhead(t *testing.T) {
	s, logBuf := testServerLogged(t, Config{Password: "pw"})
	c := newRawClient(t, s.Addr())
	defer c.close()
	reset := binary.LittleEndian.AppendUint32([]byte{comStmtReset}, 999)
	all := []byte{1, 0, 0, 0, 0x0e} // COM_PING
	for range 3000 {
		all = append(all, byte(len(reset)), 0, 0, 0)
		all = append(all, reset...)
	}
	require.NoError(t, c.conn.SetDeadline(time.Now().Add(time.Minute)))
	go func() { _, _ = c.conn.Write(all) }()
	p, err := c.packet()
	require.NoError(t, err)
	require.Equal(t, byte(0), p[0], "the ping's OK: %q", p)
	for i := range 3000 {
		p, err := c.packet()
		require.NoError(t, err, "answer %d", i)
		require.Equal(t, uint16(1243), errCode(p), "answer %d: %q", i, p)
	}
	requireSelectOne(t, c)
	requireNoPanicLogged(t, logBuf.String())
}
