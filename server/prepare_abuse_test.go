package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestUnsupportedPrepare is the table of texts COM_STMT_PREPARE refuses
// (1295) and of texts it prepares, read by their leading keywords.
func TestUnsupportedPrepare(t *testing.T) {
	refused := []string{
		"LOAD DATA LOCAL INFILE '/x' INTO TABLE t",
		"  /* c */ load data infile 'x' into table t",
		"-- c\nLOAD XML INFILE 'x' INTO TABLE t",
		"# c\nLOAD DATA INFILE 'x' INTO TABLE t",
		"/*!50000 LOAD DATA */ INFILE 'x' INTO TABLE t",
		"PREPARE s FROM 'SELECT 1'", "EXECUTE s", "DEALLOCATE PREPARE s", "DROP PREPARE s",
		"LOCK TABLES t READ", "UNLOCK TABLES", "SAVEPOINT a", "RELEASE SAVEPOINT a",
		"ROLLBACK TO a", "ROLLBACK WORK TO SAVEPOINT a", "XA START 'x'", "USE main", "HELP 'x'",
		"HANDLER t OPEN", "GET DIAGNOSTICS @n = NUMBER", "SIGNAL SQLSTATE '45000'",
		"SHOW WARNINGS", "show errors", "SHOW COUNT(*) WARNINGS", "CHECK TABLE t",
		"ALTER DATABASE d CHARACTER SET utf8mb4", "ALTER VIEW v AS SELECT 1",
		"ALTER DEFINER = `u`@`h` VIEW v AS SELECT 1",
		"CREATE PROCEDURE p() SELECT 1", "CREATE DEFINER=`root`@`%` PROCEDURE p() SELECT 1",
		"CREATE DEFINER = 'a'@'b' TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1",
		"CREATE AGGREGATE FUNCTION f RETURNS INTEGER SONAME 'x'", "CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO SELECT 1",
		"DROP PROCEDURE p", "DROP FUNCTION IF EXISTS f", "DROP TRIGGER tr", "ALTER PROCEDURE p COMMENT 'x'",
	}
	prepared := []string{
		"SELECT ?", "select * from t where a = ?", "(SELECT 1)", "WITH c AS (SELECT 1) SELECT * FROM c",
		"INSERT INTO t VALUES (?)", "UPDATE t SET a = ?", "DELETE FROM t", "REPLACE INTO t VALUES (1)",
		"BEGIN", "START TRANSACTION", "COMMIT", "ROLLBACK", "ROLLBACK AND CHAIN", "SET @a = ?",
		"SHOW TABLES", "SHOW CREATE TABLE t", "SHOW COLUMNS FROM t", "CALL p(?)", "DO 1",
		"CREATE TABLE t (a INT)", "CREATE TEMPORARY TABLE t (a INT)", "CREATE OR REPLACE VIEW v AS SELECT 1",
		"CREATE ALGORITHM = MERGE DEFINER = `u`@`h` SQL SECURITY INVOKER VIEW v AS SELECT 1",
		"CREATE UNIQUE INDEX i ON t (a)", "CREATE DATABASE d", "CREATE USER u", "DROP TABLE t",
		"ALTER TABLE t ADD COLUMN b INT", "ALTER USER u IDENTIFIED BY 'x'", "LOAD INDEX INTO CACHE t",
		"TRUNCATE TABLE t", "RENAME TABLE a TO b", "ANALYZE TABLE t", "CHECKSUM TABLE t", "EXPLAIN SELECT ?",
		"/* LOAD DATA */ SELECT 1", "SELECT 'LOAD DATA'", "", "  ", "/* unterminated", "'LOAD", "`x` LOAD DATA",
	}
	for _, q := range refused {
		require.True(t, unsupportedPrepare([]byte(q)), "refused: %q", q)
	}
	for _, q := range prepared {
		require.False(t, unsupportedPrepare([]byte(q)), "prepared: %q", q)
	}
	n := testing.AllocsPerRun(100, func() {
		unsupportedPrepare([]byte("CREATE DEFINER = `u`@`h` PROCEDURE p() SELECT 1"))
	})
	require.Zero(t, n, "allocations per text")
}

