package codec

import (
	"testing"
)

// TestInt64sBox: every boxed value keeps its value while many more are
// boxed after it (slots are written once), and boxing allocates only a
// slab now and then.
func TestInt64sBox(t *testing.T) {
	var w Int64s
	var boxed []any
	for i := range 3000 {
		boxed = append(boxed, w.Box(int64(i)*7-1000))
	}
	for i, v := range boxed {
		x, ok := v.(int64)
		if !ok || x != int64(i)*7-1000 {
			t.Fatalf("value %d: %v (%T)", i, v, v)
		}
	}
	var sink any
	n := testing.AllocsPerRun(1000, func() { sink = w.Box(5) })
	if n > 0.01 {
		t.Fatalf("%.3f allocations per value", n)
	}
	_ = sink
}
