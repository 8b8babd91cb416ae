package main

// The kv subcommand's two random number generators. Both are the classic
// published algorithms, so that a run with a given -seed picks the same keys
// and writes the same values as RocksDB's db_bench with that seed:
//
//	mt64      MT19937-64 (Matsumoto and Nishimura, 2004), the generator of
//	          C++'s std::mt19937_64: the key sequence of every thread
//	lehmer31  the Park-Miller "minimal standard" generator (multiplier 16807,
//	          modulus 2^31-1): the value data, from the fixed seed 301

// MT19937-64 parameters (the published reference values).
const (
	mt64N         = 312
	mt64M         = 156
	mt64MatrixA   = 0xB5026F5AA96619E9
	mt64UpperMask = 0xFFFFFFFF80000000 // the most significant 33 bits
	mt64LowerMask = 0x7FFFFFFF         // the least significant 31 bits
)

// mt64 is a 64-bit Mersenne Twister. Its zero value is not usable: make one
// with newMT64. Not safe for concurrent use; each benchmark thread has its
// own.
type mt64 struct {
	mt  [mt64N]uint64
	idx int
}

// newMT64 returns a generator seeded as std::mt19937_64(seed).
func newMT64(seed uint64) *mt64 {
	r := &mt64{}
	r.mt[0] = seed
	for i := 1; i < mt64N; i++ {
		prev := r.mt[i-1]
		r.mt[i] = 6364136223846793005*(prev^(prev>>62)) + uint64(i)
	}
	r.idx = mt64N
	return r
}

// next returns the next 64 random bits.
func (r *mt64) next() uint64 {
	if r.idx >= mt64N {
		r.twist()
	}
	y := r.mt[r.idx]
	r.idx++
	y ^= (y >> 29) & 0x5555555555555555
	y ^= (y << 17) & 0x71D67FFFEDA60000
	y ^= (y << 37) & 0xFFF7EEE000000000
	y ^= y >> 43
	return y
}

// twist regenerates the state's 312 words.
func (r *mt64) twist() {
	mag := func(x uint64) uint64 {
		if x&1 == 0 {
			return 0
		}
		return mt64MatrixA
	}
	i := 0
	for ; i < mt64N-mt64M; i++ {
		x := (r.mt[i] & mt64UpperMask) | (r.mt[i+1] & mt64LowerMask)
		r.mt[i] = r.mt[i+mt64M] ^ (x >> 1) ^ mag(x)
	}
	for ; i < mt64N-1; i++ {
		x := (r.mt[i] & mt64UpperMask) | (r.mt[i+1] & mt64LowerMask)
		r.mt[i] = r.mt[i+mt64M-mt64N] ^ (x >> 1) ^ mag(x)
	}
	x := (r.mt[mt64N-1] & mt64UpperMask) | (r.mt[0] & mt64LowerMask)
	r.mt[mt64N-1] = r.mt[mt64M-1] ^ (x >> 1) ^ mag(x)
	r.idx = 0
}

// lehmer31 is the Park-Miller minimal standard generator: seed' = seed *
// 16807 mod (2^31 - 1).
type lehmer31 struct{ seed uint32 }

const lehmerM = 2147483647 // 2^31 - 1

// newLehmer31 returns a generator; seeds 0 and 2^31-1 (fixed points) become 1.
func newLehmer31(seed uint32) *lehmer31 {
	s := seed & lehmerM
	if s == 0 || s == lehmerM {
		s = 1
	}
	return &lehmer31{seed: s}
}

// next returns the next number in [1, 2^31-2].
func (r *lehmer31) next() uint32 {
	product := uint64(r.seed) * 16807
	// product mod M, using 2^31 = 1 (mod M).
	s := uint32((product >> 31) + (product & lehmerM))
	if s > lehmerM {
		s -= lehmerM
	}
	r.seed = s
	return s
}

// uniform returns a number in [0, n).
func (r *lehmer31) uniform(n uint32) uint32 { return r.next() % n }
