package mysqlcompat

import (
	"hash/maphash"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/strata-db/strata/sqlstore/codec"
)

// groupConcatBuffer is one group of a groupConcat (groupconcat.go).
type groupConcatBuffer struct {
	g     *groupConcat
	limit int // group_concat_max_len, in bytes

	// out is the result so far, at most limit+1 bytes: the byte past the
	// limit tells whether the character at the limit is whole.
	out []byte
	n   uint64 // values appended to out
	cut bool

	// With ORDER BY or DISTINCT the values are kept until Eval.
	keep  bool
	kept  []keptValue
	vals  sql.Row  // scratch: the arguments of a row
	parts []string // scratch: the arguments as text
	seen  map[uint64]struct{}
	hash  maphash.Hash

	acct       MemoryAccount
	charged    int64 // on acct, given back by Dispose
	outCharged int64 // of charged, for out's capacity
}

// keptValue is a value of a group with ORDER BY or DISTINCT, with what it
// sorts by.
type keptValue struct {
	keys sql.Row
	val  string
}

// Estimates, for the memory account, of what a kept value and an entry of
// the DISTINCT set hold besides their bytes.
const (
	keptValueBytes = 40 + 16 + 24
	seenEntryBytes = 24
)

// Update appends row's value, or keeps it until Eval.
func (b *groupConcatBuffer) Update(ctx *sql.Context, row sql.Row) error {
	if b.acct == nil {
		b.acct = memoryAccountOf(ctx)
	}
	if b.keep {
		return b.keepRow(ctx, row)
	}
	if b.cut {
		// MySQL evaluates the arguments of every row; a cut group drops
		// their values.
		for _, a := range b.g.args {
			if _, err := a.Eval(ctx, row); err != nil {
				return err
			}
		}
		return nil
	}
	mark := len(b.out)
	if b.n > 0 {
		b.out = appendCapped(b.out, b.g.sep, b.limit)
	}
	for _, a := range b.g.args {
		v, err := a.Eval(ctx, row)
		if err != nil {
			b.out = b.out[:mark]
			return err
		}
		if v == nil {
			b.out = b.out[:mark]
			return nil
		}
		if b.out, err = appendValue(ctx, b.out, v, b.limit); err != nil {
			b.out = b.out[:mark]
			return err
		}
	}
	b.n++
	if len(b.out) > b.limit {
		b.truncate(mark)
	}
	return b.chargeOut(ctx)
}

// keepRow keeps row's value, and its sort keys, for Eval; a value DISTINCT
// has seen is dropped.
func (b *groupConcatBuffer) keepRow(ctx *sql.Context, row sql.Row) error {
	g := b.g
	if b.vals == nil {
		b.vals, b.parts = make(sql.Row, len(g.args)), make([]string, len(g.args))
	}
	for i, a := range g.args {
		v, err := a.Eval(ctx, row)
		if err != nil {
			return err
		}
		if v == nil {
			return nil
		}
		b.vals[i] = v
	}
	val, err := concatValues(ctx, b.vals, b.parts)
	if err != nil {
		return err
	}
	charge := int64(keptValueBytes + len(val))
	if g.distinct {
		key := b.distinctKey(b.parts)
		if _, ok := b.seen[key]; ok {
			return nil
		}
		if b.seen == nil {
			b.seen = make(map[uint64]struct{})
		}
		b.seen[key] = struct{}{}
		charge += seenEntryBytes
	}
	var keys sql.Row
	if len(g.sf) == 0 {
		keys = slices.Clone(b.vals) // DISTINCT alone appends in the order of the arguments
	} else {
		keys = make(sql.Row, len(g.sf))
		for i, f := range g.sf {
			if keys[i], err = f.Column.Eval(ctx, row); err != nil {
				return err
			}
		}
	}
	charge += RowBytes(keys)
	b.kept = append(b.kept, keptValue{keys: keys, val: val})
	return b.charge(ctx, charge)
}

// distinctKey hashes the arguments' values as GMS's grouping does: strings
// by their collation's weights.
func (b *groupConcatBuffer) distinctKey(parts []string) uint64 {
	b.hash.Reset()
	for i, s := range parts {
		if i > 0 {
			_ = b.hash.WriteByte(0)
		}
		if st, ok := b.g.args[i].Type().(sql.StringType); ok && !b.g.binary {
			if codec.PadSpace(st) {
				s = strings.TrimRight(s, " ") // 'a' and 'a ' are one value
			}
			if st.Collation().WriteWeightString(&b.hash, s) == nil {
				continue
			}
		}
		_, _ = b.hash.WriteString(s)
	}
	return b.hash.Sum64()
}

