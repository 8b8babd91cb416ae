package server

// COM_FIELD_LIST's error
//
// The protocol layer answers a COM_FIELD_LIST that fails (a table that
// does not exist, one the account may not see) with an ERR packet and
// then the EOF packet that ends a successful answer. MySQL sends the ERR
// packet alone; the client takes the stray EOF packet for the answer to
// its next command, and the connection is out of step from then on. The
// connection drops that EOF packet as it is written: fieldListWrites
// follows the packets written for a COM_FIELD_LIST and leaves out the one
// after an ERR packet. A COM_FIELD_LIST without the NUL that ends its
// table name, which the protocol layer answers by closing the connection,
// is answered with 1835 by the reader (answerStmt).

const comFieldList = 0x04

// fieldListWrites follows the packets written while a COM_FIELD_LIST may
// be answered (from the read that brought one to the next read at a
// command's start, by which time the protocol layer has answered every
// command read before), header by header, a header and its payload
// possibly in separate writes. A packet that directly follows an ERR
// packet, numbered next, is left out: nothing may follow an ERR packet in
// an answer, and the next command's answer begins again at 1.
type fieldListWrites struct {
	on        bool    // packets are being followed
	hdr       [4]byte // the header being read
	hdrN      int
	size      int  // the current packet's payload size
	remaining int  // payload bytes left in the current packet
	isErr     bool // the current packet is an ERR packet
	drop      bool // the current packet is left out
	afterErr  bool // the previous packet was an ERR packet
	errSeq    byte // its sequence number
}

// Write implements net.Conn: it writes b, less any packet the protocol
// layer writes after an ERR packet (see fieldListWrites).
func (c *limitConn) Write(b []byte) (int, error) {
	if !c.fieldList.on {
		return c.Conn.Write(b)
	}
	w := &c.fieldList
	n := len(b)
	for len(b) > 0 {
		if w.remaining == 0 && w.hdrN < 4 {
			// A header is written, or left out, once complete.
			w.hdr[w.hdrN] = b[0]
			w.hdrN++
			b = b[1:]
			if w.hdrN < 4 {
				continue
			}
			w.hdrN = 0
			w.size = int(w.hdr[0]) | int(w.hdr[1])<<8 | int(w.hdr[2])<<16
			w.remaining = w.size
			w.drop = w.afterErr && w.hdr[3] == w.errSeq+1
			w.afterErr, w.isErr = false, false
			if !w.drop {
				if _, err := c.Conn.Write(w.hdr[:]); err != nil {
					return 0, err
				}
			}
			continue
		}
		k := min(w.remaining, len(b))
		if w.remaining == w.size && w.size < maxChunk {
			w.isErr = b[0] == 0xff
		}
		if !w.drop {
			if _, err := c.Conn.Write(b[:k]); err != nil {
				return 0, err
			}
		}
		w.remaining -= k
		b = b[k:]
		if w.remaining == 0 && w.isErr {
			w.afterErr, w.errSeq = true, w.hdr[3]
		}
	}
	return n, nil
}
