package driver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync"
	"sync/atomic"
)

var (
	_ driver.Driver        = (*Driver)(nil)
	_ driver.DriverContext = (*Driver)(nil)
	_ driver.Connector     = (*Connector)(nil)
)

// Name is the name the driver is registered under with database/sql.
const Name = "strata"

func init() { sql.Register(Name, &Driver{}) }

// Driver is the database/sql driver. database/sql uses OpenConnector, so
// one store serves every connection of a *sql.DB.
type Driver struct{}

// OpenConnector implements driver.DriverContext: it parses dsn and opens
// (or shares) the store of its folder. The *sql.DB closes the connector,
// and with it the store once no other *sql.DB uses it.
func (d *Driver) OpenConnector(dsn string) (driver.Connector, error) {
	cfg, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return NewConnector(cfg)
}

// Open implements driver.Driver for callers that bypass database/sql's
// connector: the connection holds its own reference to the store and
// releases it when it closes.
func (d *Driver) Open(dsn string) (driver.Conn, error) {
	c, err := d.OpenConnector(dsn)
	if err != nil {
		return nil, err
	}
	conn, err := c.Connect(context.Background())
	if err != nil {
		_ = c.(*Connector).Close()
		return nil, err
	}
	conn.(*Conn).owned = c.(*Connector)
	return conn, nil
}

// Connector opens connections to one store. Use it with sql.OpenDB; Close
// releases the store.
type Connector struct {
	cfg    Config
	sh     *shared
	once   sync.Once
	done   atomic.Bool
	closed error
}

// NewConnector opens (or shares) the store of cfg.Dir.
func NewConnector(cfg *Config) (*Connector, error) {
	sh, err := acquire(cfg)
	if err != nil {
		return nil, err
	}
	return &Connector{cfg: *cfg, sh: sh}, nil
}

// Connect implements driver.Connector: a new connection with its own
// session, in the configured database (created when missing).
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.sh == nil || c.done.Load() {
		return nil, ErrClosed
	}
	// The connection holds the store open: database/sql closes only idle
	// connections before it closes the connector, and the others when
	// their work ends.
	if !c.sh.retain() {
		return nil, ErrClosed
	}
	conn := newConn(c.sh)
	if c.cfg.LocalInfile {
		// The connection is both the client and the server of LOAD DATA
		// LOCAL: the server's variable is the one switch there is.
		if _, err := conn.conn.Exec(ctx, "SET GLOBAL local_infile = 1"); err != nil {
			_ = conn.Close()
			return nil, err
		}
	}
	if c.cfg.DB != "" {
		if err := conn.conn.UseDatabase(ctx, c.cfg.DB); err != nil {
			_ = conn.Close()
			return nil, err
		}
	}
	return conn, nil
}

// Driver implements driver.Connector.
func (c *Connector) Driver() driver.Driver { return &Driver{} }

// Close releases the connector's hold on the store; the store closes when
// the last connector and connection of its folder let go. database/sql
// calls it from DB.Close, after closing the idle connections: a
// connection still running a query or holding a transaction keeps the
// store open until database/sql closes it when its work ends.
func (c *Connector) Close() error {
	c.once.Do(func() {
		c.done.Store(true)
		if c.sh == nil {
			c.closed = errors.New("strata: connector was never opened")
			return
		}
		c.closed = c.sh.release()
	})
	return c.closed
}