// TestServerPrepareUnsupported checks, over the wire, that COM_STMT_PREPARE
// of a statement MySQL does not prepare fails with 1295 and leaves the
// connection working, as MySQL's does; the protocol layer closed the
// connection on a prepared LOAD DATA.
func TestServerPrepareUnsupported(t *testing.T) {
	s, logBuf := testServerLogged(t, Config{Password: "pw"})
	c := newRawClient(t, s.Addr())
	defer c.close()
	_, err := c.query([]byte("CREATE TABLE t (a INT PRIMARY KEY)"))
	require.NoError(t, err)
	for _, q := range []string{
		"LOAD DATA LOCAL INFILE '/nonexistent' INTO TABLE t",
		"LOAD DATA INFILE 'in.txt' REPLACE INTO TABLE t",
		"PREPARE s FROM 'SELECT 1'", "LOCK TABLES t READ", "SHOW WARNINGS", "CREATE PROCEDURE p() SELECT 1",
	} {
		_, err := c.prepare(q)
		require.ErrorContains(t, err, "\\xff\\x0f\\x05#HY000This command is not supported in the prepared statement protocol yet", q)
		requireSelectOne(t, c)
	}
	// What stays preparable still is.
	for _, q := range []string{"BEGIN", "SELECT a FROM t WHERE a = ?", "COMMIT"} {
		_, err := c.prepare(q)
		require.NoError(t, err, q)
	}
	requireSelectOne(t, c)
	requireNoPanicLogged(t, logBuf.String())
}

// TestServerStmtCommandsSurvive hunts the class of commands that take a
// connection down: for a few hundred statements of every kind taken from
// the repository's specs, one connection sends each as COM_QUERY and
// COM_STMT_PREPARE and, when prepared, executes it with garbled
// arguments, sends long data to a random parameter, resets and closes it
// (and a statement that does not exist), and asks COM_FIELD_LIST of a
// table named at random. After every step a `SELECT 1` must answer on the
// same connection, and the server must log no recovered panic (the
// protocol layer's "caught panic", or the handler's "internal error in
// the SQL engine").
func TestServerStmtCommandsSurvive(t *testing.T) {
	s, logBuf := testServerLogged(t, Config{Password: "pw"})
	stmts := specStatements(t, 300)
	require.Greater(t, len(stmts), 200, "statements from the specs")
	rng := rand.New(rand.NewPCG(1, 2))
	c := newRawClient(t, s.Addr())
	defer func() { c.close() }()
	for i, q := range stmts {
		steps := stmtSteps(rng, q, uint32(rng.IntN(3)))
		for _, st := range steps {
			resp, err := c.roundTrip(st)
			require.NoError(t, err, "statement %d %q: command %#x: the connection was closed\n%s", i, q, st[0], logBuf.String())
			require.NotContains(t, resp, "internal error in the SQL engine", "statement %d %q: command %#x", i, q, st[0])
			if st[0] == comStmtPrepare {
				if id, ok := preparedID(resp); ok {
					for _, more := range stmtSteps(rng, q, id)[1:] {
						resp, err := c.roundTrip(more)
						require.NoError(t, err, "statement %d %q: command %#x on prepared %d: the connection was closed\n%s", i, q, more[0], id, logBuf.String())
						require.NotContains(t, resp, "internal error in the SQL engine", "statement %d %q: command %#x", i, q, more[0])
					}
				}
			}
		}
		requireSelectOne(t, c)
	}
	requireNoPanicLogged(t, logBuf.String())
}

func requireSelectOne(t *testing.T, c *rawClient) {
	t.Helper()
	require.NoError(t, c.conn.SetDeadline(time.Now().Add(time.Minute)))
	rows, err := c.query([]byte("SELECT 1"))
	require.NoError(t, err, "SELECT 1 on the same connection")
	require.Equal(t, 1, rows)
}

