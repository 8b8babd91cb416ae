package manifest

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/strata-db/strata/kv/wal"
)

const dir = "db"

// hookFS is a MemFS whose mutating operations (create, write, sync, dir
// sync, rename, remove) first call hook, which may fail them or take a
// crash image.
type hookFS struct {
	*vfs.MemFS
	hook func(op, name string) error
}

func newHookFS(mem *vfs.MemFS) *hookFS {
	return &hookFS{MemFS: mem, hook: func(string, string) error { return nil }}
}

func (fs *hookFS) Create(name string) (vfs.File, error) {
	if err := fs.hook("create", name); err != nil {
		return nil, err
	}
	f, err := fs.MemFS.Create(name)
	if err != nil {
		return nil, err
	}
	return &hookFile{File: f, fs: fs, name: name}, nil
}

func (fs *hookFS) OpenDir(name string) (vfs.File, error) {
	f, err := fs.MemFS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return &hookFile{File: f, fs: fs, name: name, dir: true}, nil
}

func (fs *hookFS) Remove(name string) error {
	if err := fs.hook("remove", name); err != nil {
		return err
	}
	return fs.MemFS.Remove(name)
}

func (fs *hookFS) Rename(from, to string) error {
	if err := fs.hook("rename", from); err != nil {
		return err
	}
	return fs.MemFS.Rename(from, to)
}

type hookFile struct {
	vfs.File
	fs   *hookFS
	name string
	dir  bool
}

func (f *hookFile) Write(p []byte) (int, error) {
	if err := f.fs.hook("write", f.name); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f *hookFile) Sync() error {
	op := "sync"
	if f.dir {
		op = "syncdir"
	}
	if err := f.fs.hook(op, f.name); err != nil {
		return err
	}
	return f.File.Sync()
}

// stateOf renders what a VersionSet promises to keep: the files, the
// compaction pointers, the log number and the last sequence number.
func stateOf(vs *VersionSet) string {
	return fmt.Sprintf("log=%d seq=%d\n%s", vs.LogNum(), vs.LastSeq(), vs.Current())
}

var workloadOpts = PickerOptions{L0CompactionTrigger: 2, LBaseMaxBytes: 300, LevelMultiplier: 2, TargetFileSize: 100}

// workload produces a deterministic stream of valid edits: flushes of L0
// files (sometimes with a new WAL) and compactions chosen by Pick.
type workload struct {
	rng *rand.Rand
	seq base.SeqNum
}

func newWorkload(seed uint64) *workload { return &workload{rng: newRand(seed)} }

func (w *workload) key() []byte {
	return []byte{byte('a' + w.rng.IntN(26)), byte('a' + w.rng.IntN(26))}
}

func (w *workload) next(vs *VersionSet) *VersionEdit {
	if w.rng.IntN(3) > 0 {
		if c := Pick(vs.Current(), workloadOpts); c != nil {
			ve := c.NewEdit()
			if !c.TrivialMove {
				m := &FileMetadata{FileNum: vs.NewFileNum(), Size: c.InputSize(), Smallest: c.Smallest, Largest: c.Largest,
					SmallestSeq: base.SeqNumMax}
				for _, files := range c.Inputs {
					for _, f := range files {
						m.SmallestSeq = min(m.SmallestSeq, f.SmallestSeq)
						m.LargestSeq = max(m.LargestSeq, f.LargestSeq)
						m.NumEntries += f.NumEntries
					}
				}
				ve.NewFiles = append(ve.NewFiles, NewFile{Level: c.OutputLevel, Meta: m})
			}
			return ve
		}
	}
	a, b := w.key(), w.key()
	if string(a) > string(b) {
		a, b = b, a
	}
	m := &FileMetadata{
		FileNum: vs.NewFileNum(), Size: uint64(50 + w.rng.IntN(100)),
		Smallest: base.AppendKey(nil, a, w.seq+10, base.KindSet), Largest: base.AppendKey(nil, b, w.seq+1, base.KindSet),
		SmallestSeq: w.seq + 1, LargestSeq: w.seq + 10, NumEntries: 10, NumDeletions: uint64(w.rng.IntN(3)),
	}
	if string(a) == string(b) {
		m.Largest = m.Smallest
	}
	w.seq += 10
	ve := &VersionEdit{NewFiles: []NewFile{{Level: 0, Meta: m}}, LastSeq: w.seq}
	if w.rng.IntN(2) == 0 {
		ve.LogNum = vs.NewFileNum()
	}
	return ve
}

