package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/strata-db/strata/sqlstore"
)

// COM_QUERY answered below the protocol layer
//
// A text statement the plan cache runs (sysbench's text point selects and
// INSERTs, BEGIN, COMMIT, SET) is answered as its packet is read, as a
// COM_STMT_EXECUTE is (server_exec.go): the protocol layer spent a trace
// task and its context, a closure with its captured flags and the query's
// copy on each. What the handler's ComQuery and ComMultiQuery do around a
// statement the plan cache runs is done here alike: the statement is
// counted and watched (statementBegin), a panic fails it (survive), its
// short OK info is dropped (dropShortInfo), its error is mapped as
// queryErr maps it, with the same multi-statement flag the protocol layer
// would have chosen, and its OK packet carries the connection's warning
// count. The rest (the process list's entry, KILL QUERY, the memory caps)
// is runDirect's, the same for both paths.
//
// Left to the protocol layer, untouched: a text the handler rewrites or
// whose result it checks (SET PASSWORD, SQL PREPARE), a text longer than
// max_allowed_packet, a text with a semicolon from a client that may send
// several statements in one, and every text the plan cache does not run.
// TestFastTextMatchesProtocolLayer compares the bytes a client reads.

// comQueryByte is COM_QUERY's command byte.
const comQueryByte = 0x03

// query answers the COM_QUERY payload p when the plan cache runs its
// text: served reports whether it did (the response is written), and err
// is an error that ends the connection, as the protocol layer's would.
// When served is false nothing was run or written.
func (f *fastExec) query(p []byte) (served bool, err error) {
	h, c := f.h, f.mc
	if len(p) < 2 || p[0] != comQueryByte || h.tooLarge(len(p)-1) != nil {
		return false, nil
	}
	// The protocol layer calls ComMultiQuery instead of ComQuery: the
	// same for a text the plan cache runs, which holds one statement,
	// but for queryErr's flag. A semicolon might separate statements.
	multi := !c.DisableClientMultiStatements && c.Capabilities&mysql.CapabilityClientMultiStatements != 0
	if multi && bytes.IndexByte(p, ';') >= 0 {
		return false, nil
	}
	// The texts the handler rewrites (SET PASSWORD: setPassword) or
	// counts (PREPARE: limitSQLPrepare).
	first, second := sqlstore.LeadingWords(str(p[1:]))
	if strings.EqualFold(first, "prepare") || strings.EqualFold(first, "set") && strings.EqualFold(second, "password") {
		return false, nil
	}
	// A copy, as the protocol layer's: the text may be kept (the plan
	// cache, an error's message).
	text := string(p[1:])
	f.out, f.seq, f.fieldSent, f.finished = f.out[:0], 1, false, false
	served, err = f.runText(text, multi)
	if !served {
		return false, nil
	}
	f.texts.Add(1)
	return true, f.end(err)
}

// runText runs text on its kept plan as ComQuery (or ComMultiQuery, when
// multi) would; served is false when the plan cache does not run it
// (nothing was run).
func (f *fastExec) runText(text string, multi bool) (served bool, err error) {
	h, c := f.h, f.mc
	st := h.statementBegin(c)
	defer h.statementEnd(st)
	defer func() {
		if err != nil && !served {
			served = true // a panic survive answered: it ran
		}
	}()
	defer h.survive(c, "a query", &err)
	handled, derr := h.runDirect(context.Background(), c, text, nil, f.textResult)
	if !handled {
		return false, nil
	}
	err = h.sessionOf(c).StatementFailed(h.queryErr(c, text, multi, derr))
	releaseMemory(err)
	return true, err
}

// writeText takes a result as the protocol layer's COM_QUERY callback
// does, after the handler's dropShortInfo: the first with no columns is
// the OK packet (with its info text, when it has one, and the warning
// count), else the columns once, then the rows as text.
func (f *fastExec) writeText(qr *sqltypes.Result, more bool) error {
	if len(qr.Fields) == 0 && len(qr.Info) < '#' {
		qr.Info = "" // dropShortInfo
	}
	c := f.mc
	flags := c.StatusFlags
	if more {
		flags |= mysql.ServerMoreResultsExists
	}
	if f.finished {
		return io.EOF
	}
	if !f.fieldSent {
		f.fieldSent = true
		if len(qr.Fields) == 0 {
			f.finished = true
			f.okPacketInfo(qr.RowsAffected, qr.InsertID, flags, f.h.WarningCount(c), qr.Info)
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
		f.packet(appendTextRow(f.start(), row))
		if len(f.out) >= maxBuffered {
			if err := f.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// okPacketInfo appends an OK packet, with info after a '#' byte when
// there is any, as the protocol layer writes a text command's.
func (f *fastExec) okPacketInfo(affected, insertID uint64, flags, warnings uint16, info string) {
	b := append(f.start(), 0x00)
	b = appendLenEncInt(b, affected)
	b = appendLenEncInt(b, insertID)
	b = binary.LittleEndian.AppendUint16(b, flags)
	b = binary.LittleEndian.AppendUint16(b, warnings)
	if info != "" {
		b = append(append(b, '#'), info...)
	}
	f.packet(b)
}

// appendTextRow appends the text result row packet's payload of row:
// each value length-encoded, a NULL as the byte 0xfb.
func appendTextRow(b []byte, row []sqltypes.Value) []byte {
	for _, v := range row {
		if v.IsNull() {
			b = append(b, 0xfb)
			continue
		}
		raw := v.Raw()
		b = append(appendLenEncInt(b, uint64(len(raw))), raw...)
	}
	return b
}
