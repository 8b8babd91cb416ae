package sqlstore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/cockroachdb/datadriven"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/sqlstore/codec"
)

// Stores of the first key format, made by hand: a table is created and
// filled with SQL, then ageTable rewrites its keys as the first format
// wrote them (PAD SPACE strings unpadded: 0x13 rune weights, or 0x12
// bytes under utf8mb4_bin, utf16_bin and utf32_bin; CHAR with its trailing
// spaces) and its record without the key format, through the lower layers.

// oldAppendKey appends the key of v, a value of typ, as the first key
// format wrote it.
func oldAppendKey(dst []byte, typ sql.Type, v any) ([]byte, error) {
	if v == nil || !codec.KeyChangedSince(codec.KeyFormatUnpadded, typ) {
		return codec.AppendKey(dst, typ, v, codec.Asc)
	}
	s, ok := v.(string)
	if !ok {
		return dst, fmt.Errorf("oldAppendKey: %T", v)
	}
	escaped := func(dst []byte, b ...byte) []byte {
		for _, c := range b {
			dst = append(dst, c)
			if c == 0 {
				dst = append(dst, 0xff)
			}
		}
		return dst
	}
	c := typ.(sql.StringType).Collation()
	switch c {
	case sql.Collation_utf8mb4_bin, sql.Collation_utf16_bin, sql.Collation_utf32_bin, sql.Collation_utf8mb4_0900_bin:
		dst = escaped(append(dst, 0x12), []byte(s)...)
	default:
		sorter := c.Sorter()
		dst = append(dst, 0x13)
		for _, r := range s {
			var w [4]byte
			binary.BigEndian.PutUint32(w[:], uint32(sorter(r))^(1<<31))
			dst = escaped(dst, w[:]...)
		}
	}
	return append(dst, 0x00, 0x01), nil
}

// oldKeyCols appends the first format's keys of row's columns cols, each
// cut to its prefix length, and reports whether one is NULL.
func oldKeyCols(dst []byte, def *tableDef, cols []int, prefix []uint16, row sql.Row) ([]byte, bool, error) {
	hasNull := false
	for i, o := range cols {
		v := row[o]
		if v == nil {
			hasNull = true
		} else if prefix != nil && prefix[i] > 0 {
			v = prefixOf(v, int(prefix[i]))
		}
		var err error
		if dst, err = oldAppendKey(dst, def.schema[o].Type, v); err != nil {
			return dst, false, err
		}
	}
	return dst, hasNull, nil
}

// readDef returns the definition of table name in mydb as stored now.
func readDef(t testing.TB, s *Store, name string) *tableDef {
	t.Helper()
	tx := s.beginTxn(true)
	defer tx.rollback()
	v, ok, err := tx.get(catalogKey(kindTable, "mydb", name))
	require.NoError(t, err)
	require.True(t, ok, name)
	def, err := s.defs.get("mydb", v)
	require.NoError(t, err)
	return def
}

// ageTable rewrites table name of mydb as a store of the first key format
// holds it; the store must be reopened afterwards (its caches know the
// record).
func ageTable(t testing.TB, s *Store, name string) {
	t.Helper()
	def := readDef(t, s, name)
	tx := s.beginTxn(false)
	defer tx.rollback()
	prefix := appendIndexPrefix(nil, def.id, primaryIndexID)
	type stored struct {
		pk, value []byte
		row       sql.Row
	}
	var rows []stored
	it, err := tx.newIter(prefix, prefixEnd(prefix))
	require.NoError(t, err)
	for ok := it.First(); ok; ok = it.Next() {
		row, err := def.decodeRow(it.Value(), nil, nil)
		require.NoError(t, err)
		rows = append(rows, stored{bytes.Clone(it.Key()[len(prefix):]), bytes.Clone(it.Value()), row})
	}
	require.NoError(t, it.Error())
	require.NoError(t, it.Close())
	require.NoError(t, tx.deleteRange(tableSpan(def.id)))
	for _, r := range rows {
		pk := r.pk
		if !def.keyless {
			pk, _, err = oldKeyCols(nil, def, def.pkOrds, nil, r.row)
			require.NoError(t, err)
		} else {
			hk := appendIndexPrefix(nil, def.id, keylessHashIndexID)
			hk = binary.BigEndian.AppendUint64(hk, xxhash.Sum64(r.value))
			require.NoError(t, tx.set(append(hk, pk...), nil))
		}
		require.NoError(t, tx.set(append(bytes.Clone(prefix), pk...), r.value))
		for _, ix := range def.secondary {
			key := appendIndexPrefix(nil, def.id, ix.id)
			key, hasNull, err := oldKeyCols(key, def, ix.cols, ix.prefix, r.row)
			require.NoError(t, err)
			if ix.unique && !hasNull {
				require.NoError(t, tx.set(key, pk))
			} else {
				require.NoError(t, tx.set(append(key, pk...), nil))
			}
		}
	}
	rec := def.rec.clone()
	rec.KeyFormat = codec.KeyFormatUnpadded
	b, err := encodeRecord(rec)
	require.NoError(t, err)
	require.NotContains(t, string(b), "keyFormat")
	require.NoError(t, tx.setCatalog(catalogKey(kindTable, "mydb", name), b))
	require.NoError(t, tx.commit())
}

