package mysqlcompat_test

import (
	"testing"
)

// TestGlobalOnlyVarsSpec runs testdata/global_only_vars: a global-only
// variable read without a scope is its global value (GMS read the copy the
// session took at its start); @@session of it fails 1238. Commands as in
// TestStringLimitsSpec.
func TestGlobalOnlyVarsSpec(t *testing.T) {
	d := newTestDB(t)
	runSQLSpec(t, d, "testdata/global_only_vars")
}