func mustCreate(t testing.TB, fs vfs.FS, opts *Options) *VersionSet {
	t.Helper()
	require.NoError(t, fs.MkdirAll(dir, 0o755))
	vs, err := Create(fs, dir, opts)
	require.NoError(t, err)
	return vs
}

func manifests(t *testing.T, fs vfs.FS) []string {
	t.Helper()
	names, err := fs.List(dir)
	require.NoError(t, err)
	var out []string
	for _, n := range names {
		if _, ok := ParseManifestName(n); ok {
			out = append(out, n)
		}
	}
	return out
}

func TestCreateLoad(t *testing.T) {
	fs := vfs.NewMem()
	vs := mustCreate(t, fs, nil)
	cur, err := vfs.ReadFile(fs, dir+"/CURRENT")
	require.NoError(t, err)
	require.Equal(t, "MANIFEST-000001\n", string(cur))
	require.Equal(t, uint64(1), vs.ManifestFileNum())
	require.Equal(t, uint64(2), vs.NextFileNum())
	require.Equal(t, "log=0 seq=0\n(empty)\n", stateOf(vs))

	_, err = Create(fs, dir, nil)
	require.ErrorIs(t, err, ErrExists)

	w := newWorkload(1)
	for range 40 {
		require.NoError(t, vs.LogAndApply(w.next(vs)))
		require.NoError(t, vs.Current().CheckOrdering())
	}
	vs.SetLastSeq(vs.LastSeq() + 5) // not logged: lost at reopen
	want := stateOf(vs)
	next := vs.NextFileNum()
	require.NoError(t, vs.Close())
	require.NoError(t, vs.Close())
	require.ErrorIs(t, vs.LogAndApply(&VersionEdit{}), ErrClosed)

	vs2, err := Load(fs, dir, nil)
	require.NoError(t, err)
	require.Equal(t, strings.Replace(want, fmt.Sprintf("seq=%d", vs.LastSeq()), fmt.Sprintf("seq=%d", vs.LastSeq()-5), 1), stateOf(vs2))
	require.GreaterOrEqual(t, vs2.NextFileNum(), next-1)
	require.Equal(t, []string{ManifestName(vs2.ManifestFileNum())}, manifests(t, fs), "Load rotates and removes the old MANIFEST")
	require.Greater(t, vs2.NextFileNum(), vs2.ManifestFileNum())
	for num := range vs2.LiveFiles() {
		require.Less(t, num, vs2.NextFileNum())
	}
	require.NoError(t, vs2.Close())
}

