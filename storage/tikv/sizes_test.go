//go:build !darwin || cgo

package tikv

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-db/strata/storage"
	"github.com/tikv/client-go/v2/tikv"
)

// fakePD plays PD's HTTP API for region listings: regions cut at the split
// keys (the contract's keys), each with a size (MiB) and a key count.
type fakePD struct {
	// gate, when set, holds every request until it is closed.
	gate     chan struct{}
	codec    tikv.Codec
	splits   [][]byte
	sizes    []int64 // MiB, one per region
	keys     []int64
	fail     atomic.Bool
	requests atomic.Int64
}

func (f *fakePD) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	if f.gate != nil {
		<-f.gate
	}
	if r.URL.Path != "/pd/api/v1/regions/key" || f.fail.Load() {
		http.Error(w, "[PD:common:ErrUnknown]", http.StatusInternalServerError)
		return
	}
	q := r.URL.Query()
	key, end := []byte(q.Get("key")), []byte(q.Get("end_key"))
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit <= 0 {
		http.Error(w, "bad limit", http.StatusBadRequest)
		return
	}
	var out pdRegions
	for i := range f.sizes {
		var lo, hi []byte
		if i > 0 {
			lo = f.codec.EncodeRegionKey(f.splits[i-1])
		}
		if i < len(f.splits) {
			hi = f.codec.EncodeRegionKey(f.splits[i])
		}
		// PD lists the regions that overlap [key, end_key).
		if (len(hi) > 0 && bytes.Compare(hi, key) <= 0) || (len(end) > 0 && bytes.Compare(lo, end) >= 0) {
			continue
		}
		if len(out.Regions) == limit {
			break
		}
		out.Regions = append(out.Regions, pdRegion{
			StartKey:        strings.ToUpper(hex.EncodeToString(lo)),
			EndKey:          strings.ToUpper(hex.EncodeToString(hi)),
			ApproximateSize: f.sizes[i],
			ApproximateKeys: f.keys[i],
		})
	}
	out.Count = int64(len(out.Regions))
	_ = json.NewEncoder(w).Encode(&out)
}

