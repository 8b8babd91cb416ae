package kv

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-db/strata/kv/vfs"
	"github.com/stretchr/testify/require"
)

func testOptions(fs vfs.FS) *Options {
	return &Options{FS: fs, MemtableSize: 256 << 10, TargetFileSize: 64 << 10, LBaseMaxBytes: 1 << 20, CacheSize: 1 << 20}
}

func scanAll(t *testing.T, it *Iterator) []string {
	var out []string
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, string(it.Key())+"="+string(it.Value()))
	}
	require.NoError(t, it.Error())
	return out
}

func TestBasic(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open("/db", testOptions(fs))
	require.NoError(t, err)
	require.NoError(t, d.Set([]byte("a"), []byte("1"), Sync))
	require.NoError(t, d.Set([]byte("b"), []byte("2"), nil))
	require.NoError(t, d.Set([]byte("c"), []byte("3"), nil))
	require.NoError(t, d.Delete([]byte("b"), nil))
	v, err := d.Get([]byte("a"), nil)
	require.NoError(t, err)
	require.Equal(t, "1", string(v))
	_, err = d.Get([]byte("b"), nil)
	require.ErrorIs(t, err, ErrNotFound)

	it, err := d.NewIter(nil)
	require.NoError(t, err)
	require.Equal(t, []string{"a=1", "c=3"}, scanAll(t, it))
	require.NoError(t, it.Close())

	require.NoError(t, d.Flush())
	require.NoError(t, d.DeleteRange([]byte("a"), []byte("b"), nil))
	_, err = d.Get([]byte("a"), nil)
	require.ErrorIs(t, err, ErrNotFound)
	for i := range 5000 {
		require.NoError(t, d.Set(fmt.Appendf(nil, "k%05d", i), make([]byte, 100), nil))
	}
	require.NoError(t, d.Compact(nil, nil))
	v, err = d.Get([]byte("c"), nil)
	require.NoError(t, err)
	require.Equal(t, "3", string(v))
	require.NoError(t, d.Close())

	d, err = Open("/db", testOptions(fs))
	require.NoError(t, err)
	_, err = d.Get([]byte("a"), nil)
	require.ErrorIs(t, err, ErrNotFound)
	v, err = d.Get([]byte("k04999"), nil)
	require.NoError(t, err)
	require.Len(t, v, 100)
	t.Log(d.Metrics())
	require.NoError(t, d.Close())
}

// TestCloseEmptiesLog: after a clean Close the tables hold every write, so
// a log lost or damaged afterwards loses nothing. Each of the writes after
// the last flush goes into the log without a sync.
func TestCloseEmptiesLog(t *testing.T) {
	for _, damage := range []string{"removed", "emptied", "byte flipped"} {
		t.Run(damage, func(t *testing.T) {
			dir := t.TempDir()
			d, err := Open(dir, testOptions(vfs.Default))
			require.NoError(t, err)
			for i := range 300 {
				require.NoError(t, d.Set(fmt.Appendf(nil, "k%03d", i), bytes.Repeat([]byte{'v'}, 80), NoSync))
			}
			require.NoError(t, d.Close())
			logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
			require.NoError(t, err)
			for _, l := range logs {
				switch damage {
				case "removed":
					require.NoError(t, os.Remove(l))
				case "emptied":
					require.NoError(t, os.Truncate(l, 0))
				default:
					b, err := os.ReadFile(l)
					require.NoError(t, err)
					if len(b) > 0 {
						b[len(b)/3] ^= 0xff
						require.NoError(t, os.WriteFile(l, b, 0o644))
					}
				}
			}
			d, err = Open(dir, testOptions(vfs.Default))
			require.NoError(t, err)
			defer d.Close()
			it, err := d.NewIter(nil)
			require.NoError(t, err)
			require.Len(t, scanAll(t, it), 300)
			require.NoError(t, it.Close())
		})
	}
}

// TestOpenChecksTableSizes: a table file cut short, grown, or replaced by
// another table's file fails Open, naming the file, instead of failing (or
// not) at the first read that reaches it.
func TestOpenChecksTableSizes(t *testing.T) {
	for _, damage := range []string{"cut", "grown", "swapped"} {
		t.Run(damage, func(t *testing.T) {
			dir := t.TempDir()
			d, err := Open(dir, testOptions(vfs.Default))
			require.NoError(t, err)
			for round := range 2 {
				for i := range 100 * (round + 1) {
					require.NoError(t, d.Set(fmt.Appendf(nil, "r%d-k%03d", round, i), []byte("v"), NoSync))
				}
				require.NoError(t, d.Flush())
			}
			require.NoError(t, d.Close())
			tables, err := filepath.Glob(filepath.Join(dir, "*.sst"))
			require.NoError(t, err)
			require.GreaterOrEqual(t, len(tables), 2)
			switch damage {
			case "cut":
				st, err := os.Stat(tables[0])
				require.NoError(t, err)
				require.NoError(t, os.Truncate(tables[0], st.Size()-1))
			case "grown":
				f, err := os.OpenFile(tables[0], os.O_APPEND|os.O_WRONLY, 0)
				require.NoError(t, err)
				_, err = f.Write([]byte{0})
				require.NoError(t, err)
				require.NoError(t, f.Close())
			default:
				a, err := os.ReadFile(tables[0])
				require.NoError(t, err)
				b, err := os.ReadFile(tables[1])
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(tables[0], b, 0o644))
				require.NoError(t, os.WriteFile(tables[1], a, 0o644))
			}
			_, err = Open(dir, testOptions(vfs.Default))
			require.Error(t, err)
			require.Contains(t, err.Error(), ".sst")
			require.Contains(t, err.Error(), "manifest recorded")
		})
	}
}
