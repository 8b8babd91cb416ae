package driver_test

import (
	"database/sql"
	"fmt"
	"os"

	_ "github.com/strata-db/strata/driver"
)

func Example() {
	dir, _ := os.MkdirTemp("", "strata-example")
	defer os.RemoveAll(dir)

	db, err := sql.Open("strata", dir+"?db=shop")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()

	if _, err := db.Exec(`CREATE TABLE items (
		id INT AUTO_INCREMENT PRIMARY KEY,
		name VARCHAR(20) NOT NULL,
		price DECIMAL(6,2))`); err != nil {
		fmt.Println(err)
		return
	}
	ins, err := db.Prepare("INSERT INTO items (name, price) VALUES (?, ?)")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ins.Close()
	for _, it := range []struct {
		name  string
		price string
	}{{"pen", "1.50"}, {"book", "12.00"}, {"bag", "30.00"}} {
		res, err := ins.Exec(it.name, it.price)
		if err != nil {
			fmt.Println(err)
			return
		}
		id, _ := res.LastInsertId()
		fmt.Println("inserted", it.name, "as", id)
	}

	tx, err := db.Begin()
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := tx.Exec("UPDATE items SET price = price * 2 WHERE name = ?", "pen"); err != nil {
		fmt.Println(err)
		return
	}
	if err := tx.Commit(); err != nil {
		fmt.Println(err)
		return
	}

	rows, err := db.Query("SELECT name, price FROM items WHERE price < ? ORDER BY price", 20)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var name, price string
		if err := rows.Scan(&name, &price); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(name, price)
	}
	if err := rows.Err(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// inserted pen as 1
	// inserted book as 2
	// inserted bag as 3
	// pen 3.00
	// book 12.00
}
