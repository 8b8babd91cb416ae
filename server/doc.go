// Package server serves a Strata database to MySQL clients: the MySQL
// protocol of go-mysql-server (GMS) over a sqlstore.Store, with the
// defaults a server open to clients needs and the engine leaves open.
// sqlshell serve is this package behind flags; a Go program can run it
// without the shell:
//
//	s, err := server.Start(server.Config{Data: "strata-data", Listen: "127.0.0.1:3306", User: "root", Password: pw})
//	...
//	defer s.Shutdown(ctx)
//
// What it adds to the engine's server:
//
//   - Accounts are on and kept in the store (sqlstore.Store.SetUsers):
//     Config.User is created at the first start, with every privilege, and
//     its password set whenever Config.Password gives one; CREATE USER and
//     GRANT work as in MySQL. Without a password the server listens on
//     loopback addresses only. Unknown users fail like wrong passwords.
//   - Limits: at most Config.MaxConnections connections (more get error
//     1040), and one more for an account with SUPER or CONNECTION_ADMIN;
//     idle connections close after Config.IdleTimeout, connections that
//     have not logged in after Config.ConnectTimeout, clients that take no
//     result data for Config.WriteTimeout; a packet larger than
//     Config.MaxAllowedPacket (8 KiB before login) closes the connection
//     with error 1153 before it is buffered, over TLS too. At most
//     max_prepared_stmt_count prepared statements (1461); each statement's
//     buffered rows are bounded by strata_mem_quota_query (3170).
//   - TLS with Config.TLSCert and Config.TLSKey; with
//     Config.RequireSecureTransport a client that does not use TLS fails
//     authentication and gets no session.
//   - Privilege checks GMS lacks: SET GLOBAL needs SUPER or SYSTEM_VARIABLES_ADMIN, and a global
//     either takes effect or is refused; LOAD DATA INFILE, LOAD_FILE and
//     SELECT ... INTO OUTFILE need FILE and reach only Data/files/sql
//     (secure_file_priv; paths compared cleaned and with symlinks
//     resolved); read_only and super_read_only hold; KILL and SHOW
//     PROCESSLIST know every connection's account.
//   - Hostile clients: a statement whose client hangs up is cancelled;
//     malformed packets get errors, not crashes; log lines name the
//     client's address, quote user names and stay short.
//   - Shutdown lets running statements finish until its context is done,
//     then closes every connection, which rolls back open transactions,
//     and closes the store.
//
// Connections start in database main, which Start creates when missing.
// The engine's system variables are process-wide, so a process runs one
// server at a time.
//
// # Files
//
// server.go (Config, Start, Shutdown), store.go (opening the store),
// server_listener.go, server_login.go, server_framing.go, server_tls.go
// (connection and packet limits, login), server_conn.go, server_peer*.go
// (what the server keeps per connection, hang-ups), processlist.go (the
// process list, with a lock per connection), server_handler.go, server_errors.go, server_memory.go, server_logs.go
// (commands, error numbers, memory, the log), privileges.go, globals.go,
// serverfiles.go, password.go, prepared_limit.go (the checks GMS lacks).
package server
