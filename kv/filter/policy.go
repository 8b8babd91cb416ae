package filter

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Type names a filter implementation.
type Type uint8

const (
	// None means no filter: a table written with it has no filter block.
	None Type = iota
	// Bloom is the cache-line-local Bloom filter: every probe of a key falls
	// in one 64-byte line.
	Bloom
	// Ribbon is the Standard128 Ribbon filter: about 30% smaller than Bloom
	// at the same false-positive rate, about three times slower to build.
	Ribbon
)

// String returns the name ParseType accepts: "none", "bloom" or "ribbon".
func (t Type) String() string {
	switch t {
	case None:
		return "none"
	case Bloom:
		return "bloom"
	case Ribbon:
		return "ribbon"
	}
	return fmt.Sprintf("filter.Type(%d)", uint8(t))
}

// ParseType parses the name of a filter type, as used by command-line flags:
// "none", "bloom" or "ribbon" (case-insensitive).
func ParseType(s string) (Type, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none", "":
		return None, nil
	case "bloom":
		return Bloom, nil
	case "ribbon":
		return Ribbon, nil
	}
	return None, fmt.Errorf("filter: unknown filter type %q (want none, bloom or ribbon)", s)
}

// DefaultBitsPerKey is the bits per key used when Policy.BitsPerKey is zero:
// a Bloom filter with about 0.95% false positives, and the Ribbon filter
// with the same rate.
const DefaultBitsPerKey = 10.0

// Bits-per-key bounds. Policy.NewBuilder clamps into them; Validate rejects
// values outside.
const (
	MinBitsPerKey = 1.0
	MaxBitsPerKey = 100.0
)

// Policy says which filter to build and how accurate it must be. The zero
// value is a policy for no filter; Policy{Type: Bloom} is a 10 bits/key
// Bloom filter.
type Policy struct {
	// Type is Bloom, Ribbon or None.
	Type Type
	// BitsPerKey sets the accuracy. For Bloom it is the memory per key, in
	// bits (the false-positive rate at 10 is about 0.95%). For Ribbon it is
	// Bloom-equivalent: the Ribbon filter targets the false-positive rate of
	// a Bloom filter with this many bits per key and uses about 30% fewer
	// bits to reach it. Zero means DefaultBitsPerKey.
	BitsPerKey float64
	// FPRate, when positive, is the Ribbon filter's target false-positive
	// rate (0.01 = 1%) and wins over BitsPerKey. Bloom ignores it.
	FPRate float64
}

// Validate reports every field of p that is out of range, one per line, in
// a single error; nil if p is usable as it is.
func (p Policy) Validate() error {
	var errs []error
	if p.Type > Ribbon {
		errs = append(errs, fmt.Errorf("filter: Policy.Type = %d: want None, Bloom or Ribbon", uint8(p.Type)))
	}
	if p.BitsPerKey != 0 && !(p.BitsPerKey >= MinBitsPerKey && p.BitsPerKey <= MaxBitsPerKey) {
		errs = append(errs, fmt.Errorf("filter: Policy.BitsPerKey = %v: want 0 (default) or [%v, %v]",
			p.BitsPerKey, MinBitsPerKey, MaxBitsPerKey))
	}
	if p.FPRate != 0 && !(p.FPRate > 0 && p.FPRate < 1) {
		errs = append(errs, fmt.Errorf("filter: Policy.FPRate = %v: want 0 (unset) or (0, 1)", p.FPRate))
	}
	return errors.Join(errs...)
}

// config is a Policy turned into the numbers the builders use.
type config struct {
	typ Type
	// millibitsPerKey is the Bloom memory per key in thousandths of a bit:
	// the filter's own setting for Bloom, the fallback's for Ribbon.
	millibitsPerKey int
	// bloomProbes is the probe count that goes with millibitsPerKey.
	bloomProbes int
	// oneInFP is the Ribbon target, as 1 / false-positive rate.
	oneInFP float64
}

// makeConfig normalizes p: zero fields take their defaults, out-of-range
// values are clamped, an unknown Type means None.
func (p Policy) makeConfig() config {
	c := config{typ: p.Type}
	if c.typ > Ribbon {
		c.typ = None
	}
	bpk := p.BitsPerKey
	switch {
	case bpk == 0 || math.IsNaN(bpk):
		bpk = DefaultBitsPerKey
	case bpk < MinBitsPerKey:
		bpk = MinBitsPerKey
	case bpk > MaxBitsPerKey:
		bpk = MaxBitsPerKey
	}
	if c.typ == Ribbon && p.FPRate > 0 && p.FPRate < 1 {
		c.oneInFP = 1 / p.FPRate
		// The Bloom fallback (tiny filters, failed construction) gets the
		// smallest bits per key that reaches the same rate.
		bpk = bloomBitsForFPRate(p.FPRate)
	}
	// The small nudge makes decimal settings such as 9.999 round as written.
	c.millibitsPerKey = int(bpk*1000 + 0.500001)
	c.bloomProbes = bloomProbesForMillibits(c.millibitsPerKey)
	if c.oneInFP == 0 {
		c.oneInFP = 1 / cacheLocalFPRate(bpk, c.bloomProbes)
	}
	return c
}

// NewBuilder returns a builder of filters under p. Zero fields take their
// defaults and out-of-range values are clamped (see Validate). The builder
// is reusable: Finish resets it for the next filter and keeps its scratch
// memory.
func (p Policy) NewBuilder() *Builder {
	b := &Builder{cfg: p.makeConfig()}
	return b
}
