package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/stretchr/testify/require"
)

// rawResponse reads one command's whole response, packets with their
// headers, as the client received them.
func (c *rawClient) rawResponse() ([]byte, error) {
	var out []byte
	next := func() ([]byte, error) {
		if _, err := io.ReadFull(c.r, c.hdr[:]); err != nil {
			return nil, err
		}
		n := int(c.hdr[0]) | int(c.hdr[1])<<8 | int(c.hdr[2])<<16
		p := make([]byte, n)
		if _, err := io.ReadFull(c.r, p); err != nil {
			return nil, err
		}
		out = append(append(out, c.hdr[:]...), p...)
		return p, nil
	}
	p, err := next()
	if err != nil || p[0] == 0x00 || p[0] == 0xff {
		return out, err
	}
	for i := 0; i < int(p[0]); i++ {
		if _, err := next(); err != nil {
			return out, err
		}
	}
	if !c.deprecated {
		if _, err := next(); err != nil {
			return out, err
		}
	}
	for {
		p, err := next()
		if err != nil || (p[0] == 0xfe && len(p) < 0xffffff) || p[0] == 0xff {
			return out, err
		}
	}
}

// arg is an argument of executeRaw: its protocol type, unsigned flag and
// little-endian bytes.
type arg struct {
	typ      byte
	unsigned bool
	null     bool
	val      []byte
}

// sarg is a string argument: a length-encoded VAR_STRING.
func sarg(v string) arg {
	b := []byte{byte(len(v))}
	if len(v) >= 251 {
		b = []byte{0xfc, byte(len(v)), byte(len(v) >> 8)}
	}
	return arg{typ: 253, val: append(b, v...)}
}

var nullArg = arg{typ: 6, null: true}

func i64(v int64) arg {
	return arg{typ: byte(mysql.TypeLongLong), val: binary.LittleEndian.AppendUint64(nil, uint64(v))}
}

// executeRaw sends COM_STMT_EXECUTE of statement id with args (their
// types bound when bind is set) and returns the response's bytes.
func (c *rawClient) executeRaw(id uint32, bind bool, args ...arg) ([]byte, error) {
	c.out = append(c.out[:0], 0, 0, 0, 0, 0x17)
	c.out = binary.LittleEndian.AppendUint32(c.out, id)
	c.out = append(c.out, 0)
	c.out = binary.LittleEndian.AppendUint32(c.out, 1)
	if len(args) > 0 {
		for i := 0; i < (len(args)+7)/8; i++ {
			var b byte
			for j := i * 8; j < len(args) && j < i*8+8; j++ {
				if args[j].null {
					b |= 1 << (j % 8)
				}
			}
			c.out = append(c.out, b)
		}
		if bind {
			c.out = append(c.out, 1)
			for _, a := range args {
				flags := byte(0)
				if a.unsigned {
					flags = 0x80
				}
				c.out = append(c.out, a.typ, flags)
			}
		} else {
			c.out = append(c.out, 0)
		}
		for _, a := range args {
			c.out = append(c.out, a.val...)
		}
	}
	if err := c.send(); err != nil {
		return nil, err
	}
	return c.rawResponse()
}

