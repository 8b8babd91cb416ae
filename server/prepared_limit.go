package server

import (
	"strings"
	"sync"

	sqle "github.com/dolthub/go-mysql-server"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/strata-db/strata/sqlstore"
)

// erMaxPreparedStmtCount is MySQL's ER_MAX_PREPARED_STMT_COUNT_REACHED.
const erMaxPreparedStmtCount = 1461

// preparedLimit holds the number of prepared statements of all
// connections under max_prepared_stmt_count, as MySQL does: a client that
// prepares statements without end would otherwise grow the server's
// memory without end. A connection's statements are those of the
// protocol (COM_STMT_PREPARE, held in mysql.Conn.PrepareData) and those of
// SQL PREPARE (held by name in the engine's cache of the session).
//
// A connection's count is taken on its own goroutine, at each of its
// commands that can change it, and kept here for the others' checks. A
// COM_STMT_CLOSE has no answer and reaches no handler: the slots it frees
// count as free from the connection's next command (or its end).
type preparedLimit struct {
	cache *sqle.PreparedDataCache // the engine's, by session (= connection) ID

	mu    sync.Mutex
	conns map[uint32]*connPrepared
	total int // sum of the conns' counts
}

// connPrepared is what preparedLimit knows of one connection; its fields
// other than count are used on the connection's goroutine only.
type connPrepared struct {
	count int // the connection's statements, as last taken (under preparedLimit.mu)

	// The engine caches a COM_STMT_PREPARE statement under its text and
	// keeps it after COM_STMT_CLOSE; the texts of the open ones, so that
	// closed ones can be dropped from the cache and the rest of the
	// session's cache counted as SQL PREPARE names.
	texts map[uint32]string // statement ID -> text
	refs  map[string]int    // text -> open statements with it
}

func newPreparedLimit(e *sqle.Engine) *preparedLimit {
	return &preparedLimit{cache: e.PreparedDataCache, conns: map[uint32]*connPrepared{}}
}

// maxPreparedStmtCount is the global max_prepared_stmt_count.
func maxPreparedStmtCount() int {
	_, v, ok := gsql.SystemVariables.GetGlobal("max_prepared_stmt_count")
	if !ok {
		return 16382
	}
	switch n := v.(type) {
	case int64:
		return int(n)
	case uint64:
		return int(min(n, 1<<31))
	case int:
		return n
	}
	return 16382
}

func errTooManyPrepared(limit int) error {
	return mysql.NewSQLError(erMaxPreparedStmtCount, "42000",
		"Can't create more than max_prepared_stmt_count statements (current value: %d)", limit)
}

// conn returns the state of connection c, creating it when create is set
// (else nil when there is none).
func (p *preparedLimit) conn(c *mysql.Conn, create bool) *connPrepared {
	p.mu.Lock()
	defer p.mu.Unlock()
	cp := p.conns[c.ConnectionID]
	if cp == nil && create {
		cp = &connPrepared{texts: map[uint32]string{}, refs: map[string]int{}}
		p.conns[c.ConnectionID] = cp
	}
	return cp
}

// update takes connection c's count again, after a command that may have
// changed it, and returns the total over all connections. A connection
// that never prepared anything costs a map lookup.
func (p *preparedLimit) update(c *mysql.Conn) int {
	if p == nil {
		return 0
	}
	cp := p.conn(c, len(c.PrepareData) > 0 || p.sqlNamed(c, nil) > 0)
	if cp == nil {
		return 0
	}
	cp.prune(p.cache, c)
	n := len(c.PrepareData) + p.sqlNamed(c, cp)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total += n - cp.count
	cp.count = n
	return p.total
}

// sqlNamed is the number of statements of connection c prepared by SQL
// PREPARE: those of the engine's cache of its session not cached for a
// COM_STMT_PREPARE.
func (p *preparedLimit) sqlNamed(c *mysql.Conn, cp *connPrepared) int {
	n := len(p.cache.CachedStatementsForSession(c.ConnectionID))
	if cp != nil {
		n -= len(cp.refs)
	}
	return max(n, 0)
}

