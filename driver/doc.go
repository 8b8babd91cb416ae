// Package driver is Strata's database/sql driver, registered as "strata".
// Importing it for its side effect is enough:
//
//	import _ "github.com/strata-db/strata/driver"
//
//	db, err := sql.Open("strata", "/var/lib/app/data?db=app")
//
// # Data source names
//
// A folder path plus options (see Config): "/path/to/dir?db=mydb&sync=false".
// The folder is created when missing, and so is the database named by db,
// which every connection starts in.
//
// # Stores, connections and sessions
//
// All connectors of a process that name the same folder share one open
// store (package sqlstore) and one query engine; the store is closed when
// the last of them closes (DB.Close closes its connector). Another process
// cannot open the folder at the same time: serve it over the MySQL
// protocol (sqlshell serve) instead. Each driver connection is one SQL
// session with its own current database, session variables, prepared
// statements and transaction, so a *sql.DB is safe for use by any number
// of goroutines, and a *sql.Conn or *sql.Tx keeps its session.
//
// # Transactions
//
// DB.Begin runs START TRANSACTION on its connection: reads see one
// snapshot plus the transaction's own writes, and Commit applies all
// writes atomically or fails with MySQL error 1213 (and applies nothing)
// when a concurrent transaction committed a write to the same rows first.
// Outside a transaction each statement commits on its own (autocommit);
// a query's statement ends when its Rows is closed. TxOptions.ReadOnly
// gives START TRANSACTION READ ONLY; the isolation levels accepted are the
// default, REPEATABLE READ and SNAPSHOT, which all mean snapshot isolation.
//
// # Statements, arguments and results
//
// Prepare parses and binds a statement once, reporting unknown tables and
// columns then; each execution binds its arguments to the ? placeholders
// (or :name ones, with sql.Named) and plans the statement. A prepared
// SELECT whose arguments all bound one integer column that begins an index
// (=, IN, BETWEEN, or comparisons joined by AND, any of those joined by
// OR, as in WHERE id >= ? AND id < ?) plans only its first
// execution: later ones reuse that plan with their own arguments
// (sqlstore.PreparedSelect states when it is replanned; SET
// strata_plan_reuse = OFF turns it off, and SHOW STATUS LIKE
// 'Strata_plans_reused' counts it). Queries run with arguments but without
// Prepare (db.Query(q, args...)) get the same: each connection keeps the
// statements of its last 64 such texts. Exec without
// arguments accepts several statements separated by semicolons. Errors of
// SQL statements are *mysql.SQLError values with MySQL's error number and
// SQLSTATE; a cancelled or expired context stops a running statement and
// its error matches context.Canceled or context.DeadlineExceeded.
// Argument and result types are listed in package sqlstore (Arg and
// Rows.Next); in short,
// integers are int64 (uint64 above math.MaxInt64), DECIMAL, TIME, ENUM and
// SET are strings as MySQL prints them, dates are time.Time in UTC, JSON
// and binary strings are []byte.
//
// # Concurrency
//
// Driver and Connector are safe for concurrent use; a Conn, its Stmts,
// Rows and Tx are used by one goroutine at a time, as database/sql does.
package driver
