package main

import (
	"bytes"
	"flag"
	"testing"
	"time"

	"github.com/strata-db/strata/kv"
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
	// Read path.
	require.Zero(t, c.readaheadSize)
	require.False(t, c.asyncIO)
	require.Zero(t, c.multiReadStride)
	require.True(t, c.multiReadBatched, "multireadrandom calls MultiGet unless told otherwise")
	require.Equal(t, int64(10), c.multiScanSize)
	require.Equal(t, int64(100), c.multiScanStride)
	require.True(t, c.multiScanPrepare)
	require.Nil(t, c.ab)
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
		{
			name: "compaction priority",
			args: []string{"-compaction_priority=idle"},
			check: func(t *testing.T, c *kvConfig) {
				o, err := kvEngineOptions(c)
				require.NoError(t, err)
				require.Equal(t, kv.CompactionPriorityIdle, o.CompactionPriority)
			},
		},
		{name: "unknown compaction priority", args: []string{"-compaction_priority=lowest"},
			errs: []string{`-compaction_priority="lowest": want normal, low or idle`}},
		{
			name: "read-path switches",
			args: []string{"-benchmarks=multireadrandom,multiscan", "-readahead_size=1048576", "-async_io=1",
				"-multiread_stride=4", "-multiread_batched=false", "-multiscan_size=5", "-multiscan_stride=7",
				"-multiscan_prepare=0", "-seek_nexts=100"},
			check: func(t *testing.T, c *kvConfig) {
				require.Equal(t, int64(1<<20), c.readaheadSize)
				require.True(t, c.asyncIO)
				require.Equal(t, int64(4), c.multiReadStride)
				require.False(t, c.multiReadBatched)
				require.Equal(t, int64(5), c.multiScanSize)
				require.Equal(t, int64(7), c.multiScanStride)
				require.False(t, c.multiScanPrepare)
				require.Equal(t, int64(5*107), c.multiScanSpan())
			},
		},
		{
			name:  "readahead off",
			args:  []string{"-readahead_size=-1", "-async_io=true"},
			check: func(t *testing.T, c *kvConfig) { require.Equal(t, int64(-1), c.readaheadSize) },
		},
		{
			name: "multiscan ranges of 50 keys when -seek_nexts is 0",
			args: []string{"-benchmarks=multiscan", "-num=1501"},
			check: func(t *testing.T, c *kvConfig) {
				require.Equal(t, int64(50), kvMultiScanKeys(c.seekNexts))
				require.Equal(t, int64(1500), c.multiScanSpan())
			},
		},
		{
			name: "A/B of a readahead",
			args: []string{"-benchmarks=fillseq,seekrandom", "-ab=readahead_size", "-readahead_size=524288"},
			check: func(t *testing.T, c *kvConfig) {
				require.NotNil(t, c.ab)
				require.Equal(t, "readahead_size", c.ab.flag.name)
				require.False(t, c.ab.hasValue)
			},
		},
		{
			name: "A/B with a value, flag name with a dash",
			args: []string{"-benchmarks=seekrandom", "-ab=-readahead_size", "-ab_value=1048576"},
			check: func(t *testing.T, c *kvConfig) {
				require.Equal(t, "readahead_size", c.ab.flag.name)
				require.Equal(t, "1048576", c.ab.value)
				require.True(t, c.ab.hasValue)
			},
		},
		{
			name:  "A/B of booleans",
			args:  []string{"-benchmarks=multiscan", "-ab=multiscan_prepare"},
			check: func(t *testing.T, c *kvConfig) { require.Equal(t, "multiscan_prepare", c.ab.flag.name) },
		},
		{name: "bad read-path values",
			args: []string{"-readahead_size=-2", "-multiread_stride=-1", "-multiscan_size=0", "-multiscan_stride=-1"},
			errs: []string{"-readahead_size=-2: want bytes, 0 (automatic) or -1 (off)", "-multiread_stride=-1",
				"-multiscan_size=0: want 1 to 65536", "-multiscan_stride=-1"}},
		{name: "async_io is a boolean", args: []string{"-async_io=2"}, errs: []string{"async_io"}},
		{name: "multiscan past the keys", args: []string{"-benchmarks=multiscan", "-num=1500"},
			errs: []string{"-num=1500 is too small for multiscan: 10 ranges of 50 keys, 100 keys apart, span 1500 keys"}},
		{name: "multiscan span overflow", args: []string{"-benchmarks=multiscan", "-multiscan_stride=9223372036854775807"},
			errs: []string{"too small for multiscan"}},
		{name: "strided batch past the keys", args: []string{"-benchmarks=multireadrandom", "-num=100", "-batch_size=32", "-multiread_stride=4"},
			errs: []string{"-multiread_stride=4: a batch of -batch_size=32 keys that far apart spans more than -num=100 keys"}},
		{name: "A/B of an unknown flag", args: []string{"-benchmarks=seekrandom", "-ab=cache_size"},
			errs: []string{`-ab="cache_size": want one of readahead_size, async_io, fill_cache, use_direct_reads, mmap_read, io_uring, multiread_batched, multiscan_prepare, multiscan_coalesce`}},
		{name: "A/B value without A/B", args: []string{"-ab_value=0"}, errs: []string{"-ab_value needs -ab"}},
		{name: "A/B with nothing to change", args: []string{"-benchmarks=seekrandom", "-ab=readahead_size"},
			errs: []string{"-ab=readahead_size: A and B are both 0 (set -readahead_size for A, or -ab_value for B)"}},
		{name: "A/B to the same boolean", args: []string{"-benchmarks=seekrandom", "-ab=async_io", "-ab_value=false"},
			errs: []string{"-ab=async_io: A and B are both false"}},
		{name: "A/B value of the wrong type", args: []string{"-benchmarks=seekrandom", "-ab=async_io", "-ab_value=maybe"},
			errs: []string{`-ab_value="maybe": want a boolean (0, 1, false or true) for -async_io`}},
		{name: "A/B readahead below -1", args: []string{"-benchmarks=seekrandom", "-ab=readahead_size", "-ab_value=-5"},
			errs: []string{`-ab_value="-5": want an integer of at least -1 for -readahead_size`}},
		{name: "A/B without a read workload", args: []string{"-benchmarks=fillseq,compact", "-ab=async_io"},
			errs: []string{"-ab=async_io compares read workloads, and -benchmarks has none (want one of readrandom, readseq, seekrandom, multireadrandom, multiscan)"}},
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
	for _, want := range []string{"usage: sqlbench kv", "seekrandom", "-seek_nexts", "-cold", "multireadrandom", "multiscan",
		"-readahead_size", "-async_io", "-multiread_stride", "-multiscan_prepare", "-ab_value",
		"readahead_size, async_io, fill_cache, use_direct_reads, mmap_read, io_uring, multiread_batched, multiscan_prepare"} {
		require.Contains(t, out.String(), want)
	}
}
