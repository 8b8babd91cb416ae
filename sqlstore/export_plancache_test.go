package sqlstore

// PlanCacheSize is planCacheSize, for the tests of package sqlstore_test.
const PlanCacheSize = planCacheSize

// PlanCacheLen returns how many texts c's plan cache holds.
func PlanCacheLen(c *Conn) int { return len(c.plans.entries) }

// WriteRuns returns how many times c ran a statement through runWrite.
func WriteRuns(c *Conn) int { return c.writeRuns }
