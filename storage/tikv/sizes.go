//go:build !darwin || cgo

package tikv

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/strata-db/strata/storage"
	"github.com/tikv/client-go/v2/tikv"
)

// Size estimates come from PD, which learns each region's approximate size
// (MiB) and key count from its leader's heartbeats. client-go's PD client
// does not carry them (a region from GetRegion or ScanRegions has its
// bounds and peers only), so they are read from PD's HTTP API, which PD
// serves on its client address: GET /pd/api/v1/regions/key?key=&end_key=&limit=
// lists the regions that overlap a range, in key order, with their bounds
// (hex of the encoded keys) and approximate_size and approximate_keys.
const (
	// sizeTTL is how long an estimate is kept: a plan reuses it rather
	// than asking PD, and PD's own figures move only at each region
	// heartbeat (every minute by default).
	sizeTTL = 30 * time.Second
	// sizeTimeout bounds a request to PD: a plan that cannot get an
	// estimate quickly does without.
	sizeTimeout = 2 * time.Second
	// sizePage is the regions asked for per request; sizeMaxPages bounds
	// the requests of one estimate (the regions beyond are not counted:
	// 16 pages of 96 MiB regions are 384 GiB).
	sizePage     = 1024
	sizeMaxPages = 16
	// sizeCacheMax bounds the ranges kept; a full cache is emptied.
	sizeCacheMax = 4096
)

// regionSizes estimates key ranges from PD's region sizes, and keeps each
// answer (an unknown one too) for sizeTTL.
type regionSizes struct {
	// bases are PD's HTTP addresses ("http://host:port"), tried in turn;
	// none: no estimates (the mock cluster has no HTTP API).
	bases  []string
	client *http.Client
	// codec maps the contract's keys to the keys regions are bounded by
	// (memcomparable-encoded, behind the keyspace's prefix in API v2).
	codec tikv.Codec
	now   func() time.Time
	page  int // regions per request: sizePage

	mu sync.Mutex
	// cache holds the estimates by start key, then end key: looked up
	// without making a key of the two.
	cache map[string]map[string]sizeEntry
	n     int // the estimates cache holds
	// asking holds the ranges being asked of PD, closed when the answer
	// is kept: the plans that want one meanwhile wait for it rather than
	// all asking.
	asking map[string]chan struct{}
}

// errNoPDHTTP is the answer of an engine that knows no PD HTTP address,
// made once: the SQL layer asks again at each plan until it has a count.
var errNoPDHTTP = fmt.Errorf("tikv: no PD HTTP API to read region sizes from: %w", storage.ErrNoEstimate)

type sizeEntry struct {
	keys, size int64
	err        error
	expires    time.Time
}

func newRegionSizes(bases []string, codec tikv.Codec) *regionSizes {
	return &regionSizes{
		bases: bases,
		// A transport of its own, so that Close drops its connections
		// and no one else's.
		client: &http.Client{Timeout: sizeTimeout, Transport: http.DefaultTransport.(*http.Transport).Clone()},
		codec:  codec,
		now:    time.Now,
		page:   sizePage,
		cache:  make(map[string]map[string]sizeEntry),
		asking: make(map[string]chan struct{}),
	}
}

// close drops the idle connections to PD.
func (s *regionSizes) close() {
	if s != nil {
		s.client.CloseIdleConnections()
	}
}

// pdRegion is the part of PD's region JSON an estimate reads.
type pdRegion struct {
	StartKey        string `json:"start_key"`
	EndKey          string `json:"end_key"`
	ApproximateSize int64  `json:"approximate_size"`
	ApproximateKeys int64  `json:"approximate_keys"`
}

type pdRegions struct {
	Count   int64      `json:"count"`
	Regions []pdRegion `json:"regions"`
}

// estimate returns the approximate keys and bytes of [start, end) (end
// nil: to the end of the keyspace), or an error satisfying
// errors.Is(err, storage.ErrNoEstimate).
func (s *regionSizes) estimate(start, end []byte) (keys, size int64, err error) {
	if s == nil || len(s.bases) == 0 {
		return 0, 0, errNoPDHTTP
	}
	if len(end) > 0 && bytes.Compare(start, end) >= 0 {
		return 0, 0, nil
	}
	now := s.now()
	s.mu.Lock()
	e, ok := s.cache[string(start)][string(end)]
	if ok && now.Before(e.expires) {
		s.mu.Unlock()
		return e.keys, e.size, e.err
	}
	// Start and end, each behind its length.
	asked := strconv.Itoa(len(start)) + ":" + string(start) + string(end)
	if wait, ok := s.asking[asked]; ok {
		s.mu.Unlock()
		<-wait
		s.mu.Lock()
		e, ok = s.cache[string(start)][string(end)]
		s.mu.Unlock()
		if !ok { // the cache was emptied meanwhile
			return s.estimate(start, end)
		}
		return e.keys, e.size, e.err
	}
	done := make(chan struct{})
	s.asking[asked] = done
	s.mu.Unlock()
	e.keys, e.size, e.err = s.fetch(start, end)
	e.expires = now.Add(sizeTTL)
	s.mu.Lock()
	delete(s.asking, asked)
	defer close(done)
	if s.n >= sizeCacheMax {
		clear(s.cache)
		s.n = 0
	}
	ends := s.cache[string(start)]
	if ends == nil {
		ends = make(map[string]sizeEntry)
		s.cache[string(start)] = ends
	}
	if _, ok := ends[string(end)]; !ok {
		s.n++
	}
	ends[string(end)] = e
	s.mu.Unlock()
	return e.keys, e.size, e.err
}

