package sqlstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/strata-db/strata/kv/stats"
	"github.com/stretchr/testify/require"
)

// TestRestart checks that what a store holds reads back identically after
// Close and Open: schemas (types, defaults, collations, keys, indexes,
// checks, foreign keys, comments), rows, views, triggers, procedures,
// events and auto-increment counters.
func TestRestart(t *testing.T) {
	d := newTestDB(t)
	setup := []string{
		"CREATE DATABASE other COLLATE utf8mb4_0900_ai_ci",
		`CREATE TABLE types (
			id BIGINT PRIMARY KEY AUTO_INCREMENT,
			i8 TINYINT, u8 TINYINT UNSIGNED, i16 SMALLINT, u32 INT UNSIGNED, u64 BIGINT UNSIGNED,
			dec1 DECIMAL(10,3), f FLOAT, dbl DOUBLE,
			ch CHAR(5), vc VARCHAR(40) COLLATE utf8mb4_0900_ai_ci, tx TEXT,
			bn BINARY(4), vb VARBINARY(10), bl BLOB,
			dt DATE, tm TIME, dtm DATETIME(6), ts TIMESTAMP, yr YEAR,
			en ENUM('a','b','c'), st SET('x','y','z'), bt BIT(10), js JSON,
			def INT NOT NULL DEFAULT 42, expr_def VARCHAR(20) DEFAULT (CONCAT('a', 'b')),
			CHECK (i8 > -100),
			UNIQUE KEY uq (vc), KEY multi (i16, dt)
		) COMMENT 'all the types'`,
		`INSERT INTO types (i8, u8, i16, u32, u64, dec1, f, dbl, ch, vc, tx, bn, vb, bl, dt, tm, dtm, ts, yr, en, st, bt, js)
		 VALUES (-5, 200, -300, 4000000000, 18000000000000000000, -12.345, 1.5, -2.25, 'ab', 'Hello', 'long text',
		 'ab', 'xy', 'blob', '2024-02-29', '-12:34:56', '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05', 2024,
		 'b', 'x,z', b'1010', '{"a": [1, 2.5, "s"], "b": null}')`,
		"INSERT INTO types (vc) VALUES ('second')",
		"CREATE TABLE parent (id INT PRIMARY KEY)",
		"CREATE TABLE child (id INT PRIMARY KEY, p INT, CONSTRAINT fk_p FOREIGN KEY (p) REFERENCES parent (id) ON DELETE CASCADE)",
		"INSERT INTO parent VALUES (1), (2)",
		"INSERT INTO child VALUES (10, 1), (20, 2)",
		"CREATE TABLE keyless (a INT, b VARCHAR(10), KEY ka (a))",
		"INSERT INTO keyless VALUES (1, 'x'), (1, 'x'), (2, 'y')",
		"CREATE VIEW v AS SELECT id, vc FROM types WHERE id > 0",
		"CREATE TABLE log (msg VARCHAR(100))",
		"CREATE TRIGGER trg AFTER INSERT ON parent FOR EACH ROW INSERT INTO log VALUES (CONCAT('parent ', NEW.id))",
		"CREATE PROCEDURE p(x INT) SELECT x * 2",
		"CREATE TABLE other.t (s VARCHAR(10) PRIMARY KEY)",
		"INSERT INTO other.t VALUES ('B'), ('a')",
		"ALTER TABLE keyless ADD COLUMN c INT DEFAULT 7",
		"ALTER TABLE child RENAME COLUMN p TO parent_id",
	}
	for _, q := range setup {
		d.exec(q)
	}
	checks := []string{
		"SHOW CREATE TABLE types",
		"SHOW CREATE TABLE child",
		"SHOW CREATE TABLE keyless",
		"SHOW CREATE TABLE other.t",
		"SELECT * FROM types ORDER BY id",
		"SELECT * FROM child ORDER BY id",
		"SELECT * FROM keyless ORDER BY a, b",
		"SELECT * FROM v ORDER BY id",
		"SELECT s FROM other.t ORDER BY s",
		"SELECT id FROM types WHERE vc = 'HELLO'",
		"SELECT COUNT(*) FROM keyless WHERE a = 1",
		"SHOW INDEXES FROM types",
		"SHOW TRIGGERS",
		"SHOW DATABASES",
		"CALL p(21)",
	}
	before := make([]string, len(checks))
	for i, q := range checks {
		before[i] = fmt.Sprint(d.exec(q))
	}
	d.reopen()
	for i, q := range checks {
		require.Equal(t, before[i], fmt.Sprint(d.exec(q)), q)
	}
	// Constraints, triggers and auto-increment still work, and values are
	// never handed out twice.
	err := d.execErr("INSERT INTO types (vc) VALUES ('hello')") // unique under ai_ci
	require.True(t, sql.ErrUniqueKeyViolation.Is(sql.UnwrapError(err)), err)
	d.exec("INSERT INTO types (vc) VALUES ('third')")
	// The failed insert used 3 (as InnoDB does, the value is not given back).
	require.Equal(t, []sql.Row{{int64(4)}}, d.exec("SELECT id FROM types WHERE vc = 'third'"))
	d.exec("INSERT INTO parent VALUES (3)")
	require.Equal(t, []sql.Row{{"parent 3"}}, d.exec("SELECT * FROM log"))
	d.exec("DELETE FROM parent WHERE id = 1")
	require.Equal(t, []sql.Row{{int32(20)}}, d.exec("SELECT id FROM child"))
	require.Error(t, d.execErr("INSERT INTO types (i8) VALUES (-101)"))
}

