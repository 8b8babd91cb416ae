package codec

import (
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
)

// checkCharset returns ErrCorrupt when body, a stored value (or key) of the
// string type typ, has a character the column's character set has no
// code for. Values are stored as UTF-8; a latin1, ascii or utf8mb3 column
// is written only characters its set holds (the write converts them),
// and GMS's encoders, which turn a value into the column's set to send
// or HEX it, panic on any other. A utf8mb4 or binary column, the common
// case, costs a type assertion and a comparison.
func checkCharset(typ sql.Type, body []byte) error {
	st, ok := typ.(sql.StringType)
	if !ok {
		return nil
	}
	cs := st.Collation().CharacterSet()
	if cs == sql.CharacterSet_utf8mb4 || cs == sql.CharacterSet_binary {
		return nil
	}
	enc := cs.Encoder()
	if enc == nil {
		return nil
	}
	var buf [8]byte
	for i := 0; i < len(body); {
		r, size := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError && size <= 1 {
			return corruptf("invalid UTF-8 at byte %d of a %s value", i, cs.Name())
		}
		// Room to spare: GMS's range maps look at up to four bytes
		// whatever the rune's length.
		n := utf8.EncodeRune(buf[:], r)
		if _, ok := enc.Encode(buf[:n:len(buf)]); !ok {
			return corruptf("character %q at byte %d not in character set %s", r, i, cs.Name())
		}
		i += size
	}
	return nil
}