// TestFastExecMatchesProtocolLayer: a client reads the same bytes, packet
// for packet, whether a prepared statement was answered below the
// protocol layer (server_exec.go) or by it: values of every column type,
// NULLs, OK packets of writes and transactions, errors, arguments of each
// integer type, bound once and reused.
func TestFastExecMatchesProtocolLayer(t *testing.T) {
	type step struct {
		query string
		bind  bool
		args  []arg
	}
	u := func(typ byte, unsigned bool, b ...byte) arg {
		return arg{typ: typ, unsigned: unsigned, val: b}
	}
	steps := []step{
		{"SELECT * FROM ty WHERE id = ?", true, []arg{i64(1)}},
		{"SELECT * FROM ty WHERE id = ?", false, []arg{i64(2)}},
		{"SELECT * FROM ty WHERE id = ?", false, []arg{i64(3)}},
		{"SELECT * FROM ty WHERE id = ?", true, []arg{i64(4)}},
		{"SELECT * FROM ty WHERE id BETWEEN ? AND ?", true, []arg{u(mysql.TypeTiny, false, 1), u(mysql.TypeShort, true, 3, 0)}},
		{"SELECT * FROM ty WHERE id BETWEEN ? AND ?", true, []arg{u(mysql.TypeLong, false, 0xff, 0xff, 0xff, 0xff), u(mysql.TypeLong, true, 0xff, 0xff, 0xff, 0xff)}},
		{"SELECT * FROM ty WHERE id BETWEEN ? AND ?", true, []arg{u(mysql.TypeLongLong, true, 1, 0, 0, 0, 0, 0, 0, 0x80), u(mysql.TypeYear, false, 3, 0)}},
		{"SELECT id, tm, tm6, dtm6 FROM ty WHERE id BETWEEN ? AND ? ORDER BY tm", true, []arg{i64(1), i64(3)}},
		{"SELECT SUM(i), COUNT(*) FROM ty WHERE id BETWEEN ? AND ?", true, []arg{i64(1), i64(3)}},
		{"SELECT DISTINCT c FROM ty WHERE id BETWEEN ? AND ? ORDER BY c", true, []arg{i64(1), i64(3)}},
		{"SELECT 1", false, nil},
		{"BEGIN", false, nil},
		{"INSERT INTO w (k) VALUES (?)", true, []arg{i64(7)}},
		{"UPDATE w SET k = k + ? WHERE id = ?", true, []arg{i64(1), i64(1)}},
		{"UPDATE w SET k = k + ? WHERE id = ?", false, []arg{i64(1), i64(100)}},
		{"COMMIT", false, nil},
		{"INSERT INTO w (id, k) VALUES (?, ?)", true, []arg{i64(1), i64(1)}}, // duplicate key
		{"SELECT id, k FROM w WHERE id BETWEEN ? AND ?", true, []arg{i64(1), i64(9)}},
		{"SELECT 1 FROM ty WHERE id = ? AND i / 0 IS NULL", true, []arg{i64(1)}},
		{"SELECT * FROM ty WHERE id = ?", true, []arg{sarg("1")}},
		{"SELECT * FROM ty WHERE id = ?", true, []arg{nullArg}},
		{"INSERT INTO w2 VALUES (?, ?, ?)", true, []arg{i64(1), sarg("abc"), sarg("12.5")}},
		{"INSERT INTO w2 VALUES (?, ?, ?)", true, []arg{i64(2), nullArg, nullArg}},
		{"INSERT INTO w2 VALUES (?, ?, ?)", false, []arg{i64(3), sarg(strings.Repeat("x", 300)), sarg("1")}}, // too long: an error
		{"UPDATE w2 SET s = ? WHERE id = ?", true, []arg{sarg("é"), u(mysql.TypeTiny, true, 2)}},
		{"SELECT id, s, de FROM w2 WHERE id BETWEEN ? AND ?", true, []arg{i64(0), i64(10)}},
	}
	// The same statements on two servers alike, one answering below the
	// protocol layer and one not.
	run := func(fast bool) (out []string, served int64) {
		s := testServer(t, Config{Data: t.TempDir(), Password: "pw"})
		s.h.noFastExec.Store(!fast)
		root := client(t, s.Addr(), "root", "pw", "")
		execAll(t, root,
			"CREATE TABLE ty (id INT PRIMARY KEY, ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, su SMALLINT UNSIGNED, mi MEDIUMINT, mu MEDIUMINT UNSIGNED, "+
				"i INT, iu INT UNSIGNED, bi BIGINT, bu BIGINT UNSIGNED, f FLOAT, d DOUBLE, de DECIMAL(10,3), c CHAR(5), vc VARCHAR(20), tx TEXT, bl BLOB, vb VARBINARY(10), "+
				"dt DATE, dtm DATETIME, dtm3 DATETIME(3), dtm6 DATETIME(6), ts TIMESTAMP(2), tm TIME, tm6 TIME(6), y YEAR, bt BIT(5), e ENUM('a','b'), st SET('x','y'), j JSON, KEY (i))",
			"INSERT INTO ty VALUES (1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615, "+
				"-1.5, 2.25e300, -1234567.125, 'ab', 'héllo', 'text', x'00ff', x'0102', '2026-12-07', '2026-12-07 17:05:09', '2026-12-07 17:05:09.123', "+
				"'1999-01-02 03:04:05.000006', '2026-12-07 01:02:03.45', '-838:59:59', '12:34:56.000001', 2026, b'10101', 'b', 'x,y', '{\"a\": [1, 2]}')",
			"INSERT INTO ty (id) VALUES (2)",
			"INSERT INTO ty VALUES (3, 127, 0, 32767, 0, 8388607, 0, 2147483647, 0, 9223372036854775807, 0, "+
				"0, 0, 0, '', '', '', '', '', '1000-01-01', '1000-01-01 00:00:00', '2026-12-07 00:00:00', '2026-12-07 00:00:00.5', '2026-12-07 00:00:00', '00:00:00', '100:00:00.5', 1901, b'0', 'a', '', 'null')",
			"CREATE TABLE w (id INT PRIMARY KEY AUTO_INCREMENT, k INT)",
			"CREATE TABLE w2 (id INT PRIMARY KEY, s VARCHAR(10), de DECIMAL(6,2))",
		)
		c := newRawClient(t, s.Addr())
		defer c.close()
		ids := map[string]uint32{}
		for i, st := range steps {
			id, ok := ids[st.query]
			if !ok {
				var err error
				id, err = c.prepare(st.query)
				require.NoError(t, err, st.query)
				ids[st.query] = id
			}
			// Twice: the first may be planned, the second runs on the
			// kept plan.
			for k := 0; k < 2; k++ {
				b, err := c.executeRaw(id, st.bind, st.args...)
				require.NoError(t, err, "%d: %s", i, st.query)
				out = append(out, fmt.Sprintf("%d.%d %s: %x", i, k, st.query, b))
			}
		}
		// A client without CLIENT_DEPRECATE_EOF (go-sql-driver): EOF
		// packets after the columns and at the end.
		ctx := context.Background()
		conn, rec := recordedConn(t, s.Addr(), "pw")
		rec.take()
		for _, q := range []struct {
			text string
			args []any
		}{
			{"SELECT * FROM ty WHERE id = ?", []any{1}},
			{"SELECT * FROM ty WHERE id BETWEEN ? AND ?", []any{1, 3}},
			{"SELECT id, s, de FROM w2 WHERE id BETWEEN ? AND ?", []any{int8(0), uint64(10)}},
			{"UPDATE w2 SET s = ? WHERE id = ?", []any{"q", 1}},
		} {
			for k := 0; k < 2; k++ {
				rows, err := conn.QueryContext(ctx, q.text, q.args...)
				require.NoError(t, err, q.text)
				for rows.Next() {
				}
				require.NoError(t, rows.Err())
				require.NoError(t, rows.Close())
				out = append(out, fmt.Sprintf("eof %d %s: %x", k, q.text, rec.take()))
			}
		}
		served = fastServed(s, func(f *fastExec) int64 { return f.served.Load() })
		return out, served
	}
	want, none := run(false)
	got, served := run(true)
	require.Equal(t, want, got)
	require.Zero(t, none)
	// All but the executions with a string or NULL argument of a select
	// (the plan cache runs selects with integers only) and the
	// duplicate-key and too-long inserts' first executions, planned.
	require.Greater(t, served, int64(len(steps)+4))
	t.Logf("%d executions answered below the protocol layer", served)
}