// fetch asks PD for the regions overlapping [start, end) and sums them,
// prorating the regions the range covers in part. A range that covers no
// region whole is unknown: the share of a region's data it holds is a
// guess from the keys' positions between the region's bounds, which in a
// sparse keyspace (a small table in a region shared with others) can be
// wrong by orders of magnitude, and the planner's own fallback is better.
func (s *regionSizes) fetch(start, end []byte) (keys, size int64, err error) {
	encStart, encEnd := s.codec.EncodeRegionRange(start, end)
	var sum sizeSum
	for page := 0; page < sizeMaxPages; page++ {
		rs, err := s.get(encStart, encEnd)
		if err != nil {
			return 0, 0, fmt.Errorf("tikv: region sizes of [%x, %x) from PD: %w: %w", start, end, storage.ErrNoEstimate, err)
		}
		last, err := sum.add(rs, s.codec, start, end)
		if err != nil {
			return 0, 0, err
		}
		if len(rs.Regions) < s.page || len(last) == 0 || (len(encEnd) > 0 && bytes.Compare(last, encEnd) >= 0) {
			break
		}
		encStart = last
	}
	return sum.result(start, end)
}

// sizeSum adds up the regions of a range, page by page.
type sizeSum struct {
	keys, size float64
	whole      bool // a region is covered whole
}

// add adds the regions of one page of PD's answer, each prorated to the
// share of it [start, end) covers, and returns the last region's end key
// (encoded: where the next page starts).
func (sum *sizeSum) add(rs *pdRegions, codec tikv.Codec, start, end []byte) (last []byte, err error) {
	for _, r := range rs.Regions {
		lo, err := hex.DecodeString(r.StartKey)
		if err != nil {
			return nil, fmt.Errorf("tikv: PD region start key %q: %w: %w", r.StartKey, storage.ErrNoEstimate, err)
		}
		hi, err := hex.DecodeString(r.EndKey)
		if err != nil {
			return nil, fmt.Errorf("tikv: PD region end key %q: %w: %w", r.EndKey, storage.ErrNoEstimate, err)
		}
		last = hi
		rlo, rhi, err := codec.DecodeRegionRange(lo, hi)
		if err != nil {
			return nil, fmt.Errorf("tikv: PD region [%x, %x): %w: %w", lo, hi, storage.ErrNoEstimate, err)
		}
		f := covered(rlo, rhi, start, end)
		if f >= 1 {
			sum.whole = true
		}
		sum.keys += f * float64(max(r.ApproximateKeys, 0))
		sum.size += f * float64(max(r.ApproximateSize, 0)) * (1 << 20)
	}
	return last, nil
}

// result returns the estimate, or ErrNoEstimate when no region was
// covered whole.
func (sum *sizeSum) result(start, end []byte) (keys, size int64, err error) {
	if !sum.whole {
		return 0, 0, fmt.Errorf("tikv: [%x, %x) covers no region whole: %w", start, end, storage.ErrNoEstimate)
	}
	toInt := func(x float64) int64 {
		if x >= math.MaxInt64 {
			return math.MaxInt64
		}
		return int64(math.Round(x))
	}
	return toInt(sum.keys), toInt(sum.size), nil
}

// get asks each PD server in turn for a page of the regions of [start, end)
// (encoded keys).
func (s *regionSizes) get(start, end []byte) (*pdRegions, error) {
	q := "/pd/api/v1/regions/key?key=" + url.QueryEscape(string(start)) +
		"&end_key=" + url.QueryEscape(string(end)) + "&limit=" + strconv.Itoa(s.page)
	var errs error
	for _, b := range s.bases {
		rs, err := s.getFrom(b + q)
		if err == nil {
			return rs, nil
		}
		errs = errors.Join(errs, err)
	}
	return nil, errs
}

func (s *regionSizes) getFrom(u string) (*pdRegions, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sizeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
		return nil, fmt.Errorf("%s: %s: %s", u, resp.Status, bytes.TrimSpace(msg))
	}
	var rs pdRegions
	if err := json.NewDecoder(resp.Body).Decode(&rs); err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	return &rs, nil
}

// covered returns the share of region [lo, hi) that [start, end) covers
// (an empty hi or end: unbounded), supposing the region's keys spread
// evenly over the key space between its bounds: each key is read as a
// number, its 8 bytes after the bounds' common prefix.
func covered(lo, hi, start, end []byte) float64 {
	a := lo
	if bytes.Compare(start, a) > 0 {
		a = start
	}
	b := hi
	if len(end) > 0 && (len(b) == 0 || bytes.Compare(end, b) < 0) {
		b = end
	}
	if len(b) > 0 && bytes.Compare(a, b) >= 0 {
		return 0
	}
	if bytes.Equal(a, lo) && bytes.Equal(b, hi) {
		return 1
	}
	p := 0
	if len(hi) > 0 {
		for p < len(lo) && p < len(hi) && lo[p] == hi[p] {
			p++
		}
	}
	// An empty key is the keyspace's start as a lower bound, its end as
	// an upper one.
	pos := func(k []byte, upper bool) float64 {
		if len(k) == 0 {
			if upper {
				return math.Exp2(64)
			}
			return 0
		}
		var w [8]byte
		if p < len(k) {
			copy(w[:], k[p:])
		}
		return float64(binary.BigEndian.Uint64(w[:]))
	}
	span := pos(hi, true) - pos(lo, false)
	if span <= 0 {
		// The bounds differ past the 8 bytes read: nothing to tell the
		// range's share by but that it is a part.
		return 0.5
	}
	return min(max((pos(b, true)-pos(a, false))/span, 0), 1)
}
