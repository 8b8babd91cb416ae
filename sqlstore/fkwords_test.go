package sqlstore

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestForeignKeyWordsTwoDatabases: a constraint of the same name on tables
// of the same names in two databases: GMS's error names neither database,
// so a violation in the other database is not described with the current
// database's constraint (its columns and actions); one in a database
// alone with its names is worded as MySQL words it.
func TestForeignKeyWordsTwoDatabases(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE p (id INT PRIMARY KEY)")
	d.exec("CREATE TABLE c (id INT PRIMARY KEY, pid INT, CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE)")
	d.exec("CREATE DATABASE other")
	d.exec("CREATE TABLE other.p (k INT PRIMARY KEY)")
	d.exec("CREATE TABLE other.c (id INT PRIMARY KEY, xx INT, CONSTRAINT fk FOREIGN KEY (xx) REFERENCES other.p (k))")
	d.exec("CREATE TABLE other.c2 (id INT PRIMARY KEY, yy INT, CONSTRAINT fk2 FOREIGN KEY (yy) REFERENCES other.p (k))")
	ctx := context.Background()
	e := d.s.OpenEngine()
	defer e.Close()
	c := e.NewConn()
	defer c.Close()
	require.NoError(t, c.UseDatabase(ctx, "mydb"))
	_, err := c.Exec(ctx, "INSERT INTO other.c VALUES (1, 5)")
	require.Error(t, err)
	require.Equal(t, 1452, sqlErrNum(err), "%v", err)
	require.NotContains(t, err.Error(), "pid", "the other database's constraint")
	require.NotContains(t, err.Error(), "CASCADE")
	_, err = c.Exec(ctx, "INSERT INTO other.c2 VALUES (1, 5)")
	require.Error(t, err)
	require.Contains(t, err.Error(), "Cannot add or update a child row: a foreign key constraint fails (`other`.`c2`, CONSTRAINT `fk2` FOREIGN KEY (`yy`) REFERENCES `p` (`k`))")
}
