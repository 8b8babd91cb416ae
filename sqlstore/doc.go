// Package sqlstore is Strata's SQL storage: the go-mysql-server (GMS)
// backend that keeps databases, tables, indexes and rows in one ordered
// keyspace of a storage engine, reached only through the contract of
// package storage. GMS parses, plans and runs SQL; this package answers its
// calls with ordered keys.
//
// # Entry points
//
// New opens a Store over a storage.Engine (package kvstore opens one over
// the embedded engine, package kv, in a directory); Store.NewEngine returns a GMS engine
// over it (with this package's statistics provider, and the corrections of
// GMS: package mysqlcompat's and this package's own, Store.Configure) and
// Store.NewContext a query context with a fresh Session. Store.Provider is the
// sql.MutableDatabaseProvider for callers that build their own engine (the
// MySQL server, the database/sql driver); they must build sessions with
// Store.NewSession, because transactions live on the session. MySQLError
// turns any error into the MySQL error a client should see.
//
// # Layout
//
// keys.go describes the key layout: catalog records under 0x01 (catalog.go
// documents the versioned JSON records), table data under 0x02 + table ID +
// index ID (1 is the row index). Rows hold every column (codec.AppendRow;
// rowcodec.go adds spatial columns), so index keys need not be decodable:
// strings under case-insensitive collations are keyed by their weights.
// Secondary entries are columns + primary key (non-unique) or columns ->
// primary key (unique, unless a column is NULL). Keyless tables key rows by
// a hidden row ID and keep a hash index to find a row by its values. A
// table's record names the codec key format its keys were written in; a
// table of another format whose keys differ is refused with 1459 until
// REPAIR TABLE rebuilds it (keyformat.go).
//
// # Transactions
//
// Every statement runs in a transaction (GMS starts one per statement in
// autocommit mode): an engine transaction of the storage contract
// (package storage), a snapshot plus a buffer of the transaction's writes
// (txn.go). Reads see the snapshot plus the transaction's own writes;
// commit applies the writes atomically. A pessimistic transaction (the
// default, locks.go) locks the rows it writes or reads FOR UPDATE, waiting
// for other transactions' locks, and reads them at the latest state; an
// optimistic one (strata_txn_mode) takes no lock, and its commit fails with
// ErrConflict (MySQL 1213) when another transaction committed a write to
// one of its keys after its snapshot (storage.Txn.Commit). Either fails
// when another transaction dropped or rewrote a table it wrote to. Commits
// are as durable as the engine makes them. A failed
// statement, or a failed row of INSERT IGNORE, is rolled back alone to a
// mark in the writes. Scans read the transaction's writes up
// to the last statement boundary only (stmtview.go), so a statement never
// sees its own writes while it scans the tables it writes.
//
// DDL writes catalog records into the same batch, so the several backend
// calls of one statement (CREATE TABLE, then each index and check) commit
// together; GMS commits DDL at once. A schema change that keeps the row
// layout rewrites the record only; any other copies the rows into a fresh
// table ID in the transaction and drops the old ID's keys with a range
// deletion (alter.go). Auto-increment counters, table IDs and hidden row
// IDs are not transactional and never reissued (autoinc.go).
//
// # Invariants
//
//   - A table's rows, its index entries and its catalog record change only
//     together, in one batch.
//   - Every index entry points at a row that exists, and every row has one
//     entry per secondary index (hash index entry for keyless rows).
//   - Table IDs are never reused; a dropped table's keys are deleted with
//     its record, in the same batch.
//   - Catalog records are written only through transactions; counters only
//     through their allocators.
//
// # Concurrency
//
// A Store, its Provider, Databases, Tables and Indexes are safe for
// concurrent use by any number of sessions: Tables are immutable views over
// a definition and find the transaction in the context of each call. A
// Session runs one statement at a time (GMS may use it from several
// goroutines in sequence). Commits of transactions that changed the catalog
// run one at a time; the others run concurrently and group-commit in the
// engine.
//
// # Usage
//
//	s, _, err := kvstore.Open("/var/lib/app", nil) // or sqlstore.New(engine, nil)
//	...
//	defer s.Close()
//	e := s.NewEngine()
//	ctx := s.NewContext(context.Background(), "")
//	_, iter, _, err := e.Query(ctx, "CREATE DATABASE app")
//	...
//	rows, err := sql.RowIterToRows(ctx, iter) // always drain and close: autocommit commits in Close
package sqlstore
