package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync/atomic"
	"unsafe"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/strata-db/strata/sqlstore"
)

// COM_STMT_EXECUTE answered below the protocol layer
//
// A prepared statement the plan cache runs (sysbench's reads with their
// integer arguments, BEGIN and COMMIT, writes with integer, string and
// NULL arguments) is answered as its packet is
// read, by the connection's reader (limitConn.Read), and never reaches the
// protocol layer: the protocol layer spent a closure, a trace task, a
// bind-variable map and one allocation per value of every binary row
// (its value encoder allocates each value's bytes) on each such
// statement, about 40% of a read-only transaction's allocations. Here the
// arguments are decoded from the packet into the connection's buffer and
// the response, packets numbered as the protocol layer numbers them, is
// built in the connection's buffer and written with one write.
//
// What the client reads is what the protocol layer writes for the same
// result, byte for byte (TestFastExecMatchesProtocolLayer): the same
// column definitions, the same binary values, the same EOF or OK ending
// with the same status flags and warning count, an error packet for an
// error before the first row, a closed connection for one after it.
//
// Anything else goes to the protocol layer as before, untouched: a
// command that is not COM_STMT_EXECUTE (COM_QUERY: server_text.go) or
// does not begin its read, a
// cursor, floating-point, date and time arguments, data sent with
// COM_STMT_SEND_LONG_DATA, a statement the plan cache does not run, and
// every command once the client asked for a cursor or switched to TLS.

// fastExec answers the COM_STMT_EXECUTE and COM_QUERY commands of one
// connection that its plan cache runs; it is used by the connection's
// reader only.
type fastExec struct {
	h  *handler
	mc *mysql.Conn

	args []sqlstore.Arg
	out  []byte // the response being built, packets with their headers
	seq  byte   // the sequence number of the next packet

	// The command's mode: text for COM_QUERY (rows as text, the OK
	// packet's info kept, the error mapped as queryErr maps it, with
	// multi its flag), else COM_STMT_EXECUTE (rows in binary).
	text, multi bool

	// The result's state, as the protocol layer keeps it per command.
	fieldSent, finished bool

	// result is f.write, made once: the callback runDirect gives the
	// results to, whatever the mode.
	result func(*sqltypes.Result, bool) error

	served atomic.Int64 // COM_STMT_EXECUTE commands answered, for tests
	texts  atomic.Int64 // COM_QUERY commands answered (server_text.go), for tests
}

func newFastExec(h *handler, mc *mysql.Conn) *fastExec {
	f := &fastExec{h: h, mc: mc}
	f.result = f.write
	return f
}

// maxBuffered is how much of a response is built before it is written
// out: as the protocol layer's buffered writer holds.
const maxBuffered = 16 << 10

// argNames are the names the protocol layer gives a statement's
// parameters (v1, v2, ...), made once for the first ones.
var argNames = func() []string {
	n := make([]string, 64)
	for i := range n {
		n[i] = "v" + strconv.Itoa(i+1)
	}
	return n
}()

func argName(i int) string {
	if i < len(argNames) {
		return argNames[i]
	}
	return "v" + strconv.Itoa(i+1)
}

// exec answers the COM_STMT_EXECUTE payload p when it can: served reports
// whether it did (the response is written), and err is an error that
// ends the connection, as the protocol layer's would. When served is
// false nothing was run or written.
func (f *fastExec) exec(p []byte) (served bool, err error) {
	prepare, args, ok := f.bind(p)
	if !ok {
		return false, nil
	}
	f.begin(false, false)
	served, err = f.run(prepare.PrepareStmt, args)
	clear(args) // no value kept past the statement
	if !served {
		return false, nil
	}
	f.served.Add(1)
	return true, f.end(err)
}

// end ends the response of a command that ran, with err its error, as
// the protocol layer ends it (an error packet when nothing was written,
// else the end of the result's rows), and writes it; the error returned
// ends the connection.
func (f *fastExec) end(err error) error {
	c := f.mc
	if !f.fieldSent {
		if err == nil || err == io.EOF {
			err = mysql.NewSQLErrorFromError(errors.New("unexpected: query ended with no results and no error"))
		}
		f.errorPacket(err)
	} else {
		if err != nil {
			// As the protocol layer does: no error can follow rows.
			return fmt.Errorf("error in the middle of a result: %w", err)
		}
		if !f.finished {
			f.endResult(c.StatusFlags, f.h.WarningCount(c))
		}
	}
	return f.flush()
}

