package filter

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseType(t *testing.T) {
	tests := []struct {
		in      string
		want    Type
		wantErr bool
	}{
		{"bloom", Bloom, false},
		{"Ribbon", Ribbon, false},
		{" none ", None, false},
		{"", None, false},
		{"cuckoo", None, true},
	}
	for _, tc := range tests {
		got, err := ParseType(tc.in)
		if tc.wantErr {
			require.ErrorContains(t, err, "unknown filter type")
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
	for _, typ := range []Type{None, Bloom, Ribbon} {
		back, err := ParseType(typ.String())
		require.NoError(t, err)
		require.Equal(t, typ, back)
	}
	require.Equal(t, "filter.Type(9)", Type(9).String())
}

func TestValidate(t *testing.T) {
	require.NoError(t, Policy{}.Validate())
	require.NoError(t, Policy{Type: Ribbon, BitsPerKey: 7.5, FPRate: 0.02}.Validate())
	err := Policy{Type: 7, BitsPerKey: 0.5, FPRate: 1}.Validate()
	require.ErrorContains(t, err, "Policy.Type = 7")
	require.ErrorContains(t, err, "Policy.BitsPerKey = 0.5")
	require.ErrorContains(t, err, "Policy.FPRate = 1")
}

func TestMakeConfig(t *testing.T) {
	tests := []struct {
		name       string
		p          Policy
		millibits  int
		probes     int
		oneInFPMin float64
		oneInFPMax float64
	}{
		{"default bits", Policy{Type: Bloom}, 10000, 6, 104, 106},
		{"bloom 10", Policy{Type: Bloom, BitsPerKey: 10}, 10000, 6, 104, 106},
		{"clamped low", Policy{Type: Bloom, BitsPerKey: 0.2}, 1000, 1, 1, 3},
		{"clamped high", Policy{Type: Bloom, BitsPerKey: 1e9}, 100000, 24, 1e9, 1e30},
		{"ribbon equivalent", Policy{Type: Ribbon, BitsPerKey: 10}, 10000, 6, 104, 106},
		{"ribbon rate", Policy{Type: Ribbon, BitsPerKey: 3, FPRate: 0.01}, 9890, 6, 99.99, 100.01},
		{"bloom ignores rate", Policy{Type: Bloom, BitsPerKey: 16, FPRate: 0.5}, 16000, 9, 1000, 1500},
		{"unknown type", Policy{Type: 9}, 10000, 6, 104, 106},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.p.makeConfig()
			require.Equal(t, tc.millibits, c.millibitsPerKey)
			require.Equal(t, tc.probes, c.bloomProbes)
			require.GreaterOrEqual(t, c.oneInFP, tc.oneInFPMin)
			require.LessOrEqual(t, c.oneInFP, tc.oneInFPMax)
		})
	}
	require.Equal(t, None, Policy{Type: 9}.makeConfig().typ)
}

func TestBloomProbes(t *testing.T) {
	for _, tc := range []struct{ millibits, probes int }{
		{1, 1}, {2080, 1}, {2081, 2}, {6000, 4}, {10000, 6}, {10070, 6}, {10071, 7},
		{20000, 11}, {25501, 12}, {25502, 11}, {30000, 13}, {50000, 23}, {50001, 24},
	} {
		require.Equal(t, tc.probes, bloomProbesForMillibits(tc.millibits), "millibits %d", tc.millibits)
	}
}

func TestFPModels(t *testing.T) {
	// The cache-local estimate at 10 bits/key and 6 probes is 0.9535%.
	require.InDelta(t, 0.009535, cacheLocalFPRate(10, 6), 0.000005)
	// The Bloom fallback of a 1% Ribbon needs a little under 10 bits/key.
	bpk := bloomBitsForFPRate(0.01)
	require.InDelta(t, 9.9, bpk, 0.05)
	require.LessOrEqual(t, cacheLocalFPRate(bpk, bloomProbesForMillibits(int(bpk*1000+0.5))), 0.01)
	require.Equal(t, MaxBitsPerKey, bloomBitsForFPRate(1e-30))
}
