package sqlstore

// ConstSelectKept reports whether c's plan cache runs query, a text it
// ran, as a constSelect.
func ConstSelectKept(c *Conn, query string) bool {
	e := c.plans.entries[query]
	return e != nil && e.kind == cacheFixed && e.consts != nil
}
