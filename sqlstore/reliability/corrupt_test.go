package reliability

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/kv"
	"github.com/strata-db/strata/kv/table"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/strata-db/strata/sqlstore/kvstore"
)

// The corruption tests damage one byte of the table file that holds the
// rows of table ledger, under a SQL database, and run queries over it.
// Every query must either fail with a corruption error that names the
// table and the file, or return exactly the right answer: never fewer
// rows, never a wrong value. Table journal, in another file, must keep
// answering.

const corruptRows = 400

func corruptOptions() *kvstore.Options {
	// No compactions of their own: the three flushes below stay three
	// files, one per table.
	return &kvstore.Options{NoSync: true, KV: &kv.Options{L0CompactionTrigger: 10, L0SlowdownWritesTrigger: 20, L0StopWritesTrigger: 30}}
}

func corruptValue(table string, i int) string {
	return fmt.Sprintf("%s-%05d-%s", strings.ToUpper(table), i, strings.Repeat("x", 40))
}

// corruptFixture builds a closed store in a fresh directory whose tables
// ledger and journal each have their rows (and index entries) in a table
// file of their own, and returns the directory and those two files.
func corruptFixture(t *testing.T) (dir, ledgerSST, journalSST string) {
	t.Helper()
	dir = t.TempDir()
	st, err := openStore(dir, corruptOptions())
	require.NoError(t, err)
	ctx := st.session("")
	for _, q := range []string{
		"CREATE DATABASE c",
		"CREATE TABLE c.ledger (id INT PRIMARY KEY, k INT NOT NULL, v VARCHAR(100), KEY by_k (k))",
		"CREATE TABLE c.journal (id INT PRIMARY KEY, k INT NOT NULL, v VARCHAR(100), KEY by_k (k))",
	} {
		mustQuery(t, st, ctx, q)
	}
	require.NoError(t, st.db.Flush())
	for _, tbl := range []string{"ledger", "journal"} {
		for lo := 0; lo < corruptRows; lo += 100 {
			var vals []string
			for i := lo; i < lo+100; i++ {
				vals = append(vals, fmt.Sprintf("(%d, %d, '%s')", i, i%20, corruptValue(tbl, i)))
			}
			mustQuery(t, st, ctx, fmt.Sprintf("INSERT INTO c.%s VALUES %s", tbl, strings.Join(vals, ", ")))
		}
		require.NoError(t, st.db.Flush())
	}
	require.NoError(t, st.s.Close())

	ssts, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	require.NoError(t, err)
	for _, f := range ssts {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		hasL, hasJ := bytes.Contains(b, []byte("LEDGER-")), bytes.Contains(b, []byte("JOURNAL-"))
		require.False(t, hasL && hasJ, "%s holds both tables' rows", f)
		if hasL {
			ledgerSST = f
		}
		if hasJ {
			journalSST = f
		}
	}
	require.NotEmpty(t, ledgerSST, "no table file holds ledger's rows: %v", ssts)
	require.NotEmpty(t, journalSST, "no table file holds journal's rows: %v", ssts)
	return dir, ledgerSST, journalSST
}

// copyDir copies the files of src into a new directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), b, 0o600))
	}
	return dst
}

// flipByte inverts one byte of a file in place (open readers see it).
func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	b := make([]byte, 1)
	_, err = f.ReadAt(b, off)
	require.NoError(t, err)
	b[0] ^= 0xff
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
}

// corruptQuery is a query over a table and its right answer.
type corruptQuery struct {
	name, sql, want string
}

func corruptQueries(tbl string) []corruptQuery {
	var scan, byK []string
	for i := range corruptRows {
		scan = append(scan, fmt.Sprintf("[%d %d %s]", i, i%20, corruptValue(tbl, i)))
		if i%20 == 7 {
			byK = append(byK, fmt.Sprintf("[%d]", i))
		}
	}
	return []corruptQuery{
		{"count", "SELECT COUNT(*) FROM " + tbl, fmt.Sprintf("[[%d]]", corruptRows)},
		{"scan", "SELECT id, k, v FROM " + tbl + " ORDER BY id", "[" + strings.Join(scan, " ") + "]"},
		{"reverse scan", "SELECT id, k, v FROM " + tbl + " ORDER BY id DESC LIMIT 1", fmt.Sprintf("[[%d %d %s]]", corruptRows-1, (corruptRows-1)%20, corruptValue(tbl, corruptRows-1))},
		{"point", "SELECT v FROM " + tbl + " WHERE id = 200", fmt.Sprintf("[[%s]]", corruptValue(tbl, 200))},
		{"range", "SELECT SUM(id) FROM " + tbl + " WHERE id BETWEEN 100 AND 299", "[[39900]]"},
		{"index", "SELECT id FROM " + tbl + " WHERE k = 7 ORDER BY id", "[" + strings.Join(byK, " ") + "]"},
		{"index range", "SELECT COUNT(*) FROM " + tbl + " WHERE k >= 0", fmt.Sprintf("[[%d]]", corruptRows)},
	}
}

