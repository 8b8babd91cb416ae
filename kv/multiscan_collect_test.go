package kv

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/kv/table"
)

// TestAppendRange: a job's consecutive ranges stay a slice of the array of
// all ranges, and ranges that skip one are copied without touching it.
func TestAppendRange(t *testing.T) {
	all := []table.ScanRange{{Start: []byte("a")}, {Start: []byte("b")}, {Start: []byte("c")}, {Start: []byte("d")}}
	sub := appendRange(nil, all, 1)
	sub = appendRange(sub, all, 2)
	require.Equal(t, all[1:3], sub)
	require.Same(t, &all[1], &sub[0], "consecutive ranges share the array")

	skip := appendRange(appendRange(nil, all, 0), all, 2)
	require.Equal(t, []table.ScanRange{all[0], all[2]}, skip)
	require.Equal(t, "b", string(all[1].Start), "all is left as it was")
}
