package server_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"

	_ "github.com/go-sql-driver/mysql"

	"github.com/strata-db/strata/server"
)

// Serve a database folder on a free loopback port, query it with
// go-sql-driver/mysql, and stop.
func Example() {
	dir, err := os.MkdirTemp("", "strata-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	s, err := server.Start(server.Config{
		Data:     dir,
		Listen:   "127.0.0.1:0",
		User:     "root",
		Password: "secret",
	})
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := s.Shutdown(context.Background()); err != nil {
			log.Fatal(err)
		}
	}()

	db, err := sql.Open("mysql", "root:secret@tcp("+s.Addr()+")/main")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	var one int
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil {
		log.Fatal(err)
	}
	fmt.Println(one)
	// Output: 1
}
