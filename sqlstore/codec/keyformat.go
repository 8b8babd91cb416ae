package codec

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/sqltypes"
)

// Key formats.
//
// The key of a value is part of the durable format, and it changed once:
// strings under PAD SPACE collations were keyed without padding (0x13
// weights, or 0x12 bytes for utf8mb4_bin, utf16_bin and utf32_bin) and
// CHAR values with their trailing spaces, which the padded keys (0x14,
// 0x15) and the trimmed CHAR keys of KeyFormatPadSpace replaced; row values
// lost CHAR's trailing spaces at the same time. A store written before
// keeps the old keys, which lookups built now miss, and the old CHAR
// values, which compare unequal to the ones written now. A table
// records the format its keys were written in (sqlstore's catalog), so
// that a table whose keys are of another format is refused, not read
// wrongly, until it is rebuilt.
const (
	// KeyFormatUnpadded is the first format: what a table record written
	// before the marker existed holds.
	KeyFormatUnpadded = 0
	// KeyFormatPadSpace keys PAD SPACE strings padded and CHAR values
	// without their trailing spaces.
	KeyFormatPadSpace = 1
	// KeyFormat is the format AppendKey writes.
	KeyFormat = KeyFormatPadSpace
)

// KeyChangedSince reports whether AppendKey may write, for some value of
// typ, another key than the one format wrote: then a table that keys typ
// and was written in format must be rebuilt before it is read. CHAR counts
// under every collation (its trailing spaces left the key); the other
// string types under the PAD SPACE collations.
func KeyChangedSince(format int, typ sql.Type) bool {
	if format >= KeyFormat || kindOf(typ) != kindString {
		return false
	}
	return typ.Type() == sqltypes.Char || PadSpace(typ)
}

// ValueChangedSince reports whether AppendRow may write, for some value of
// typ, another row value than the one format wrote: CHAR, whose trailing
// spaces the row value lost with KeyFormatPadSpace. A stored row value is
// read back as it was written, so a table holding such a column, written
// in format, gives back values (and, keyless, row hashes) that the values
// written now do not equal.
func ValueChangedSince(format int, typ sql.Type) bool {
	return format < KeyFormat && kindOf(typ) == kindString && typ.Type() == sqltypes.Char
}
