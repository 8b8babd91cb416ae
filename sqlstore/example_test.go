package sqlstore_test

import (
	"context"
	"fmt"
	"os"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/strata-db/strata/sqlstore/kvstore"
)

func Example() {
	dir, _ := os.MkdirTemp("", "sqlstore-example")
	defer os.RemoveAll(dir)

	s, _, err := kvstore.Open(dir, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	e := s.NewEngine()
	ctx := s.NewContext(context.Background(), "")
	run := func(q string) []sql.Row {
		_, iter, _, err := e.Query(ctx, q)
		if err != nil {
			fmt.Println(err)
			return nil
		}
		rows, err := sql.RowIterToRows(ctx, iter) // drains and closes: autocommit commits here
		if err != nil {
			fmt.Println(err)
		}
		return rows
	}
	run("CREATE DATABASE shop")
	ctx.SetCurrentDatabase("shop")
	run("CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(6,2), KEY by_price (price))")
	run("INSERT INTO items VALUES (1, 'pen', 1.50), (2, 'book', 12.00), (3, 'bag', 30.00)")
	for _, r := range run("SELECT name, CAST(price AS CHAR) FROM items WHERE price BETWEEN 1 AND 20 ORDER BY price") {
		fmt.Println(r[0], r[1])
	}
	// Output:
	// pen 1.50
	// book 12.00
}