// Eval returns the group's result, and warns when it was cut.
func (b *groupConcatBuffer) Eval(ctx *sql.Context) (any, error) {
	if b.keep {
		if err := b.appendKept(ctx); err != nil {
			return nil, err
		}
	}
	if b.n == 0 {
		return nil, nil
	}
	rows := b.g.appended.Add(b.n)
	if b.cut {
		ctx.Warn(erCutValueGroupConcat, "Row %d was cut by GROUP_CONCAT()", rows)
	}
	return string(b.out), nil
}

// appendKept sorts the kept values and appends them to out up to the
// limit.
func (b *groupConcatBuffer) appendKept(ctx *sql.Context) error {
	g := b.g
	var keyTypes []sql.Type
	desc := make([]bool, 0, len(g.sf))
	if len(g.sf) > 0 {
		for _, f := range g.sf {
			keyTypes = append(keyTypes, f.Column.Type())
			desc = append(desc, f.Order == sql.Descending)
		}
	} else {
		for _, a := range g.args {
			keyTypes = append(keyTypes, a.Type())
			desc = append(desc, false)
		}
	}
	var cmpErr error
	slices.SortStableFunc(b.kept, func(x, y keptValue) int {
		c, err := compareKeys(ctx, keyTypes, desc, x.keys, y.keys)
		if err != nil && cmpErr == nil {
			cmpErr = err
		}
		return c
	})
	if cmpErr != nil {
		return cmpErr
	}
	for _, kv := range b.kept {
		mark := len(b.out)
		if b.n > 0 {
			b.out = appendCapped(b.out, g.sep, b.limit)
		}
		b.out = appendCapped(b.out, kv.val, b.limit)
		b.n++
		if len(b.out) > b.limit {
			b.truncate(mark)
			break
		}
	}
	b.kept, b.seen, b.vals, b.parts = nil, nil, nil, nil
	return b.chargeOut(ctx)
}

// compareKeys orders sort keys as MySQL does, NULL before any value.
func compareKeys(ctx *sql.Context, keyTypes []sql.Type, desc []bool, x, y sql.Row) (int, error) {
	for i := range x {
		var c int
		switch a, b := x[i], y[i]; {
		case a == nil && b == nil:
		case a == nil:
			c = -1
		case b == nil:
			c = 1
		default:
			var err error
			if c, err = keyTypes[i].Compare(ctx, a, b); err != nil {
				return 0, err
			}
		}
		if desc[i] {
			c = -c
		}
		if c != 0 {
			return c, nil
		}
	}
	return 0, nil
}

// truncate cuts out, which went past the limit after the value that
// started at mark, to the limit, before a character the limit splits (as
// MySQL's well_formed_len): a binary result is cut at the limit.
func (b *groupConcatBuffer) truncate(mark int) {
	end := b.limit
	if !b.g.binary {
		for end > mark && end < len(b.out) && !utf8.RuneStart(b.out[end]) {
			end--
		}
	}
	b.out = b.out[:end]
	b.cut = true
}

// chargeOut charges the growth of out's capacity to the statement's
// account.
func (b *groupConcatBuffer) chargeOut(ctx *sql.Context) error {
	grown := int64(cap(b.out)) - b.outCharged
	if grown <= 0 {
		return nil
	}
	b.outCharged += grown
	return b.charge(ctx, grown)
}

// charge adds n bytes to the group's charge on the statement's account.
func (b *groupConcatBuffer) charge(ctx *sql.Context, n int64) error {
	if b.acct == nil || n <= 0 {
		return nil
	}
	b.charged += n
	return b.acct.Charge(ctx, n)
}

// Dispose gives back what the group charged.
func (b *groupConcatBuffer) Dispose() {
	if b.acct != nil {
		b.acct.Release(b.charged)
		b.charged = 0
	}
	b.out, b.kept, b.seen, b.vals, b.parts = nil, nil, nil, nil, nil
}

// appendCapped appends s to dst, but no more than limit+1 bytes in all.
func appendCapped[S string | []byte](dst []byte, s S, limit int) []byte {
	room := limit + 1 - len(dst)
	if room <= 0 {
		return dst
	}
	if len(s) > room {
		s = s[:room]
	}
	return append(dst, s...)
}

// appendValue appends v as text to dst, up to the limit as appendCapped.
func appendValue(ctx *sql.Context, dst []byte, v any, limit int) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return appendCapped(dst, v, limit), nil
	case []byte:
		return appendCapped(dst, v, limit), nil
	}
	s, err := valueText(ctx, v)
	if err != nil {
		return dst, err
	}
	return appendCapped(dst, s, limit), nil
}

// concatValues returns the values of a row's arguments as text, joined,
// and sets parts to them one by one.
func concatValues(ctx *sql.Context, vals sql.Row, parts []string) (string, error) {
	for i, v := range vals {
		s, err := valueText(ctx, v)
		if err != nil {
			return "", err
		}
		parts[i] = s
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return strings.Join(parts, ""), nil
}