func requireNoPanicLogged(t *testing.T, logged string) {
	t.Helper()
	for _, sign := range []string{"caught panic", "internal error in the SQL engine"} {
		if i := strings.Index(logged, sign); i >= 0 {
			t.Fatalf("the server recovered a panic:\n%s", logged[max(0, i-300):min(len(logged), i+3000)])
		}
	}
}

// stmtSteps returns the commands sent for statement q: COM_QUERY,
// COM_STMT_PREPARE, then, for statement id, COM_STMT_EXECUTE with garbled
// arguments, COM_STMT_SEND_LONG_DATA, COM_STMT_EXECUTE again,
// COM_STMT_RESET (also of a statement that does not exist), COM_STMT_CLOSE,
// COM_FIELD_LIST and COM_QUERY again.
func stmtSteps(rng *rand.Rand, q string, id uint32) [][]byte {
	garbled := func() []byte {
		p := binary.LittleEndian.AppendUint32([]byte{comStmtExecute}, id)
		p = append(p, 0, 1, 0, 0, 0)
		for range rng.IntN(24) {
			p = append(p, byte(rng.IntN(256)))
		}
		return p
	}
	longData := binary.LittleEndian.AppendUint32([]byte{comStmtSendLongData}, id)
	longData = binary.LittleEndian.AppendUint16(longData, uint16(rng.IntN(3)))
	longData = append(longData, "chunk"...)
	reset := binary.LittleEndian.AppendUint32([]byte{comStmtReset}, id)
	closeStmt := binary.LittleEndian.AppendUint32([]byte{0x19}, id)
	table := []string{"t", "kept", "nope", "`x", "t\x00y", "", "information_schema.tables"}[rng.IntN(7)]
	fieldList := append(append([]byte{comFieldList}, table...), 0)
	return [][]byte{
		append([]byte{comStmtPrepare}, q...),
		garbled(), longData, garbled(), reset,
		binary.LittleEndian.AppendUint32([]byte{comStmtReset}, id+1000),
		closeStmt, fieldList,
		append([]byte{comQueryByte}, q...),
	}
}

// preparedID returns the statement ID of a COM_STMT_PREPARE answer.
func preparedID(resp string) (uint32, bool) {
	if len(resp) < 5 || resp[0] != 0 {
		return 0, false
	}
	return binary.LittleEndian.Uint32([]byte(resp[1:5])), true
}

// roundTrip sends one command (payload p) and reads whatever answers it:
// nothing (COM_STMT_SEND_LONG_DATA, COM_STMT_CLOSE), an OK or ERR packet,
// a prepare's answer, a result set in text or binary rows, or
// COM_FIELD_LIST's column definitions, COM_SET_OPTION's EOF; a LOCAL INFILE request is answered
// with an empty file. It returns the first packet's bytes. The read
// deadline bounds a hang.
func (c *rawClient) roundTrip(p []byte) (string, error) {
	c.out = append(append(c.out[:0], 0, 0, 0, 0), p...)
	if err := c.conn.SetDeadline(time.Now().Add(time.Minute)); err != nil {
		return "", err
	}
	if err := c.send(); err != nil {
		return "", err
	}
	if p[0] == comStmtSendLongData || p[0] == 0x19 {
		return "", nil
	}
	first, err := c.packet()
	if err != nil {
		return "", err
	}
	resp := string(first)
	for first[0] == 0xfb { // LOCAL INFILE: an empty file
		if _, err := c.conn.Write([]byte{0, 0, 0, c.hdr[3] + 1}); err != nil {
			return resp, err
		}
		if first, err = c.packet(); err != nil {
			return resp, err
		}
		resp = string(first)
	}
	switch {
	case first[0] == 0x00 && p[0] == comStmtPrepare:
		cols := int(binary.LittleEndian.Uint16(first[5:]))
		params := int(binary.LittleEndian.Uint16(first[7:]))
		for _, n := range []int{params, cols} {
			if n > 0 && !c.deprecated {
				n++
			}
			for range n {
				if _, err := c.packet(); err != nil {
					return resp, err
				}
			}
		}
		return resp, nil
	case first[0] == 0x00 || first[0] == 0xff || p[0] == comSetOption:
		return resp, nil
	case p[0] == 0x04: // column definitions up to EOF
		for {
			q, err := c.packet()
			if err != nil || q[0] == 0xfe || q[0] == 0xff {
				return resp, err
			}
		}
	}
	cols, _ := lenEnc(first)
	for range cols {
		if _, err := c.packet(); err != nil {
			return resp, err
		}
	}
	if !c.deprecated {
		if _, err := c.packet(); err != nil {
			return resp, err
		}
	}
	for {
		q, err := c.packet()
		if err != nil {
			return resp, err
		}
		if q[0] == 0xfe && len(q) < 0xffffff || q[0] == 0xff {
			return resp, nil
		}
	}
}

