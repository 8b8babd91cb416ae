package mysqlcompat_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStringLimitsSpec runs testdata/string_limits: string functions whose
// result would be longer than max_allowed_packet give NULL and warning
// 1301, as in MySQL. Commands:
//
//	exec
//	  statements, one a line
//	query
//	  one statement; prints its rows, one a line, then the warnings it
//	  left (SHOW WARNINGS) as "warning CODE: MESSAGE", sorted
func TestStringLimitsSpec(t *testing.T) {
	d := newTestDB(t)
	runSQLSpec(t, d, "testdata/string_limits")
}

// TestRepeatHugeCount: REPEAT('x', 3221225472) (3 GiB) comes back NULL
// with warning 1301 under the default max_allowed_packet, without the
// process asking for the memory (GMS clamped the count to 2^31-1 and built
// a 2 GiB string, enough to kill a smaller machine).
func TestRepeatHugeCount(t *testing.T) {
	d := newTestDB(t)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out := queryWithWarnings(t, d, "SELECT REPEAT('x', 3221225472), SPACE(3221225472), LPAD('', 3221225472, 'ab')")
	runtime.ReadMemStats(&after)
	require.Equal(t, "NULL NULL NULL\n"+
		"warning 1301: Result of repeat() was larger than max_allowed_packet (1073741824) - truncated\n"+
		"warning 1301: Result of space() was larger than max_allowed_packet (1073741824) - truncated\n"+
		"warning 1301: Result of lpad() was larger than max_allowed_packet (1073741824) - truncated\n", out)
	// Nothing of the size of a result was allocated; the whole statement,
	// planning included, takes a few MiB at most.
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20))
	d.exec("SELECT 1")
}

// TestStringLimitsAllocate: a result refused for its size is not built.
func TestStringLimitsAllocate(t *testing.T) {
	d := newTestDB(t)
	d.exec("SET max_allowed_packet = 1024")
	for _, q := range []string{
		"SELECT REPEAT('x', 100000000)",
		"SELECT SPACE(100000000)",
		"SELECT RPAD('a', 100000000, 'xy')",
		"SELECT REPLACE(REPEAT('a', 1000), 'a', REPEAT('b', 100000))",
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		rows := d.exec(q)
		runtime.ReadMemStats(&after)
		require.Equal(t, "[[<nil>]]", fmt.Sprint(rows), q)
		require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), q)
	}
}