// begin readies f for a command of the mode text (COM_QUERY, with multi
// queryErr's flag) or not (COM_STMT_EXECUTE).
func (f *fastExec) begin(text, multi bool) {
	f.out, f.seq, f.fieldSent, f.finished = f.out[:0], 1, false, false
	f.text, f.multi = text, multi
}

// run runs the statement on its kept plan as ComStmtExecute (ComQuery or
// ComMultiQuery in text mode) would; served is false when the plan cache
// does not run it (nothing was run).
func (f *fastExec) run(query string, args []sqlstore.Arg) (served bool, err error) {
	h, c := f.h, f.mc
	st := h.statementBegin(c)
	defer h.statementEnd(st)
	defer func() {
		if err != nil && !served {
			served = true // a panic survive answered: it ran
		}
	}()
	what := "COM_STMT_EXECUTE"
	if f.text {
		what = "a query"
	}
	defer h.survive(c, what, &err)
	handled, derr := h.runDirect(context.Background(), c, query, args, f.result)
	if !handled {
		return false, nil
	}
	if f.text {
		err = h.queryErr(c, query, f.multi, derr)
	} else {
		err = wireErr(h.worded(c, derr))
	}
	err = h.sessionOf(c).StatementFailed(err)
	releaseMemory(err)
	return true, err
}

// bind decodes the statement ID and the arguments of COM_STMT_EXECUTE
// payload p, as the protocol layer does and binds them (bindArgs), when
// there is no cursor and every argument is NULL, an integer or sent as a
// string; the arguments are in f.args. The
// parameter types a packet binds are recorded in the statement, as the
// protocol layer records them, for the executions that send none.
func (f *fastExec) bind(p []byte) (*mysql.PrepareData, []sqlstore.Arg, bool) {
	if len(p) < 10 || p[0] != comStmtExecute || p[5] != 0 || binary.LittleEndian.Uint32(p[6:]) != 1 {
		return nil, nil, false
	}
	prepare := f.mc.PrepareData[binary.LittleEndian.Uint32(p[1:])]
	if prepare == nil || len(prepare.BindVars) != 0 || int(prepare.ParamsCount) != len(prepare.ParamsType) {
		return nil, nil, false // unknown, or long data sent: the protocol layer's
	}
	n := int(prepare.ParamsCount)
	args := f.args[:0]
	if n == 0 {
		return prepare, args, true
	}
	pos := 10
	nulls := (n + 7) / 8
	if len(p) < pos+nulls+1 {
		return nil, nil, false
	}
	null := p[pos : pos+nulls]
	pos += nulls
	bound := p[pos] == 1
	pos++
	types := prepare.ParamsType
	if bound {
		if len(p) < pos+2*n {
			return nil, nil, false
		}
		for i := 0; i < n; i++ {
			t, err := sqltypes.MySQLToType(int64(p[pos+2*i]), int64(p[pos+2*i+1])>>2)
			if err != nil || null[i/8]&(1<<(i%8)) == 0 && intSize(t) == 0 && !bytesArg(t) {
				return nil, nil, false
			}
		}
		for i := 0; i < n; i++ {
			t, _ := sqltypes.MySQLToType(int64(p[pos+2*i]), int64(p[pos+2*i+1])>>2)
			types[i] = int32(t)
		}
		pos += 2 * n
	}
	for i := 0; i < n; i++ {
		if null[i/8]&(1<<(i%8)) != 0 {
			args = append(args, sqlstore.Arg{Name: argName(i), Value: nil})
			continue
		}
		t := querypb.Type(types[i])
		if bytesArg(t) {
			l, k := lenEncInt(p[pos:])
			if k == 0 || uint64(len(p)-pos-k) < l {
				return nil, nil, false
			}
			// A string, as the protocol layer's binding passes on the
			// bytes of every quoted value.
			args = append(args, sqlstore.Arg{Name: argName(i), Value: string(p[pos+k : pos+k+int(l)])})
			pos += k + int(l)
			continue
		}
		size := intSize(t)
		if size == 0 || len(p) < pos+size {
			return nil, nil, false
		}
		b := p[pos : pos+size]
		pos += size
		var v any
		switch t {
		case sqltypes.Int8:
			v = int64(int8(b[0]))
		case sqltypes.Uint8:
			v = uint64(b[0])
		case sqltypes.Int16, sqltypes.Year:
			v = int64(int16(binary.LittleEndian.Uint16(b)))
		case sqltypes.Uint16:
			v = uint64(binary.LittleEndian.Uint16(b))
		case sqltypes.Int24, sqltypes.Int32:
			v = int64(int32(binary.LittleEndian.Uint32(b)))
		case sqltypes.Uint24, sqltypes.Uint32:
			v = uint64(binary.LittleEndian.Uint32(b))
		case sqltypes.Int64:
			v = int64(binary.LittleEndian.Uint64(b))
		case sqltypes.Uint64:
			v = binary.LittleEndian.Uint64(b)
		}
		args = append(args, sqlstore.Arg{Name: argName(i), Value: v})
	}
	f.args = args
	return prepare, args, true
}