// prune forgets the COM_STMT_PREPARE statements that the client closed,
// and drops from the engine's cache the texts no open one has.
func (cp *connPrepared) prune(cache *sqle.PreparedDataCache, c *mysql.Conn) {
	if len(c.PrepareData) >= len(cp.texts) {
		// Nothing closed since, or a close hidden by a statement being
		// prepared: found by a later prune, it only stays cached until
		// then, and counted right, in PrepareData's size.
		return
	}
	for id, text := range cp.texts {
		if _, open := c.PrepareData[id]; open {
			continue
		}
		delete(cp.texts, id)
		if cp.refs[text]--; cp.refs[text] <= 0 {
			delete(cp.refs, text)
			cache.UncacheStmt(c.ConnectionID, text)
		}
	}
}

// prepare checks that the statement id that connection c is preparing
// (already in c.PrepareData) fits under the limit, and drops it from
// c.PrepareData when it does not.
func (p *preparedLimit) prepare(c *mysql.Conn, id uint32) error {
	if p == nil {
		return nil
	}
	limit := maxPreparedStmtCount()
	if p.update(c) <= limit {
		return nil
	}
	delete(c.PrepareData, id)
	p.update(c)
	return errTooManyPrepared(limit)
}

// prepared records statement id of connection c, cached by the engine
// under text; failed tells that preparing it failed, and then it is
// dropped from c.PrepareData, where the protocol layer would leave it.
func (p *preparedLimit) prepared(c *mysql.Conn, id uint32, text string, failed bool) {
	if p == nil {
		return
	}
	if failed {
		delete(c.PrepareData, id)
	} else if _, open := c.PrepareData[id]; open {
		cp := p.conn(c, true)
		cp.texts[id] = text
		cp.refs[text]++
	}
	p.update(c)
}

// limitSQLPrepare wraps the result callback of a statement text that
// starts with PREPARE: once the statement has run (and cached its name),
// before its OK goes out, the name is dropped again and the statement
// fails if it took the connections' total past the limit. Other texts
// get cb as it is.
func (p *preparedLimit) limitSQLPrepare(c *mysql.Conn, query string, cb mysql.ResultSpoolFn) mysql.ResultSpoolFn {
	if p == nil {
		return cb
	}
	if first, _ := sqlstore.LeadingWords(query); !strings.EqualFold(first, "prepare") {
		return cb
	}
	before := map[string]struct{}{}
	for name := range p.cache.CachedStatementsForSession(c.ConnectionID) {
		before[name] = struct{}{}
	}
	return func(r *sqltypes.Result, more bool) error {
		limit := maxPreparedStmtCount()
		if p.update(c) > limit {
			for name := range p.cache.CachedStatementsForSession(c.ConnectionID) {
				if _, had := before[name]; !had {
					p.cache.UncacheStmt(c.ConnectionID, name)
				}
			}
			p.update(c)
			return errTooManyPrepared(limit)
		}
		return cb(r, more)
	}
}

// after takes connection c's count again after a command that may have
// closed or deallocated statements, when it has any.
func (p *preparedLimit) after(c *mysql.Conn) {
	if p == nil || (len(c.PrepareData) == 0 && p.conn(c, false) == nil) {
		return
	}
	p.update(c)
}

// reset forgets connection c's statements, for a session reset (the
// engine drops its cache of the session): the protocol layer's too,
// which would otherwise run on without their cache.
func (p *preparedLimit) reset(c *mysql.Conn, keepConn bool) {
	if p == nil {
		return
	}
	if keepConn {
		c.PrepareData = make(map[uint32]*mysql.PrepareData)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if cp := p.conns[c.ConnectionID]; cp != nil {
		p.total -= cp.count
		delete(p.conns, c.ConnectionID)
	}
}