func TestLoadErrors(t *testing.T) {
	fs := vfs.NewMem()
	require.NoError(t, fs.MkdirAll(dir, 0o755))
	_, err := Load(fs, dir, nil)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.False(t, base.IsCorruption(err))

	write := func(name string, b []byte) {
		require.NoError(t, vfs.WriteFileSync(fs, dir, dir+"/"+name, b))
	}
	for _, tc := range []struct {
		name    string
		current string
		want    string
	}{
		{"no newline", "MANIFEST-000001", "expected \"MANIFEST-NNNNNN\" followed by a newline"},
		{"garbage", "hello\n", "found \"hello\\n\""},
		{"short number", "MANIFEST-01\n", "followed by a newline"},
		{"missing manifest", "MANIFEST-000009\n", "found MANIFEST-000009, which does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write("CURRENT", []byte(tc.current))
			_, err := Load(fs, dir, nil)
			require.True(t, base.IsCorruption(err), "%v", err)
			require.Contains(t, err.Error(), "db/CURRENT")
			require.Contains(t, err.Error(), tc.want)
		})
	}

	// A MANIFEST that does not start with a header, or lacks the snapshot.
	record := func(recs ...[]byte) []byte {
		mem := vfs.NewMem()
		f, err := mem.Create("x")
		require.NoError(t, err)
		w := wal.NewWriterLogID(f, "x", 7)
		for _, r := range recs {
			_, err := w.WriteRecord(r)
			require.NoError(t, err)
		}
		require.NoError(t, w.Close())
		b, err := vfs.ReadFile(mem, "x")
		require.NoError(t, err)
		return b
	}
	write("CURRENT", []byte("MANIFEST-000007\n"))
	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "expected a header record, found no intact record"},
		{"not a header", record([]byte("NOTSTRATA")), "expected a header record starting with \"STRATAMF\""},
		{"header only", record(encodeHeader(nil)), "expected a snapshot edit after the header"},
		{"bad edit", record(encodeHeader(nil), []byte{0x3f}), "expected a known field tag"},
		{"edit does not apply", record(encodeHeader(nil), (&VersionEdit{DeletedFiles: map[DeletedFile]bool{{1, 5}: true}}).Encode(nil)), "deletes file 000005 from L1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write("MANIFEST-000007", tc.file)
			_, err := Load(fs, dir, nil)
			require.True(t, base.IsCorruption(err), "%v", err)
			require.Contains(t, err.Error(), "db/MANIFEST-000007")
			require.Contains(t, err.Error(), tc.want)
		})
	}
	write("MANIFEST-000007", record(append([]byte(manifestMagic), 2)))
	_, err = Load(fs, dir, nil)
	require.ErrorContains(t, err, "format version 2 is not supported")
}

func TestLogAndApplyInvalid(t *testing.T) {
	vs := mustCreate(t, vfs.NewMem(), nil)
	w := newWorkload(2)
	for range 5 {
		require.NoError(t, vs.LogAndApply(w.next(vs)))
	}
	logNum := vs.NewFileNum()
	require.NoError(t, vs.LogAndApply(&VersionEdit{LogNum: logNum, LastSeq: 100}))
	before := stateOf(vs)
	for _, tc := range []struct {
		name string
		ve   *VersionEdit
		want string
	}{
		{"log backwards", &VersionEdit{LogNum: logNum - 1}, "log number moves back"},
		{"log unallocated", &VersionEdit{LogNum: vs.NextFileNum() + 100}, "never allocated"},
		{"seq backwards", &VersionEdit{LastSeq: 99}, "moves back from 100 to 99"},
		{"file unallocated", &VersionEdit{NewFiles: []NewFile{{1, file(vs.NextFileNum()+5, "a", "b", 1)}}}, "never allocated"},
		{"delete missing", &VersionEdit{DeletedFiles: map[DeletedFile]bool{{3, 1}: true}}, "does not hold it"},
		{"overlap", &VersionEdit{NewFiles: []NewFile{{1, file(vs.NewFileNum(), "a", "z", 1)}, {1, file(vs.NewFileNum(), "b", "c", 1)}}}, "overlap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := vs.LogAndApply(tc.ve)
			require.ErrorIs(t, err, ErrInvalidEdit)
			require.ErrorContains(t, err, tc.want)
			require.Equal(t, before, stateOf(vs))
		})
	}
	// The set is still usable.
	w.seq = 100
	require.NoError(t, vs.LogAndApply(w.next(vs)))
	require.NoError(t, vs.Close())
}

// TestRotation: with a small size limit the MANIFEST rotates again and
// again; only one MANIFEST is ever left, and every state loads.
func TestRotation(t *testing.T) {
	fs := vfs.NewMem()
	vs := mustCreate(t, fs, &Options{MaxManifestSize: 512})
	w := newWorkload(3)
	seen := map[uint64]bool{vs.ManifestFileNum(): true}
	for range 300 {
		require.NoError(t, vs.LogAndApply(w.next(vs)))
		seen[vs.ManifestFileNum()] = true
		require.Equal(t, []string{ManifestName(vs.ManifestFileNum())}, manifests(t, fs))
		require.Less(t, vs.ManifestSize(), max(int64(512), 2*snapshotSize(vs))+1024)
	}
	require.Greater(t, len(seen), 10)
	want := stateOf(vs)
	require.NoError(t, vs.Close())
	vs2, err := Load(fs, dir, &Options{MaxManifestSize: 512})
	require.NoError(t, err)
	require.Equal(t, want, stateOf(vs2))
	require.NoError(t, vs2.Close())
}

