package sqlstore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStmtArgValuesReused: a statement's executions fill one map of
// arguments by name, so a kept plan's execution allocates none for it, and
// an execution sees none of the last one's arguments.
func TestStmtArgValuesReused(t *testing.T) {
	s := &Stmt{}
	named := []Arg{{Name: "id", Value: int64(1)}, {Name: "v", Value: int64(2)}}
	require.Equal(t, map[string]any{"id": int64(1), "v": int64(2)}, s.argValues(named))
	require.Equal(t, map[string]any{"id": int64(3)}, s.argValues([]Arg{{Name: "id", Value: int64(3)}}))

	pos := []Arg{{Ordinal: 1, Value: int64(7)}, {Ordinal: 2, Value: "x"}}
	require.Equal(t, map[string]any{"v1": int64(7), "v2": "x"}, s.argValues(pos))
	allocs := testing.AllocsPerRun(100, func() {
		pos[0].Value = int64(8) // boxed outside: an argument arrives as any
		s.argValues(pos)
	})
	require.Zero(t, allocs)
}