func lenEnc(p []byte) (int, bool) {
	switch {
	case p[0] < 0xfb:
		return int(p[0]), true
	case p[0] == 0xfc && len(p) >= 3:
		return int(binary.LittleEndian.Uint16(p[1:])), true
	case p[0] == 0xfd && len(p) >= 4:
		return int(p[1]) | int(p[2])<<8 | int(p[3])<<16, true
	}
	return 0, false
}

// specStatement matches a spec line that is a statement.
var specStatement = regexp.MustCompile(`^(SELECT|INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER|SET|SHOW|LOAD|BEGIN|START|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|LOCK|UNLOCK|CALL|PREPARE|EXECUTE|DEALLOCATE|EXPLAIN|DESCRIBE|DESC|USE|TRUNCATE|RENAME|ANALYZE|OPTIMIZE|CHECK|GRANT|REVOKE|FLUSH|WITH|TABLE|VALUES|DO)\b`)

// specStatements returns up to n statements of the repository's
// datadriven specs, of every kind, the same ones every run, and a few
// kinds the specs lack.
func specStatements(t *testing.T, n int) []string {
	t.Helper()
	var files []string
	for _, glob := range []string{"../sqlstore/testdata/*", "../mysqlcompat/testdata/*", "testdata/refusals"} {
		m, err := filepath.Glob(glob)
		require.NoError(t, err)
		files = append(files, m...)
	}
	seen := map[string]bool{}
	var all []string
	for _, f := range files {
		if fi, err := os.Stat(f); err != nil || fi.IsDir() {
			continue
		}
		fh, err := os.Open(f)
		require.NoError(t, err)
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			l := sc.Text()
			// A spec's "stmt ;; undo" line is two statements in the
			// spec's notation, not one text a client sends.
			if specStatement.MatchString(l) && !seen[l] && !strings.Contains(strings.ToUpper(l), "SLEEP(") && !strings.Contains(l, ";;") {
				seen[l] = true
				all = append(all, l)
			}
		}
		_ = fh.Close()
	}
	// Every kind, then an even spread of the rest.
	var out []string
	kinds := map[string]bool{}
	for _, q := range all {
		k := strings.Fields(q)[0]
		if !kinds[k] {
			kinds[k] = true
			out = append(out, q)
		}
	}
	step := max(1, len(all)/n)
	for i := 0; i < len(all) && len(out) < n; i += step {
		out = append(out, all[i])
	}
	return append(out,
		"LOAD DATA LOCAL INFILE '/nonexistent' INTO TABLE t",
		"LOAD DATA INFILE 'x' INTO TABLE t FIELDS TERMINATED BY ','",
		"XA START 'x'", "HELP 'x'", "GET DIAGNOSTICS @n = NUMBER", "HANDLER t OPEN",
		"SELECT ?, ?, ? FROM t WHERE a = ?", "INSERT INTO t VALUES (?, ?)",
	)
}

