package manifest

import (
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/kv/internal/base"
)

func sampleEdit() *VersionEdit {
	f := file(7, "a", "c", 9)
	f.Size, f.NumEntries, f.NumDeletions, f.NumRangeDeletes = 4096, 10, 2, 1
	f.SmallestSeq = 3
	return &VersionEdit{
		LogNum: 5, NextFileNum: 9, LastSeq: 300,
		CompactPointers: []CompactPointer{{Level: 2, Key: base.AppendKey(nil, []byte("k"), 4, base.KindSet)}},
		DeletedFiles:    map[DeletedFile]bool{{Level: 1, FileNum: 3}: true, {Level: 0, FileNum: 4}: true},
		NewFiles:        []NewFile{{Level: 1, Meta: f}},
	}
}

// TestEditGolden freezes the encoding: a change here is a change of the
// on-disk format.
func TestEditGolden(t *testing.T) {
	got := hex.EncodeToString(sampleEdit().Encode(nil))
	want := "" +
		"0105" + "0209" + "03ac02" + // LogNum 5, NextFileNum 9, LastSeq 300
		"0402" + "09" + "6b" + "0104000000000000" + // pointer L2 k#4,SET
		"050004" + "050103" + // deleted L0 4, L1 3
		"06" + "1d" + "01" + "07" + "8020" + // new file: body of 29 bytes, L1, 7, size 4096
		"09" + "61" + "0109000000000000" + // a#9,SET
		"09" + "63" + "0109000000000000" + // c#9,SET
		"03" + "09" + "0a" + "02" + "01" // seqs 3-9, 10 entries, 2 deletions, 1 range deletion
	require.Equal(t, want, got)
}

func TestEditRoundTrip(t *testing.T) {
	for _, ve := range []*VersionEdit{
		{},
		{LogNum: 1},
		{LastSeq: base.SeqNumMax},
		sampleEdit(),
		{NewFiles: []NewFile{{Level: 6, Meta: &FileMetadata{FileNum: 1 << 62, Smallest: base.AppendKey(nil, nil, 0, base.KindDelete),
			Largest: base.MakeRangeDeleteSentinel(nil, []byte{0xff, 0}), LargestSeq: base.SeqNumMax}}}},
	} {
		enc := ve.Encode(nil)
		var got VersionEdit
		require.NoError(t, got.Decode(enc))
		require.Equal(t, formatEdit(ve), formatEdit(&got))
		require.Equal(t, enc, got.Encode(nil))
		for i, nf := range ve.NewFiles {
			require.True(t, sameDurable(nf.Meta, got.NewFiles[i].Meta))
		}
	}
}

func TestEditDecodeErrors(t *testing.T) {
	valid := sampleEdit().Encode(nil)
	u := binary.AppendUvarint
	key := base.AppendKey(nil, []byte("k"), 1, base.KindSet)
	newFile := func(level, num uint64, smallest, largest []byte, seqs [2]uint64, extra ...byte) []byte {
		body := u(u(u(nil, level), num), 10)
		body = appendBytes(appendBytes(body, smallest), largest)
		body = u(u(body, seqs[0]), seqs[1])
		body = append(u(u(u(body, 1), 0), 0), extra...)
		return appendBytes(u(nil, tagNewFile), body)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"truncated", valid[:len(valid)-1], "expected new file of 29 bytes, found 28 bytes left"},
		{"tag overflow", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "overflowing 64 bits"},
		{"value missing", []byte{tagLogNum}, "expected field value, found the end of the edit"},
		{"duplicate scalar", []byte{tagLogNum, 1, tagLogNum, 2}, "at most once"},
		{"unknown tag", []byte{0x3f, 0}, "expected a known field tag, found 63"},
		{"level out of range", []byte{tagDeletedFile, 7, 1}, "expected a level below 7, found 7"},
		{"deleted file 0", []byte{tagDeletedFile, 1, 0}, "above 0"},
		{"deleted twice", []byte{tagDeletedFile, 1, 5, tagDeletedFile, 1, 5}, "found L1 000005 again"},
		{"pointer not a key", append(u(u(nil, tagCompactPointer), 1), 2, 'a', 'b'), "expected an internal key"},
		{"pointer twice", append(appendBytes(u(u(nil, tagCompactPointer), 1), key), appendBytes(u(u(nil, tagCompactPointer), 1), key)...), "second for L1"},
		{"last seq too big", u(u(nil, tagLastSeq), uint64(base.SeqNumMax)+1), "expected LastSeq at most"},
		{"file 0", newFile(1, 0, key, key, [2]uint64{1, 1}), "file number 0"},
		{"bad bounds", newFile(1, 5, base.AppendKey(nil, []byte("z"), 1, base.KindSet), key, [2]uint64{1, 1}), "sorts after largest"},
		{"short key", newFile(1, 5, []byte("k"), key, [2]uint64{1, 1}), "not an internal key"},
		{"seqs", newFile(1, 5, key, key, [2]uint64{2, 1}), "smallest sequence number 2 exceeds largest 1"},
		{"body left over", newFile(1, 5, key, key, [2]uint64{1, 1}, 0), "1 more"},
		{"file level", newFile(9, 5, key, key, [2]uint64{1, 1}), "level below 7, found 9"},
		{"file twice", append(newFile(1, 5, key, key, [2]uint64{1, 1}), newFile(2, 5, key, key, [2]uint64{1, 1})...), "found 000005 again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ve VersionEdit
			err := ve.Decode(tc.b)
			require.Error(t, err)
			require.True(t, base.IsCorruption(err), "%v", err)
			require.Contains(t, err.Error(), tc.want)
			require.Equal(t, VersionEdit{}, ve, "a failed decode leaves an empty edit")
		})
	}
}

// TestEditOptionalFields: a field with the optional bit is skipped, so that
// a later version can add hints this one ignores.
func TestEditOptionalFields(t *testing.T) {
	b := u64s(0x40, 3, 1, 2, 3)                        // optional tag 64 with 3 bytes
	b = append(b, u64s(0x41, 0)...)                    // optional tag 65, empty
	b = append(b, sampleEdit().Encode(nil)...)         // then a normal edit
	b = append(b, append(u64s(200, 2), 0xaa, 0xbb)...) // tag 200 has bit 0x40 set
	var ve VersionEdit
	require.NoError(t, ve.Decode(b))
	require.Equal(t, formatEdit(sampleEdit()), formatEdit(&ve))

	// Its length is still checked.
	require.Error(t, ve.Decode(u64s(0x40, 5, 1)))
}

func u64s(vs ...uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

// FuzzDecodeEdit: Decode never panics, and what it accepts re-encodes to
// an edit that decodes to the same thing, and applies or fails cleanly.
func FuzzDecodeEdit(f *testing.F) {
	f.Add(sampleEdit().Encode(nil))
	f.Add([]byte{})
	f.Add(u64s(0x40, 1, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		var ve VersionEdit
		if err := ve.Decode(b); err != nil {
			require.True(t, base.IsCorruption(err), "%v", err)
			return
		}
		enc := ve.Encode(nil)
		var again VersionEdit
		require.NoError(t, again.Decode(enc))
		require.Equal(t, enc, again.Encode(nil))
		require.Equal(t, formatEdit(&ve), formatEdit(&again))
		// Applying a decoded edit to an empty version never panics.
		bld := NewBuilder(nil)
		if bld.Apply(&ve) == nil {
			if v, err := bld.Finish(); err == nil {
				require.NoError(t, v.CheckOrdering())
			}
		}
	})
}