func snapshotSize(vs *VersionSet) int64 {
	return int64(len(snapshotEdit(vs.Current(), vs.snapshotCounters()).Encode(nil)))
}

// TestObsoleteAndLiveFiles: files leave LiveFiles and show up in
// TakeObsolete only once no version holding them is referenced.
func TestObsoleteAndLiveFiles(t *testing.T) {
	vs := mustCreate(t, vfs.NewMem(), nil)
	f1 := file(vs.NewFileNum(), "a", "b", 1)
	f2 := file(vs.NewFileNum(), "c", "d", 2)
	require.NoError(t, vs.LogAndApply(&VersionEdit{NewFiles: []NewFile{{0, f1}, {0, f2}}}))
	reader := vs.Current()
	reader.Ref()
	out := file(vs.NewFileNum(), "a", "d", 2)
	c := &Compaction{Level: 0, OutputLevel: 1, Inputs: [2][]*FileMetadata{{f1, f2}}}
	ve := c.NewEdit()
	ve.NewFiles = append(ve.NewFiles, NewFile{1, out})
	require.NoError(t, vs.LogAndApply(ve))
	require.Empty(t, vs.TakeObsolete())
	require.Equal(t, map[uint64]bool{f1.FileNum: true, f2.FileNum: true, out.FileNum: true}, vs.LiveFiles())
	reader.Unref()
	require.Equal(t, []uint64{f1.FileNum, f2.FileNum}, fileNums(vs.TakeObsolete()))
	require.Equal(t, map[uint64]bool{out.FileNum: true}, vs.LiveFiles())
	require.Empty(t, vs.TakeObsolete())
	// Close keeps the current version's files.
	require.NoError(t, vs.Close())
	require.Empty(t, vs.TakeObsolete())
}

// TestCrash runs the workload on a filesystem that takes a crash image at
// random points of every operation (inside LogAndApply, inside a rotation,
// inside Create and inside Load). Each image must load to exactly the last
// acknowledged state or, when an edit was in flight, possibly that edit's
// state; and loading it must itself survive crashes.
func TestCrash(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { testCrash(t, seed) })
	}
}

type crashImage struct {
	fs       *vfs.MemFS
	acked    string // "" before Create returned
	inflight int    // index into states of the edit in flight, or -1
}

func testCrash(t *testing.T, seed uint64) {
	rng := newRand(seed)
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll(dir, 0o755))
	fs := newHookFS(mem)
	var images []crashImage
	var states []string
	acked, inflight := "", -1
	fs.hook = func(op, name string) error {
		if rng.IntN(2) == 0 {
			images = append(images, crashImage{
				fs:    mem.CrashClone(vfs.CrashOptions{KeepUnsynced: rng.Float64(), Rand: newRand(rng.Uint64())}),
				acked: acked, inflight: inflight,
			})
		}
		return nil
	}
	opts := &Options{MaxManifestSize: 1 << (8 + rng.IntN(4))}
	vs, err := Create(fs, dir, opts)
	require.NoError(t, err)
	acked = stateOf(vs)
	w := newWorkload(seed)
	for i := range 150 {
		ve := w.next(vs)
		inflight = i
		require.NoError(t, vs.LogAndApply(ve))
		states = append(states, stateOf(vs))
		acked, inflight = states[i], -1
	}
	require.NoError(t, vs.Close())
	require.Greater(t, len(images), 100)

	for k, img := range images {
		allowed := []string{img.acked}
		if img.inflight >= 0 {
			allowed = append(allowed, states[img.inflight])
		}
		got, err := loadState(img.fs)
		if img.acked == "" {
			// Crashed inside Create: no database, or the empty one.
			if err != nil {
				require.ErrorIs(t, err, os.ErrNotExist, "image %d", k)
				continue
			}
			allowed = []string{"log=0 seq=0\n(empty)\n"}
		}
		require.NoError(t, err, "image %d", k)
		require.Contains(t, allowed, got, "image %d", k)

		// Crash while loading this image: every crash image of the load
		// loads to the same state.
		if k%8 == 0 {
			base := img.fs.CrashClone(vfs.CrashOptions{})
			hfs := newHookFS(base)
			var nested []*vfs.MemFS
			hfs.hook = func(op, name string) error {
				nested = append(nested, base.CrashClone(vfs.CrashOptions{KeepUnsynced: 0.5, Rand: newRand(uint64(len(nested)))}))
				return nil
			}
			vs, err := Load(hfs, dir, opts)
			require.NoError(t, err)
			require.Equal(t, got, stateOf(vs))
			require.NoError(t, vs.Close())
			for _, n := range nested {
				again, err := loadState(n)
				require.NoError(t, err)
				require.Equal(t, got, again)
			}
		}
	}
}