// TestAutoIncrementNeverReissued: values handed to transactions that rolled
// back, and values past the last clean close, are not reused.
func TestAutoIncrementNeverReissued(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE a (id INT PRIMARY KEY AUTO_INCREMENT, v INT)")
	d.exec("INSERT INTO a (v) VALUES (1), (2)")
	d.exec("START TRANSACTION")
	d.exec("INSERT INTO a (v) VALUES (3)")
	d.exec("ROLLBACK")
	d.exec("INSERT INTO a (v) VALUES (4)")
	require.Equal(t, []sql.Row{{int32(1)}, {int32(2)}, {int32(4)}}, d.exec("SELECT id FROM a ORDER BY id"))
	d.reopen()
	d.exec("INSERT INTO a (v) VALUES (5)")
	require.Equal(t, []sql.Row{{int32(5)}}, d.exec("SELECT id FROM a WHERE v = 5"))
	d.exec("ALTER TABLE a AUTO_INCREMENT = 100")
	d.reopen()
	d.exec("INSERT INTO a (v) VALUES (6)")
	require.Equal(t, []sql.Row{{int32(100)}}, d.exec("SELECT id FROM a WHERE v = 6"))
}

// TestFirstLookupAfterOpenDoesNotScan: the planner's first estimate of a
// table after Open comes from the engine's table properties, not from a
// scan of the table, and is close to the truth; COUNT(*) still counts
// exactly.
func TestFirstLookupAfterOpenDoesNotScan(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(200))")
	const n = 4000
	for i := 0; i < n; i += 500 {
		var b strings.Builder
		b.WriteString("INSERT INTO t VALUES ")
		for j := i; j < i+500; j++ {
			if j > i {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "(%d, REPEAT('x', 100))", j)
		}
		d.exec(b.String())
	}
	require.NoError(t, d.s.kvDB().Flush())
	d.reopen()

	before := d.s.kvDB().Stats()
	require.Equal(t, []sql.Row{{strings.Repeat("x", 100)}}, d.exec("SELECT v FROM t WHERE id = 1234"))
	after := d.s.kvDB().Stats()
	blocks := after.Get(stats.BlockCacheHit) + after.Get(stats.BlockCacheMiss) -
		before.Get(stats.BlockCacheHit) - before.Get(stats.BlockCacheMiss)
	// The table spans over a hundred 4 KiB blocks; a point lookup reads
	// one, and the catalog a few.
	require.Less(t, blocks, int64(10), "block reads of the first lookup after Open")

	d.s.counters.mu.Lock()
	var counts []rowCounter
	for _, rc := range d.s.counters.m {
		if rc.approx || rc.known {
			counts = append(counts, *rc)
		}
	}
	d.s.counters.mu.Unlock()
	require.Len(t, counts, 1)
	require.True(t, counts[0].approx)
	require.False(t, counts[0].known)
	require.InDelta(t, n, counts[0].rows, n*0.05)

	require.Equal(t, []sql.Row{{int64(n)}}, d.exec("SELECT COUNT(*) FROM t"))
	d.exec("INSERT INTO t VALUES (-1, 'y')")
	require.Equal(t, []sql.Row{{int64(n + 1)}}, d.exec("SELECT COUNT(*) FROM t"))
}