// recordKeyFormat returns the "keyFormat" field of table name's record as
// stored, or "absent".
func recordKeyFormat(t testing.TB, s *Store, name string) string {
	tx := s.beginTxn(true)
	defer tx.rollback()
	v, ok, err := tx.get(catalogKey(kindTable, "mydb", name))
	require.NoError(t, err)
	require.True(t, ok, name)
	var f map[string]any
	require.NoError(t, json.Unmarshal(v, &f))
	if k, ok := f["keyFormat"]; ok {
		return fmt.Sprint(k)
	}
	return "absent"
}

// TestKeyFormatSpec runs testdata/key_format: tables of the first key
// format refused with 1459, CHECK TABLE's report, REPAIR TABLE and ALTER
// TABLE ... FORCE rebuilding them, and the results after. Commands:
//
//	exec
//	  statements, one a line, each of which must succeed
//	age
//	  table names, one a line: rewrite each as the first key format wrote it
//	reopen
//	  close the store and open it again (Open stamps what needs no rebuild)
//	set-format
//	  lines "table format": write that key format into each table's record
//	record
//	  table names: print the "keyFormat" of each record
//	query
//	  one statement; prints its rows or its error
func TestKeyFormatSpec(t *testing.T) {
	d := openTestDB(t, t.TempDir())
	d.exec("CREATE DATABASE IF NOT EXISTS mydb")
	t.Cleanup(func() { _ = d.s.Close() })
	datadriven.RunTest(t, "testdata/key_format", func(t *testing.T, td *datadriven.TestData) string {
		switch td.Cmd {
		case "exec":
			return specExec(t, d, td)
		case "age":
			for _, name := range strings.Fields(td.Input) {
				ageTable(t, d.s, name)
			}
			return ""
		case "reopen":
			d.reopen()
			return ""
		case "set-format":
			for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
				var name string
				var format int
				_, err := fmt.Sscan(line, &name, &format)
				require.NoError(t, err, line)
				setRecord(t, d.s, name, func(rec *tableRecord) { rec.KeyFormat = format })
			}
			return ""
		case "record":
			var b strings.Builder
			for _, name := range strings.Fields(td.Input) {
				fmt.Fprintf(&b, "%s: %s\n", name, recordKeyFormat(t, d.s, name))
			}
			return b.String()
		case "query":
			return queryWithWarnings(t, d, strings.TrimSpace(td.Input))
		default:
			td.Fatalf(t, "unknown command %q", td.Cmd)
			return ""
		}
	})
}

// setRecord rewrites table name's record through change, behind the SQL
// layer's back.
func setRecord(t testing.TB, s *Store, name string, change func(rec *tableRecord)) {
	t.Helper()
	rec := readDef(t, s, name).rec.clone()
	change(rec)
	b, err := encodeRecord(rec)
	require.NoError(t, err)
	tx := s.beginTxn(false)
	require.NoError(t, tx.setCatalog(catalogKey(kindTable, "mydb", name), b))
	require.NoError(t, tx.commit())
}

// TestKeyFormatMarkerMatters: the keys ageTable writes are those lookups
// built now miss. Were such a table taken for one of the current format
// (its record stamped without a rebuild), an equality lookup on its
// primary key and on its unique index would find nothing and CHECK TABLE
// would report its entries missing: what the marker's refusal prevents.
func TestKeyFormatMarkerMatters(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE g (s VARCHAR(20) COLLATE utf8mb4_general_ci PRIMARY KEY, u VARCHAR(20) COLLATE utf8mb4_bin, UNIQUE KEY uu (u))")
	d.exec("INSERT INTO g VALUES ('Apple', 'x'), ('pear ', 'y')")
	ageTable(t, d.s, "g")
	d.reopen()
	require.Equal(t, "absent", recordKeyFormat(t, d.s, "g"))
	require.Equal(t, 1459, int(MySQLError(d.execErr("SELECT * FROM g WHERE s = 'Apple'")).Num))

	setRecord(t, d.s, "g", func(rec *tableRecord) { rec.KeyFormat = codec.KeyFormat })
	d.reopen()
	require.Empty(t, d.exec("SELECT * FROM g WHERE s = 'Apple'"))
	require.Empty(t, d.exec("SELECT * FROM g WHERE u = 'y'"))
	rows := d.exec("CHECK TABLE g")
	require.Equal(t, "Corrupt", rows[len(rows)-1][3], "%v", rows)
}

