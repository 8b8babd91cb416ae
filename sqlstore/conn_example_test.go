package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/kvstore"
)

// A front end runs statements through a Conn: the values come back as Go
// values, with no GMS type in sight.
func ExampleConn() {
	dir, _ := os.MkdirTemp("", "sqlstore-conn-example")
	defer os.RemoveAll(dir)
	st, _, err := kvstore.Open(dir, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	e := st.OpenEngine()
	defer e.Close()
	c := e.NewConn()
	defer c.Close()

	ctx := context.Background()
	if err := c.UseDatabase(ctx, "app"); err != nil {
		fmt.Println(err)
		return
	}
	res, err := c.Exec(ctx, "CREATE TABLE fruit (id INT PRIMARY KEY, name VARCHAR(20)); INSERT INTO fruit VALUES (1, 'apple'), (2, 'pear')")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("inserted", res.RowsAffected)

	stmt, err := c.Prepare(ctx, "SELECT id, name FROM fruit WHERE id = ?")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stmt.Close()
	rows, err := stmt.Query(ctx, sqlstore.Arg{Ordinal: 1, Value: int64(2)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rows.Close()
	for {
		vals, err := rows.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s %s: %v %v\n", rows.Columns()[0].TypeName, rows.Columns()[1].TypeName, vals[0], vals[1])
	}
	// Output:
	// inserted 2
	// INT VARCHAR: 2 pear
}
