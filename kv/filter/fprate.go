package filter

import "math"

// False-positive models. They size filters (the Ribbon target for a
// Bloom-equivalent setting, the Bloom fallback for a Ribbon rate) and give
// tests and benchmarks the rate to expect.

// standardFPRate is the classic Bloom estimate (1 - e^(-k/b))^k for b bits
// per key and k probes spread over the whole filter.
func standardFPRate(bitsPerKey float64, probes int) float64 {
	return math.Pow(1-math.Exp(-float64(probes)/bitsPerKey), float64(probes))
}

// cacheLocalFPRate estimates a Bloom filter whose probes stay in one
// 512-bit line. Keys land in lines unevenly (about Poisson, mean 512/b per
// line), and crowded lines answer "maybe" more often than sparse ones help;
// averaging the classic estimate at one standard deviation above and below
// the mean occupancy captures that loss well.
func cacheLocalFPRate(bitsPerKey float64, probes int) float64 {
	if bitsPerKey <= 0 {
		return 1
	}
	const lineBits = bloomLineBytes * 8
	perLine := lineBits / bitsPerKey
	dev := math.Sqrt(perLine)
	crowded := standardFPRate(lineBits/(perLine+dev), probes)
	if perLine-dev <= 0 {
		return crowded
	}
	sparse := standardFPRate(lineBits/(perLine-dev), probes)
	return (crowded + sparse) / 2
}

// bloomBitsForFPRate returns the smallest bits per key, in steps of 0.01,
// at which a cache-local Bloom filter reaches fp (MaxBitsPerKey if none
// does).
func bloomBitsForFPRate(fp float64) float64 {
	lo, hi := 100, int(MaxBitsPerKey*100) // hundredths of a bit
	if cacheLocalFPRate(MaxBitsPerKey, bloomProbesForMillibits(int(MaxBitsPerKey*1000))) > fp {
		return MaxBitsPerKey
	}
	// The rate falls with bits per key except for small bumps where the
	// probe count changes; a binary search lands within one of them, which
	// is close enough for a fallback.
	for lo < hi {
		mid := (lo + hi) / 2
		bpk := float64(mid) / 100
		if cacheLocalFPRate(bpk, bloomProbesForMillibits(mid*10)) <= fp {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return float64(lo) / 100
}

// ribbonFPRate is the expected false-positive rate of a Ribbon solution
// whose first upperStart blocks have upperCols-1 columns and whose other
// blocks have upperCols: a key is tested against the columns of the block
// its window starts in, and each column halves the rate.
func ribbonFPRate(numStarts, upperCols, upperStart uint32) float64 {
	if numStarts == 0 {
		return 0
	}
	lower := math.Min(1, float64(upperStart)*ribbonBlockSlots/float64(numStarts))
	return lower*math.Ldexp(1, -int(upperCols-1)) + (1-lower)*math.Ldexp(1, -int(upperCols))
}
