package mysqlcompat_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestReviewVirtualTableChecksMore: the CHECK constraints of a table with
// a VIRTUAL column hold for the statements TestVirtualTableChecks does not
// try: an UPDATE whose WHERE holds a subquery, and INSERT and UPDATE run by
// a trigger of another table or by a procedure. A table without the
// virtual column refuses each with 3819.
func TestReviewVirtualTableChecksMore(t *testing.T) {
	for _, table := range []string{"plain", "virt"} {
		t.Run(table, func(t *testing.T) {
			d := newTestDB(t)
			d.exec("CREATE TABLE plain (id INT PRIMARY KEY, a INT, CHECK (a > 0))")
			d.exec("CREATE TABLE virt (id INT PRIMARY KEY, a INT, g INT AS (a * 2) VIRTUAL, CHECK (a > 0))")
			d.exec("CREATE TABLE other (id INT PRIMARY KEY)")
			d.exec("INSERT INTO other VALUES (1), (2)")
			d.exec("INSERT INTO " + table + " (id, a) VALUES (1, 1), (2, 2)")
			d.exec("CREATE TABLE trig (id INT PRIMARY KEY)")
			d.exec(fmt.Sprintf("CREATE TRIGGER tr AFTER INSERT ON trig FOR EACH ROW INSERT INTO %s (id, a) VALUES (NEW.id, -NEW.id)", table))
			d.exec("CREATE TABLE trig2 (id INT PRIMARY KEY)")
			d.exec(fmt.Sprintf("CREATE TRIGGER tr2 AFTER INSERT ON trig2 FOR EACH ROW UPDATE %s SET a = -9 WHERE id = NEW.id", table))
			d.exec(fmt.Sprintf("CREATE PROCEDURE p() BEGIN INSERT INTO %s (id, a) VALUES (7, -7); END", table))
			d.exec(fmt.Sprintf("CREATE PROCEDURE p2() BEGIN UPDATE %s SET a = -8 WHERE id = 1; END", table))
			for _, q := range []string{
				fmt.Sprintf("UPDATE %s SET a = -1 WHERE id IN (SELECT id FROM other)", table),
				fmt.Sprintf("UPDATE %s JOIN other ON %s.id = other.id SET %s.a = -1", table, table, table),
				fmt.Sprintf("UPDATE %s, other SET %s.a = -1 WHERE %s.id = other.id", table, table, table),
				"INSERT INTO trig VALUES (5)",
				"INSERT INTO trig2 VALUES (1)",
				"CALL p()",
				"CALL p2()",
			} {
				_, err := query(d.e, d.ctx, q)
				if err == nil || mysqlErrno(err) != 3819 {
					t.Errorf("%s: got %v, want error 3819", q, err)
				}
			}
			assert.Equal(t, "[[1 1] [2 2]]", fmt.Sprint(d.exec("SELECT id, a FROM "+table+" ORDER BY id")))
		})
	}
}
