package mysqlcompat_test

import "testing"

// TestTriggerForeignKeysSpec runs testdata/trigger_foreign_keys: the
// statements of a BEGIN ... END trigger body check their foreign keys and
// run their actions.
func TestTriggerForeignKeysSpec(t *testing.T) {
	runSQLSpec(t, newTestDB(t), "testdata/trigger_foreign_keys")
}