// FuzzStmtCommands sends any command payload on a logged-in connection
// and checks that the connection still answers `SELECT 1` and that the
// server logged no recovered panic. The seed corpus (testdata/fuzz)
// holds the prepared-statement commands the protocol layer mishandled.
func FuzzStmtCommands(f *testing.F) {
	for _, p := range [][]byte{
		append([]byte{comStmtPrepare}, "LOAD DATA LOCAL INFILE '/x' INTO TABLE t"...),
		append([]byte{comStmtPrepare}, "SELECT ?"...),
		{comStmtReset, 9, 9, 0, 0},
		{comStmtReset},
		{comStmtSendLongData, 7, 0, 0, 0, 0, 0, 'x'},
		{comStmtExecute, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0xfd, 0},
		{0x04, 't', 0},
		{comSetOption, 2, 0},
		{comSetOption, 0, 0},
	} {
		f.Add(p)
	}
	var buf syncBuffer
	s := startFuzzServer(f, &buf)
	f.Fuzz(func(t *testing.T, p []byte) {
		if len(p) == 0 || p[0] == 0x01 || p[0] == 0x11 || p[0] == 0x1c || p[0] == 0x14 || p[0] == 0x12 || p[0] == 0x15 {
			return // COM_QUIT, COM_CHANGE_USER, COM_DAEMON/shutdown-like, binlog: end or change the connection by design
		}
		before := len(buf.String())
		defer func() { requireNoPanicLogged(t, buf.String()[before:]) }()
		c := newRawClient(t, s.Addr())
		defer c.close()
		// The statement that p's own ID may name.
		_, err := c.roundTrip(append([]byte{comStmtPrepare}, "SELECT ?"...))
		require.NoError(t, err)
		if p[0] == comStmtSendLongData {
			// The chunk's mark, if any, is the next execution's answer.
			_, err = c.roundTrip(p)
			require.NoError(t, err)
			p = []byte{comStmtExecute, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0xfd, 0, 1, 'x'}
		}
		_, err = c.roundTrip(p)
		if p[0] != comQueryByte && p[0] != comStmtPrepare && p[0] != comStmtExecute &&
			p[0] != comStmtReset && p[0] != comStmtSendLongData && p[0] != comStmtClose && p[0] != comFieldList && p[0] != comSetOption {
			return // other commands: the protocol layer's own; only panics count
		}
		require.NoError(t, err, "command %q closed the connection\n%s", p, buf.String())
		requireSelectOne(t, c)
	})
}

// startFuzzServer starts a server for a fuzz target, logging into buf.
func startFuzzServer(f *testing.F, buf *syncBuffer) *Server {
	f.Helper()
	s, err := Start(Config{
		Data: f.TempDir(), Listen: "127.0.0.1:0", User: "root", Password: "pw",
		MaxConnections: 50, MaxAllowedPacket: 16 << 20, NoSync: true,
		IdleTimeout: time.Hour, ConnectTimeout: time.Hour, WriteTimeout: time.Hour,
		Logger: log.New(buf, "", 0),
	})
	require.NoError(f, err)
	f.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	c := newRawClient(f, s.Addr())
	defer c.close()
	_, err = c.query([]byte("CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(10))"))
	require.NoError(f, err)
	return s
}