func loadState(fs vfs.FS) (string, error) {
	vs, err := Load(fs, dir, nil)
	if err != nil {
		return "", err
	}
	defer vs.Close()
	if err := vs.Current().CheckOrdering(); err != nil {
		return "", err
	}
	return stateOf(vs), nil
}

// TestWriteFailure fails each mutating filesystem operation in turn. A
// failed LogAndApply leaves the state unchanged, poisons the set, and the
// disk then holds the state before the edit or after it, never anything
// else; a failed removal of an old MANIFEST is harmless.
func TestWriteFailure(t *testing.T) {
	// Reference run: the states after each edit.
	const edits = 40
	opts := &Options{MaxManifestSize: 300}
	var states []string
	{
		vs := mustCreate(t, vfs.NewMem(), opts)
		states = append(states, stateOf(vs))
		w := newWorkload(9)
		for range edits {
			require.NoError(t, vs.LogAndApply(w.next(vs)))
			states = append(states, stateOf(vs))
		}
		require.NoError(t, vs.Close())
	}
	injected := errors.New("injected failure")
	failures := 0
	for n := 1; ; n++ {
		mem := vfs.NewMem()
		fs := newHookFS(mem)
		vs := mustCreate(t, fs, opts)
		ops, failedOp, failedName := 0, "", ""
		fs.hook = func(op, name string) error {
			ops++
			if ops == n {
				failedOp, failedName = op, name
				return injected
			}
			return nil
		}
		w := newWorkload(9)
		failedAt := -1
		for i := range edits {
			err := vs.LogAndApply(w.next(vs))
			if err != nil {
				require.ErrorIs(t, err, injected)
				require.ErrorIs(t, err, ErrFailed)
				failedAt = i
				break
			}
		}
		if failedOp == "" {
			require.Greater(t, failures, 20)
			return // n is past the last operation of the workload
		}
		if failedAt < 0 {
			// Only the retirement of an old MANIFEST (its final sync at
			// close, its removal) may fail without failing an edit.
			require.Contains(t, []string{"remove", "sync"}, failedOp)
			require.NotEqual(t, dir+"/"+ManifestName(vs.ManifestFileNum()), failedName)
			require.Equal(t, states[edits], stateOf(vs))
			require.NoError(t, vs.Close())
			continue
		}
		failures++
		require.Equal(t, states[failedAt], stateOf(vs), "op %d (%s): state unchanged", n, failedOp)
		err := vs.LogAndApply(&VersionEdit{})
		require.ErrorIs(t, err, ErrFailed)
		require.ErrorIs(t, err, injected)
		require.NoError(t, vs.Close())
		for _, keep := range []float64{0, 1} {
			got, err := loadState(mem.CrashClone(vfs.CrashOptions{KeepUnsynced: keep}))
			require.NoError(t, err, "op %d (%s)", n, failedOp)
			require.Contains(t, []string{states[failedAt], states[failedAt+1]}, got, "op %d (%s)", n, failedOp)
		}
	}
}