// TestRepairDuplicates: an old table whose unique index holds 'a' and
// 'a ' (two values to unpadded keys, one to MySQL's PAD SPACE comparison)
// cannot be rebuilt: REPAIR reports the duplicate, ALTER TABLE ... FORCE
// fails with 1062, and the table stays as it was, refused. Dropping the
// index, which reads no key, lets the rebuild through; so does dropping a
// primary key that collides, which copies the rows by a full scan.
func TestRepairDuplicates(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE g (id INT PRIMARY KEY, u VARCHAR(20) COLLATE utf8mb4_general_ci)")
	d.exec("INSERT INTO g VALUES (1, 'a'), (2, 'A '), (3, 'b')")
	setRecord(t, d.s, "g", func(rec *tableRecord) {
		rec.Indexes = append(rec.Indexes, indexRecord{ID: rec.NextIndexID, Name: "uu", Columns: []indexColumnRecord{{Name: "u"}}, Unique: true})
		rec.NextIndexID++
	})
	ageTable(t, d.s, "g")
	d.reopen()
	before := readDef(t, d.s, "g")

	rows := d.exec("REPAIR TABLE g")
	require.Equal(t, "[[mydb.g repair Error Duplicate entry 'A ' for key 'g.uu'] [mydb.g repair status Operation failed]]", fmt.Sprint(rows))
	err := d.execErr("ALTER TABLE g FORCE")
	require.Equal(t, 1062, int(MySQLError(err).Num), "%v", err)

	after := readDef(t, d.s, "g")
	require.Equal(t, before.id, after.id)
	require.Equal(t, "absent", recordKeyFormat(t, d.s, "g"))
	require.Equal(t, 1459, int(MySQLError(d.execErr("SELECT * FROM g")).Num))

	// Without the index the table keys nothing whose format changed: its
	// record is stamped as the index goes, and an index added since is
	// read as current after a restart.
	d.exec("ALTER TABLE g DROP INDEX uu")
	require.Equal(t, "1", recordKeyFormat(t, d.s, "g"))
	require.Equal(t, "[[mydb.g repair note The storage engine for the table doesn't support repair]]", fmt.Sprint(d.exec("REPAIR TABLE g")))
	d.exec("ALTER TABLE g ADD INDEX ku (u)")
	d.reopen()
	require.Equal(t, "[[1 a] [2 A ]]", fmt.Sprint(d.exec("SELECT id, u FROM g WHERE u = 'a' ORDER BY id")))
	require.Equal(t, "[[mydb.g check status OK]]", fmt.Sprint(d.exec("CHECK TABLE g")))

	// A primary key that collides.
	d.exec("CREATE TABLE k (s VARCHAR(20) COLLATE utf8mb4_general_ci, n INT, KEY kn (n))")
	d.exec("INSERT INTO k VALUES ('a', 1), ('a ', 2), ('b', 3)")
	setRecord(t, d.s, "k", func(rec *tableRecord) { rec.PK = []int{0}; rec.Columns[0].Nullable = false })
	ageTable(t, d.s, "k")
	d.reopen()
	require.Equal(t, "[[mydb.k repair Error Duplicate entry 'a ' for key 'k.PRIMARY'] [mydb.k repair status Operation failed]]", fmt.Sprint(d.exec("REPAIR TABLE k")))
	require.Equal(t, 1459, int(MySQLError(d.execErr("SELECT * FROM k")).Num))
	d.exec("ALTER TABLE k DROP PRIMARY KEY")
	require.Equal(t, "1", recordKeyFormat(t, d.s, "k"))
	require.Equal(t, "[[a 1] [a  2]]", fmt.Sprint(d.exec("SELECT s, n FROM k WHERE s = 'A' ORDER BY n")))
	require.Equal(t, "[[mydb.k check status OK]]", fmt.Sprint(d.exec("CHECK TABLE k")))
	d.exec("DROP TABLE g")
	d.exec("DROP TABLE k")
	require.Empty(t, d.exec("SHOW TABLES"))
}