// TestDefuseVersionComments is the table of texts whose executable
// comments holding only a version lose their '!', and of texts left alone.
func TestDefuseVersionComments(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{"/*!*/", "/* */"},
		{"SELECT 1 /*!80000*/", "SELECT 1 /* 80000*/"},
		{"SELECT /*!5*/ 1 /*!12345*/", "SELECT /* 5*/ 1 /* 12345*/"},
		{"SELECT 1 /*!123456*/", "SELECT 1 /*!123456*/"},
		{"SELECT 1 /*!50000 + 1*/", "SELECT 1 /*!50000 + 1*/"},
		{"SELECT 1 /*!123**/", "SELECT 1 /*!123**/"},
		{"SELECT '/*!*/', \"/*!1*/\", `/*!*/`", "SELECT '/*!*/', \"/*!1*/\", `/*!*/`"},
		{"SELECT 'it\\'s /*!*/' /*!*/", "SELECT 'it\\'s /*!*/' /* */"},
		{"SELECT 1 # it's\n/*!*/", "SELECT 1 # it's\n/* */"},
		{"SELECT 1 -- it's /*!*/\n/*!*/", "SELECT 1 -- it's /*!*/\n/* */"},
		{"SELECT /* it's */ /*!*/", "SELECT /* it's */ /* */"},
		{"SELECT 1 /*!", "SELECT 1 /*!"},
	} {
		q := []byte(tc.in)
		defuseVersionComments(q)
		require.Equal(t, tc.out, string(q), tc.in)
	}
	q := []byte("SELECT c FROM t WHERE id = 5")
	require.Zero(t, testing.AllocsPerRun(100, func() { defuseVersionComments(q) }))
}

// TestServerVersionOnlyComments runs, over the wire, statements with an
// executable comment holding only a version, which the parser panicked
// on: a query (the session was reset) and a prepare (the connection was
// closed) run as without the comment, as in MySQL.
func TestServerVersionOnlyComments(t *testing.T) {
	s, logBuf := testServerLogged(t, Config{Password: "pw"})
	c := newRawClient(t, s.Addr())
	defer c.close()
	_, err := c.query([]byte("BEGIN"))
	require.NoError(t, err)
	_, err = c.query([]byte("SET @kept = 7"))
	require.NoError(t, err)
	rows, err := c.query([]byte("SELECT 1 /*!80000*/"))
	require.NoError(t, err)
	require.Equal(t, 1, rows)
	id, err := c.prepare("SELECT ? /*!*/")
	require.NoError(t, err)
	rows, err = c.execute(id, 3)
	require.NoError(t, err)
	require.Equal(t, 1, rows)
	resp, err := c.roundTrip(append([]byte{comQueryByte}, "SELECT @kept, '/*!*/'"...))
	require.NoError(t, err)
	require.Equal(t, "\x02", resp, "two columns: the session kept its variable")
	requireSelectOne(t, c)
	requireNoPanicLogged(t, logBuf.String())
}

// TestServerFieldList checks COM_FIELD_LIST's answers: the column
// definitions and EOF of a table, an ERR packet alone for a table that
// does not exist (the protocol layer sent an EOF packet after it, which
// the client read as the answer to its next command), and 1835 for a
// packet without the NUL that ends the table name (the protocol layer
// closed the connection).
func TestServerFieldList(t *testing.T) {
	s, logBuf := testServerLogged(t, Config{Password: "pw"})
	c := newRawClient(t, s.Addr())
	defer c.close()
	_, err := c.query([]byte("CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(10))"))
	require.NoError(t, err)
	for range 3 {
		require.NoError(t, c.send2(append([]byte{comFieldList}, "t\x00"...)))
		var kinds []byte
		for {
			p, err := c.packet()
			require.NoError(t, err)
			kinds = append(kinds, p[0])
			if p[0] == 0xfe || p[0] == 0xff {
				break
			}
		}
		require.Len(t, kinds, 3, "two column definitions and EOF")
		require.Equal(t, byte(0xfe), kinds[2])

		resp, err := c.roundTrip(append([]byte{comFieldList}, "nope\x00"...))
		require.NoError(t, err)
		require.Equal(t, uint16(1146), errCode([]byte(resp)), "%q", resp)
		requireSelectOne(t, c)

		resp, err = c.roundTrip(append([]byte{comFieldList}, "t"...))
		require.NoError(t, err)
		require.Equal(t, uint16(1835), errCode([]byte(resp)), "%q", resp)
		requireSelectOne(t, c)
	}
	requireNoPanicLogged(t, logBuf.String())
}

// send2 writes the command payload p as one packet.
func (c *rawClient) send2(p []byte) error {
	c.out = append(append(c.out[:0], 0, 0, 0, 0), p...)
	return c.send()
}
