//go:build !darwin || cgo

package tikv

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/tikv/client-go/v2/testutils"
	"github.com/tikv/client-go/v2/tikv"
	"github.com/tikv/client-go/v2/tikvrpc"
	pd "github.com/tikv/pd/client"
)

// Mock is client-go's in-process TiKV cluster (mocktikv): one store, its
// regions split where the caller says, PD's timestamps. Every engine
// opened on it (Open) reads and writes the same data, as processes sharing
// one cluster do. It is for tests and for trying Strata's remote mode
// without a cluster; nothing it holds is durable.
type Mock struct {
	client  testutils.MockClient
	cluster *testutils.MockCluster
	pd      pd.Client

	// Latency, when set before Open, delays every request the engines
	// send: a network round trip, for seeing what one does to each plan.
	Latency time.Duration

	// PDHTTP, when set before Open, is the address ("http://host:port") of
	// a server playing PD's HTTP API, from which the engines read region
	// sizes (mocktikv has no such API: without it the engines' size
	// estimates are unknown).
	PDHTTP string

	mu     sync.Mutex
	open   int
	closed bool
}

// NewMock starts a mock cluster whose regions are split at splitKeys.
func NewMock(splitKeys ...[]byte) (*Mock, error) {
	client, cluster, pdc, err := testutils.NewMockTiKV("", nil)
	if err != nil {
		return nil, fmt.Errorf("tikv: mock cluster: %w", err)
	}
	if len(splitKeys) == 0 {
		testutils.BootstrapWithSingleStore(cluster)
	} else {
		testutils.BootstrapWithMultiRegions(cluster, splitKeys...)
	}
	return &Mock{client: *client, cluster: cluster, pd: pdc, open: 1}, nil
}

// Cluster returns the mock cluster, for splitting regions under a test.
func (m *Mock) Cluster() *testutils.MockCluster { return m.cluster }

// Open returns a new engine on the cluster, with its own client-go store
// (region cache, timestamp oracle, lock resolver): another process. The
// cluster lives until the Mock and every engine are closed.
func (m *Mock) Open() (*Engine, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, fmt.Errorf("tikv: mock cluster closed")
	}
	m.open++
	m.mu.Unlock()
	store, err := tikv.NewTestTiKVStore(&sharedClient{Client: &m.client, mvcc: m.client.MvccStore, latency: m.Latency}, m.pd,
		nil, func(c pd.Client) pd.Client { return sharedPD{c} }, 0)
	if err != nil {
		m.unref()
		return nil, fmt.Errorf("tikv: mock store: %w", err)
	}
	var bases []string
	if m.PDHTTP != "" {
		bases = []string{m.PDHTTP}
	}
	return &Engine{store: store, sizes: newRegionSizes(bases, storeCodec(store)), release: func() error {
		err := store.Close()
		m.unref()
		return err
	}}, nil
}

// Close releases the caller's reference; the last one stops the cluster.
func (m *Mock) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	m.unref()
	return nil
}

func (m *Mock) unref() {
	m.mu.Lock()
	m.open--
	last := m.open == 0
	m.mu.Unlock()
	if last {
		m.pd.Close()
		_ = m.client.Close()
	}
}

// sharedClient and sharedPD keep a store's Close from closing what the
// other engines of the mock share.
type sharedClient struct {
	tikv.Client
	mvcc    testutils.MVCCStore
	latency time.Duration
}

func (*sharedClient) Close() error { return nil }

// SendRequest leaves out of a rollback the keys another transaction has
// locked. mocktikv writes a rollback record on them, and its prewrite of
// a pessimistically locked key, unlike TiKV's, takes any record newer
// than the transaction's start for a conflict: an optimistic commit that
// lost to a pessimistic lock would make the holder's commit fail too.
func (c *sharedClient) SendRequest(ctx context.Context, addr string, req *tikvrpc.Request, timeout time.Duration) (*tikvrpc.Response, error) {
	if c.latency > 0 {
		time.Sleep(c.latency)
	}
	if req.Type == tikvrpc.CmdBatchRollback {
		r := req.BatchRollback()
		keep := make([][]byte, 0, len(r.Keys))
		for _, k := range r.Keys {
			locks, err := c.mvcc.ScanLock(k, append(bytes.Clone(k), 0), math.MaxUint64)
			if err == nil && len(locks) == 1 && locks[0].LockVersion != r.StartVersion {
				continue
			}
			keep = append(keep, k)
		}
		r.Keys = keep
	}
	return c.Client.SendRequest(ctx, addr, req, timeout)
}

type sharedPD struct{ pd.Client }

func (sharedPD) Close() {}
