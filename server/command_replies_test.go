package server

import (
	"encoding/binary"
	"testing"

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
