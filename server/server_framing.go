package server

// maxChunk is the largest payload of one protocol packet; a logical packet
// of that size or more continues in the next one.
const maxChunk = 0xffffff

// framer follows the packet framing of what a client sends, from the
// bytes as they are read, so that a packet's size is known from its
// header, before its payload is read (and buffered by the protocol
// layer). It allocates nothing.
type framer struct {
	hdr       [4]byte
	hdrN      int
	remaining int  // payload bytes left in the current packet
	last      bool // the current packet ends its logical packet
	logical   int  // size of the logical packet so far
	packets   int  // packets seen

	// A command's first bytes: cmdOff is the offset in the current
	// packet's payload, cmd its first byte when the packet begins a
	// command (sequence number 0). cursor is set for good once a
	// COM_STMT_EXECUTE asks for a cursor.
	inCmd  bool
	cmdOff int
	cmd    byte
	cursor bool

	// fieldList is set when a COM_FIELD_LIST begins (limitConn.Read
	// takes it).
	fieldList bool
}

// comStmtExecute is COM_STMT_EXECUTE's command byte; its payload's byte 5
// is the cursor type (after the statement ID), 0 for none.
const comStmtExecute = 0x17

// scan follows b, the next bytes read. It calls header for each packet
// header completed in b, with the packet's size, the size of its logical
// packet so far and its sequence number; scan stops, and returns what
// header returned, when header returns stop or an error.
func (f *framer) scan(b []byte, header func(size, logical int, seq byte) (stop bool, err error)) (bool, error) {
	for i := 0; i < len(b); {
		if f.remaining == 0 && f.hdrN < 4 {
			f.hdr[f.hdrN] = b[i]
			f.hdrN++
			i++
			if f.hdrN < 4 {
				continue
			}
			size := int(f.hdr[0]) | int(f.hdr[1])<<8 | int(f.hdr[2])<<16
			f.hdrN = 0
			f.packets++
			f.logical += size
			f.remaining = size
			f.last = size < maxChunk
			f.inCmd = f.hdr[3] == 0 && f.logical == size
			f.cmdOff = 0
			if stop, err := header(size, f.logical, f.hdr[3]); stop || err != nil {
				return stop, err
			}
			if size == 0 && f.last {
				f.logical = 0
			}
			continue
		}
		k := min(f.remaining, len(b)-i)
		if f.inCmd && f.cmdOff <= 5 {
			for j := 0; j < k && f.cmdOff+j <= 5; j++ {
				switch f.cmdOff + j {
				case 0:
					f.cmd = b[i+j]
					if f.cmd == comFieldList {
						f.fieldList = true
					}
				case 5:
					if f.cmd == comStmtExecute && b[i+j] != 0 {
						f.cursor = true
					}
				}
			}
			f.cmdOff += k
		}
		f.remaining -= k
		i += k
		if f.remaining == 0 && f.last {
			f.logical = 0
		}
	}
	return false, nil
}
