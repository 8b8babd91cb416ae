package server

import (
	"net"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// login authenticates a client and gives it a connection slot
// (limitListener.admit). A failed login is logged with the client's
// address and its user name quoted: the name is whatever bytes the client
// sent, and written raw a name holding a newline would forge log lines.
// The protocol layer's own line for it, which has the name raw, is
// dropped (see droppedLogLine).
func (m authMethod) login(c *mysql.Conn, user string, serverData, clientData []byte, addr net.Addr) (mysql.Getter, error) {
	g, err := m.authenticate(c, user, serverData, clientData, addr)
	if err != nil {
		m.logf("login failed for user %q from %s: %q", user, addr, err.Error())
		return nil, err
	}
	if lc := limitConnOf(c.Conn); lc != nil {
		if err := lc.l.admit(lc, m.admin(g)); err != nil {
			m.logf("login of user %q from %s refused: too many connections (limit %d)", user, addr, lc.l.limit())
			return nil, err
		}
		lc.frameTLS(c)
	}
	return g, nil
}

// admin reports whether the authenticated account g may take the
// connection slot kept beyond max_connections: as in MySQL, whether it
// has CONNECTION_ADMIN or SUPER.
func (m authMethod) admin(g mysql.Getter) bool {
	u, ok := g.(gsql.MysqlConnectionUser)
	if !ok || m.db == nil {
		return false
	}
	rd := m.db.Reader()
	defer rd.Close()
	acct := m.db.GetUser(rd, u.User, u.Host, false)
	if acct == nil {
		return false
	}
	return acct.PrivilegeSet.Has(gsql.PrivilegeType_Super) || acct.PrivilegeSet.HasDynamic("connection_admin")
}

func (m authMethod) logf(format string, v ...any) {
	if m.log != nil {
		m.log.Printf(format, v...)
	}
}