// bytesArg reports whether an argument of type t is sent as a
// length-encoded string, which the protocol layer binds as a binary
// string whatever t is (a DECIMAL's digits, a JSON text).
func bytesArg(t querypb.Type) bool {
	switch t {
	case sqltypes.Decimal, sqltypes.Text, sqltypes.Blob, sqltypes.VarChar, sqltypes.Char, sqltypes.VarBinary,
		sqltypes.Bit, sqltypes.Enum, sqltypes.Set, sqltypes.Geometry, sqltypes.Binary, sqltypes.TypeJSON:
		return true
	}
	return false
}

// lenEncInt reads the length-encoded integer b begins with, and its size
// (0 when b is too short or does not begin with one).
func lenEncInt(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	switch b[0] {
	case 0xfc:
		if len(b) < 3 {
			return 0, 0
		}
		return uint64(binary.LittleEndian.Uint16(b[1:])), 3
	case 0xfd:
		if len(b) < 4 {
			return 0, 0
		}
		return uint64(b[1]) | uint64(b[2])<<8 | uint64(b[3])<<16, 4
	case 0xfe:
		if len(b) < 9 {
			return 0, 0
		}
		return binary.LittleEndian.Uint64(b[1:]), 9
	case 0xfb, 0xff:
		return 0, 0
	}
	return uint64(b[0]), 1
}

// intSize is the size of an integer argument of type t in the packet, 0
// for the types of other arguments.
func intSize(t querypb.Type) int {
	switch t {
	case sqltypes.Int8, sqltypes.Uint8:
		return 1
	case sqltypes.Int16, sqltypes.Uint16, sqltypes.Year:
		return 2
	case sqltypes.Int24, sqltypes.Uint24, sqltypes.Int32, sqltypes.Uint32:
		return 4
	case sqltypes.Int64, sqltypes.Uint64:
		return 8
	}
	return 0
}