// TestRepairCharValues: a CHAR value stored with its trailing spaces by the
// first format is stored and keyed without them once the table is rebuilt,
// as MySQL gives it back; a keyless table's row hash follows, so a DELETE
// finds the row.
func TestRepairCharValues(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE c (id CHAR(4) PRIMARY KEY, v CHAR(4))")
	d.exec("CREATE TABLE k (v CHAR(4), n INT)")
	// The first format stored CHAR as given: write the rows as VARCHAR
	// values, which keep their spaces, under the CHAR tables' IDs.
	for _, name := range []string{"c", "k"} {
		def := readDef(t, d.s, name)
		varchar := def.rec.clone()
		for i := range varchar.Columns {
			varchar.Columns[i].Type = strings.Replace(varchar.Columns[i].Type, "char", "varchar", 1)
		}
		vdef, err := newTableDef("mydb", varchar)
		require.NoError(t, err)
		tx := d.s.beginTxn(false)
		for i, row := range []sql.Row{{"a  ", "b  "}, {"x", "y "}} {
			if name == "k" {
				row = sql.Row{row[0], int32(i)}
			}
			val, err := vdef.encodeRow(nil, row)
			require.NoError(t, err)
			var pk []byte
			if def.keyless {
				pk = codec.AppendUvarintAscending(nil, uint64(100+i))
				hk := appendIndexPrefix(nil, def.id, keylessHashIndexID)
				hk = binary.BigEndian.AppendUint64(hk, xxhash.Sum64(val))
				require.NoError(t, tx.set(append(hk, pk...), nil))
			} else {
				pk, _, err = oldKeyCols(nil, vdef, def.pkOrds, nil, row)
				require.NoError(t, err)
			}
			require.NoError(t, tx.set(append(appendIndexPrefix(nil, def.id, primaryIndexID), pk...), val))
		}
		require.NoError(t, tx.commit())
		setRecord(t, d.s, name, func(rec *tableRecord) { rec.KeyFormat = codec.KeyFormatUnpadded })
	}
	d.reopen()
	require.Equal(t, 1459, int(MySQLError(d.execErr("SELECT * FROM k")).Num))
	require.Equal(t, "[[mydb.c repair status OK] [mydb.k repair status OK]]", fmt.Sprint(d.exec("REPAIR TABLE c, k")))
	require.Equal(t, `[[a b] [x y]]`, fmt.Sprint(d.exec("SELECT id, v FROM c ORDER BY id")))
	require.Equal(t, `[[b]]`, fmt.Sprint(d.exec("SELECT v FROM c WHERE id = 'a'")))
	require.Equal(t, `[[a 0] [x 1]]`, fmt.Sprint(d.exec("SELECT v, n FROM k ORDER BY n")))
	d.exec("DELETE FROM k WHERE v = 'a'")
	require.Equal(t, `[[x 1]]`, fmt.Sprint(d.exec("SELECT v, n FROM k")))
	require.Equal(t, "[[mydb.c check status OK] [mydb.k check status OK]]", fmt.Sprint(d.exec("CHECK TABLE c, k")))
}

// TestRepairCommits: REPAIR TABLE and ALTER TABLE ... FORCE commit around
// themselves with autocommit off, as MySQL's do: the statement after the
// repair reads the rebuilt table, not the snapshot from before it, and a
// write before the repair is committed by it.
func TestRepairCommits(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE g (s VARCHAR(20) COLLATE utf8mb4_general_ci PRIMARY KEY)")
	d.exec("CREATE TABLE p (id INT PRIMARY KEY)")
	d.exec("INSERT INTO g VALUES ('a')")
	ageTable(t, d.s, "g")
	d.reopen()
	d.exec("SET autocommit = 0")
	d.exec("INSERT INTO p VALUES (1)")
	require.Equal(t, "[[mydb.g repair status OK]]", fmt.Sprint(d.exec("REPAIR TABLE g")))
	require.Equal(t, "[[a]]", fmt.Sprint(d.exec("SELECT * FROM g WHERE s = 'A '")))
	d.exec("INSERT INTO p VALUES (2)")
	d.exec("ALTER TABLE g FORCE")
	d.exec("ROLLBACK")
	require.Equal(t, "[[1] [2]]", fmt.Sprint(d.exec("SELECT id FROM p ORDER BY id")))
}

