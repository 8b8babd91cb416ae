package driver

import (
	"context"
)

// retryConflicts runs run, and again while it fails with a write conflict
// when query is a write that the connection runs in autocommit mode (see
// sqlstore.Store.RunWrite).
func (c *Conn) retryConflicts(ctx context.Context, query string, run func() (*Result, error)) (*Result, error) {
	var res *Result
	err := c.sh.store.RunWrite(ctx, query, func() bool { return c.autocommitting(ctx) }, func() error {
		var err error
		res, err = run()
		return err
	})
	return res, err
}

// autocommitting reports whether a statement run now commits on its own
// (sqlstore.Session.Autocommitting).
func (c *Conn) autocommitting(ctx context.Context) bool {
	return c.sess.Autocommitting(c.newContext(ctx, ""))
}
