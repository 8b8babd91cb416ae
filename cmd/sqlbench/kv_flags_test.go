package main

import (
	"bytes"
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestKVFlagsDefaults(t *testing.T) {
	c, err := parseKVFlags(nil, &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, []string{"fillseq", "fillrandom", "overwrite", "readrandom", "readseq", "seekrandom"}, c.benchmarks)
	require.Equal(t, int64(1_000_000), c.num)
	require.Equal(t, int64(1_000_000), c.readsPerThread())
	require.Equal(t, 16, c.keySize)
	require.Equal(t, 100, c.valueSize)
	require.Equal(t, 0.5, c.compressionRatio)
	require.Equal(t, int64(8<<20), c.cacheSize)
	require.Equal(t, "snappy", c.compression)
	require.Equal(t, 10.0, c.bloomBits)
	require.Equal(t, "bloom", c.filter)
	require.Equal(t, 4096, c.blockSize)
	require.Equal(t, int64(64<<20), c.writeBufferSize)
	require.Equal(t, 1, c.threads)
	require.Equal(t, 1, c.batchSize)
	require.Zero(t, c.duration)
	require.False(t, c.useExistingDB || c.sync || c.disableWAL || c.statistics || c.histogram || c.cold || c.useDirectReads)
}

func TestKVFlags(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		check func(t *testing.T, c *kvConfig)
		// errs, when set, are substrings the usage error must contain.
		errs []string
	}{
		{
			name: "list",
			args: []string{"-benchmarks= fillseq, ReadRandom,,seekrandom ", "-num=1000", "-reads=10"},
			check: func(t *testing.T, c *kvConfig) {
				require.Equal(t, []string{"fillseq", "readrandom", "seekrandom"}, c.benchmarks)
				require.Equal(t, int64(10), c.readsPerThread())
			},
		},
		{
			name: "read-path and sizes",
			args: []string{"-duration=3", "-threads=4", "-key_size=32", "-value_size=400", "-compression_type=ZSTD",
				"-filter=ribbon", "-bloom_bits=7.5", "-cache_size=0", "-use_direct_reads", "-cold", "-seek_nexts=10",
				"-max_scan_distance=100", "-batch_size=32", "-db=/tmp/x", "-use_existing_db"},
			check: func(t *testing.T, c *kvConfig) {
				require.Equal(t, 3*time.Second, c.duration)
				require.Equal(t, 4, c.threads)
				require.Equal(t, "zstd", c.compression)
				require.Equal(t, "ribbon", c.filter)
				require.Equal(t, 7.5, c.bloomBits)
				require.Zero(t, c.cacheSize)
				require.True(t, c.useDirectReads && c.cold && c.useExistingDB)
				require.Equal(t, 10, c.seekNexts)
				require.Equal(t, int64(100), c.maxScanDistance)
				require.Equal(t, 32, c.batchSize)
			},
		},
		{
			name:  "no filter",
			args:  []string{"-bloom_bits=0"},
			check: func(t *testing.T, c *kvConfig) { require.Zero(t, c.bloomBits) },
		},
		{
			name: "short keys that fit",
			args: []string{"-key_size=2", "-num=65536"},
			check: func(t *testing.T, c *kvConfig) {
				require.Equal(t, 2, c.keySize)
			},
		},
		{name: "unknown workload", args: []string{"-benchmarks=fillseq,readrandomm"},
			errs: []string{`unknown workload "readrandomm"`, "fillrandom"}},
		{name: "empty list", args: []string{"-benchmarks=,"}, errs: []string{"want at least one workload"}},
		{
			name: "every problem at once",
			args: []string{"-num=0", "-key_size=0", "-value_size=-1", "-compression_ratio=1.5", "-threads=0",
				"-duration=-1", "-batch_size=0", "-seek_nexts=-1", "-cache_size=-1", "-compression_type=lz4",
				"-bloom_bits=-1", "-filter=cuckoo", "-use_existing_db", "-ops_between_duration_checks=0"},
			errs: []string{"-num=0", "-key_size=0", "-value_size=-1", "-compression_ratio=1.5", "-threads=0",
				"-duration=-1", "-batch_size=0", "-seek_nexts=-1", "-cache_size=-1", `-compression_type="lz4"`,
				"-bloom_bits=-1", `-filter="cuckoo"`, "-use_existing_db needs -db", "-ops_between_duration_checks=0"},
		},
		{
			name: "engine limits with other problems",
			args: []string{"-num=0", "-write_buffer_size=1000", "-bloom_bits=500"},
			errs: []string{"-num=0", "-write_buffer_size 1000", "-bloom_bits = 500"},
		},
		{name: "keys too short for num", args: []string{"-key_size=1", "-num=300"},
			errs: []string{"-key_size=1 holds only 256 distinct keys"}},
		{name: "sync without a log", args: []string{"-sync", "-disable_wal"}, errs: []string{"contradict"}},
		{name: "engine limits by flag", args: []string{"-write_buffer_size=1000", "-block_size=100"},
			errs: []string{"-write_buffer_size 1000", "-block_size 100"}},
		{name: "filter accuracy", args: []string{"-bloom_bits=1000"}, errs: []string{"-bloom_bits"}},
		{name: "stray argument", args: []string{"fillseq"}, errs: []string{"unexpected arguments"}},
		{name: "bad syntax", args: []string{"-num=many"}, errs: []string{"-num"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseKVFlags(tc.args, &bytes.Buffer{})
			if tc.errs == nil {
				require.NoError(t, err)
				tc.check(t, c)
				return
			}
			var ue usageError
			require.ErrorAs(t, err, &ue)
			for _, want := range tc.errs {
				require.ErrorContains(t, err, want)
			}
		})
	}
}

func TestKVFlagsHelp(t *testing.T) {
	var out bytes.Buffer
	_, err := parseKVFlags([]string{"-h"}, &out)
	require.ErrorIs(t, err, flag.ErrHelp)
	for _, want := range []string{"usage: sqlbench kv", "seekrandom", "-seek_nexts", "-cold"} {
		require.Contains(t, out.String(), want)
	}
}
