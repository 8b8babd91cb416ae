package main

import (
	"context"
	"errors"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/strata-db/strata/sqlstore"
)

// keywords are the SQL words tab completes, besides the names of the
// current database's tables and columns.
var keywords = strings.Fields(`
ADD ALL ALTER AND ANALYZE AS ASC AUTO_INCREMENT BEGIN BETWEEN BIGINT BINARY BLOB BY CASE CHAR
CHARACTER CHECK COLLATE COLUMN COLUMNS COMMIT CONSTRAINT COUNT CREATE CROSS DATABASE DATABASES
DATE DATETIME DECIMAL DEFAULT DELETE DESC DESCRIBE DISTINCT DOUBLE DROP DUPLICATE ELSE END
EXISTS EXPLAIN FALSE FIELDS FLOAT FOR FOREIGN FORMAT FROM FULL GRANT GROUP HAVING IF IGNORE IN
INDEX INNER INSERT INT INTEGER INTERVAL INTO IS JOIN JSON KEY KEYS LEFT LIKE LIMIT LOAD LONGTEXT
MODIFY NOT NULL OFFSET ON OR ORDER OUTER PRIMARY PROCEDURE RECURSIVE REFERENCES RENAME REPLACE
RIGHT ROLLBACK SCHEMA SELECT SET SHOW SMALLINT START STATUS TABLE TABLES TEXT THEN TIMESTAMP
TINYINT TO TRANSACTION TRIGGER TRUE TRUNCATE UNION UNIQUE UNSIGNED UPDATE USE USING VALUES
VARBINARY VARCHAR VARIABLES VIEW WARNINGS WHEN WHERE WITH
`)

// completer is the line editor's tab completion: keywords, and the
// table and column names of the current database, read on a connection
// of its own (so the session's warnings and transaction stay as they
// are) when a statement may have changed them.
type completer struct {
	engine *sqlstore.Engine
	db     func() string

	mu     sync.Mutex
	conn   *sqlstore.Conn
	names  []string // sorted
	loaded string   // the database names holds, "" before the first load
	dirty  bool
}

func newCompleter(e *sqlstore.Engine, db func() string) *completer {
	return &completer{engine: e, db: db, dirty: true}
}

// stale makes the next completion read the names again.
func (c *completer) stale() {
	c.mu.Lock()
	c.dirty = true
	c.mu.Unlock()
}

func (c *completer) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
}

// Do returns the endings of the words that complete the word before pos,
// and the length of that word (readline.AutoCompleter).
func (c *completer) Do(line []rune, pos int) ([][]rune, int) {
	start := pos
	for start > 0 && isNameRune(line[start-1]) {
		start--
	}
	prefix := string(line[start:pos])
	if prefix == "" {
		return nil, 0
	}
	lower := strings.ToLower(prefix) == prefix
	var out [][]rune
	seen := map[string]bool{}
	add := func(w string) {
		if len(w) > len(prefix) && strings.EqualFold(w[:len(prefix)], prefix) && !seen[w] {
			seen[w] = true
			out = append(out, []rune(w[len(prefix):]))
		}
	}
	for _, n := range c.tableNames() {
		add(n)
	}
	for _, k := range keywords {
		if lower {
			k = strings.ToLower(k)
		}
		add(k)
	}
	return out, len([]rune(prefix))
}

func isNameRune(r rune) bool {
	return r == '_' || r == '$' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') || r > 0x7f
}

// tableNames returns the names of the current database's tables and
// columns, read again when stale.
func (c *completer) tableNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	db := c.db()
	if !c.dirty && c.loaded == db {
		return c.names
	}
	c.names, c.loaded, c.dirty = nil, db, false
	if db == "" {
		return nil
	}
	if c.conn == nil {
		c.conn = c.engine.NewConn()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := c.conn.Query(ctx, "SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ?",
		sqlstore.Arg{Ordinal: 1, Value: db})
	if err != nil {
		return nil
	}
	defer rows.Close()
	set := map[string]bool{}
	for {
		row, err := rows.NextText()
		if errors.Is(err, io.EOF) || err != nil {
			break
		}
		for _, v := range row {
			if v != nil {
				set[string(v)] = true
			}
		}
	}
	for n := range set {
		c.names = append(c.names, n)
	}
	sort.Strings(c.names)
	return c.names
}