// TestCorruptManifest flips every byte of a MANIFEST in turn. Damage to a
// record followed by a later one is corruption naming the file; damage to
// the last record reads as a torn tail and loads the state before it.
// Truncation at any length loads the state of the whole records kept.
func TestCorruptManifest(t *testing.T) {
	fs := vfs.NewMem()
	vs := mustCreate(t, fs, nil)
	states := []string{stateOf(vs)}
	w := newWorkload(4)
	for range 25 {
		require.NoError(t, vs.LogAndApply(w.next(vs)))
		states = append(states, stateOf(vs))
	}
	name := ManifestName(vs.ManifestFileNum())
	require.NoError(t, vs.Close())
	data, err := vfs.ReadFile(fs, dir+"/"+name)
	require.NoError(t, err)

	// Record offsets: header, snapshot, then one record per edit.
	r := wal.NewReader(fsReaderAt(data), int64(len(data)), name)
	var offsets []int64
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		offsets = append(offsets, r.Offset())
	}
	require.Len(t, offsets, len(states)+1)
	recordAt := func(p int) int {
		k := 0
		for k+1 < len(offsets) && offsets[k+1] <= int64(p) {
			k++
		}
		return k
	}
	load := func(b []byte) (string, error) {
		mem := vfs.NewMem()
		require.NoError(t, mem.MkdirAll(dir, 0o755))
		require.NoError(t, vfs.WriteFileSync(mem, dir, dir+"/CURRENT", []byte(name+"\n")))
		require.NoError(t, vfs.WriteFileSync(mem, dir, dir+"/"+name, b))
		return loadState(mem)
	}
	last := len(offsets) - 1
	for p := range data {
		b := append([]byte(nil), data...)
		b[p] ^= 0x20
		got, err := load(b)
		switch rec := recordAt(p); {
		case rec == last:
			require.NoError(t, err, "byte %d", p)
			require.Equal(t, states[len(states)-2], got, "byte %d", p)
		default:
			require.Error(t, err, "byte %d (record %d)", p, rec)
			require.True(t, base.IsCorruption(err), "byte %d: %v", p, err)
			require.Contains(t, err.Error(), name)
		}
	}
	for n := 0; n <= len(data); n++ {
		got, err := load(data[:n])
		whole := 0 // records entirely within the first n bytes
		for k := range offsets {
			end := int64(len(data))
			if k+1 < len(offsets) {
				end = offsets[k+1]
			}
			if end <= int64(n) {
				whole = k + 1
			}
		}
		if whole < 2 {
			require.True(t, base.IsCorruption(err), "length %d: %v", n, err)
			continue
		}
		require.NoError(t, err, "length %d", n)
		require.Equal(t, states[whole-2], got, "length %d", n)
	}
}

type fsReaderAt []byte

func (b fsReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// FuzzLoad feeds arbitrary CURRENT and MANIFEST contents to Load: it never
// panics, and it either fails (with a corruption error, or for an
// unsupported format version) or loads a version that keeps the level
// invariants and can take further edits.
func FuzzLoad(f *testing.F) {
	fs := vfs.NewMem()
	vs := mustCreate(f, fs, nil)
	w := newWorkload(5)
	for range 6 {
		require.NoError(f, vs.LogAndApply(w.next(vs)))
	}
	name := ManifestName(vs.ManifestFileNum())
	require.NoError(f, vs.Close())
	data, err := vfs.ReadFile(fs, dir+"/"+name)
	require.NoError(f, err)
	f.Add([]byte(name+"\n"), data)
	f.Add([]byte(name+"\n"), data[:len(data)/2])
	f.Add([]byte("MANIFEST-000001\n"), []byte{})
	f.Fuzz(func(t *testing.T, current, manifest []byte) {
		mem := vfs.NewMem()
		require.NoError(t, mem.MkdirAll(dir, 0o755))
		require.NoError(t, vfs.WriteFileSync(mem, dir, dir+"/CURRENT", current))
		if n, ok := ParseManifestName(strings.TrimSuffix(string(current), "\n")); ok {
			require.NoError(t, vfs.WriteFileSync(mem, dir, dir+"/"+ManifestName(n), manifest))
		}
		vs, err := Load(mem, dir, nil)
		if err != nil {
			if !base.IsCorruption(err) {
				require.ErrorContains(t, err, "format version")
			}
			return
		}
		require.NoError(t, vs.Current().CheckOrdering())
		require.NoError(t, vs.LogAndApply(&VersionEdit{}))
		require.NoError(t, vs.Close())
	})
}
