package mysqlcompat

import "math/bits"

// IntSums is the aggregation buffer of an exact SUM or AVG of an integer
// column (see exactagg.go), for a caller that sums the column's values
// itself, as a plan template's aggregate over a range does straight from
// the stored rows (sqlstore/aggtemplate.go): AddIntSums adds rows values
// whose sum is the 128-bit two's complement hi:lo, as rows calls of Update
// with those values would.
type IntSums interface {
	AddIntSums(hi int64, lo uint64, rows int64)
}

var _ IntSums = (*exactSum)(nil)

// AddIntSums implements IntSums.
func (s *exactSum) AddIntSums(hi int64, lo uint64, rows int64) {
	var carry uint64
	s.lo, carry = bits.Add64(s.lo, lo, 0)
	s.hi += hi + int64(carry)
	s.rows += rows
}
