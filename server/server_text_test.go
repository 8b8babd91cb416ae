package server

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"
)

// recordedTextConn is recordedConn with the client's
// CLIENT_MULTI_STATEMENTS flag as multi says.
func recordedTextConn(t *testing.T, addr, password string, multi bool) (*sql.Conn, *recorder) {
	t.Helper()
	cfg := gomysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "root", password, "tcp", addr, "main"
	cfg.MultiStatements = multi
	rec := &recorder{}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		rec.Conn = c
		return rec, err
	}
	connector, err := gomysql.NewConnector(cfg)
	require.NoError(t, err)
	db := sql.OpenDB(connector)
	t.Cleanup(func() { _ = db.Close() })
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn, rec
}

// TestFastTextMatchesProtocolLayer: a client reads the same bytes, packet
// for packet, whether a text statement was answered below the protocol
// layer (server_text.go) or by it: text values of every column type,
// NULLs, OK packets of writes (affected rows, insert IDs, info texts,
// warning counts) and of transactions (their status flags), errors, and
// the texts left to the protocol layer (SET PASSWORD, PREPARE, several
// statements in one text), from a client that may send several
// statements in one text (the vitess client's raw packets) and from two
// that may not and may (go-sql-driver).
func TestFastTextMatchesProtocolLayer(t *testing.T) {
	pad := strings.Repeat("7", 59)
	texts := []string{
		"SELECT * FROM ty WHERE id = 1",
		"SELECT * FROM ty WHERE id = 2",
		"SELECT * FROM ty WHERE id = 3",
		"SELECT * FROM ty WHERE id = 4",
		"SELECT * FROM ty WHERE id BETWEEN 1 AND 3",
		"SELECT id, tm, tm6, dtm6 FROM ty WHERE id BETWEEN 1 AND 3 ORDER BY tm",
		"SELECT SUM(i), COUNT(*) FROM ty WHERE id BETWEEN 1 AND 3",
		"SELECT DISTINCT c FROM ty WHERE id BETWEEN 1 AND 3 ORDER BY c",
		"SELECT 1",
		"SELECT 1 FROM ty WHERE id = 1 AND i / 0 IS NULL", // a warning
		"BEGIN",
		"INSERT INTO w (k) VALUES (7)",
		"UPDATE w SET k = k + 1 WHERE id = 1",
		"UPDATE w SET k = k + 1 WHERE id = 100",
		"DELETE FROM w WHERE id = 2",
		"COMMIT",
		"INSERT INTO w (id, k) VALUES (1, 1)", // duplicate key
		"SELECT id, k FROM w WHERE id BETWEEN 1 AND 9",
		"INSERT INTO sb (id, k, c, pad) VALUES (0, 5012, '" + strings.Repeat("1234567890-", 10) + "', '" + pad + "')",
		"INSERT INTO sb (id, k, c, pad) VALUES (NULL, 5013, 'c', 'pad')",
		"SELECT id, k, c FROM sb WHERE id = 1",
		"INSERT INTO w2 VALUES (1, 'abc', '12.5')",
		"INSERT INTO w2 VALUES (2, NULL, NULL)",
		"INSERT INTO w2 VALUES (3, '" + strings.Repeat("x", 300) + "', 1)", // too long: an error
		"INSERT INTO w2 VALUES (4, 'a;b', 1)",                              // a semicolon
		"UPDATE w2 SET s = 'é' WHERE id = 2",
		"SELECT id, s, de FROM w2 WHERE id BETWEEN 0 AND 10",
		"SET autocommit = 0",
		"INSERT INTO w (k) VALUES (8)",
		"SELECT k FROM w WHERE id = 1",
		"COMMIT",
		"SET autocommit = 1",
		"SET @x = 5",
		"SET @y = 1 / 0",                             // a warning
		"UPDATE w2 SET de = 1.005 WHERE id = 1",      // a warning, perhaps
		"UPDATE w SET k = k + 1 / 0 WHERE id = 1",    // a warning, perhaps
		"INSERT IGNORE INTO w (id, k) VALUES (1, 1)", // a warning
		"INSERT INTO w2 VALUES (6, 'x', 1.005)",
		"SET @y = 1 / 0",
		"BEGIN", // after a warning
		"SET @y = 1 / 0",
		"SELECT k FROM w WHERE id = 1", // after a warning, in a transaction
		"SET @y = 1 / 0",
		"COMMIT",
		"SELEC 1", // a syntax error
		"SELECT * FROM nosuch WHERE id = 1",
		"PREPARE p FROM 'SELECT 1'",
		"DEALLOCATE PREPARE p",
		"SET PASSWORD = 'pw'",
		"SELECT 1; SELECT 2",
	}
	run := func(fast bool) (out []string, served int64) {
		s := testServer(t, Config{Data: t.TempDir(), Password: "pw"})
		s.h.noFastExec.Store(!fast)
		root := client(t, s.Addr(), "root", "pw", "")
		execAll(t, root,
			"CREATE TABLE ty (id INT PRIMARY KEY, ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, su SMALLINT UNSIGNED, mi MEDIUMINT, mu MEDIUMINT UNSIGNED, "+
				"i INT, iu INT UNSIGNED, bi BIGINT, bu BIGINT UNSIGNED, f FLOAT, d DOUBLE, de DECIMAL(10,3), c CHAR(5), vc VARCHAR(20), tx TEXT, bl BLOB, vb VARBINARY(10), "+
				"dt DATE, dtm DATETIME, dtm3 DATETIME(3), dtm6 DATETIME(6), ts TIMESTAMP(2), tm TIME, tm6 TIME(6), y YEAR, bt BIT(5), e ENUM('a','b'), st SET('x','y'), j JSON, KEY (i))",
			"INSERT INTO ty VALUES (1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615, "+
				"-1.5, 2.25e300, -1234567.125, 'ab', 'héllo', 'text', x'00ff', x'0102', '2026-12-07', '2026-12-07 17:05:09', '2026-12-07 17:05:09.123', "+
				"'1999-01-02 03:04:05.000006', '2026-12-07 01:02:03.45', '-838:59:59', '12:34:56.000001', 2026, b'10101', 'b', 'x,y', '{\"a\": [1, 2]}')",
			"INSERT INTO ty (id) VALUES (2)",
			"INSERT INTO ty VALUES (3, 127, 0, 32767, 0, 8388607, 0, 2147483647, 0, 9223372036854775807, 0, "+
				"0, 0, 0, '', '', '', '', '', '1000-01-01', '1000-01-01 00:00:00', '2026-12-07 00:00:00', '2026-12-07 00:00:00.5', '2026-12-07 00:00:00', '00:00:00', '100:00:00.5', 1901, b'0', 'a', '', 'null')",
			"CREATE TABLE w (id INT PRIMARY KEY AUTO_INCREMENT, k INT)",
			"CREATE TABLE w2 (id INT PRIMARY KEY, s VARCHAR(10), de DECIMAL(6,2))",
			"CREATE TABLE sb (id INT PRIMARY KEY AUTO_INCREMENT, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY (k))",
		)
		c := newRawClient(t, s.Addr())
		defer c.close()
		for i, text := range texts {
			// Twice: the first may be planned, the second runs on the
			// kept plan.
			for k := 0; k < 2; k++ {
				c.out = append(append(c.out[:0], 0, 0, 0, 0, 0x03), text...)
				require.NoError(t, c.send())
				b, err := c.rawResponse()
				require.NoError(t, err, "%d: %s", i, text)
				out = append(out, fmt.Sprintf("%d.%d %s: %x", i, k, text, b))
			}
		}
		// Two texts in one write: the second follows the first's
		// answer, read behind it.
		c.out = c.out[:0]
		for _, text := range []string{"SELECT k FROM w WHERE id = 1", "BEGIN", "COMMIT"} {
			n := len(text) + 1
			c.out = append(append(c.out, byte(n), byte(n>>8), byte(n>>16), 0, 0x03), text...)
		}
		_, err := c.conn.Write(c.out)
		require.NoError(t, err)
		for k := 0; k < 3; k++ {
			b, err := c.rawResponse()
			require.NoError(t, err)
			out = append(out, fmt.Sprintf("pipelined %d: %x", k, b))
		}
		// go-sql-driver: no CLIENT_DEPRECATE_EOF (EOF packets after
		// the columns and at the end), with and without
		// CLIENT_MULTI_STATEMENTS.
		ctx := context.Background()
		for _, multi := range []bool{false, true} {
			conn, rec := recordedTextConn(t, s.Addr(), "pw", multi)
			rec.take()
			for _, text := range []string{
				"SELECT * FROM ty WHERE id = 1",
				"SELECT * FROM ty WHERE id BETWEEN 1 AND 3",
				"BEGIN",
				"UPDATE w2 SET s = 'q' WHERE id = 1",
				"INSERT INTO sb (id, k, c, pad) VALUES (0, 1, 'c', 'p')",
				"COMMIT",
				"SELECT 1 FROM ty WHERE id = 1 AND i / 0 IS NULL",
				"INSERT INTO w (id, k) VALUES (1, 1)",
			} {
				for k := 0; k < 2; k++ {
					if rows, err := conn.QueryContext(ctx, text); err == nil {
						for rows.Next() {
						}
						require.NoError(t, rows.Err())
						require.NoError(t, rows.Close())
					}
					out = append(out, fmt.Sprintf("multi %v %d %s: %x", multi, k, text, rec.take()))
				}
			}
		}
		served = fastServed(s, func(f *fastExec) int64 { return f.texts.Load() })
		return out, served
	}
	want, none := run(false)
	got, served := run(true)
	require.Equal(t, want, got)
	require.Zero(t, none)
	require.Greater(t, served, int64(len(texts)))
	t.Logf("%d texts answered below the protocol layer", served)
}