// BenchmarkRepair rebuilds a table of the first key format, 50,000 rows
// keyed by a general_ci string with a unique general_ci index and an INT
// index, with REPAIR TABLE; the table is aged again, untimed, before each.
func BenchmarkRepair(b *testing.B) {
	const rows = 50000
	d := newTestDB(b)
	d.exec("CREATE TABLE g (s VARCHAR(40) COLLATE utf8mb4_general_ci PRIMARY KEY, n INT, u VARCHAR(40) COLLATE utf8mb4_general_ci, UNIQUE KEY uu (u), KEY kn (n))")
	for i := 0; i < rows; i += 1000 {
		d.exec(insertValues("g", i, i+1000, func(i int) string {
			return fmt.Sprintf("('Key %d', %d, 'Unique value %d')", i, i%100, i)
		}))
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		ageTable(b, d.s, "g")
		d.reopen()
		b.StartTimer()
		if got := fmt.Sprint(d.exec("REPAIR TABLE g")); got != "[[mydb.g repair status OK]]" {
			b.Fatal(got)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
}

// TestRepairWhileReading (run it with -race): sessions reading a stale
// table by its padded keys, and writing another table, while REPAIR
// rebuilds it, each get either 1459 (before the rebuild's commit) or the
// right rows (after it), never rows missed; once a session has read the
// rebuilt table it never gets 1459 again.
func TestRepairWhileReading(t *testing.T) {
	const rows = 2000
	d := newTestDB(t)
	d.exec("CREATE TABLE g (s VARCHAR(40) COLLATE utf8mb4_general_ci PRIMARY KEY, n INT)")
	d.exec("CREATE TABLE w (id INT PRIMARY KEY, v INT)")
	d.exec(insertValues("g", 0, rows, func(i int) string { return fmt.Sprintf("('Key %d', %d)", i, i) }))
	ageTable(t, d.s, "g")
	d.reopen()

	stop := make(chan struct{})
	errs := make(chan error, 4)
	var reads [4]atomic.Int64
	for c := range 4 {
		ctx := d.newCtx()
		go func() {
			rebuilt := false
			for i := 0; ; i++ {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				k := (c*577 + i*31) % rows
				got, err := query(d.e, ctx, fmt.Sprintf("SELECT n FROM g WHERE s = 'KEY %d  '", k))
				switch {
				case err != nil && !rebuilt && MySQLError(err).Num == 1459:
				case err != nil:
					errs <- fmt.Errorf("session %d: %v", c, err)
					return
				case fmt.Sprint(got) != fmt.Sprintf("[[%d]]", k):
					errs <- fmt.Errorf("session %d: key %d: %v", c, k, got)
					return
				default:
					rebuilt = true
					reads[c].Add(1)
				}
				if _, err := query(d.e, ctx, fmt.Sprintf("REPLACE INTO w VALUES (%d, %d)", c, i)); err != nil {
					errs <- fmt.Errorf("session %d: write: %v", c, err)
					return
				}
			}
		}()
	}
	require.Equal(t, "[[mydb.g repair status OK]]", fmt.Sprint(d.exec("REPAIR TABLE g")))
	require.Equal(t, fmt.Sprintf("[[%d]]", rows), fmt.Sprint(d.exec("SELECT COUNT(*) FROM g")))
	// Each session reads the rebuilt table a while (or has failed).
	for c := range reads {
		for reads[c].Load() < 20 && len(errs) == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	close(stop)
	for range 4 {
		require.NoError(t, <-errs)
	}
	for c := range reads {
		require.GreaterOrEqual(t, reads[c].Load(), int64(20))
	}
}

// TestIndexOnUnstampedTable: an index added, in the current format, to a
// table of the first format whose keys did not change (one Open did not
// stamp: another process's, or a version's before the stamping) stamps
// the record, so the table is not taken for a stale one.
func TestIndexOnUnstampedTable(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE u (id INT PRIMARY KEY, s VARCHAR(20) COLLATE utf8mb4_general_ci)")
	d.exec("INSERT INTO u VALUES (1, 'a'), (2, 'A  '), (3, 'b')")
	setRecord(t, d.s, "u", func(rec *tableRecord) { rec.KeyFormat = codec.KeyFormatUnpadded })
	require.Equal(t, "absent", recordKeyFormat(t, d.s, "u"))
	d.exec("CREATE INDEX ks ON u (s)")
	require.Equal(t, "1", recordKeyFormat(t, d.s, "u"))
	d.reopen()
	require.Equal(t, "[[1] [2]]", fmt.Sprint(d.exec("SELECT id FROM u WHERE s = 'a' ORDER BY id")))
	require.Equal(t, "[[mydb.u check status OK]]", fmt.Sprint(d.exec("CHECK TABLE u")))
}
