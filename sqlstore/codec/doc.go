// Package codec holds the byte encodings the SQL backend stores in the
// engine's ordered keyspace: memcomparable keys for single SQL values, an
// order-preserving varint for table and index IDs, and the compact value of a
// table row. It knows go-mysql-server's types and Go values and nothing of the
// engine.
//
// # Keys
//
// AppendKey writes one SQL value so that comparing encodings with
// bytes.Compare gives the order of typ.Compare, with NULL before every value.
// A composite key is the concatenation of its columns' encodings, each with
// its own Direction, and orders like the tuple of its columns; SkipKey and
// DecodeKey walk it column by column. Every datum is one flag byte followed by
// a payload:
//
//	NULL                           0x00
//	TINYINT .. BIGINT, YEAR         0x08  int64(v) XOR 1<<63, 8 bytes big-endian
//	... UNSIGNED, ENUM, SET, BIT    0x09  uint64(v), 8 bytes big-endian (ENUM by
//	                                      index, SET by bitmask)
//	FLOAT, DOUBLE                  0x0a  float64 bits: sign bit set if >= 0,
//	                                      all bits complemented if < 0; -0 is 0
//	DECIMAL                        0x0b/0x0c/0x0d  negative/zero/positive;
//	                                      exponent and base-100 digits (key_decimal.go)
//	DATE, DATETIME, TIMESTAMP      0x0e  UTC Unix microseconds XOR 1<<63
//	TIME                           0x0f  microseconds XOR 1<<63
//	binary strings,                0x12  bytes, 0x00 escaped as 0x00 0xff,
//	utf8mb4_0900_bin                      ended by 0x00 0x01 (key_string.go)
//	other NO PAD collations        0x13  rune weights, 4 bytes each, escaped
//	                                      and ended the same way
//	PAD SPACE collations           0x14  rune weights and runs of spaces,
//	                                      trailing spaces dropped, escaped and
//	                                      ended the same way
//	utf8mb4_bin, utf16_bin,        0x15  as 0x14, with UTF-8 bytes for the
//	utf32_bin (PAD SPACE)                 runes
//
// A Desc datum is the Asc datum with every byte complemented, so NULL sorts
// last. All of this is part of the durable format: the flag values in key.go,
// the layouts in key_decimal.go and key_string.go, which collations take
// which layout, and the varints in varint.go. When the keys of some values
// change, KeyFormat (keyformat.go) is raised and KeyChangedSince and
// ValueChangedSince say which types changed, so that tables written before
// can be found and rebuilt.
//
// Invariants the encoding keeps, and the tests check:
//   - Order: for values a, b of one type, the sign of bytes.Compare(enc(a),
//     enc(b)) is that of typ.Compare(a, b), NULL first (Asc) or last (Desc).
//     Values typ.Compare calls equal encode equal: 1.10 and 1.1 as DECIMAL,
//     'a' and 'A' under utf8mb4_0900_ai_ci, -0 and 0 as DOUBLE.
//   - Self-delimiting: no encoding is a prefix of another encoding of the same
//     type, so appended columns never run together and PrefixSuccessor(enc(k))
//     bounds exactly the keys whose column equals k.
//   - Strings follow MySQL: under a PAD SPACE collation 'a' and 'a ' are
//     equal and 'a\t' < 'a' (typ.Compare does not pad; mysqlcompat
//     corrects GMS's comparisons to match).
//   - Reversibility: DecodeKey returns the value (as GMS's Go type) for every
//     type except strings under weight-ordered collations, for which it
//     returns ErrNotDecodable; the row value holds the exact string.
//
// # Row values
//
// AppendRow writes a row's columns in schema order behind a version byte, a
// column count and a NULL bitmap; row.go has the layout. It is not ordered;
// it is small, exact (DECIMAL keeps its scale, times their nanoseconds; a
// CHAR value loses its trailing spaces, as MySQL reads it back, and so
// does its key) and cheap to decode, and DecodeRowColumns skips unwanted
// columns without decoding them. A row written before columns were added decodes with NULL for
// them. JSON is stored as text; geometry columns are not supported.
//
// # Values and errors
//
// Encoders take the Go values GMS uses (int32 for INT, string for VARCHAR,
// []byte for VARBINARY, decimal.Decimal, time.Time, types.Timespan,
// types.JSONDocument, ...) without converting them; other values go through
// typ.Convert first. Decoders return exactly those Go types and copy every
// string and byte slice out of their input, because rows cross goroutines.
// Errors wrap ErrUnsupportedType, ErrInvalidValue, ErrNotDecodable or
// ErrCorrupt; malformed input is an error, never a panic.
//
// # Concurrency
//
// The package has no mutable state: every function is safe for concurrent use
// as long as callers do not share the dst buffers they pass in.
//
// # Usage
//
//	key := codec.AppendUvarintAscending(nil, tableID)
//	key = codec.AppendUvarintAscending(key, indexID)
//	key, err := codec.AppendKey(key, types.Int64, int64(42), codec.Asc)
//	...
//	end := codec.PrefixSuccessor(nil, key) // exclusive end of "pk = 42"
//	val, err := codec.AppendRow(nil, schema, row)
package codec
