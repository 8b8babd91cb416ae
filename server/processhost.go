package server

import (
	sqle "github.com/dolthub/go-mysql-server"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// The Host of SHOW PROCESSLIST and information_schema.PROCESSLIST
//
// GMS's process list takes a connection's host from its session's client
// address, which the server sets to the host of the account the client
// logged in as (what privilege checks look the account up by): every
// connection of an account 'u'@'%' showed Host '%'. MySQL shows where the
// client connects from (host:port). The list is given a view of the
// session whose client address is the connection's remote address each
// time GMS names the connection in it: when the session is made, and
// after COM_INIT_DB and COM_RESET_CONNECTION, which name it again.

// processSession is a session as the process list sees it.
type processSession struct {
	gsql.Session
	client gsql.Client
}

// Client implements gsql.Session.
func (p processSession) Client() gsql.Client { return p.client }

// listProcess names connection c, whose session is sess, in e's process
// list with the client's address as its host.
func listProcess(e *sqle.Engine, c *mysql.Conn, sess gsql.Session) {
	client := sess.Client()
	if addr := c.RemoteAddr(); addr != nil {
		client.Address = addr.String()
	}
	e.ProcessList.ConnectionReady(processSession{Session: sess, client: client})
}

// relistProcess names connection c again (listProcess) after GMS did.
func (h *handler) relistProcess(c *mysql.Conn) {
	if h.engine == nil {
		return
	}
	if sess := h.sessionOf(c); sess != nil {
		listProcess(h.engine, c, sess)
	}
}