// newFakePD returns an engine on the mock whose size estimates come from a
// fakePD with regions [, b) [b, d) [d, f) [f, ) of 1, 2, 4 and 8 MiB and
// 10, 20, 40 and 80 keys.
func newFakePD(t *testing.T) (*Engine, *fakePD) {
	t.Helper()
	f := &fakePD{
		codec:  tikv.NewCodecV1(tikv.ModeTxn),
		splits: [][]byte{[]byte("b"), []byte("d"), []byte("f")},
		sizes:  []int64{1, 2, 4, 8},
		keys:   []int64{10, 20, 40, 80},
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	m, err := NewMock()
	if err != nil {
		t.Fatal(err)
	}
	m.PDHTTP = srv.URL
	e, err := m.Open()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e, f
}

const mib = 1 << 20

func TestSizesFromPD(t *testing.T) {
	e, f := newFakePD(t)
	for _, tc := range []struct {
		start, end string
		keys, size int64
		unknown    bool
	}{
		{start: "b", end: "f", keys: 60, size: 6 * mib},
		{start: "", end: "", keys: 150, size: 15 * mib},
		// Half of [d, f) by the keys' positions.
		{start: "b", end: "e", keys: 40, size: 4 * mib},
		// [a, b) is half of [, b) read from 0x00 to 0x62: 0x62-0x61 of it.
		{start: "a", end: "d", keys: 20 + 10*(0x62-0x61)/0x62, size: 2*mib + mib*(0x62-0x61)/0x62},
		{start: "d", end: "", keys: 120, size: 12 * mib},
		// Inside one region: unknown.
		{start: "c", end: "cc", unknown: true},
		{start: "g", end: "", unknown: true},
		// Empty.
		{start: "e", end: "e", keys: 0, size: 0},
	} {
		var end []byte
		if tc.end != "" {
			end = []byte(tc.end)
		}
		keys, size, err := e.EstimateRange([]byte(tc.start), end)
		n, err2 := e.ApproximateSize([]byte(tc.start), end)
		if tc.unknown {
			if !errors.Is(err, storage.ErrNoEstimate) || !errors.Is(err2, storage.ErrNoEstimate) {
				t.Errorf("[%q, %q): got %d keys %d bytes %v, %d %v; want ErrNoEstimate", tc.start, tc.end, keys, size, err, n, err2)
			}
			continue
		}
		if err != nil || err2 != nil || keys != tc.keys || abs(size-tc.size) > 1 || n != size {
			t.Errorf("[%q, %q): got %d keys %d bytes %v, %d %v; want %d keys %d bytes", tc.start, tc.end, keys, size, err, n, err2, tc.keys, tc.size)
		}
	}
	if f.requests.Load() == 0 {
		t.Fatal("no request reached PD")
	}
}

func abs(x int64) int64 { return max(x, -x) }

// TestSizesCached checks that an estimate is asked of PD once per range
// while it is fresh, a failed one too, and again once it expired.
func TestSizesCached(t *testing.T) {
	e, f := newFakePD(t)
	now := time.Unix(1000, 0)
	e.sizes.now = func() time.Time { return now }
	for range 3 {
		if _, err := e.ApproximateSize([]byte("b"), []byte("f")); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.requests.Load(); got != 1 {
		t.Fatalf("%d requests for one range; want 1", got)
	}
	start, end := []byte("b"), []byte("f")
	if n := testing.AllocsPerRun(100, func() { _, _ = e.ApproximateSize(start, end) }); n != 0 {
		t.Fatalf("%v allocations per kept estimate; want 0", n)
	}
	f.fail.Store(true)
	now = now.Add(sizeTTL)
	for range 3 {
		if _, err := e.ApproximateSize([]byte("b"), []byte("f")); !errors.Is(err, storage.ErrNoEstimate) {
			t.Fatalf("PD failing: %v; want ErrNoEstimate", err)
		}
	}
	if got := f.requests.Load(); got != 2 {
		t.Fatalf("%d requests; want 2 (a failure is kept as an estimate is)", got)
	}
	f.fail.Store(false)
	now = now.Add(sizeTTL)
	if n, err := e.ApproximateSize([]byte("b"), []byte("f")); err != nil || n != 6*mib {
		t.Fatalf("after PD recovered: %d %v", n, err)
	}
}

// TestSizesPaged checks a range over more regions than one request lists,
// and a PD server that does not answer before one that does.
func TestSizesPaged(t *testing.T) {
	e, f := newFakePD(t)
	e.sizes.page = 1
	e.sizes.bases = append([]string{"http://127.0.0.1:1"}, e.sizes.bases...)
	keys, size, err := e.EstimateRange(nil, nil)
	if err != nil || keys != 150 || size != 15*mib {
		t.Fatalf("got %d keys %d bytes %v; want 150 keys 15 MiB", keys, size, err)
	}
	if got := f.requests.Load(); got != 4 {
		t.Fatalf("%d requests; want 4 (a region each)", got)
	}
}

// TestSizesUnknownOnMock checks that an engine without PD's HTTP API (the
// mock's) says its estimates are unknown, without a request.
func TestSizesUnknownOnMock(t *testing.T) {
	e := openMock(t).(*Engine)
	defer e.Close()
	if _, err := e.ApproximateSize(nil, nil); !errors.Is(err, storage.ErrNoEstimate) {
		t.Fatalf("ApproximateSize: %v; want ErrNoEstimate", err)
	}
	if _, _, err := e.EstimateRange([]byte("a"), []byte("b")); !errors.Is(err, storage.ErrNoEstimate) {
		t.Fatalf("EstimateRange: %v; want ErrNoEstimate", err)
	}
	a, b := []byte("a"), []byte("b")
	if n := testing.AllocsPerRun(100, func() { _, _, _ = e.EstimateRange(a, b) }); n != 0 {
		t.Fatalf("%v allocations per unknown estimate; want 0", n)
	}
}

func TestCovered(t *testing.T) {
	for _, tc := range []struct {
		lo, hi, start, end string
		want               float64
	}{
		{"b", "d", "a", "e", 1},
		{"b", "d", "b", "d", 1},
		{"b", "d", "", "", 1},
		{"", "", "", "", 1},
		{"b", "d", "d", "e", 0},
		{"b", "d", "a", "b", 0},
		{"b", "d", "c", "", 0.5},
		{"b", "d", "", "c", 0.5},
		{"ab", "ac", "ab\x80", "ac", 0.5},
		{"", "", "\x80", "", 0.5},
		{"", "\x80", "\x40", "\x60", 0.25},
		// Bounds that differ beyond the 8 bytes read.
		{"aaaaaaaaaa1", "aaaaaaaaaa3", "aaaaaaaaaa2", "", 0.5},
	} {
		b := func(s string) []byte {
			if s == "" {
				return nil
			}
			return []byte(s)
		}
		if got := covered(b(tc.lo), b(tc.hi), b(tc.start), b(tc.end)); got != tc.want {
			t.Errorf("covered([%q, %q), [%q, %q)) = %v; want %v", tc.lo, tc.hi, tc.start, tc.end, got, tc.want)
		}
	}
}

// TestSizesAskedOnce checks that plans wanting the same estimate at once
// make one request to PD.
func TestSizesAskedOnce(t *testing.T) {
	e, f := newFakePD(t)
	f.gate = make(chan struct{})
	done := make(chan error)
	for range 8 {
		go func() {
			n, err := e.ApproximateSize([]byte("b"), []byte("f"))
			if err == nil && n != 6*mib {
				err = fmt.Errorf("%d bytes; want 6 MiB", n)
			}
			done <- err
		}()
	}
	close(f.gate)
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if got := f.requests.Load(); got != 1 {
		t.Fatalf("%d requests for one range; want 1", got)
	}
}

// TestSizesConcurrent runs estimates of a few ranges from several
// goroutines (under -race: the cache is shared by every plan).
func TestSizesConcurrent(t *testing.T) {
	e, _ := newFakePD(t)
	done := make(chan error)
	for g := range 8 {
		go func() {
			var err error
			for i := range 50 {
				start := []byte{'a' + byte((g+i)%4)}
				if _, _, err2 := e.EstimateRange(start, []byte("f")); err2 != nil && !errors.Is(err2, storage.ErrNoEstimate) {
					err = err2
				}
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkSizesKept is what a plan pays for an estimate PD gave a moment
// ago: a lookup in the engine's cache.
func BenchmarkSizesKept(b *testing.B) {
	f := &fakePD{
		codec:  tikv.NewCodecV1(tikv.ModeTxn),
		splits: [][]byte{[]byte("b"), []byte("d"), []byte("f")},
		sizes:  []int64{1, 2, 4, 8},
		keys:   []int64{10, 20, 40, 80},
	}
	srv := httptest.NewServer(f)
	defer srv.Close()
	s := newRegionSizes([]string{srv.URL}, f.codec)
	start, end := []byte("b"), []byte("f")
	if _, _, err := s.estimate(start, end); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _, _ = s.estimate(start, end)
	}
}

// BenchmarkSizesAsked is an estimate asked of PD (a local HTTP server
// playing it): what the first plan of a range pays every sizeTTL.
func BenchmarkSizesAsked(b *testing.B) {
	f := &fakePD{
		codec:  tikv.NewCodecV1(tikv.ModeTxn),
		splits: [][]byte{[]byte("b"), []byte("d"), []byte("f")},
		sizes:  []int64{1, 2, 4, 8},
		keys:   []int64{10, 20, 40, 80},
	}
	srv := httptest.NewServer(f)
	defer srv.Close()
	s := newRegionSizes([]string{srv.URL}, f.codec)
	start, end := []byte("b"), []byte("f")
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := s.fetch(start, end); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSizesRealCluster reads the whole keyspace's size from the PD of the
// cluster STRATA_TIKV_PD names ("pd1:2379,pd2:2379", API v1): the shape of
// PD's answer and the region keys' encoding, which only a real PD checks.
// It skips without one.
func TestSizesRealCluster(t *testing.T) {
	pd := os.Getenv("STRATA_TIKV_PD")
	if pd == "" || strings.Contains(pd, "keyspace") {
		t.Skip("STRATA_TIKV_PD names no TiKV cluster of API v1 (e.g. STRATA_TIKV_PD=127.0.0.1:2379 after tiup playground)")
	}
	pd = strings.TrimSuffix(strings.TrimPrefix(pd, "tikv://"), "/")
	e, err := Open(strings.Split(pd, ","), "")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	keys, size, err := e.EstimateRange(nil, nil)
	if err != nil || keys < 0 || size < 0 {
		t.Fatalf("the whole keyspace: %d keys, %d bytes, %v", keys, size, err)
	}
	t.Logf("PD: %d keys, %d bytes", keys, size)
}

// FuzzPDRegions feeds PD answers of any shape to the summing of regions:
// no panic, and an estimate is never negative. covered stays a share.
func FuzzPDRegions(f *testing.F) {
	codec := tikv.NewCodecV1(tikv.ModeTxn)
	enc := func(k string) string { return strings.ToUpper(hex.EncodeToString(codec.EncodeRegionKey([]byte(k)))) }
	f.Add([]byte(`{"count":2,"regions":[{"start_key":"","end_key":"`+enc("b")+`","approximate_size":3,"approximate_keys":30},{"start_key":"`+enc("b")+`","end_key":"","approximate_size":1,"approximate_keys":9}]}`), []byte("a"), []byte("c"))
	f.Add([]byte(`{"regions":[{"start_key":"zz","end_key":"00","approximate_size":-1,"approximate_keys":9223372036854775807}]}`), []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, body, start, end []byte) {
		var rs pdRegions
		if json.Unmarshal(body, &rs) != nil {
			return
		}
		for _, r := range rs.Regions {
			lo, _ := hex.DecodeString(r.StartKey)
			hi, _ := hex.DecodeString(r.EndKey)
			if c := covered(lo, hi, start, end); !(c >= 0 && c <= 1) {
				t.Fatalf("covered([%x, %x), [%x, %x)) = %v", lo, hi, start, end, c)
			}
		}
		var sum sizeSum
		if _, err := sum.add(&rs, codec, start, end); err != nil {
			return
		}
		keys, size, err := sum.result(start, end)
		if err == nil && (keys < 0 || size < 0) {
			t.Fatalf("%d keys, %d bytes", keys, size)
		}
	})
}