// write takes a result as the protocol layer's callback of the command
// does: the first with no columns is the OK packet, else the columns
// once, then the rows, in binary for COM_STMT_EXECUTE, as text for
// COM_QUERY. In text mode it does what the handler's dropShortInfo does
// first, and the OK packet keeps the result's info and says when more
// results follow.
func (f *fastExec) write(qr *sqltypes.Result, more bool) error {
	if f.finished {
		return io.EOF
	}
	c := f.mc
	if !f.fieldSent {
		f.fieldSent = true
		if len(qr.Fields) == 0 {
			f.finished = true
			// The statement's warnings counted, as MySQL counts them
			// (the protocol layer's COM_STMT_EXECUTE sends 0).
			flags, info := c.StatusFlags, ""
			if f.text {
				if more {
					flags |= mysql.ServerMoreResultsExists
				}
				if len(qr.Info) >= '#' {
					info = qr.Info // else dropShortInfo's
				}
			}
			f.okPacket(0x00, qr.RowsAffected, qr.InsertID, flags, f.h.WarningCount(c), info)
			return nil
		}
		f.packet(appendLenEncInt(f.start(), uint64(len(qr.Fields))))
		for _, fd := range qr.Fields {
			f.packet(appendColumnDefinition(f.start(), fd))
		}
		if c.Capabilities&mysql.CapabilityClientDeprecateEOF == 0 {
			f.eofPacket(c.StatusFlags, 0)
		}
	}
	for _, row := range qr.Rows {
		if f.text {
			f.packet(appendTextRow(f.start(), row))
		} else {
			b, err := appendBinaryRow(f.start(), row)
			if err != nil {
				return err
			}
			f.packet(b)
		}
		if len(f.out) >= maxBuffered {
			if err := f.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// start begins a packet: its header's room. The payload is appended to
// the slice returned and handed to packet.
func (f *fastExec) start() []byte {
	return append(f.out, 0, 0, 0, 0)
}

// packet ends the packet start began, whose payload is b[len(f.out)+4:]:
// it fills the header, splitting a payload of the maximum packet size or
// more as the protocol requires.
func (f *fastExec) packet(b []byte) {
	at := len(f.out)
	n := len(b) - at - 4
	if n < maxChunk {
		b[at], b[at+1], b[at+2], b[at+3] = byte(n), byte(n>>8), byte(n>>16), f.seq
		f.seq++
		f.out = b
		return
	}
	payload := append([]byte(nil), b[at+4:]...)
	out := b[:at]
	for {
		k := min(len(payload), maxChunk)
		out = append(out, byte(k), byte(k>>8), byte(k>>16), f.seq)
		out = append(out, payload[:k]...)
		f.seq++
		payload = payload[k:]
		if k < maxChunk {
			break
		}
	}
	f.out = out
}

// okPacket appends an OK packet, with info after a '#' byte when there
// is any, as the protocol layer writes a text command's.
func (f *fastExec) okPacket(header byte, affected, insertID uint64, flags, warnings uint16, info string) {
	b := append(f.start(), header)
	b = appendLenEncInt(b, affected)
	b = appendLenEncInt(b, insertID)
	b = binary.LittleEndian.AppendUint16(b, flags)
	b = binary.LittleEndian.AppendUint16(b, warnings)
	if info != "" {
		b = append(append(b, '#'), info...)
	}
	f.packet(b)
}

func (f *fastExec) eofPacket(flags, warnings uint16) {
	b := append(f.start(), 0xfe)
	b = binary.LittleEndian.AppendUint16(b, warnings)
	b = binary.LittleEndian.AppendUint16(b, flags)
	f.packet(b)
}

// endResult ends a result's rows: an EOF packet, or an OK packet with the
// EOF header for a client that asked for no EOF packets.
func (f *fastExec) endResult(flags, warnings uint16) {
	if f.mc.Capabilities&mysql.CapabilityClientDeprecateEOF == 0 {
		f.eofPacket(flags, warnings)
	} else {
		f.okPacket(0xfe, 0, 0, flags, warnings, "")
	}
}

// errorPacket replaces the response with the error packet of err.
func (f *fastExec) errorPacket(err error) {
	f.out, f.seq = f.out[:0], 1
	num, state, msg := uint16(mysql.ERUnknownError), mysql.SSUnknownSQLState, "unknown error: "+err.Error()
	if se, ok := err.(*mysql.SQLError); ok {
		num, state, msg = uint16(se.Num), se.State, se.Message
	}
	if len(state) != 5 {
		state = mysql.SSUnknownSQLState
	}
	b := append(f.start(), 0xff)
	b = binary.LittleEndian.AppendUint16(b, num)
	b = append(b, '#')
	b = append(b, state...)
	b = append(b, msg...)
	f.packet(b)
}

// flush writes the response built so far.
func (f *fastExec) flush() error {
	if len(f.out) == 0 {
		return nil
	}
	_, err := f.mc.Conn.Write(f.out)
	f.out = f.out[:0]
	if cap(f.out) > 4*maxBuffered {
		f.out = nil // a large result's room is not kept
	}
	return err
}

// appendLenEncInt appends the protocol's length-encoded integer.
func appendLenEncInt(b []byte, v uint64) []byte {
	switch {
	case v < 251:
		return append(b, byte(v))
	case v < 1<<16:
		return append(b, 0xfc, byte(v), byte(v>>8))
	case v < 1<<24:
		return append(b, 0xfd, byte(v), byte(v>>8), byte(v>>16))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xfe), v)
}

func appendLenEncString(b []byte, s string) []byte {
	return append(appendLenEncInt(b, uint64(len(s))), s...)
}

// appendColumnDefinition appends the column definition packet's payload
// of fd, as the protocol layer writes it (its type's flags unless fd has
// its own).
func appendColumnDefinition(b []byte, fd *querypb.Field) []byte {
	typ, flags := sqltypes.TypeToMySQL(fd.Type)
	if fd.Flags != 0 {
		flags = int64(fd.Flags)
	}
	b = appendLenEncString(b, "def")
	b = appendLenEncString(b, fd.Database)
	b = appendLenEncString(b, fd.Table)
	b = appendLenEncString(b, fd.OrgTable)
	b = appendLenEncString(b, fd.Name)
	b = appendLenEncString(b, fd.OrgName)
	b = append(b, 0x0c)
	b = binary.LittleEndian.AppendUint16(b, uint16(fd.Charset))
	b = binary.LittleEndian.AppendUint32(b, fd.ColumnLength)
	b = append(b, byte(typ))
	b = binary.LittleEndian.AppendUint16(b, uint16(flags))
	b = append(b, byte(fd.Decimals))
	return append(b, 0, 0)
}

// appendBinaryRow appends the binary result row packet's payload of row:
// a zero byte, the NULL bitmap (offset by two bits) and each value that
// is not NULL in its binary form (appendBinaryValue).
func appendBinaryRow(b []byte, row []sqltypes.Value) ([]byte, error) {
	b = append(b, 0)
	bitmap := len(b)
	for i := 0; i < (len(row)+7+2)/8; i++ {
		b = append(b, 0)
	}
	for i, v := range row {
		if v.IsNull() {
			b[bitmap+(i+2)/8] |= 1 << uint((i+2)%8)
			continue
		}
		var err error
		if b, err = appendBinaryValue(b, v); err != nil {
			return b, fmt.Errorf("internal value %v to MySQL value error: %v", v, err)
		}
	}
	return b, nil
}

// str is b as a string without a copy, for parsing only (the result
// must not outlive b's next change).
func str(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// appendBinaryValue appends v in the binary protocol's form of its type,
// as the protocol layer encodes it from the value's text: integers and
// floating-point numbers in little-endian, dates and times in their
// length-prefixed parts, everything else a length-encoded string.
func appendBinaryValue(b []byte, v sqltypes.Value) ([]byte, error) {
	raw := v.Raw()
	switch v.Type() {
	case sqltypes.Null:
		return b, nil
	case sqltypes.Int8:
		n, err := strconv.ParseInt(str(raw), 10, 8)
		return append(b, byte(n)), err
	case sqltypes.Uint8:
		n, err := strconv.ParseUint(str(raw), 10, 8)
		return append(b, byte(n)), err
	case sqltypes.Uint16:
		n, err := strconv.ParseUint(str(raw), 10, 16)
		return binary.LittleEndian.AppendUint16(b, uint16(n)), err
	case sqltypes.Int16, sqltypes.Year:
		n, err := strconv.ParseInt(str(raw), 10, 16)
		return binary.LittleEndian.AppendUint16(b, uint16(n)), err
	case sqltypes.Uint24, sqltypes.Uint32:
		n, err := strconv.ParseUint(str(raw), 10, 32)
		return binary.LittleEndian.AppendUint32(b, uint32(n)), err
	case sqltypes.Int24, sqltypes.Int32:
		n, err := strconv.ParseInt(str(raw), 10, 32)
		return binary.LittleEndian.AppendUint32(b, uint32(n)), err
	case sqltypes.Float32:
		x, err := strconv.ParseFloat(str(raw), 32)
		return binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(x))), err
	case sqltypes.Uint64:
		n, err := strconv.ParseUint(str(raw), 10, 64)
		return binary.LittleEndian.AppendUint64(b, n), err
	case sqltypes.Int64:
		n, err := strconv.ParseInt(str(raw), 10, 64)
		return binary.LittleEndian.AppendUint64(b, uint64(n)), err
	case sqltypes.Float64:
		x, err := strconv.ParseFloat(str(raw), 64)
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(x)), err
	case sqltypes.Timestamp, sqltypes.Date, sqltypes.Datetime:
		return appendBinaryDatetime(b, raw)
	case sqltypes.Time:
		return appendBinaryTime(b, raw)
	}
	if bytesArg(v.Type()) {
		return append(appendLenEncInt(b, uint64(len(raw))), raw...), nil
	}
	return append(b, raw...), nil
}

