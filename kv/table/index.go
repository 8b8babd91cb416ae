package table

import (
	"encoding/binary"

	"github.com/strata-db/strata/kv/internal/base"
)

// Index block format
//
// One entry per data block, in the block format above. The key is a
// separator: an internal key sep(n) with last(n) <= sep(n) < first(n+1),
// made short with base.Separator (base.Successor for the last block). The
// value is the block's handle followed by the block's first key:
//
//	uvarint offset | uvarint length | uvarint first_key_len | first key
//
// The first key lets a reader tell, without reading the block, that a
// search key falls before the block (a point lookup is then a miss), that a
// block lies wholly past an upper bound, and which blocks a key range
// touches. Durable.

// indexEntry is one decoded index entry. sep and first alias the reader's
// copy of the index block (or an arena when keys share prefixes).
type indexEntry struct {
	sep   []byte
	first []byte
	h     BlockHandle
}

// appendIndexValue appends the value of an index entry to dst.
func appendIndexValue(dst []byte, h BlockHandle, first []byte) []byte {
	dst = AppendHandle(dst, h)
	dst = binary.AppendUvarint(dst, uint64(len(first)))
	return append(dst, first...)
}

// decodeIndex decodes an index block read from off and checks it: keys and
// first keys are internal keys, separators strictly increase, every block's
// first key lies in (sep(n-1), sep(n)], and the handles tile the data
// region from offset 0 without gaps. It returns the entries and the end of
// the data region. First keys alias block; separators, which may share
// prefixes, are copied into one arena.
func decodeIndex(block []byte, file string, off uint64) ([]indexEntry, uint64, error) {
	// Sized up front: a table of a few thousand blocks would otherwise
	// spend most of its open growing these slices.
	n := countEntries(block)
	var (
		entries = make([]indexEntry, 0, n)
		arena   = make([]byte, 0, len(block))
		spans   = make([][2]int, 0, n) // separators in arena, fixed up once it stops growing
		dataEnd uint64
	)
	corrupt := func(format string, args ...any) error {
		return base.Corruptf(file, int64(off), "index entry %d: "+format, append([]any{len(entries)}, args...)...)
	}
	err := walkBlock(block, file, off, func(k, v []byte) error {
		if !base.Valid(k) {
			return corrupt("separator %q is not an internal key", k)
		}
		h, n := decodeHandle(v)
		if n == 0 {
			return corrupt("malformed block handle")
		}
		fl, m := binary.Uvarint(v[n:])
		if m <= 0 || fl != uint64(len(v)-n-m) {
			return corrupt("malformed first key length")
		}
		first := v[n+m:]
		if !base.Valid(first) {
			return corrupt("first key %q is not an internal key", first)
		}
		if h.Offset != dataEnd {
			return corrupt("block %s does not start where the previous one ended (%d)", h, dataEnd)
		}
		if h.Length == 0 || h.Length > maxBlockLen {
			return corrupt("block %s has an impossible length", h)
		}
		if i := len(entries); i > 0 {
			prevSep := arena[spans[i-1][0]:spans[i-1][1]]
			if base.Compare(prevSep, k) >= 0 {
				return corrupt("separator %s does not follow %s", base.FormatKey(k), base.FormatKey(prevSep))
			}
			if base.Compare(first, prevSep) <= 0 {
				return corrupt("first key %s is not above the previous separator %s", base.FormatKey(first), base.FormatKey(prevSep))
			}
		}
		if base.Compare(first, k) > 0 {
			return corrupt("first key %s is above its separator %s", base.FormatKey(first), base.FormatKey(k))
		}
		dataEnd = h.End()
		s := len(arena)
		arena = append(arena, k...)
		spans = append(spans, [2]int{s, len(arena)})
		entries = append(entries, indexEntry{first: first[:len(first):len(first)], h: h})
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	for i, s := range spans {
		entries[i].sep = arena[s[0]:s[1]:s[1]]
	}
	return entries, dataEnd, nil
}

// countEntries returns the number of entries of a block, or 0 if the block
// is malformed (walkBlock then reports it).
func countEntries(block []byte) int {
	end, _, err := blockLayout(block, "", 0)
	if err != nil {
		return 0
	}
	n := 0
	for off := 0; off < end; n++ {
		_, unshared, vlen, p, ok := decodeEntryHeader(block, off, end)
		if !ok {
			return 0
		}
		off = p + unshared + vlen
	}
	return n
}
