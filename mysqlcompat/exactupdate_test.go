package mysqlcompat_test

import (
	"fmt"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/stretchr/testify/require"
)

// rowsAffected returns the affected-row count of an UPDATE's result.
func rowsAffected(t *testing.T, rows []sql.Row) uint64 {
	t.Helper()
	require.Len(t, rows, 1)
	ok, isOk := rows[0][0].(types.OkResult)
	require.True(t, isOk, "result %v", rows)
	return ok.RowsAffected
}

// TestUpdateCollationEqual: an UPDATE whose new value equals the old one
// only under the column's collation (letter case, accents, trailing
// spaces) stores the new value and counts the row as changed, as MySQL
// does; GMS used to skip the row. Covered: a primary key column, an
// indexed column, a plain one, a table with a trigger and one with a
// foreign key.
func TestUpdateCollationEqual(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE pk (name VARCHAR(20) COLLATE utf8mb4_0900_ai_ci PRIMARY KEY, n INT)")
	d.exec("CREATE TABLE ix (id INT PRIMARY KEY, name VARCHAR(20) COLLATE utf8mb4_0900_ai_ci, KEY (name))")
	d.exec("CREATE TABLE pl (id INT PRIMARY KEY, name VARCHAR(20) COLLATE utf8mb4_0900_ai_ci, note TEXT COLLATE utf8mb4_general_ci)")
	d.exec("CREATE TABLE tg (id INT PRIMARY KEY, name VARCHAR(20) COLLATE utf8mb4_0900_ai_ci, hits INT)")
	d.exec("CREATE TRIGGER tg_bu BEFORE UPDATE ON tg FOR EACH ROW SET NEW.hits = OLD.hits + 1")
	d.exec("CREATE TABLE par (id INT PRIMARY KEY)")
	d.exec("CREATE TABLE fk (id INT PRIMARY KEY, pid INT, name VARCHAR(20) COLLATE utf8mb4_0900_ai_ci, FOREIGN KEY (pid) REFERENCES par (id))")
	d.exec("INSERT INTO pk VALUES ('bob', 1)")
	d.exec("INSERT INTO ix VALUES (1, 'bob'), (2, 'eve')")
	d.exec("INSERT INTO pl VALUES (1, 'cafe', 'x')")
	d.exec("INSERT INTO tg VALUES (1, 'bob', 0)")
	d.exec("INSERT INTO par VALUES (1)")
	d.exec("INSERT INTO fk VALUES (1, 1, 'bob')")

	for _, tc := range []struct {
		update   string
		affected uint64
		query    string
		want     string
	}{
		{"UPDATE pk SET name = 'Bob' WHERE n = 1", 1, "SELECT name FROM pk", "[[Bob]]"},
		{"UPDATE pk SET name = 'Bob' WHERE n = 1", 0, "SELECT name FROM pk WHERE name = 'BOB'", "[[Bob]]"},
		{"UPDATE ix SET name = UPPER(name)", 2, "SELECT name FROM ix ORDER BY id", "[[BOB] [EVE]]"},
		{"UPDATE ix SET name = 'bob ' WHERE id = 1", 1, "SELECT CONCAT(name, '|') FROM ix WHERE id = 1", "[[bob |]]"},
		{"UPDATE pl SET name = 'café', note = 'X' WHERE id = 1", 1, "SELECT name, note FROM pl", "[[café X]]"},
		{"UPDATE tg SET name = 'BOB' WHERE id = 1", 1, "SELECT name, hits FROM tg", "[[BOB 1]]"},
		{"UPDATE fk SET name = 'BOB' WHERE id = 1", 1, "SELECT name FROM fk", "[[BOB]]"},
	} {
		require.Equal(t, tc.affected, rowsAffected(t, d.exec(tc.update)), tc.update)
		require.Equal(t, tc.want, fmt.Sprint(d.exec(tc.query)), "%s, then %s", tc.update, tc.query)
	}
	// The index entry moved with the value.
	require.Equal(t, "[[2 EVE]]", fmt.Sprint(d.exec("SELECT id, name FROM ix WHERE name = 'eve'")))
	d.reopen()
	require.Equal(t, "[[Bob]]", fmt.Sprint(d.exec("SELECT name FROM pk")))
	require.Equal(t, "[[bob ] [EVE]]", fmt.Sprint(d.exec("SELECT name FROM ix ORDER BY id")))
}

// TestUpdateJoinCollationEqual: the same through UPDATE ... JOIN, which
// compares each table's rows under its join's schema; an outer join's
// unmatched side is still left alone.
func TestUpdateJoinCollationEqual(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE a (id INT PRIMARY KEY, name VARCHAR(20) COLLATE utf8mb4_0900_ai_ci)")
	d.exec("CREATE TABLE b (id INT PRIMARY KEY, name VARCHAR(20) COLLATE utf8mb4_0900_ai_ci, KEY (name))")
	d.exec("INSERT INTO a VALUES (1, 'bob'), (2, 'eve')")
	d.exec("INSERT INTO b VALUES (1, 'x'), (3, 'y')")
	for _, tc := range []struct {
		update   string
		affected uint64
		want     string
	}{
		{"UPDATE a JOIN b ON a.id = b.id SET a.name = 'Bob'", 1, "[[1 Bob] [2 eve]] [[1 x] [3 y]]"},
		{"UPDATE a JOIN b ON a.id = b.id SET a.name = 'Bob', b.name = 'X'", 1, "[[1 Bob] [2 eve]] [[1 X] [3 y]]"},
		{"UPDATE a LEFT JOIN b ON a.id = b.id SET a.name = UPPER(a.name), b.name = 'Z'", 3, "[[1 BOB] [2 EVE]] [[1 Z] [3 y]]"},
		{"UPDATE b JOIN a ON a.id = b.id SET b.name = LOWER(b.name) WHERE b.name = 'z'", 1, "[[1 BOB] [2 EVE]] [[1 z] [3 y]]"},
	} {
		require.Equal(t, tc.affected, rowsAffected(t, d.exec(tc.update)), tc.update)
		require.Equal(t, tc.want, fmt.Sprint(d.exec("SELECT * FROM a ORDER BY id"))+" "+fmt.Sprint(d.exec("SELECT * FROM b ORDER BY id")), tc.update)
	}
	require.Equal(t, "[[1 z]]", fmt.Sprint(d.exec("SELECT id, name FROM b WHERE name = 'z'")))
}