// digits parses the unsigned decimal number s of at most bits bits.
func digits(s []byte, bits int) (uint64, error) {
	return strconv.ParseUint(str(s), 10, bits)
}

// micros parses a fraction's digits as microseconds: its first six,
// padded with zeros to six.
func micros(s []byte) (uint64, error) {
	var buf [6]byte
	n := copy(buf[:], s)
	for i := n; i < len(buf); i++ {
		buf[i] = '0'
	}
	return strconv.ParseUint(str(buf[:]), 10, 32)
}

// appendBinaryDatetime appends 'YYYY-MM-DD[ hh:mm:ss[.ffffff]]' in the
// form of 11, 7, 4 or no bytes after its length, chosen by the text's
// length as the protocol layer chooses it.
func appendBinaryDatetime(b []byte, raw []byte) ([]byte, error) {
	if len(raw) > 10 && len(raw) < 17 || len(raw) > 0 && len(raw) < 8 {
		// Too short for its parts: an error, where the protocol
		// layer's encoder would panic.
		return b, fmt.Errorf("incorrect datetime value %q", raw)
	}
	var parts [7]uint64
	var err error
	parse := func(i int, s []byte, bits int) {
		if err == nil {
			parts[i], err = digits(s, bits)
		}
	}
	switch {
	case len(raw) > 19:
		parse(0, raw[0:4], 16)
		parse(1, raw[5:7], 8)
		parse(2, raw[8:10], 8)
		parse(3, raw[11:13], 8)
		parse(4, raw[14:16], 8)
		parse(5, raw[17:19], 8)
		if err == nil {
			parts[6], err = micros(raw[20:])
		}
		if err != nil {
			return b, err
		}
		b = append(b, 11)
		b = binary.LittleEndian.AppendUint16(b, uint16(parts[0]))
		b = append(b, byte(parts[1]), byte(parts[2]), byte(parts[3]), byte(parts[4]), byte(parts[5]))
		return binary.LittleEndian.AppendUint32(b, uint32(parts[6])), nil
	case len(raw) > 10:
		parse(0, raw[0:4], 16)
		parse(1, raw[5:7], 8)
		parse(2, raw[8:10], 8)
		parse(3, raw[11:13], 8)
		parse(4, raw[14:16], 8)
		parse(5, raw[17:], 8)
		if err != nil {
			return b, err
		}
		b = append(b, 7)
		b = binary.LittleEndian.AppendUint16(b, uint16(parts[0]))
		return append(b, byte(parts[1]), byte(parts[2]), byte(parts[3]), byte(parts[4]), byte(parts[5])), nil
	case len(raw) > 0:
		parse(0, raw[0:4], 16)
		parse(1, raw[5:7], 8)
		parse(2, raw[8:], 8)
		if err != nil {
			return b, err
		}
		b = append(b, 4)
		b = binary.LittleEndian.AppendUint16(b, uint16(parts[0]))
		return append(b, byte(parts[1]), byte(parts[2])), nil
	}
	return append(b, 0), nil
}