// FuzzFastExecBind: the reader's decoding of COM_STMT_EXECUTE takes any
// payload without panicking, and what it accepts has one argument per
// parameter, of the kind its type says (integers by sign, length-encoded
// values as strings, NULL as nil), the types a packet binds recorded.
func FuzzFastExecBind(f *testing.F) {
	f.Add(uint8(0), []byte{0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0})
	f.Add(uint8(1), []byte{0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 8, 0, 7, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint8(2), []byte{0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0, 2, 1, 253, 0, 3, 0x80, 3, 'a', 'b', 'c'})
	f.Add(uint8(2), []byte{0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Add(uint8(1), []byte{0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 254, 0, 0xfc, 1, 0, 'x'})
	f.Fuzz(func(t *testing.T, n uint8, p []byte) {
		prepare := &mysql.PrepareData{ParamsCount: uint16(n % 20), ParamsType: make([]int32, n%20), BindVars: map[string]*querypb.BindVariable{}}
		for i := range prepare.ParamsType {
			prepare.ParamsType[i] = int32(sqltypes.Int64) // as a previous execution bound them
		}
		fe := newFastExec(nil, &mysql.Conn{PrepareData: map[uint32]*mysql.PrepareData{1: prepare}})
		got, args, ok := fe.bind(p)
		if !ok {
			return
		}
		require.Same(t, prepare, got)
		require.Len(t, args, int(prepare.ParamsCount))
		for i, a := range args {
			require.Equal(t, fmt.Sprintf("v%d", i+1), a.Name)
			typ := querypb.Type(prepare.ParamsType[i])
			switch a.Value.(type) {
			case nil:
			case string:
				require.True(t, bytesArg(typ), "%v", typ)
			case int64:
				require.True(t, sqltypes.IsSigned(typ) || typ == sqltypes.Year, "%v", typ)
			case uint64:
				require.True(t, sqltypes.IsUnsigned(typ), "%v", typ)
			default:
				t.Fatalf("argument %d: %T", i, a.Value)
			}
		}
	})
}

// FuzzAppendBinaryValue: a value's binary encoding takes any text for
// any type without panicking, and encodes what the protocol layer's
// encoder accepts the same way (TestFastExecMatchesProtocolLayer compares
// the bytes).
func FuzzAppendBinaryValue(f *testing.F) {
	for _, seed := range []struct {
		typ querypb.Type
		raw string
	}{
		{sqltypes.Int64, "-9223372036854775808"}, {sqltypes.Uint8, "255"}, {sqltypes.Float64, "2.5e300"},
		{sqltypes.Datetime, "2026-12-07 17:05:09.123"}, {sqltypes.Date, "2026-12-07"}, {sqltypes.Timestamp, "2026-12-07 17:05:09"},
		{sqltypes.Time, "-838:59:59"}, {sqltypes.Time, "12:34:56.000001"}, {sqltypes.Time, "00:00:00"},
		{sqltypes.VarChar, "héllo"}, {sqltypes.Decimal, "-1.25"}, {sqltypes.Datetime, "2026-12-07 1"},
	} {
		f.Add(int32(seed.typ), []byte(seed.raw))
	}
	f.Fuzz(func(t *testing.T, typ int32, raw []byte) {
		v := sqltypes.MakeTrusted(querypb.Type(typ), raw)
		b, err := appendBinaryValue([]byte{1, 2}, v)
		require.Equal(t, []byte{1, 2}, b[:2])
		if err == nil && v.Type() == sqltypes.Int64 {
			require.Len(t, b, 10)
		}
	})
}

// fastServed sums count over the fastExec of every open connection of
// s, found as the server's reads find it: on the listener's connections.
func fastServed(s *Server, count func(*fastExec) int64) int64 {
	s.ln.mu.Lock()
	defer s.ln.mu.Unlock()
	var n int64
	for lc := range s.ln.conns {
		if lc.exec != nil {
			n += count(lc.exec)
		}
	}
	return n
}