// TestCorruptTableFile flips one byte of ledger's table file, at places
// across the file: in row blocks at the start, middle and end, in the
// block of index entries, in the meta blocks (index, filter, properties)
// and in the footer; with the database closed and reopened, and while it
// is open. Every query over ledger fails with an error naming the table
// and the file, or returns exactly the right rows (the damage is in a part
// it does not read, or was read before the damage); a full scan that
// passes over a damaged row block fails. Journal keeps working throughout,
// and after a compaction over the damaged file was attempted, ledger still
// never reads back short.
func TestCorruptTableFile(t *testing.T) {
	pristine, ledgerPath, _ := corruptFixture(t)
	ledgerFile := filepath.Base(ledgerPath)
	raw, err := os.ReadFile(ledgerPath)
	require.NoError(t, err)
	f, err := vfs.Default.Open(ledgerPath)
	require.NoError(t, err)
	r, err := table.NewReader(f, ledgerFile, table.ReaderOptions{})
	require.NoError(t, err)
	dataEnd, size := int64(r.DataEnd()), int64(r.Size())
	require.NoError(t, r.Close())
	marker := func(i int) int64 {
		off := bytes.Index(raw, []byte(corruptValue("ledger", i)))
		require.Positive(t, off, "row %d not found in %s", i, ledgerFile)
		return int64(off) + 3
	}

	places := []struct {
		name string
		off  int64
		rows bool // a row block: a full scan must fail
	}{
		{"first row block", marker(0), true},
		{"middle row block", marker(corruptRows / 2), true},
		{"last row block", marker(corruptRows - 1), true},
		{"index entries", dataEnd - 20, false},
		{"meta blocks", (dataEnd + size) / 2, false},
		{"footer", size - 20, false},
	}
	ledger, journal := corruptQueries("ledger"), corruptQueries("journal")
	for _, p := range places {
		for _, live := range []bool{false, true} {
			name := p.name + map[bool]string{false: ", reopened", true: ", live"}[live]
			t.Run(name, func(t *testing.T) {
				dir := copyDir(t, pristine)
				path := filepath.Join(dir, ledgerFile)
				if !live {
					flipByte(t, path, p.off)
				}
				st, err := openStore(dir, corruptOptions())
				if err != nil {
					requireNamesFile(t, err, ledgerFile, "open")
					return
				}
				defer func() { _ = st.s.Close() }()
				if live {
					flipByte(t, path, p.off)
				}
				ctx := st.session("c")
				var unnamed []string // errors that do not name the SQL table
				check := func(stage string) {
					for _, q := range ledger {
						rows, err := query(st.e, ctx, q.sql)
						if err != nil {
							requireNamesFile(t, err, ledgerFile, stage+": "+q.name)
							if !strings.Contains(err.Error(), "ledger") {
								unnamed = append(unnamed, fmt.Sprintf("%s: %s: %v", stage, q.name, err))
							}
							continue
						}
						require.Equal(t, q.want, fmt.Sprint(rows), "%s: %s: an answer without an error must be right", stage, q.name)
						if p.rows && q.name == "scan" {
							t.Fatalf("%s: a full scan over a damaged row block returned without an error", stage)
						}
					}
					for _, q := range journal {
						rows, err := query(st.e, ctx, q.sql)
						require.NoError(t, err, "%s: %s on the other table", stage, q.name)
						require.Equal(t, q.want, fmt.Sprint(rows), "%s: %s on the other table", stage, q.name)
					}
				}
				check("queries")
				// A compaction reads the damaged file: it must fail rather
				// than write a table without the damaged block's rows.
				if err := st.db.Compact(nil, nil); err != nil {
					requireNamesFile(t, err, ledgerFile, "compaction")
				}
				check("after the compaction")
				// A failed compaction leaves the database read-only, so Close
				// may fail to save its counters; it must still close.
				_ = st.s.Close()
				st, err = openStore(dir, corruptOptions())
				if err != nil {
					requireNamesFile(t, err, ledgerFile, "reopen")
					require.Empty(t, unnamed)
					return
				}
				ctx = st.session("c")
				check("reopened after the compaction")
				require.Empty(t, unnamed, "errors that name the file but not the SQL table")
			})
		}
	}
}

// requireNamesFile checks that err is a corruption error naming file.
func requireNamesFile(t *testing.T, err error, file, what string) {
	t.Helper()
	require.True(t, kv.IsCorruption(err), "%s: not a corruption error: %v", what, err)
	require.Contains(t, err.Error(), file, "%s: the error does not name the file", what)
}