var colon, point = []byte{':'}, []byte{'.'}

// appendBinaryTime appends '[-]h:mm:ss[.ffffff]' in the form of 12, 8 or
// no bytes after its length (sign, days, hours, minutes, seconds,
// microseconds), as the protocol layer encodes it.
func appendBinaryTime(b []byte, raw []byte) ([]byte, error) {
	if string(raw) == "00:00:00" {
		return append(b, 0), nil
	}
	if len(raw) == 0 {
		return b, errors.New("incorrect time value")
	}
	// h:m:s, exactly two colons; with a point anywhere, s is sec.frac.
	if bytes.Count(raw, colon) != 2 {
		return b, errors.New("incorrect time value, ':' is not found")
	}
	i := bytes.IndexByte(raw, ':')
	j := i + 1 + bytes.IndexByte(raw[i+1:], ':')
	h, m, sec := raw[:i], raw[i+1:j], raw[j+1:]
	var frac []byte
	hasFrac := bytes.IndexByte(raw, '.') >= 0
	if hasFrac {
		if bytes.Count(sec, point) != 1 {
			return b, errors.New("incorrect time value, '.' is not found")
		}
		k := bytes.IndexByte(sec, '.')
		sec, frac = sec[:k], sec[k+1:]
	}
	neg := byte(0)
	if len(h) > 0 && h[0] == '-' {
		neg, h = 1, h[1:]
	}
	hours, err := digits(h, 32)
	if err != nil {
		return b, err
	}
	minutes, err := digits(m, 8)
	if err != nil {
		return b, err
	}
	seconds, err := digits(sec, 8)
	if err != nil {
		return b, err
	}
	size := byte(8)
	if hasFrac {
		size = 12
	}
	b = append(b, size, neg)
	b = binary.LittleEndian.AppendUint32(b, uint32(hours)/24)
	b = append(b, byte(uint32(hours)%24), byte(minutes), byte(seconds))
	if hasFrac {
		us, err := micros(frac)
		if err != nil {
			return b, err
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(us))
	}
	return b, nil
}
