// Command sqlshell is Strata's SQL shell and MySQL-protocol server.
//
//	sqlshell                      interactive shell on ./strata-data (or $STRATA_DATA)
//	sqlshell -e "SQL; SQL"        run statements and print the results
//	sqlshell < script.sql         run a script; the first error stops it
//	sqlshell serve                serve the folder to MySQL clients on 127.0.0.1:3306
//
// # Shell
//
// The shell opens (creating) the store in the data folder and starts in
// database main (--db). At a terminal it edits lines, completes keywords
// and the current database's table and column names with Tab, and keeps
// a history (~/.strata_history, created 0600; statements containing
// IDENTIFIED or PASSWORD are not kept, as the mysql client's histignore
// default). The prompt names the database (strata [main]>); --prompt
// and \R take the mysql client's escapes (\d, \u, \h, \D, ...).
// Statements end with ; or \G (vertical output) and may span lines;
// results are aligned tables, wide characters by their display width,
// with the row count and time; Ctrl-C cancels the running statement (or
// the one being typed), Ctrl-D, exit or quit leave. Errors read like the
// mysql client's: ERROR 1146 (42S02): .... A syntax error names its line
// and column inside the statement and the text from there (near '...'),
// and at a terminal a caret points at it. Output that is not a terminal
// is tab-separated like mysql --batch. A script (stdin or -e) stops at
// the first error, printing the line the failing statement starts on,
// with exit code 1.
//
// The shell takes the mysql client's commands (commands.go): \? or help,
// source FILE or \. FILE, status or \s, use DB or \u DB, \W and \w
// (warnings after each statement), tee FILE or \T and notee or \t, pager
// CMD or \P and nopager or \n, \e (edit in $EDITOR), \p, \c, \R, \d,
// \G, \g, \q. A backslash outside quotes always starts a command; long
// names count at the start of a line while no statement is being typed,
// and exit and quit alone on a line even then. An unknown command (\dt,
// .tables) is answered at once with an error and a hint, and drops the
// statement being typed, so that nothing of it reaches the next one.
//
// # Server
//
// serve runs package server (github.com/strata-db/strata/server), GMS's
// MySQL protocol server over the same store, with these defaults, chosen
// because the engine leaves them open:
//
//   - Accounts are on and kept in the store (sqlstore.Store.SetUsers): the
//     --user account (root) is created at the first start and its password
//     set whenever --password or $STRATA_PASSWORD gives one; CREATE USER
//     and GRANT work as in MySQL. Without a password the server listens on
//     loopback addresses only. Unknown users fail like wrong passwords.
//   - LOAD DATA INFILE, LOAD_FILE and SELECT ... INTO OUTFILE reach only
//     DATA/files/sql (secure_file_priv; paths compared cleaned and with
//     symlinks resolved), and only for accounts with the FILE privilege.
//   - At most --max-connections connections (more get error 1040), and
//     one more for an account with SUPER or CONNECTION_ADMIN; idle
//     connections close after --idle-timeout, connections that have not
//     logged in after --connect-timeout, and clients that take no result
//     data for --write-timeout; a statement whose client hangs up is
//     cancelled; a packet larger than --max-allowed-packet (8 KiB before
//     login) closes the connection with error 1153 before it is buffered,
//     over TLS too.
//   - SET GLOBAL needs SUPER; a global either takes effect or is refused.
//     At most max_prepared_stmt_count prepared statements (1461). Each
//     statement's buffered rows are bounded by strata_mem_quota_query
//     (3170).
//   - With --require-secure-transport a client that does not use TLS fails
//     authentication and gets no session.
//   - SIGINT and SIGTERM let running statements finish (--shutdown-timeout),
//     then close every connection, which rolls back open transactions, and
//     close the store. Connection errors are logged, one line each.
//
// # Files
//
// main.go (flags), split.go (statements and commands from lines),
// commands.go (the client commands, and running a script), session.go
// (running a statement), syntax.go (placing a syntax error), format.go
// and width.go (tables, tabs, \G), shell.go (the terminal: prompt,
// Ctrl-C), complete.go, history.go, script.go (input lines), serve.go
// (flags of serve, which build a server.Config).
package main
