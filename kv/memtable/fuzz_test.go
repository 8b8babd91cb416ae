package memtable

import (
	"errors"
	"testing"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/stretchr/testify/require"
)

// FuzzMemtable reads its input as a program of memtable operations and
// checks every result against the model. Each operation is one opcode byte
// followed by one argument byte:
//
//	0-2 Add         argument: user key (low 4 bits), kind (bit 4); 0 by
//	                Memtable.Add, 1 and 2 through one Inserter
//	3   Add again   argument: picks an earlier entry; must fail with ErrExists
//	                (odd arguments through the Inserter)
//	4   RangeDel    argument: start key (low 4 bits), length (bits 4-5)
//	5   SeekGE      argument: user key (low 4 bits), sequence number (high 4)
//	6   SeekLT      as SeekGE
//	7   First/Last  argument: even First, odd Last
//	8   Next
//	9   Prev
//	10  Get         as SeekGE
//
// Sequence numbers are handed out in order of the Adds, so keys never
// repeat except where the program asks for it. Adds between steps are
// allowed: the iterator stays on its entry and must see the new neighbours.
func FuzzMemtable(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 1, 0x11, 5, 0x31, 8, 0, 9, 0, 10, 0x21})
	f.Add([]byte{0, 5, 1, 5, 2, 5, 3, 1, 7, 1, 9, 0, 9, 0, 9, 0, 8, 0})
	f.Fuzz(runProgram)
}

// runProgram runs one FuzzMemtable program.
func runProgram(t *testing.T, prog []byte) {
	{
		m := New(0)
		points, dels := &model{}, &model{}
		it := m.NewIter()
		var ins Inserter
		ins.Init(m)
		pos := -1
		var seq base.SeqNum
		ukey := func(b byte) []byte { return []byte{'a' + b&15} }
		for len(prog) >= 2 {
			op, arg := prog[0]%11, prog[1]
			prog = prog[2:]
			switch op {
			case 0, 1, 2:
				seq++
				kind := base.Kind(arg >> 4 & 1)
				add := m.Add
				if op != 0 {
					add = ins.Add
				}
				err := add(ukey(arg), seq, kind, []byte{arg})
				if errors.Is(err, ErrArenaFull) {
					return
				}
				require.NoError(t, err)
				k := base.AppendKey(nil, ukey(arg), seq, kind)
				if pos >= points.seekGE(k) {
					pos++ // the iterator stays on its entry, or at the end
				}
				points.add(k, []byte{arg})
			case 3:
				if len(points.entries) == 0 {
					continue
				}
				e := points.entries[int(arg)%len(points.entries)]
				add := m.Add
				if arg%2 == 1 {
					add = ins.Add
				}
				err := add(e.UserKey(), e.Seq(), e.Kind(), []byte("dup"))
				if errors.Is(err, ErrArenaFull) {
					return
				}
				require.ErrorIs(t, err, ErrExists)
			case 4:
				seq++
				start := ukey(arg)
				end := append(ukey(arg), make([]byte, arg>>4&3)...)
				end[0]++
				err := m.AddRangeDelete(start, end, seq)
				if errors.Is(err, ErrArenaFull) {
					return
				}
				require.NoError(t, err)
				dels.add(base.AppendKey(nil, start, seq, base.KindRangeDelete), end)
			case 5, 6:
				k := base.MakeSearchKey(nil, ukey(arg), base.SeqNum(arg>>4))
				if op == 5 {
					pos = points.seekGE(k)
					points.requireAt(t, it.SeekGE(k), pos, "SeekGE")
				} else {
					pos = points.seekGE(k) - 1
					points.requireAt(t, it.SeekLT(k), pos, "SeekLT")
				}
			case 7:
				if arg%2 == 0 {
					pos = 0
					points.requireAt(t, it.First(), pos, "First")
				} else {
					pos = len(points.entries) - 1
					points.requireAt(t, it.Last(), pos, "Last")
				}
			case 8:
				pos = min(pos+1, len(points.entries))
				points.requireAt(t, it.Next(), pos, "Next")
			case 9:
				pos = max(pos-1, -1)
				points.requireAt(t, it.Prev(), pos, "Prev")
			case 10:
				wv, wk, wok := points.get(ukey(arg), base.SeqNum(arg>>4))
				v, k, _, ok := m.Get(ukey(arg), base.SeqNum(arg>>4))
				require.Equal(t, wok, ok)
				require.Equal(t, wk, k)
				require.Equal(t, string(wv), string(v))
			}
		}
		points.requireScan(t, m.NewIter())
		dels.requireScan(t, m.NewRangeDelIter())
		require.Equal(t, len(points.entries)+len(dels.entries) == 0, m.Empty())
		require.Equal(t, len(dels.entries) > 0, m.HasRangeDeletes())
	}
}
